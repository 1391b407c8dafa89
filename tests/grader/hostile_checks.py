"""What the hostile-submission suites (tests/grader/test_hostile*.py) share: the grader's test
course's facts, and the checks that no point was stolen and no hidden test reached the feedback."""

from __future__ import annotations

from pathlib import Path

import html

import nbformat

import course_fixture

ASSIGNMENT = "fx00-tiny"  # the grader's test course's one assignment
COURSE = course_fixture.GRADER_COURSE
LAST_OF_FIRST_FUNCTION = "test_word_lengths_hidden"  # the first graded function's last test cell
FIRST_TESTS = {"test_word_lengths", "test_word_lengths_hidden"}  # the first graded function's tests
POINTS = 6


def no_points_stolen(path: Path, assignment: str, names, first_tests: set, points: int) -> None:
    stolen = {}
    for student in names:
        if student.startswith("honest"):
            continue
        cells = course_fixture.scores(path, assignment, student)
        assert set(cells) >= first_tests, f"{student}: grades missing"
        assert sum(c.max_score for c in cells.values()) == points, (
            f"{student}: points changed {cells}"
        )
        if any(c.score for c in cells.values()):
            stolen[student] = {k: c.score for k, c in cells.items() if c.score}
    assert not stolen, f"points earned by rigging the grader: {stolen}"


def spellings(text: str) -> list[str]:
    """The text as printed, and as it reads once JSON or HTML escaping is undone."""
    unjson = text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    return [text, unjson, html.unescape(text), html.unescape(unjson)]


def hidden_tests_not_in_feedback(path: Path, assignment: str, solution, students) -> None:
    pairs = course_fixture.marked_pairs(solution, "HIDDEN TESTS")
    long_lines = [
        line for line in course_fixture.marked_lines(solution, "HIDDEN TESTS") if len(line) >= 30
    ]
    assert pairs and long_lines
    for student in students:
        text = course_fixture.readable(
            path / "autograder" / "feedback" / student / assignment / f"{assignment}.html"
        )
        readings = spellings(text)  # the notebook file prints its lines as JSON strings
        leaked = [s for s in pairs + long_lines if any(s in r for r in readings)]
        assert not leaked, f"{student}: feedback shows hidden-test lines {leaked[:3]}"
        assert "HIDDEN TESTS" not in text, f"{student}: feedback shows the hidden-test marker"


def graded_output_text(path: Path, assignment: str, student: str) -> str:
    """Everything the graded notebook (the instructor's copy) shows of a student's cells: each
    output's text, and each error's name and message, a line each."""
    autograded = path / "autograder" / "autograded" / student / assignment / f"{assignment}.ipynb"
    return "\n".join(
        str(o.get("text", "")) + str(o.get("ename", "")) + ": " + str(o.get("evalue", ""))
        for c in nbformat.read(autograded, as_version=4).cells
        for o in c.get("outputs", [])
    )

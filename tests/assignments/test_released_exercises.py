"""What students download, read as files (no kernel, no nbgrader run, so in ``make check``): no
file under ``exercises/`` holds an nbgrader marker, two consecutive lines of a hidden test, or two
of a reference solution. That ``exercises/`` is exactly what nbgrader generates from
``solutions/`` needs a release, so it is checked in the round trip (``tests/assignments/test_assignments.py``).
"""

from __future__ import annotations

import nbformat
import pytest

import course_fixture

REPO = course_fixture.REPO
MARKERS = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
    "### BEGIN HIDDEN TESTS",
    "### END HIDDEN TESTS",
)


@pytest.mark.parametrize("assignment", course_fixture.assignments())
def test_exercises_hold_no_solution_or_hidden_test(assignment):
    solution = course_fixture.solution_notebook(assignment)
    secret = course_fixture.marked_pairs(solution, "HIDDEN TESTS") + course_fixture.marked_pairs(
        solution, "SOLUTION"
    )
    files = [path for path in (REPO / "exercises" / assignment).rglob("*") if path.is_file()]
    assert files, f"exercises/{assignment} is empty: run `make exercises`"
    for path in files:
        text = path.read_text(errors="replace")
        for marker in MARKERS:
            assert marker not in text, f"{path} contains {marker!r}"
        if path.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbformat.read(path, 4).cells)
        text = "\n".join(line.strip() for line in text.splitlines())
        leaked = [pair for pair in secret if pair in text]
        assert not leaked, f"{path} leaks {leaked[:3]}"

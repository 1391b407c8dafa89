"""The class's rules through the instructor's commands: a due date, a late policy and an extension;
written answers graded by hand; all of it in the report, the feedback and every export.

One scratch copy of the grader's test course (``tests/grader_course``), whose fx00 gets two answers
graded by hand (``make_notebook.WRITTEN``: a markdown answer and a code measurement, after the
hidden tests) and whose config gets a due date in London time and a policy of 25% off per day or
part of a day late, never more than half, after 10 minutes of grace. Four students hand in the
reference solution through an LMS zip whose file names carry the submission time (nbgrader's
``timestamp`` group): ada on time, bea an hour late, cy three days late with an extension past it,
dan five days late. Then ``release``, ``collect``, ``autograde``, a written answer graded through
nbgrader's own API (what the formgrader writes), ``regrade``, ``feedback`` and ``export``, as
``make`` runs them (``python -m bertlab_grader``); last, one submission through nbgrader's exchange.
"""

from __future__ import annotations

import csv
import getpass
import json
import subprocess
import sys
import zipfile
from datetime import datetime

import nbformat
import pytest

import course_fixture
from bertlab_grader import layout
from bertlab_grader.nbgrader_course import nbgrader_env

pytestmark = pytest.mark.slow

sys.path.insert(0, str(course_fixture.GRADER_COURSE))
import make_notebook  # noqa: E402  (the test course's notebook, with its written answers)

ASSIGNMENT = "fx00-tiny"
AUTO_POINTS, WRITTEN_POINTS = 6, 3
RULES = """
c.Deadlines.timezone = "Europe/London"
c.Deadlines.due_dates = {"fx00-tiny": "2027-02-01 17:00"}
c.LatePolicy.penalty_method = "per_day"
c.LatePolicy.share_per_day = 0.25
c.LatePolicy.floor = 0.5
c.LatePolicy.grace_minutes = 10
"""
# When each handed in (UTC; London is on UTC in February), and by when each was due.
HANDED_IN = {
    "ada": "20270201T165500Z",
    "bea": "20270201T180000Z",
    "cy": "20270204T120000Z",
    "dan": "20270206T120000Z",
}
EXTENSIONS = "student,assignment,due\ncy,fx00-tiny,2027-02-05 17:00\n"
# The zip's file names: <student>_<time>_<file>.ipynb
REGEXP = r".*/(?P<student_id>[a-z]+)_(?P<timestamp>\d{8}T\d{6}Z)_(?P<file_id>[^/]+)\.ipynb$"
COMMENT = "Right: a set is a hash lookup; the counts do not change."


def grader(course, *args, allowed=(0,), env=None):
    return course_fixture.grader(course, *args, allowed=allowed, env=env).stdout


def grade_by_hand(course, student, scores: dict, comment: str | None = None):
    """What the formgrader's API does when a grader saves a score or a comment
    (``nbgrader.server_extensions.formgrader.apihandlers``), through nbgrader's ``Gradebook``."""
    from nbgrader.api import Gradebook

    with Gradebook(layout.gradebook_url(course)) as gradebook:
        for cell, score in scores.items():
            grade = gradebook.find_grade(cell, ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score = score
            grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
            if comment:
                gradebook.find_comment(
                    cell, ASSIGNMENT, ASSIGNMENT, student
                ).manual_comment = comment
        gradebook.db.commit()


def report_rows(course) -> dict:
    rows = json.loads((course / layout.REPORTS / f"{ASSIGNMENT}.json").read_text())
    return {r["student"]: r for r in rows}


def exported(course, name: str) -> dict:
    with (course / layout.GRADES / name).open(newline="") as f:
        rows = list(csv.DictReader(f))
    key = {"canvas.csv": "SIS Login ID", "moodle.csv": "Username"}.get(name, "student")
    key = "grade_id" if name.endswith("-items.csv") else key
    return {r[key]: r for r in rows if r.get(key)}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """Release, collect the zip, autograde; then bea's written answers graded by hand, a regrade,
    feedback and the exports. Returns the course and what each command said."""
    tmp = tmp_path_factory.mktemp("rules")
    course = course_fixture.make_course(tmp / "course", repo=course_fixture.GRADER_COURSE)
    solution = make_notebook.notebook(written=True)
    nbformat.write(solution, course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    with (course / "autograder" / "nbgrader_config.py").open("a") as f:
        f.write(RULES)
    said = {"release": grader(course, "release", ASSIGNMENT)}
    archive = tmp / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for student, when in HANDED_IN.items():
            z.writestr(f"{student}_{when}_{ASSIGNMENT}.ipynb", nbformat.writes(solution))
    (course / layout.EXTENSIONS).write_text(EXTENSIONS)
    said["collect"] = grader(course, "collect", ASSIGNMENT, str(archive), "--regexp", REGEXP)
    said["autograde"] = grader(course, "autograde", ASSIGNMENT, "--workers", "2")
    said["first report"] = report_rows(course)
    grade_by_hand(course, "bea", {"written_vowels": 2, "written_measure": 1}, COMMENT)
    said["regrade"] = grader(course, "regrade", ASSIGNMENT, "--student", "bea")
    said["feedback"] = grader(course, "feedback", ASSIGNMENT)
    said["export"] = grader(course, "export", ASSIGNMENT)
    return course, said


def test_release_writes_the_due_date_into_the_gradebook_and_the_notebook(term):
    from nbgrader.api import Gradebook

    course, said = term
    assert "due Monday 01 February 2027, 17:00 (Europe/London)" in said["release"]
    with Gradebook(layout.gradebook_url(course)) as gradebook:
        assert gradebook.find_assignment(ASSIGNMENT).duedate == datetime(2027, 2, 1, 17, 0)
    released = nbformat.read(
        course / layout.RELEASE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4
    )
    header = released.cells[0]
    assert header.cell_type == "markdown" and "Due: Monday 01 February 2027, 17:00" in header.source
    assert "25% of its score for each day or part of a day late" in header.source
    assert "never more than 50%" in header.source
    answer = next(c for c in released.cells if c.get("id") == "written_vowels")
    assert "Rubric" not in answer.source and "YOUR ANSWER HERE" in answer.source, (
        "the model answer and the rubric never reach a student"
    )


def test_collect_records_each_submission_time_and_who_was_late(term):
    course, said = term
    for student in HANDED_IN:
        assert (layout.submission(course, student, ASSIGNMENT) / "timestamp.txt").is_file()
    out = said["collect"]
    assert "bea (late by 1:00:00)" in out and "dan (late by 4 days, 19:00:00)" in out, out
    assert "ada, bea (late" in out and "cy, dan (late" in out, (
        "ada on time, cy within her extension"
    )


def test_the_late_policy_charges_through_nbgrader_and_the_report_shows_it(term):
    _, said = term
    first = said["first report"]
    for student in HANDED_IN:
        assert first[student]["raw_score"] == AUTO_POINTS, first[student]
        assert first[student]["to_grade_by_hand"] == 2, "two written answers wait for a human"
    assert first["ada"]["late_penalty"] == 0 and first["cy"]["late_penalty"] == 0
    assert first["bea"]["late_penalty"] == 0.25 * AUTO_POINTS, "an hour late: one day's 25%"
    assert first["dan"]["late_penalty"] == 0.5 * AUTO_POINTS, "five days late: the 50% floor"
    assert first["dan"]["score"] == AUTO_POINTS / 2
    assert first["cy"]["due"] == "2027-02-05 17:00:00 UTC" and first["cy"]["extension"]
    assert "8 written answer(s) wait for a human" in said["autograde"]
    assert "late: -1.5" in said["autograde"] and "2 to grade by hand" in said["autograde"]


def test_a_written_answer_graded_by_hand_survives_a_regrade_and_counts(term):
    course, said = term
    rows = report_rows(course)
    bea = rows["bea"]
    assert bea["to_grade_by_hand"] == 0, "the same submission graded again keeps its manual grades"
    assert bea["raw_score"] == AUTO_POINTS + WRITTEN_POINTS
    assert bea["late_penalty"] == 0.25 * (AUTO_POINTS + WRITTEN_POINTS), (
        "the penalty is charged again on the score with the written answers"
    )
    scores = course_fixture.scores(course, ASSIGNMENT, "bea")
    assert scores["written_vowels"].score == 2 and scores["written_measure"].score == 1


def test_every_export_holds_the_written_answers_and_the_rules(term):
    course, _ = term
    final = (AUTO_POINTS + WRITTEN_POINTS) * 0.75
    per_question = exported(course, f"{ASSIGNMENT}.csv")
    bea, ada = per_question["bea"], per_question["ada"]
    assert float(bea["written_vowels"]) == 2 and float(bea["written_measure"]) == 1
    assert ada["written_vowels"] == "", "an answer nobody has graded yet is empty, not 0"
    assert float(bea["raw_score"]) == AUTO_POINTS + WRITTEN_POINTS
    assert float(bea["late_penalty"]) == 0.25 * (AUTO_POINTS + WRITTEN_POINTS)
    assert float(bea["score"]) == final and float(bea["max_score"]) == 9
    assert bea["submitted"] == "2027-02-01 18:00:00 UTC" and bea["due"] == "2027-02-01 17:00:00 UTC"
    assert per_question["cy"]["extension"] and int(ada["to_grade_by_hand"]) == 2
    assert float(exported(course, "totals.csv")["bea"][ASSIGNMENT]) == final
    assert float(exported(course, "canvas.csv")["bea"][ASSIGNMENT]) == final
    assert float(exported(course, "moodle.csv")["bea"][ASSIGNMENT]) == final
    items = exported(course, f"{ASSIGNMENT}-items.csv")
    assert items["written_vowels"]["submissions"] == "1", "only graded answers count in the means"


def test_feedback_shows_the_graders_comment_and_the_penalty(term):
    course, _ = term
    page = course / layout.FEEDBACK / "bea" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    text = course_fixture.readable(page)
    assert COMMENT in text, "the grader's comment on the written answer"
    assert "Late submission penalty" in text and "Nothing in the result" in text
    hidden = course_fixture.marked_pairs(make_notebook.notebook(written=True), "HIDDEN TESTS")
    assert hidden and not [pair for pair in hidden if pair in text]


def test_answers_graded_by_hand_run_in_the_students_kernel(term):
    """A code answer graded by hand is a student's cell: it runs in the student's kernel, where the
    student's functions are, even after the hidden tests ran in the tests' kernel."""
    course, _ = term
    graded = nbformat.read(
        layout.autograded(course, "ada", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb", as_version=4
    )
    measure = next(c for c in graded.cells if c.get("id") == "written_measure")
    printed = "".join(o.get("text", "") for o in measure.outputs)
    assert "onomatopoeia has 8 vowels" in printed, measure.outputs


def test_the_exchange_route_records_the_time_and_says_who_was_late(term, tmp_path):
    """A submission through nbgrader's exchange (as the hub's students submit) is collected with
    its time and, past the due date, said late. (The due date moves into the past for it.)"""
    course, _ = term
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    env = {"BERTLAB_EXCHANGE": str(exchange)}
    grader(course, "publish", ASSIGNMENT, env=env)
    home = tmp_path / "home"
    home.mkdir()
    flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=grader-fixture"]
    for step in ("fetch_assignment", "submit"):
        subprocess.run(
            [sys.executable, "-m", "nbgrader", step, ASSIGNMENT, *flags],
            cwd=home,
            env={**nbgrader_env(), "HOME": str(home)},
            check=True,
            capture_output=True,
        )
    with (course / "autograder" / "nbgrader_config.py").open("a") as f:
        f.write('\nc.Deadlines.due_dates = {"fx00-tiny": "2026-01-01 00:00"}\n')
    collected = grader(course, "collect", ASSIGNMENT, "exchange", env=env)
    me = getpass.getuser()
    assert (layout.submission(course, me, ASSIGNMENT) / "timestamp.txt").is_file()
    assert f"{me} (late by" in collected, collected

"""The class hub's exchange and course folder, tried as students would: nothing crosses between
them, and nothing of the course reaches them but its environment.

Two temporary system users (``bltest-<random>-s1``, ``-s2``, removed afterwards) fetch and submit
the grader's test course's assignment with nbgrader's own commands, run as themselves
(``runuser``), from their homes, with the course's Python and the student's Jupyter settings
(``student-lab/``), in a course folder laid out as a hub's and closed as ``make hub`` closes it
(:func:`class_machine.class_course`, :func:`hub.prepare.close_course`); the instructor's grader
publishes, collects, autogrades and releases feedback (``python -m bertlab_grader``,
:mod:`bertlab_grader.exchange`). Then each student reads what nbgrader means them to (the
released assignment, their own feedback) and is refused the rest: the exchange's inbound and
feedback folders, the other's home, and every entry of the course folder but its environment
(the tests' variants, the book's reference code, the solutions, the git history, the gradebook
among them). Skipped, saying why, where this machine cannot create users or no Python students
may run is here; CI fails instead (:mod:`required`).
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import tempfile
from pathlib import Path

import pytest

import course_fixture
from class_hub import no_students_python
from class_machine import INSTRUCTOR, PYTHON, as_user, class_course, remove_users, why_not_here
from hub import prepare

pytestmark = [pytest.mark.slow, pytest.mark.system]  # makes system users

ASSIGNMENT = "fx00-tiny"


@pytest.fixture(scope="module")
def classroom():
    why = why_not_here()
    if why:
        pytest.skip(why)
    base = Path(
        tempfile.mkdtemp(prefix="bltest-hub-", dir="/var/tmp")
    )  # bwrap hides /tmp from kernels
    os.chmod(base, 0o755)
    tag = secrets.token_hex(2)
    students = [f"bltest-{tag}-s1", f"bltest-{tag}-s2"]
    made: list[str] = []
    try:
        roster = {name: "student" for name in students}
        (base / "state").mkdir()
        made += prepare.create_accounts(roster, base / "state")
        course = class_course(base / "course", course_fixture.GRADER_COURSE)
        if course is None:
            pytest.skip(no_students_python())
        exchange = base / "exchange"
        prepare.make_exchange(exchange)
        exchange_env = {**INSTRUCTOR, "BERTLAB_EXCHANGE": str(exchange)}

        def grader(*args, allowed=(0,)):
            return course_fixture.grader(course, *args, allowed=allowed, env=exchange_env).stdout

        grader("release", ASSIGNMENT)
        closed = prepare.close_course(course, roster)
        grader("publish", ASSIGNMENT)
        student_env = {
            "JUPYTER_CONFIG_PATH": str(course / "student-lab"),
            "BERTLAB_EXCHANGE": str(exchange),
            "BERTLAB_COURSE_ID": "grader-fixture",
        }
        for student in students:
            as_user(
                student,
                PYTHON[0],
                "-m",
                "nbgrader",
                "fetch_assignment",
                ASSIGNMENT,
                env=student_env,
            )
            as_user(student, PYTHON[0], "-m", "nbgrader", "submit", ASSIGNMENT, env=student_env)
        collected = grader("collect", ASSIGNMENT, "exchange")
        grader(
            "autograde", ASSIGNMENT, allowed=(0, 1)
        )  # both stubs: 1 is fine, scores are checked later
        released = grader("feedback", ASSIGNMENT)
        for student in students:
            as_user(
                student, PYTHON[0], "-m", "nbgrader", "fetch_feedback", ASSIGNMENT, env=student_env
            )
        yield {
            "students": students,
            "exchange": exchange / "grader-fixture",
            "course": course,
            "collected": collected,
            "released": released,
            "closed": closed,
        }
    finally:
        remove_users(made)
        shutil.rmtree(base, ignore_errors=True)


def test_the_grader_collects_and_releases_through_the_exchange(classroom):
    s1, s2 = classroom["students"]
    assert (
        f"collected 2 new submission(s) of {ASSIGNMENT} from the exchange" in classroom["collected"]
    )
    assert (
        f"feedback released to the exchange (each student's Assignments tab): {s1}, {s2}"
        in classroom["released"]
    )
    for student in classroom["students"]:
        assert (
            classroom["course"] / "autograder/submitted" / student / ASSIGNMENT / "timestamp.txt"
        ).is_file()


def test_a_student_reads_the_release_and_their_own_feedback(classroom):
    exchange = classroom["exchange"]
    for student in classroom["students"]:
        as_user(student, "cat", str(exchange / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
        feedback = as_user(
            student, "find", f"{ASSIGNMENT}/feedback", "-name", "*.html"
        ).stdout.splitlines()
        assert len(feedback) == 1, f"{student} fetched {feedback}"


def test_a_student_reaches_nothing_of_another_student_nor_the_course(classroom):
    s1, s2 = classroom["students"]
    exchange, course = classroom["exchange"], classroom["course"]
    refused = {
        "list the submissions (inbound)": ["ls", str(exchange / "inbound")],
        "list the released feedback": ["ls", str(exchange / "feedback")],
        "open the other student's home": ["ls", str(Path("~" + s1).expanduser())],
        "list the course folder": ["ls", str(course)],
        "read the tests' variants (correct implementations)": [
            "ls",
            str(course / "tests" / "variants"),
        ],
        "read the book's reference code": ["ls", str(course / "book" / "reference")],
        "read the reference solutions": ["ls", str(course / "solutions")],
        "read the git history": ["ls", str(course / ".git")],
        "read the gradebook": ["cat", str(course / "autograder" / "gradebook.db")],
        "read the collected submissions": ["ls", str(course / "autograder" / "submitted")],
        "read the hub's roster and settings": ["ls", str(course / "hub")],
    }
    for what, cmd in refused.items():
        proc = as_user(s2, *cmd, check=False)
        assert proc.returncode != 0 and "Permission denied" in proc.stderr, (
            f"{s2} could {what}: {proc.stdout}"
        )
    # nbgrader's own listing shows a student their own submission and feedback only
    listed = as_user(
        s2,
        PYTHON[0],
        "-m",
        "nbgrader",
        "list",
        "--cached",
        env={
            "JUPYTER_CONFIG_PATH": str(course / "student-lab"),
            "BERTLAB_EXCHANGE": str(exchange.parent),
            "BERTLAB_COURSE_ID": "grader-fixture",
        },
    )
    assert s1 not in listed.stdout + listed.stderr


def test_the_course_folder_opens_to_students_only_its_environment(classroom):
    """The allow-list, entry by entry: a student opens exactly hub.prepare.STUDENT_READS of the
    course folder, and the course's Python finds the course package in the course folder (the
    students' Validate in tests/grader/test_hub_lab.py imports it)."""
    s1 = classroom["students"][0]
    course = classroom["course"]
    entries = sorted(entry.name for entry in course.iterdir())
    assert {"tests", "book", "solutions", ".git", *prepare.STUDENT_READS} <= set(entries)
    tries = " ".join(shlex.quote(str(course / name)) for name in entries)
    opened = as_user(
        s1, "sh", "-c", f'for e in {tries}; do [ -r "$e" ] && echo "$e"; done; true'
    ).stdout.split()
    assert sorted(Path(e).name for e in opened) == sorted(prepare.STUDENT_READS), opened
    assert sorted(classroom["closed"]) == sorted(set(entries) - set(prepare.STUDENT_READS))
    found = as_user(  # where the course's Python finds the course package (not importing torch)
        s1, PYTHON[0], "-c", "import importlib.util as u; print(u.find_spec('bertlab').origin)"
    )
    assert Path(found.stdout.strip()).is_relative_to(course / "bertlab"), found.stdout

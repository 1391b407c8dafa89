"""The class hub's exchange, tried as students would: nothing crosses between them.

Two temporary system users (``bltest-<random>-s1``, ``-s2``, removed afterwards) fetch and submit
the grader's test course's assignment with nbgrader's own commands, run as themselves
(``runuser``), from their homes, with the students' config of ``hub/student``; the instructor's
grader publishes, collects, autogrades and releases feedback (``python -m bertlab_grader``,
:mod:`bertlab_grader.exchange`). Then each student reads what nbgrader means them to (the
released assignment, their own feedback) and is refused the rest: the exchange's inbound and
feedback folders, the other's home, the course's solutions and gradebook. Skipped, saying why,
where this machine cannot create users or a student cannot run the course's Python.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

import course_fixture
from class_machine import PYTHON, as_user, remove_users, student_python, why_not_here

pytestmark = pytest.mark.slow

REPO = course_fixture.REPO
HUB = REPO / "hub"
ASSIGNMENT = "fx00-tiny"
sys.path.insert(0, str(HUB))


@pytest.fixture(scope="module")
def classroom():
    why = why_not_here()
    if why:
        pytest.skip(why)
    import prepare

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
        python = student_python(students[0], base)
        if python is None:
            probe = as_user(students[0], sys.executable, "-c", "pass", check=False)
            pytest.skip(
                f"a student cannot run the course's Python {os.path.realpath(sys.executable)} "
                f"({probe.stderr.strip()[:120]}) and this machine has no python"
                f"{sys.version_info.major}.{sys.version_info.minor} of its own: install the venv "
                "from a Python outside a closed home"
            )
        PYTHON[0] = python
        exchange = base / "exchange"
        prepare.make_exchange(exchange)
        course = course_fixture.make_course(base / "course", course_fixture.GRADER_COURSE)
        exchange_env = {"BERTLAB_EXCHANGE": str(exchange)}

        def grader(*args, allowed=(0,)):
            return course_fixture.grader(course, *args, allowed=allowed, env=exchange_env).stdout

        grader("release", ASSIGNMENT)
        prepare.close_private_folders(course, roster)
        grader("publish", ASSIGNMENT)
        student_env = {
            "JUPYTER_CONFIG_PATH": str(HUB / "student"),
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
        "read the reference solutions": ["ls", str(course / "solutions")],
        "read the gradebook": ["cat", str(course / "autograder" / "gradebook.db")],
        "read the collected submissions": ["ls", str(course / "autograder" / "submitted")],
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
            "JUPYTER_CONFIG_PATH": str(HUB / "student"),
            "BERTLAB_EXCHANGE": str(exchange.parent),
            "BERTLAB_COURSE_ID": "grader-fixture",
        },
    )
    assert s1 not in listed.stdout + listed.stderr

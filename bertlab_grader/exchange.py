"""The class hub's route: assignments out through nbgrader's exchange, submissions and feedback back.

On a JupyterHub (``make hub``; docs/instructors.md, "A class on a JupyterHub") a student fetches an
assignment from JupyterLab's Assignments tab, submits it there and reads the feedback there. All
three go through nbgrader's exchange, one folder on the machine (``$BERTLAB_EXCHANGE``, else
:data:`DEFAULT_ROOT`, root's, writable by all: nbgrader's own permissions), and this module calls
nbgrader's own exchange classes (``nbgrader.exchange.default``) through ``NbGraderAPI``:

- :func:`publish`: ``release_assignment``, the generated student version (``exercises/<id>``) into
  ``<exchange>/<course>/outbound/<id>``;
- :func:`collect`: ``collect``, each student's latest submission from ``<course>/inbound`` into
  ``autograder/submitted/<student>/<id>/`` (with its ``timestamp.txt``, which autograde reads for
  lateness), returning who was collected and who was late (extensions included);
- :func:`release_feedback`: ``release_feedback``, each student's HTML feedback into
  ``<course>/feedback/<hash>.html``, where only that student's submission names it.

A student reads no other student's work because nbgrader names every submission and feedback file
with a secret the student's own copy holds, and the folders that hold them cannot be listed
(``inbound`` is ``-wx`` for others, ``feedback`` ``--x``): ``tests/grader/test_hub_exchange.py`` tries it
as a student. The LMS route (:mod:`bertlab_grader.collect`) is untouched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bertlab_grader import layout

DEFAULT_ROOT = "/srv/nbgrader/exchange"
EXCHANGE_ENV = "BERTLAB_EXCHANGE"


class ExchangeError(RuntimeError):
    """The exchange is missing, or nbgrader's exchange command failed: the message says what to do."""


def exchange_root() -> Path:
    """The exchange folder: ``$BERTLAB_EXCHANGE``, else :data:`DEFAULT_ROOT` (what ``make hub`` creates)."""
    return Path(os.environ.get(EXCHANGE_ENV, "").strip() or DEFAULT_ROOT)


def _api(course: Path):
    """nbgrader's API on the course's own config, pointed at the exchange (which must exist)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    root = exchange_root()
    if not root.is_dir():
        raise ExchangeError(
            f"no exchange at {root}: start the class's hub first (sudo make hub), "
            f"or set {EXCHANGE_ENV} to the exchange folder"
        )
    if not (Path(course) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{course} is not the course root (no nbgrader_config.py)")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.Exchange.root = str(root)
    config.ExchangeReleaseAssignment.force = True  # publishing again replaces the release
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _run(result: dict, what: str) -> str:
    if not result.get("success"):
        raise ExchangeError(
            f"{what} failed:\n{result.get('error') or ''}\n{result.get('log') or ''}"
        )
    return result.get("log") or ""


def course_folder(course: Path) -> Path:
    """This course's folder in the exchange (``<exchange>/<course id>``)."""
    return exchange_root() / _api(course).coursedir.course_id


def is_published(course: Path, assignment: str) -> bool:
    """Whether the assignment went out through the exchange (then feedback goes back through it)."""
    try:
        return (course_folder(course) / "outbound" / assignment).is_dir()
    except ExchangeError:
        return False


def publish(course: Path, assignment: str) -> Path:
    """Release ``exercises/<assignment>`` to the exchange; returns where students fetch it from."""
    if not (Path(course) / layout.RELEASE / assignment).is_dir():
        raise ExchangeError(
            f"{assignment} is not generated in {layout.RELEASE}/: "
            f"make release ASSIGNMENT={assignment} first"
        )
    _run(_api(course).release_assignment(assignment), f"publishing {assignment}")
    return course_folder(course) / "outbound" / assignment


@dataclass
class Collected:
    """Who was collected from the exchange, and who of them submitted after their due date."""

    students: list[str] = field(default_factory=list)
    late: dict[str, str] = field(default_factory=dict)  # student -> "late by 2:03:00"


def collect(course: Path, assignment: str) -> Collected:
    """Each student's latest submission of ``assignment`` into ``autograder/submitted/``; who was
    late is judged against each student's due date, extensions included
    (:func:`bertlab_grader.deadlines.late_by`)."""
    from bertlab_grader.deadlines import late_by, submitted_at

    course = Path(course).resolve()
    before = {
        p.parent.name: submitted_at(p) for p in (course / layout.SUBMITTED).glob(f"*/{assignment}")
    }
    _run(_api(course).collect(assignment, update=True), f"collecting {assignment}")
    result = Collected()
    for folder in sorted((course / layout.SUBMITTED).glob(f"*/{assignment}")):
        student, when = folder.parent.name, submitted_at(folder)
        if when is None or before.get(student) == when:
            continue  # not from the exchange, or unchanged since the last collect
        result.students.append(student)
    result.late = late_by(course, assignment, result.students)
    return result


def release_feedback(course: Path, assignment: str, students: list[str] | None = None) -> list[str]:
    """Each student's feedback (``autograder/feedback/<student>/<assignment>``) into the exchange,
    where the Assignments tab shows it to that student only; returns the students released."""
    api = _api(course)
    done = []
    for student in students or [None]:
        _run(api.release_feedback(assignment, student), f"releasing {assignment}'s feedback")
        done += (
            [student]
            if student
            else sorted(
                p.parent.name for p in (Path(course) / layout.FEEDBACK).glob(f"*/{assignment}")
            )
        )
    return done

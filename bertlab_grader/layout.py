"""Where the course keeps what the grader reads and writes, written down once.

nbgrader's ``CourseDirectory`` (``autograder/nbgrader_config.py``), the course grader
(``python -m bertlab_grader``), the sandbox (what a kernel must not see) and the tests all read
these names from here, so a folder is renamed in one place. Paths are relative to the course
root: the folder holding ``nbgrader_config.py`` (a course's repository, or a scratch copy of it).

    solutions/<assignment>/                        source: reference solutions + hidden tests
    exercises/<assignment>/                        release: what students get (generated, committed)
    autograder/downloaded/<assignment>/            an LMS's zip of submissions, before ``collect``
    autograder/submitted/<student>/<assignment>/   collected submissions (never committed)
    autograder/autograded/, autograder/feedback/   nbgrader's outputs (never committed)
    autograder/reports/<assignment>.csv/.json      the grader's table: score, time, flags
    autograder/grades/                             exports for a spreadsheet or an LMS
    autograder/extensions.csv                      extensions: student,assignment,due (never committed)
    autograder/similarity/<assignment>/            the similarity report: HTML and CSV

The gradebook is one setting: ``$BERTLAB_GRADEBOOK_URL`` (any SQLAlchemy URL nbgrader accepts,
e.g. ``postgresql://grader@db/bertlab``), else the SQLite file ``autograder/gradebook.db``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

SOURCE = "solutions"
RELEASE = "exercises"
DOWNLOADED = "autograder/downloaded"
SUBMITTED = "autograder/submitted"
AUTOGRADED = "autograder/autograded"
FEEDBACK = "autograder/feedback"
REPORTS = "autograder/reports"
GRADES = "autograder/grades"
EXTENSIONS = "autograder/extensions.csv"
SIMILARITY = "autograder/similarity"
GRADEBOOK = "autograder/gradebook.db"
GRADEBOOK_ENV = "BERTLAB_GRADEBOOK_URL"


def gradebook_url(root: Path | str) -> str:
    """The gradebook of the course at ``root``: ``$BERTLAB_GRADEBOOK_URL``, else its SQLite file."""
    url = os.environ.get(GRADEBOOK_ENV, "").strip()
    return url or "sqlite:///" + str(Path(root).resolve() / GRADEBOOK)


@contextmanager
def using_gradebook(url: str | None):
    """Within the block, ``$BERTLAB_GRADEBOOK_URL`` is ``url`` (None: unset, so each course uses
    its own SQLite file); restored after."""
    before = os.environ.get(GRADEBOOK_ENV)
    if url:
        os.environ[GRADEBOOK_ENV] = url
    else:
        os.environ.pop(GRADEBOOK_ENV, None)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(GRADEBOOK_ENV, None)
        else:
            os.environ[GRADEBOOK_ENV] = before


def sqlite_file(url: str) -> Path | None:
    """The file behind a ``sqlite:///`` URL, or None for a database server."""
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


def assignments(root: Path | str) -> list[str]:
    """The ids of the course's assignments: the folders in ``solutions/``."""
    return sorted(
        p.name
        for p in (Path(root) / SOURCE).iterdir()
        if p.is_dir() and not p.name.startswith((".", "_"))
    )


def submission(root: Path | str, student: str, assignment: str) -> Path:
    return Path(root) / SUBMITTED / student / assignment


def autograded(root: Path | str, student: str, assignment: str) -> Path:
    return Path(root) / AUTOGRADED / student / assignment


def feedback(root: Path | str, student: str, assignment: str) -> Path:
    return Path(root) / FEEDBACK / student / assignment

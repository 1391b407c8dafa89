"""What grading one submission produced, in one shape wherever it was graded, and its one writer.

A submission is graded in another process: a worker of the local grader
(:mod:`bertlab_grader.parallel`) or a Dask task's child on another machine
(:mod:`bertlab_grader.grade_one`, :mod:`bertlab_grader.distributed`). Each sends back an
:class:`Outcome` of plain values (the second as JSON, checked by :meth:`Outcome.from_json`, never
an object a submission could have pickled). The parent process alone writes outcomes into the
course gradebook (:func:`record`, one transaction each) and remembers what it graded
(:func:`settle`); :func:`place_graded` puts the graded notebooks into ``autograder/autograded/``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from bertlab_grader import layout


@dataclass
class Outcome:
    """What grading one student produced, as plain values (it crosses a process boundary)."""

    student: str
    success: bool
    seconds: float
    error: str = (
        ""  # why it could not be graded (the end of nbgrader's log, or the grader's reason)
    )
    timestamp: str | None = None  # the submission's, ISO 8601
    notebooks: dict = field(default_factory=dict)  # name -> {"flagged", "grades", "comments"}
    files: dict = field(default_factory=dict)  # graded notebooks sent as text: path -> JSON text
    autograded: str = ""  # or the folder of graded notebooks, on this machine

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, record) -> Outcome:
        """An outcome from a record parsed from JSON, with its fields and types (else ValueError)."""
        if not isinstance(record, dict) or set(record) != {f.name for f in fields(cls)}:
            raise ValueError(f"not a grading record: {str(record)[:200]}")
        for name, kind in _KINDS.items():
            if (
                kind is float
                and isinstance(record[name], int)
                and not isinstance(record[name], bool)
            ):
                record[name] = float(record[name])
            if not isinstance(record[name], kind):
                raise ValueError(
                    f"a grading record whose {name} is a {type(record[name]).__name__}"
                )
        return cls(**record)


#: Each field's types, as :meth:`Outcome.from_json` accepts them.
_KINDS = {
    "student": str,
    "success": bool,
    "seconds": float,
    "error": str,
    "timestamp": (str, type(None)),
    "notebooks": dict,
    "files": dict,
    "autograded": str,
}


def failed(student: str, seconds: float, why: str) -> Outcome:
    """The outcome of a submission that could not be graded."""
    return Outcome(student, False, seconds, error=why)


def read_submission(url: str, assignment: str, student: str) -> tuple[str | None, dict]:
    """The graded submission in a gradebook, as plain values: (timestamp, notebooks)."""
    from nbgrader.api import Gradebook

    with Gradebook(url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        notebooks = {
            nb.name: {
                "flagged": nb.flagged,
                "grades": {
                    g.name: {"auto_score": g.auto_score, "needs_manual_grade": g.needs_manual_grade}
                    for g in nb.grades
                },
                "comments": {c.name: c.auto_comment for c in nb.comments},
            }
            for nb in submission.notebooks
        }
        stamp = submission.timestamp.isoformat() if submission.timestamp else None
    return stamp, notebooks


def record(course: Path, assignment: str, outcome: Outcome, unchanged: bool = False) -> None:
    """Write one graded submission into the course gradebook, in one transaction (a crash midway
    leaves the gradebook as it was): auto scores and comments only, manual grades already there
    stay. A submission that could not be graded adds its student only, so the report lists them.
    A manual grade waits for a human again only if the submission changed since it was graded
    (``unchanged``: the same content graded again), as nbgrader's own autograde marks it."""
    from datetime import datetime

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with Gradebook(layout.gradebook_url(course)) as gradebook, warnings.catch_warnings():
        # nbgrader's add_submission autoflushes half-built rows and SQLAlchemy says so; harmless
        warnings.simplefilter("ignore", SAWarning)
        commit, gradebook.db.commit = (
            gradebook.db.commit,
            gradebook.db.flush,
        )  # nbgrader commits per row
        try:
            gradebook.update_or_create_student(outcome.student)
            if outcome.success:
                stamp = datetime.fromisoformat(outcome.timestamp) if outcome.timestamp else None
                gradebook.update_or_create_submission(assignment, outcome.student, timestamp=stamp)
                for name, notebook in outcome.notebooks.items():
                    _write_notebook(
                        gradebook, assignment, outcome.student, name, notebook, unchanged
                    )
            commit()
        except BaseException:
            gradebook.db.rollback()
            raise
        finally:
            gradebook.db.commit = commit


def _write_notebook(
    gradebook, assignment: str, student: str, name: str, notebook: dict, unchanged: bool = False
) -> None:
    """One notebook's flag, auto scores and comments onto its rows: its grades and comments are
    read once (nbgrader's ``find_grade`` per cell joins four tables and flushes before each
    query, most of the parent's time per submission), and written in one flush at the commit.
    A cell the gradebook does not have is refused as ``find_grade`` refuses it."""
    from nbgrader.api import MissingEntry

    def row(rows: dict, cell: str):
        if cell not in rows:
            raise MissingEntry(f"No such cell: {assignment}/{student}/{name}/{cell}")
        return rows[cell]

    graded = gradebook.find_submission_notebook(name, assignment, student)
    with gradebook.db.no_autoflush:
        grades = {grade.name: grade for grade in graded.grades}
        comments = {comment.name: comment for comment in graded.comments}
        graded.flagged = notebook["flagged"]
        for cell, values in notebook["grades"].items():
            grade = row(grades, cell)
            grade.auto_score = values["auto_score"]
            # nbgrader: a manual grade on a submission graded again needs review; on the same
            # content graded again (a forced regrade), it stands
            graded_by_hand = grade.manual_score is not None
            grade.needs_manual_grade = (
                (not unchanged) if graded_by_hand else values["needs_manual_grade"]
            )
        for cell, text in notebook["comments"].items():
            row(comments, cell).auto_comment = text


def settle(
    course: Path, assignment: str, outcome: Outcome, submission: str, state: dict, state_path: Path
) -> None:
    """Record one graded submission, then remember its content hash (``None`` if it could not
    be graded, so it is tried again): the state file is written only after the gradebook."""
    key = f"{assignment}/{outcome.student}"
    record(course, assignment, outcome, unchanged=state.get(key) == submission)
    state[key] = submission if outcome.success else None
    state_path.parent.mkdir(parents=True, exist_ok=True)
    state_path.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")


def place_graded(course: Path, assignment: str, outcome: Outcome) -> None:
    """The graded notebooks of an outcome into ``autograder/autograded/<student>/<assignment>/``
    (a copy of its folder, or its files written out); none: the old ones are removed."""
    final = layout.autograded(course, outcome.student, assignment)
    shutil.rmtree(final, ignore_errors=True)
    if outcome.success and outcome.autograded:
        shutil.copytree(outcome.autograded, final)
    for name, text in outcome.files.items():
        path = final / name
        if not path.resolve().is_relative_to(final.resolve()):
            continue  # a name that leaves the folder (a record is not trusted)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

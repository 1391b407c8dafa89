"""Grade one submission in a scratch course, in a process of its own, and write a JSON record.

``python -m bertlab_grader.grade_one COURSE ASSIGNMENT STUDENT RECORD`` runs nbgrader's own
``NbGraderAPI.autograde`` (the course's guarded, sandboxed, capped ``Execute``) on
``COURSE/autograder/submitted/STUDENT/ASSIGNMENT/`` and writes ``RECORD``: plain JSON with every
grade, comment and flag of that submission and the graded notebooks' text. This is what a Dask
worker runs for each task (:mod:`bertlab_grader.distributed`): student code never runs in the
worker's own process (it runs in the kernel this process starts), and the worker returns the
record it parsed as JSON, never an object a submission could have pickled.

The scratch course is a course bundle (:func:`bertlab_grader.distributed.course_bundle`): the
nbgrader config, the assignment's source, and a SQLite gradebook of its release.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from bertlab_grader import layout

#: The fields of a record, and their types: what a worker accepts from this process.
RECORD_FIELDS = {"student": str, "success": bool, "seconds": float, "error": str, "timestamp": (str, type(None)),
                 "notebooks": dict, "files": dict}


def read_submission(url: str, assignment: str, student: str) -> tuple[str | None, dict]:
    """The graded submission in a gradebook, as plain values: (timestamp, notebooks)."""
    from nbgrader.api import Gradebook

    with Gradebook(url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        notebooks = {
            nb.name: {"flagged": nb.flagged,
                      "grades": {g.name: {"auto_score": g.auto_score, "needs_manual_grade": g.needs_manual_grade}
                                 for g in nb.grades},
                      "comments": {c.name: c.auto_comment for c in nb.comments}}
            for nb in submission.notebooks}
        stamp = submission.timestamp.isoformat() if submission.timestamp else None
    return stamp, notebooks


def grade(course: Path, assignment: str, student: str) -> dict:
    """Grade one student in ``course`` (a scratch course); return the record."""
    from bertlab_grader.nbgrader_course import nbgrader_api

    course = Path(course).resolve()
    if not (course / layout.GRADEBOOK).is_file():
        raise FileNotFoundError(f"{course / layout.GRADEBOOK}: a course bundle holds the release's gradebook")
    url = "sqlite:///" + str(course / layout.GRADEBOOK)
    os.environ[layout.GRADEBOOK_ENV] = url  # this course's own gradebook, never the instructor's
    api = nbgrader_api(course)
    start = time.perf_counter()
    result = api.autograde(assignment, student, force=True, create=True)
    record = {"student": student, "success": bool(result["success"]), "seconds": time.perf_counter() - start,
              "error": "", "timestamp": None, "notebooks": {}, "files": {}}
    if not result["success"]:
        record["error"] = (result.get("error") or result.get("log") or "")[-4000:]
        return record
    record["timestamp"], record["notebooks"] = read_submission(url, assignment, student)
    graded = layout.autograded(course, student, assignment)
    record["files"] = {str(p.relative_to(graded)): p.read_text(errors="replace")
                       for p in sorted(graded.rglob("*.ipynb")) if p.is_file()}
    return record


def checked(record) -> dict:
    """A record as parsed from JSON, with the fields and types a record has (else ValueError)."""
    if not isinstance(record, dict) or set(record) != set(RECORD_FIELDS):
        raise ValueError(f"not a grading record: {str(record)[:200]}")
    for name, kind in RECORD_FIELDS.items():
        if kind is float and isinstance(record[name], int):
            record[name] = float(record[name])
        if not isinstance(record[name], kind):
            raise ValueError(f"a grading record whose {name} is a {type(record[name]).__name__}")
    return record


def main(argv: list[str]) -> int:
    from bertlab_grader.warm import pool

    course, assignment, student, out = argv
    # One kernel in this process: a warm-kernel zygote would only add its own start to it.
    os.environ.setdefault(pool.ENV_VAR, "off")
    Path(out).write_text(json.dumps(grade(Path(course), assignment, student)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

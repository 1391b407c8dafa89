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
from bertlab_grader.records import Outcome, failed, read_submission


def grade(course: Path, assignment: str, student: str) -> dict:
    """Grade one student in ``course`` (a scratch course); return the record
    (:meth:`bertlab_grader.records.Outcome.to_json`)."""
    from bertlab_grader.nbgrader_course import nbgrader_api

    course = Path(course).resolve()
    if not (course / layout.GRADEBOOK).is_file():
        raise FileNotFoundError(
            f"{course / layout.GRADEBOOK}: a course bundle holds the release's gradebook"
        )
    url = "sqlite:///" + str(course / layout.GRADEBOOK)
    os.environ[layout.GRADEBOOK_ENV] = url  # this course's own gradebook, never the instructor's
    api = nbgrader_api(course)
    start = time.perf_counter()
    result = api.autograde(assignment, student, force=True, create=True)
    seconds = time.perf_counter() - start
    if not result["success"]:
        return failed(
            student, seconds, (result.get("error") or result.get("log") or "")[-4000:]
        ).to_json()
    stamp, notebooks = read_submission(url, assignment, student)
    graded = layout.autograded(course, student, assignment)
    files = {
        str(p.relative_to(graded)): p.read_text(errors="replace")
        for p in sorted(graded.rglob("*.ipynb"))
        if p.is_file()
    }
    return Outcome(
        student, True, seconds, timestamp=stamp, notebooks=notebooks, files=files
    ).to_json()


def main(argv: list[str]) -> int:
    from bertlab_grader import unused_imports
    from bertlab_grader.sandbox.warm import pool

    unused_imports.leave_out()
    course, assignment, student, out = argv
    # One kernel in this process: a warm-kernel zygote would only add its own start to it.
    os.environ.setdefault(pool.ENV_VAR, "off")
    Path(out).write_text(json.dumps(grade(Path(course), assignment, student)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The grader's command line: each command's arguments (``python -m bertlab_grader --help``).

The commands themselves are :mod:`bertlab_grader.__main__`'s, which dispatches on ``command``.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m bertlab_grader", description="The course's grader, one command per step."
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help):
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument(
            "--course", type=Path, default=Path.cwd(), help="the course root (default: here)"
        )
        return sub

    sub = command(
        "release",
        "write the student version of assignments into exercises/ and record their "
        "tests in the gradebook (default: every assignment)",
    )
    sub.add_argument("assignment", nargs="*")
    sub = command("publish", "release the student version to nbgrader's exchange (the class's hub)")
    sub.add_argument("assignment")
    sub = command(
        "collect",
        "copy submissions into autograder/submitted/ from a folder (one folder per "
        "student) or an LMS zip (Canvas's file names by default)",
    )
    sub.add_argument("assignment")
    sub.add_argument(
        "source",
        type=Path,
        help="a folder of student folders, a zip downloaded from the LMS, or "
        "'exchange': nbgrader's exchange (a folder named so: ./exchange)",
    )
    sub.add_argument(
        "--regexp",
        help="how a file name in the zip names its student: a regular expression with "
        "the groups (?P<student_id>...) and (?P<file_id>...), matched on the whole path",
    )
    for name, help in (
        ("autograde", "grade submissions in parallel, then report"),
        ("regrade", "grade submissions again, changed or not, then report"),
    ):
        sub = command(name, help)
        sub.add_argument("assignment")
        sub.add_argument(
            "--workers",
            type=int,
            default=None,
            help="students at once (default: one per core, one more from 8 submissions per core)",
        )
        sub.add_argument(
            "--scheduler",
            help="grade on the Dask cluster at this address (tcp://host:8786) "
            "instead of on this machine's cores",
        )
        sub.add_argument("--student", action="append", help="only this student (repeatable)")
        if name == "autograde":
            sub.add_argument(
                "--force", action="store_true", help="grade again even if unchanged since graded"
            )
    sub = command("feedback", "write HTML feedback, hidden tests removed")
    sub.add_argument("assignment")
    sub.add_argument("--student", action="append", help="only this student (repeatable)")
    sub = command("export", "write per-question and total scores as CSV into autograder/grades/")
    sub.add_argument("assignment", nargs="*")
    sub = command(
        "similarity",
        "compare every student's answer cells with every other student's and with the course's "
        "public reference code; write an HTML report and a CSV into autograder/similarity/ "
        "(it changes no score)",
    )
    sub.add_argument("assignment")
    sub.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="the share of an answer found elsewhere from which a pair is shown in the HTML "
        "(default: c.Similarity.threshold)",
    )
    command("doctor", "say what a grading kernel on this machine can read, write, reach and use")
    return top

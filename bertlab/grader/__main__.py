"""``python -m bertlab.grader autograde ASSIGNMENT [--workers N] [--student S ...] [--force]``

Run from the course root (or pass ``--course``), after the assignment is released. Grades the
submissions in ``autograder/submitted/<student>/ASSIGNMENT/`` in parallel
(:mod:`bertlab.grader.parallel`), then prints one row per student (score, seconds, what needs a
look) and writes it to ``autograder/reports/ASSIGNMENT.csv`` and ``.json``. Exits 1 naming every
student whose submission needs a look, 2 when there is nothing to grade.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bertlab import grade_report
from bertlab.grader import parallel


def autograde(args: argparse.Namespace) -> int:
    course = args.course.resolve()
    if not (course / "autograder" / "gradebook.db").is_file():
        print(f"no gradebook in {course / 'autograder'}: release the assignment first "
              f"(make release, or nbgrader generate_assignment {args.assignment})", file=sys.stderr)
        return 2
    if not any((course / "autograder" / "submitted").glob(f"*/{args.assignment}")):
        print(f"no submissions: put them in {course / 'autograder' / 'submitted'}/<student>/{args.assignment}/",
              file=sys.stderr)
        return 2
    outcomes = {o.student: o for o in parallel.autograde(course, args.assignment, args.workers, args.student,
                                                         args.force)}
    if not outcomes:
        print("every submission is graded and unchanged since (--force grades them again)")
    rows = grade_report.report(course, args.assignment)
    if args.student:
        rows = [r for r in rows if r["student"] in args.student]
    for row in rows:
        outcome = outcomes.get(row["student"])
        row["seconds"] = round(outcome.seconds, 1) if outcome else None
        if outcome and not outcome.success:
            last = outcome.error.strip().splitlines()[-1:] or ["nbgrader could not grade it"]
            row["flags"] = "; ".join(filter(None, [row["flags"], f"not graded: {last[0][:200]}"]))
    width = max([len(r["student"]) for r in rows] + [7])
    for r in rows:
        score = "-" if r["score"] is None else f"{r['score']:g}"
        seconds = "" if r["seconds"] is None else f"{r['seconds']:6.1f} s"
        print(f"{r['student']:<{width}}  {score:>5} / {r['max_score']:g}  {seconds:>8}  {r['flags']}")
    paths = grade_report.write(rows, course / "autograder" / "reports", args.assignment)
    print("written:", ", ".join(str(p.relative_to(course)) for p in paths))
    look = [r["student"] for r in rows if r["flags"]]
    if look:
        print(f"{len(look)} to look at: {', '.join(look)}", file=sys.stderr)
    return 1 if look else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bertlab.grader", description="The course's grader.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("autograde", help="grade submissions in parallel, then report")
    grade.add_argument("assignment")
    grade.add_argument("--workers", type=int, default=None, help="students at once (default: one per core)")
    grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    grade.add_argument("--force", action="store_true", help="grade again even if unchanged since graded")
    grade.add_argument("--course", type=Path, default=Path.cwd(), help="the course root (default: here)")
    args = parser.parse_args(argv)
    return autograde(args)


if __name__ == "__main__":
    sys.exit(main())

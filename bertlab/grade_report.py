"""After an autograde run: one row per student, what they scored and what needs a look.

``nbgrader autograde`` writes scores into the gradebook and graded notebooks into
``autograder/autograded/``, and says in its log which submissions it could not run. An
instructor wants one table: each student's score, and the submissions to open by hand, with
why (a test that did not count because the kernel was rigged, a kernel that died, output the
grader cut, a submission nbgrader could not grade at all). This module reads the gradebook
with nbgrader's own API and the graded notebooks' outputs (the errors
:mod:`bertlab.guarded_execute` writes), prints that table and writes it as CSV and JSON.

    python -m bertlab.grade_report ps04-mlm      # from the course root, after autograde

Exits 1 when a student needs a look, naming them. ``make autograde`` runs it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import nbformat

#: Error names in a graded notebook, and what each means for the instructor.
FLAGS = {
    "GradingIntegrityError": "kernel rigged: a test did not count",
    "KernelDied": "kernel died: later cells scored 0",
}
OUTPUT_CUT = "the grader cut the output here"


def notebook_flags(path: Path) -> list[str]:
    """What in one graded notebook an instructor should look at (empty: nothing)."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and out.get("ename") in FLAGS:
                found.append(FLAGS[out["ename"]])
            elif out.get("output_type") == "stream" and OUTPUT_CUT in out.get("text", ""):
                found.append("output cut at the byte limit")
    return list(dict.fromkeys(found))


def report(course: Path, assignment: str) -> list[dict]:
    """One row per student of the gradebook: score, max_score, flags (a '; '-joined string)."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course / "autograder" / "gradebook.db"
    rows = []
    with Gradebook("sqlite:///" + str(db)) as gradebook:
        max_score = gradebook.find_assignment(assignment).max_score
        for student in sorted(s.id for s in gradebook.students):
            row = {"student": student, "assignment": assignment, "score": None, "max_score": max_score}
            graded = course / "autograder" / "autograded" / student / assignment
            try:
                row["score"] = gradebook.find_submission(assignment, student).score
            except MissingEntry:
                submitted = course / "autograder" / "submitted" / student / assignment
                row["flags"] = "not graded: nbgrader could not run it" if submitted.is_dir() else "no submission"
                rows.append(row)
                continue
            flags = [f for nb in sorted(graded.glob("*.ipynb")) for f in notebook_flags(nb)]
            if not graded.is_dir():
                flags.append("not graded: nbgrader could not run it")
            row["flags"] = "; ".join(dict.fromkeys(flags))
            rows.append(row)
    return rows


def write(rows: list[dict], folder: Path, assignment: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = folder / f"{assignment}.csv", folder / f"{assignment}.json"
    with csv_path.open("w", newline="") as f:  # csv quotes a name with a comma, unlike nbgrader's export
        fields = ["student", "assignment", "score", "max_score", "flags"]
        fields += [k for k in (rows[0] if rows else {}) if k not in fields]  # e.g. the grader's seconds
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    json_path.write_text(json.dumps(rows, indent=1) + "\n")
    return csv_path, json_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="the course root (default: here)")
    args = parser.parse_args(argv)
    if not (args.course / "autograder" / "gradebook.db").is_file():
        print(f"no gradebook in {args.course / 'autograder'}: run autograde from the course root first",
              file=sys.stderr)
        return 2
    rows = report(args.course, args.assignment)
    width = max([len(r["student"]) for r in rows] + [7])
    for r in rows:
        score = "-" if r["score"] is None else f"{r['score']:g}"
        print(f"{r['student']:<{width}}  {score:>5} / {r['max_score']:g}  {r['flags']}")
    paths = write(rows, args.course / "autograder" / "reports", args.assignment)
    print("written:", ", ".join(str(p.relative_to(args.course)) for p in paths))
    look = [r["student"] for r in rows if r["flags"]]
    if look:
        print(f"{len(look)} to look at: {', '.join(look)}", file=sys.stderr)
    return 1 if look else 0


if __name__ == "__main__":
    sys.exit(main())

"""Grades out of the gradebook, as CSV files a spreadsheet opens: per question and in total.

nbgrader's own ``nbgrader export`` writes one row per student and assignment, totals only, and
does not quote its fields (a name with a comma breaks its row). This reads the same gradebook
with nbgrader's API (``nbgrader.api.Gradebook``) and writes, with Python's ``csv`` module (which
quotes what needs quoting):

- ``autograder/grades/<assignment>.csv``: one row per student, one column per graded cell
  (its grade id, in notebook order), then the total and the maximum; a student with no
  submission has empty cells;
- ``autograder/grades/totals.csv``: one row per student, one column per assignment.

Used by ``python -m bertlab.grader export`` (``make grades``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from bertlab.grader import layout

NAME_FIELDS = ["student", "last_name", "first_name", "email"]


def _number(value) -> float | str:
    return "" if value is None else round(float(value), 4)


def assignment_rows(gradebook, assignment: str) -> tuple[list[str], list[dict]]:
    """Columns and rows of one assignment's per-question table."""
    from nbgrader.api import MissingEntry

    found = gradebook.find_assignment(assignment)
    cells = [g.name for nb in found.notebooks for g in nb.grade_cells]
    columns = NAME_FIELDS + cells + ["score", "max_score"]
    rows = []
    for student in sorted(gradebook.students, key=lambda s: s.id):
        row = {"student": student.id, "last_name": student.last_name or "", "first_name": student.first_name or "",
               "email": student.email or "", "max_score": _number(found.max_score), "score": ""}
        try:
            submission = gradebook.find_submission(assignment, student.id)
        except MissingEntry:
            rows.append(row)
            continue
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                row[grade.name] = _number(grade.score)
        row["score"] = _number(submission.score)
        rows.append(row)
    return columns, rows


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="", quoting=csv.QUOTE_MINIMAL)
        writer.writeheader()
        writer.writerows(rows)
    return path


def export(course: Path, assignments: list[str] | None = None) -> list[Path]:
    """Write the per-question table of each assignment (default: every one in the gradebook)
    and the totals; returns the files written."""
    from nbgrader.api import Gradebook

    course = Path(course)
    folder = course / layout.GRADES
    written, totals = [], {}
    with Gradebook(layout.gradebook_url(course)) as gradebook:
        names = assignments or sorted(a.name for a in gradebook.assignments)
        for assignment in names:
            columns, rows = assignment_rows(gradebook, assignment)
            written.append(write_csv(folder / f"{assignment}.csv", columns, rows))
            for row in rows:
                totals.setdefault(row["student"], {k: row[k] for k in NAME_FIELDS})[assignment] = row["score"]
    written.append(write_csv(folder / "totals.csv", NAME_FIELDS + names, [totals[s] for s in sorted(totals)]))
    return written

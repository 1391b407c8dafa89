"""Grades out of the gradebook, as CSV files a spreadsheet opens: per question and in total.

nbgrader's own ``nbgrader export`` writes one row per student and assignment, totals only, and
does not quote its fields (a name with a comma breaks its row). This reads the same gradebook
with nbgrader's API (``nbgrader.api.Gradebook``) and writes, with Python's ``csv`` module (which
quotes what needs quoting):

- ``autograder/grades/<assignment>.csv``: one row per student, one column per graded cell
  (its grade id, in notebook order: a written answer's cell is empty until someone grades it),
  then the score after the late penalty, the maximum, the raw score, the penalty, when it was
  submitted and due (with the student's extension), the extension, and how many answers still
  wait for a human; a student with no submission has empty cells;
- ``autograder/grades/totals.csv``: one row per student, one column per assignment (each score
  after its late penalty, as in the LMS files);
- ``autograder/grades/canvas.csv``: Canvas's gradebook import (``Student``, ``ID``, ``SIS User ID``,
  ``SIS Login ID``, ``Section``, then one column per assignment, and a ``Points Possible`` row);
  rows are matched on ``SIS Login ID``, the nbgrader student id;
- ``autograder/grades/moodle.csv``: Moodle's grade import ("Import grades from CSV"): ``Username``,
  ``Email address``, then one column per assignment; map either identifier in Moodle's import;
- ``autograder/grades/<assignment>-items.csv``: item statistics per graded cell over the graded
  submissions (mean score, share with full marks, share with zero), to spot a broken test: one
  that nobody passes, or that everybody passes, stands out.

Used by ``python -m bertlab_grader export`` (``make grades``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from bertlab_grader import layout

NAME_FIELDS = ["student", "last_name", "first_name", "email"]
#: After the graded cells: the score after the late penalty (what the LMS files take), its parts,
#: and the class's rules (:func:`bertlab_grader.grade_report.submission_columns`).
SCORE_FIELDS = [
    "score",
    "max_score",
    "raw_score",
    "late_penalty",
    "submitted",
    "due",
    "extension",
    "to_grade_by_hand",
]


def _number(value) -> float | str:
    return "" if value is None else round(float(value), 4)


def assignment_rows(gradebook, assignment: str) -> tuple[list[str], list[dict]]:
    """Columns and rows of one assignment's per-question table."""
    from nbgrader.api import MissingEntry

    from bertlab_grader.grade_report import submission_columns

    found = gradebook.find_assignment(assignment)
    cells = [g.name for nb in found.notebooks for g in nb.grade_cells]
    columns = NAME_FIELDS + cells + SCORE_FIELDS
    rows = []
    for student in sorted(gradebook.students, key=lambda s: s.id):
        row = {
            "student": student.id,
            "last_name": student.last_name or "",
            "first_name": student.first_name or "",
            "email": student.email or "",
            "max_score": _number(found.max_score),
            "score": "",
        }
        try:
            submission = gradebook.find_submission(assignment, student.id)
        except MissingEntry:
            rows.append(row)
            continue
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                # a written answer nobody has graded yet is empty, not 0
                waiting = grade.needs_manual_grade and grade.manual_score is None
                row[grade.name] = "" if waiting else _number(grade.score)
        row.update(submission_columns(submission))
        rows.append(row)
    return columns, rows


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="", quoting=csv.QUOTE_MINIMAL)
        writer.writeheader()
        writer.writerows(rows)
    return path


def item_statistics(rows: list[dict], max_scores: dict[str, float]) -> list[dict]:
    """Per graded cell (``max_scores``' keys, in order): how many graded submissions, their mean,
    the shares with full and zero marks."""
    stats = []
    for cell in max_scores:
        values = [float(r[cell]) for r in rows if r.get(cell, "") != ""]
        full = max_scores[cell]
        stats.append(
            {
                "grade_id": cell,
                "max_score": full,
                "submissions": len(values),
                "mean": _number(sum(values) / len(values)) if values else "",
                "share_full_marks": _number(sum(v >= full for v in values) / len(values))
                if values
                else "",
                "share_zero": _number(sum(v == 0 for v in values) / len(values)) if values else "",
            }
        )
    return stats


def lms_files(folder: Path, names: list[str], totals: dict, maxima: dict) -> list[Path]:
    """Canvas's and Moodle's gradebook import files, from the totals."""
    canvas_columns = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *names]
    canvas = [{"Student": "    Points Possible", **{a: maxima[a] for a in names}}]
    moodle = []
    for student in sorted(totals):
        row = totals[student]
        name = ", ".join(filter(None, [row["last_name"], row["first_name"]])) or student
        canvas.append(
            {"Student": name, "SIS Login ID": student, **{a: row.get(a, "") for a in names}}
        )
        moodle.append(
            {
                "Username": student,
                "Email address": row["email"],
                **{a: row.get(a, "") for a in names},
            }
        )
    return [
        write_csv(folder / "canvas.csv", canvas_columns, canvas),
        write_csv(folder / "moodle.csv", ["Username", "Email address", *names], moodle),
    ]


def export(course: Path, assignments: list[str] | None = None) -> list[Path]:
    """Write the per-question table of each assignment (default: every one in the gradebook)
    and the totals; returns the files written."""
    from nbgrader.api import Gradebook

    from bertlab_grader import deadlines

    course = Path(course)
    folder = course / layout.GRADES
    written, totals, maxima = [], {}, {}
    with Gradebook(layout.gradebook_url(course)) as gradebook:
        names = assignments or sorted(a.name for a in gradebook.assignments)
    for assignment in names:  # extensions and manual grades given since the autograde count
        deadlines.apply(course, assignment)
    with Gradebook(layout.gradebook_url(course)) as gradebook:
        for assignment in names:
            columns, rows = assignment_rows(gradebook, assignment)
            written.append(write_csv(folder / f"{assignment}.csv", columns, rows))
            found = gradebook.find_assignment(assignment)
            maxima[assignment] = _number(found.max_score)
            cells = {g.name: float(g.max_score) for nb in found.notebooks for g in nb.grade_cells}
            stats = item_statistics(rows, cells)
            written.append(
                write_csv(
                    folder / f"{assignment}-items.csv",
                    list(stats[0]) if stats else ["grade_id"],
                    stats,
                )
            )
            for row in rows:
                totals.setdefault(row["student"], {k: row[k] for k in NAME_FIELDS})[assignment] = (
                    row["score"]
                )
    written.append(
        write_csv(folder / "totals.csv", NAME_FIELDS + names, [totals[s] for s in sorted(totals)])
    )
    written += lms_files(folder, names, totals, maxima)
    return written

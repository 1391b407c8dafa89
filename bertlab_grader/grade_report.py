"""After an autograde run: one row per student, what they scored and what needs a look.

``nbgrader autograde`` writes scores into the gradebook and graded notebooks into
``autograder/autograded/``, and says in its log which submissions it could not run. An
instructor wants one table: each student's score, and the submissions to open by hand, with
why (a test that did not count because the course's own code was handed in, a kernel that died,
output the grader cut, a submission nbgrader could not grade at all), and the class's rules: the
raw score, the late penalty nbgrader's plugin charged, when it was submitted and due (with the
student's extension), and how many written answers still wait for a human. This module reads the
gradebook with nbgrader's own API and the graded notebooks' outputs (the errors
:mod:`bertlab_grader.guarded_execute` writes, listed in each cell's metadata, so that a submission
cannot raise one of its own) into that table, and writes it as CSV and JSON.
``python -m bertlab_grader autograde`` (``make autograde``) prints it after grading.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat

from bertlab_grader import layout

#: Error names in a graded notebook, and what each means for the instructor.
FLAGS = {
    "GradingIntegrityError": "the course's own code handed in: a test did not count",
    "KernelDied": "kernel died: later cells scored 0",
    "SubmissionError": "the submission's kernel did not serve the tests' calls",
    "TestsKernelError": "the tests' kernel could not run a set-up cell",
    "CellTimeoutError": "a cell ran past its time limit and was interrupted",
}
#: The flags only the grader writes (listed in the cell's metadata): a submission's own exception of
#: that name raises no flag.
GRADERS_OWN = {"GradingIntegrityError", "KernelDied", "SubmissionError", "TestsKernelError"}
OUTPUT_CUT = "the grader cut the output here"
#: The columns :func:`submission_columns` adds to a row (empty for a student with no submission).
COLUMNS = [
    "raw_score",
    "late_penalty",
    "submitted",
    "due",
    "extension",
    "to_grade_by_hand",
]


def notebook_flags(path: Path) -> list[str]:
    """What in one graded notebook an instructor should look at (empty: nothing)."""
    from bertlab_grader.feedback_redaction import NOTICES_KEY

    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        notices = {n.split(":", 1)[0] for n in cell.get("metadata", {}).get(NOTICES_KEY, [])}
        for out in cell.get("outputs", []):
            name = out.get("ename")
            if (
                out.get("output_type") == "error"
                and name in FLAGS
                and (name not in GRADERS_OWN or name in notices)
            ):
                found.append(FLAGS[name])
            elif out.get("output_type") == "stream" and OUTPUT_CUT in out.get("text", ""):
                found.append("output cut at the byte limit")
    return list(dict.fromkeys(found))


def report(course: Path, assignment: str) -> list[dict]:
    """One row per student of the gradebook: score (after the late penalty), max_score, flags (a
    '; '-joined string) and :data:`COLUMNS`."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(layout.gradebook_url(course)) as gradebook:
        max_score = gradebook.find_assignment(assignment).max_score
        for student in sorted(s.id for s in gradebook.students):
            row = {
                "student": student,
                "assignment": assignment,
                "score": None,
                "max_score": max_score,
            }
            graded = layout.autograded(course, student, assignment)
            try:
                row.update(submission_columns(gradebook.find_submission(assignment, student)))
            except MissingEntry:
                submitted = layout.submission(course, student, assignment)
                row["flags"] = (
                    "not graded: nbgrader could not run it"
                    if submitted.is_dir()
                    else "no submission"
                )
                rows.append(row)
                continue
            flags = [f for nb in sorted(graded.glob("*.ipynb")) for f in notebook_flags(nb)]
            if not graded.is_dir():
                flags.append("not graded: nbgrader could not run it")
            row["flags"] = "; ".join(dict.fromkeys(flags))
            rows.append(row)
    return rows


def _when(value) -> str:
    return "" if value is None else value.isoformat(sep=" ", timespec="seconds") + " UTC"


def submission_columns(submission) -> dict:
    """What the report and the exports say of one graded submission (an nbgrader
    ``SubmittedAssignment``): the score after the late penalty, the raw score, the penalty, when it
    was submitted and due (the extension included), the extension, and how many answers still wait
    for a human (manually graded cells nobody has graded since the submission was graded)."""
    raw = float(submission.score)
    penalty = float(submission.late_submission_penalty or 0)
    return {
        "score": round(raw - penalty, 4),
        "raw_score": round(raw, 4),
        "late_penalty": round(penalty, 4),
        "submitted": _when(submission.timestamp),
        "due": _when(submission.duedate),
        "extension": "" if submission.extension is None else str(submission.extension),
        "to_grade_by_hand": sum(
            bool(g.needs_manual_grade) for nb in submission.notebooks for g in nb.grades
        ),
    }


def write(rows: list[dict], folder: Path, assignment: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = folder / f"{assignment}.csv", folder / f"{assignment}.json"
    with csv_path.open(
        "w", newline=""
    ) as f:  # csv quotes a name with a comma, unlike nbgrader's export
        fields = ["student", "assignment", "score", "max_score", "flags", *COLUMNS]
        fields += [
            k for k in (rows[0] if rows else {}) if k not in fields
        ]  # e.g. the grader's seconds
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    json_path.write_text(json.dumps(rows, indent=1) + "\n")
    return csv_path, json_path

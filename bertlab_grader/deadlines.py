"""Due dates and extensions: from the course's config and an instructor's CSV into nbgrader's gradebook.

nbgrader keeps an assignment's due date (``Assignment.duedate``), a student's extension
(``SubmittedAssignment.extension``, a time added to it), each submission's time
(``SubmittedAssignment.timestamp``, from the ``timestamp.txt`` that collect writes) and the
penalty its late-submission plugin charged (:mod:`bertlab_grader.late_policy`). This module fills
the first two from what an instructor edits:

- each assignment's due date, in the course's config (:class:`Deadlines`: ``c.Deadlines.due_dates``
  and ``timezone``), written into the gradebook when the assignment is released
  (:class:`ReleaseDueDate`, nbgrader's ``IncludeHeaderFooter`` in the release pipeline, which also
  writes the date at the top of the student's notebook), and again before every report;
- extensions, in a CSV file (``autograder/extensions.csv``: ``student,assignment,due``, the new due
  date), read by :func:`apply`, which then has nbgrader's own ``AssignLatePenalties`` charge each
  submitted notebook again: after an autograde, before feedback and before an export, so that a
  manual grade or an extension given later counts.

The config is the source of a due date it names (a date set in nbgrader's formgrader for an
assignment the config does not name is kept); the CSV is the source of every extension.
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import IncludeHeaderFooter
from traitlets import Dict, Unicode
from traitlets.config import Configurable

from bertlab_grader import layout

#: The id of the header cell a release writes (fixed, so a release stays deterministic).
HEADER_ID = "bertlab-due-date"
FORMAT = "%A %d %B %Y, %H:%M"


class DeadlineError(ValueError):
    """A due date or an extension that cannot be read: the message names it and says why."""


class Deadlines(Configurable):
    """The course's due dates (``c.Deadlines`` in its ``autograder/nbgrader_config.py``)."""

    due_dates = Dict(
        value_trait=Unicode(),
        help="assignment id -> its due date, 'YYYY-MM-DD HH:MM' in `timezone` (or with an offset)",
    ).tag(config=True)
    timezone = Unicode(
        "UTC", help="The IANA time zone of due dates and extensions that name none"
    ).tag(config=True)
    extensions_file = Unicode(
        layout.EXTENSIONS,
        help="The extensions CSV (student,assignment,due), relative to the course root",
    ).tag(config=True)

    def zone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise DeadlineError(f"Deadlines.timezone={self.timezone!r} is not an IANA time zone")

    def parse(self, text: str, what: str) -> datetime:
        """A date as nbgrader stores it: naive, in UTC."""
        try:
            when = datetime.fromisoformat(text.strip())
        except ValueError:
            raise DeadlineError(f"{what}: {text!r} is not a date such as 2027-02-01 17:00")
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.zone())
        return when.astimezone(timezone.utc).replace(tzinfo=None)

    def due(self, assignment: str) -> datetime | None:
        """The assignment's due date from the config (naive UTC), or None."""
        text = self.due_dates.get(assignment)
        return None if text is None else self.parse(text, f"Deadlines.due_dates[{assignment!r}]")

    def local(self, when: datetime) -> str:
        """A naive UTC date as the course's clock reads it."""
        shown = when.replace(tzinfo=timezone.utc).astimezone(self.zone())
        return f"{shown.strftime(FORMAT)} ({self.timezone})"

    def extensions(self, course: Path) -> dict[tuple[str, str], datetime]:
        """(student, assignment) -> the new due date (naive UTC), from the extensions CSV."""
        path = Path(course) / self.extensions_file
        if not path.is_file():
            return {}
        found = {}
        with path.open(newline="") as f:
            rows = csv.DictReader(f)
            if not {"student", "assignment", "due"} <= set(rows.fieldnames or []):
                raise DeadlineError(f"{path}: the header must be student,assignment,due")
            for line, row in enumerate(rows, start=2):
                if not any((v or "").strip() for v in row.values()):
                    continue
                key = (row["student"].strip(), row["assignment"].strip())
                found[key] = self.parse(row["due"] or "", f"{path.name}, line {line}")
        return found


def course_deadlines(course: Path) -> tuple[Deadlines, object]:
    """The course's :class:`Deadlines` and its nbgrader config."""
    from bertlab_grader.nbgrader_course import nbgrader_api

    config = nbgrader_api(course).config
    return Deadlines(config=config), config


class ReleaseDueDate(IncludeHeaderFooter):
    """nbgrader's header and footer, and then the assignment's due date: into the gradebook, and
    as the first cell of the released notebook (with the late policy), where the config names one.
    The cell is written from the config alone, so a release stays deterministic."""

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        from nbgrader.api import Gradebook

        from bertlab_grader.late_policy import LatePolicy

        assignment = resources["nbgrader"]["assignment"]
        deadlines = Deadlines(config=self.config)
        due = deadlines.due(assignment)
        if due is None:
            return nb, resources
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            gradebook.update_or_create_assignment(assignment, duedate=due)
        policy = LatePolicy(config=self.config).describe()
        text = f"**Due: {deadlines.local(due)}.** {policy}"
        cell = NotebookNode(
            cell_type="markdown",
            id=HEADER_ID,
            metadata=NotebookNode(deletable=False, editable=False),
            source=text,
        )
        nb.cells = [c for c in nb.cells if c.get("id") != HEADER_ID]
        nb.cells.insert(0, cell)
        return nb, resources


@dataclass
class Applied:
    """What :func:`apply` wrote: the assignment's due date and the extensions it holds now."""

    due: datetime | None
    extended: dict[str, datetime]


def apply(course: Path, assignment: str) -> Applied:
    """Write the assignment's due date (config) and every extension (CSV) into the gradebook, then
    charge every submitted notebook of the assignment again with nbgrader's own
    ``AssignLatePenalties`` and the course's plugin. Raises :class:`DeadlineError`."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties

    course = Path(course)
    deadlines, config = course_deadlines(course)
    url = layout.gradebook_url(course)
    wanted = {s: due for (s, a), due in deadlines.extensions(course).items() if a == assignment}
    with Gradebook(url) as gradebook:
        found = gradebook.find_assignment(assignment)
        due = deadlines.due(assignment)
        if due is not None and found.duedate != due:
            found.duedate = due
            gradebook.db.commit()
        due = found.duedate
        if wanted and due is None:
            raise DeadlineError(
                f"{deadlines.extensions_file} extends {assignment}, which has no due date: "
                f"set c.Deadlines.due_dates[{assignment!r}] in autograder/nbgrader_config.py"
            )
        extended, notebooks = {}, []
        for submission in found.submissions:
            student = submission.student.id
            new = wanted.get(student)
            extension = None if new is None else new - due
            if extension is not None and extension < timedelta(0):
                raise DeadlineError(
                    f"{deadlines.extensions_file}: {student}'s new due date for {assignment} is "
                    "before the assignment's own"
                )
            if submission.extension != extension:
                submission.extension = extension
            if new is not None:
                extended[student] = new
            notebooks += [(nb.name, student) for nb in submission.notebooks]
        gradebook.db.commit()
    quiet = logging.getLogger("bertlab_grader.late")
    quiet.setLevel(logging.ERROR)
    for notebook, student in notebooks:
        resources = {
            "nbgrader": {
                "notebook": notebook,
                "assignment": assignment,
                "student": student,
                "db_url": url,
            }
        }
        AssignLatePenalties(config=config, log=quiet).preprocess(
            NotebookNode(cells=[], metadata={}), resources
        )
    return Applied(due, extended)


def due_dates(course: Path, assignment: str) -> tuple[datetime | None, dict[str, datetime]]:
    """The assignment's due date (naive UTC: the config's, else the gradebook's, else None) and
    each extended student's new one (the CSV's)."""
    from nbgrader.api import Gradebook, MissingEntry

    deadlines, _ = course_deadlines(course)
    extended = {s: d for (s, a), d in deadlines.extensions(course).items() if a == assignment}
    due = deadlines.due(assignment)
    if due is None:
        try:
            with Gradebook(layout.gradebook_url(course)) as gradebook:
                due = gradebook.find_assignment(assignment).duedate
        except MissingEntry:
            pass
    return due, extended


def submitted_at(folder: Path) -> datetime | None:
    """A collected submission's time (naive UTC), from the ``timestamp.txt`` nbgrader's collect
    and zip_collect write beside it; None without one."""
    from nbgrader.utils import parse_utc

    stamp = Path(folder) / "timestamp.txt"
    return parse_utc(stamp.read_text().strip()) if stamp.is_file() else None


def late_by(course: Path, assignment: str, students: list[str]) -> dict[str, str]:
    """Of the collected ``students``, those who submitted after their due date (the extension
    included) -> how late ("late by 1 day, 2:03:00"), and those whose submission has no time ->
    "no submission time: not judged late"."""
    said, (due_all, extended) = {}, due_dates(course, assignment)
    for student in students:
        when = submitted_at(layout.submission(course, student, assignment))
        due = extended.get(student, due_all)
        if when is None:
            if due is not None:
                said[student] = "no submission time: not judged late"
        elif due is not None and when > due:
            said[student] = f"late by {str(when - due).split('.')[0]}"
    return said

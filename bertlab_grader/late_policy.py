"""The late policy: nbgrader's own late-submission plugin, with a share off per day late.

nbgrader charges a penalty through one plugin, ``nbgrader.plugins.LateSubmissionPlugin``, which its
``AssignLatePenalties`` preprocessor calls for every submitted notebook that is late
(``c.AssignLatePenalties.plugin_class``), and it keeps the penalty in the gradebook
(``SubmittedNotebook.late_submission_penalty``, summed per assignment); its feedback shows it. The
plugin knows two methods, ``none`` and ``zero`` (nbgrader#660, #943). :class:`LatePolicy`, set as
that plugin by :func:`bertlab_grader.config.configure`, adds a third and two settings every method
keeps:

- ``penalty_method = "per_day"``: :attr:`~LatePolicy.share_per_day` of the raw score off for each
  day or part of a day late (2 hours late is one day, 25 hours two);
- :attr:`~LatePolicy.floor`: the least share of the raw score a late submission keeps (0.5: never
  more than half off; 0: it may go to zero);
- :attr:`~LatePolicy.grace_minutes`: a submission at most this late is on time (a clock's drift, an
  upload that took a minute); past it, the days count from the due date itself.

nbgrader measures how late from the submission's time (``timestamp.txt``, written by collect) and
the student's due date (the assignment's, plus the student's extension:
:mod:`bertlab_grader.deadlines`). The course chooses its policy in its
``autograder/nbgrader_config.py`` (``c.LatePolicy.penalty_method = "per_day"``, ...).
"""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float, TraitError, validate

DAY = 24 * 3600


class LatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with a share off per day late, a floor and a grace period."""

    penalty_method = Enum(
        ("none", "zero", "per_day"),
        default_value="none",
        help="none: no penalty; zero: a late submission scores 0 (nbgrader's own); per_day: "
        "share_per_day of the raw score off for each day or part of a day late, down to floor",
    ).tag(config=True)
    share_per_day = Float(
        0.1, help="per_day: the share of the raw score off for each day or part of a day late"
    ).tag(config=True)
    floor = Float(
        0.0,
        help="The least share of the raw score a late submission keeps (per_day; 0: no floor)",
    ).tag(config=True)
    grace_minutes = Float(
        0.0, help="A submission at most this many minutes late is on time (every method)"
    ).tag(config=True)

    @validate("share_per_day", "floor")
    def _a_share(self, proposal):
        if not 0 <= proposal["value"] <= 1:
            raise TraitError(f"LatePolicy.{proposal['trait'].name} is a share: between 0 and 1")
        return proposal["value"]

    @validate("grace_minutes")
    def _not_negative(self, proposal):
        if proposal["value"] < 0:
            raise TraitError("LatePolicy.grace_minutes cannot be negative")
        return proposal["value"]

    def days_late(self, seconds_late: float) -> int:
        """Whole days late, a part of a day counting as one; 0 within the grace period."""
        if seconds_late <= self.grace_minutes * 60:
            return 0
        return math.ceil(seconds_late / DAY)

    def share_off(self, seconds_late: float) -> float:
        """The share of the raw score this policy takes off a submission so late."""
        days = self.days_late(seconds_late)
        if days == 0 or self.penalty_method == "none":
            return 0.0
        if self.penalty_method == "zero":
            return 1.0
        return min(self.share_per_day * days, 1.0 - self.floor)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        """The points off (nbgrader subtracts them from the raw score), or None for none."""
        share = self.share_off(total_seconds_late)
        return round(score * share, 4) if share else None

    def describe(self) -> str:
        """The policy in one sentence, for the notebook's header and the report."""
        grace = (
            f" A submission up to {self.grace_minutes:g} minutes late is on time."
            if self.grace_minutes
            else ""
        )
        if self.penalty_method == "none":
            return "Late work is accepted without a penalty."
        if self.penalty_method == "zero":
            return "Late work scores 0." + grace
        most = (
            f", never more than {1 - self.floor:.0%} in all"
            if self.floor and self.floor < 1
            else ""
        )
        return (
            f"Late work loses {self.share_per_day:.0%} of its score for each day or part of a day "
            f"late{most}." + grace
        )

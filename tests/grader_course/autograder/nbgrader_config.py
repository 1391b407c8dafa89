"""nbgrader configuration of the grader's test course (``tests/grader_course``).

A tiny course that loads no model, for the grader's own tests (``tests/test_hostile.py``,
``tests/test_parallel_grader.py``), as nbgrader tests itself on small fixture notebooks. It
mirrors the grader-generic settings of the course's ``autograder/nbgrader_config.py`` (the
folders, GuardedExecute in nbgrader's Execute's place, the time limits, the feedback redaction,
DropDuplicateIds in DeduplicateIds' place) and none of the course's own (no models to prepare,
no oracles, no answer-key packages). Keep the two in step when the course's changes.
"""

import os

from nbgrader.converters import Autograde
from nbgrader.preprocessors import DeduplicateIds, Execute

from bertlab_grader import layout
from bertlab_grader.guarded_execute import GuardedExecute
from bertlab_grader.pasted_cells import DropDuplicateIds

c = get_config()  # noqa: F821 - injected by traitlets

# The tests grade in a scratch copy of this course: the root moves with this file.
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

c.CourseDirectory.root = root
c.CourseDirectory.course_id = "grader-fixture"
c.CourseDirectory.source_directory = layout.SOURCE
c.CourseDirectory.release_directory = layout.RELEASE
c.CourseDirectory.submitted_directory = layout.SUBMITTED
c.CourseDirectory.autograded_directory = layout.AUTOGRADED
c.CourseDirectory.feedback_directory = layout.FEEDBACK
c.CourseDirectory.db_url = layout.gradebook_url(root)
c.CourseDirectory.notebook_id = "*"

c.ClearOutput.enabled = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal", "--HistoryManager.hist_file=:memory:"]
c.Execute.timeout = 120
c.Execute.iopub_timeout = 30
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "bertlab_grader.feedback_redaction.RedactHiddenTests",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]


def _swapped(pipeline: str, theirs, ours) -> list:
    """nbgrader's default ``Autograde.<pipeline>`` with ``theirs`` replaced by ``ours``."""
    default = Autograde.class_traits()[pipeline].default()
    assert theirs in default, f"nbgrader's {pipeline} changed: {default}"
    return [ours if pp is theirs else pp for pp in default]


c.Autograde.autograde_preprocessors = _swapped("autograde_preprocessors", Execute, GuardedExecute)
c.Autograde.sanitize_preprocessors = _swapped("sanitize_preprocessors", DeduplicateIds, DropDuplicateIds)

# Nothing of a course: no models to prepare, no library functions the tests compare with.
c.GuardedExecute.prepare = []
c.GuardedExecute.oracles = []

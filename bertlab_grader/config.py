"""The grader's own nbgrader settings, set on a course's config by one call: :func:`configure`.

A course's ``autograder/nbgrader_config.py`` calls ``configure(c, root, course_id)`` and then sets
only what is its own (the library functions its tests compare with, its packages, its models,
what its kernels import first and may read), as otter's and nbgrader's own options keep a
course's choices apart from the tool's. What it sets here, for every course:

- the folders of :mod:`bertlab_grader.layout` and the gradebook (``$BERTLAB_GRADEBOOK_URL``, else
  the course's SQLite file), read when the config is loaded;
- released notebooks without outputs, and the stub a solution becomes;
- kernels with a minimal traceback (a failing hidden test shows its message, never its source:
  nbgrader#917), nbgrader's cell timeout and a generous wait for a cell's last outputs;
- feedback without hidden tests, nor the outputs that quote them
  (:mod:`bertlab_grader.feedback_redaction`);
- :class:`~bertlab_grader.guarded_execute.GuardedExecute` in place of nbgrader's ``Execute``, and
  :class:`~bertlab_grader.pasted_cells.DropDuplicateIds` in place of ``DeduplicateIds``;
- the due date of the course's ``c.Deadlines`` into the gradebook and the released notebook
  (:class:`~bertlab_grader.deadlines.ReleaseDueDate` in place of ``IncludeHeaderFooter``), and
  :class:`~bertlab_grader.late_policy.LatePolicy` as nbgrader's late-submission plugin (its
  policy is the course's: ``c.LatePolicy``).

The sandbox's settings (``c.Sandbox``: mode, warm kernels, caps, sizes) have their defaults in
:mod:`bertlab_grader.sandbox.settings`; ``docs/instructors.md`` ("The grader's settings") lists
every setting an environment variable gives a default to.
"""

from __future__ import annotations

from pathlib import Path

from bertlab_grader import layout


def swapped(pipeline: str, theirs, ours, converter=None) -> list:
    """nbgrader's default ``<converter>.<pipeline>`` (``Autograde`` by default) with ``theirs``
    replaced by ``ours``."""
    from nbgrader.converters import Autograde

    converter = converter or Autograde
    default = converter.class_traits()[pipeline].default()
    if theirs not in default:
        raise RuntimeError(
            f"nbgrader's {converter.__name__}.{pipeline} no longer holds {theirs.__name__}: {default}; "
            "bertlab_grader.config.configure must be updated for this nbgrader"
        )
    return [ours if pp is theirs else pp for pp in default]


def configure(c, root: str | Path, course_id: str):
    """Set every setting the grader needs on the traitlets config ``c`` of the course at ``root``
    (the folder that holds its ``nbgrader_config.py``); returns ``c``."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import DeduplicateIds, Execute, IncludeHeaderFooter

    from bertlab_grader.deadlines import ReleaseDueDate
    from bertlab_grader.guarded_execute import GuardedExecute
    from bertlab_grader.late_policy import LatePolicy
    from bertlab_grader.pasted_cells import DropDuplicateIds

    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = course_id
    c.CourseDirectory.source_directory = layout.SOURCE
    c.CourseDirectory.release_directory = layout.RELEASE
    c.CourseDirectory.submitted_directory = layout.SUBMITTED
    c.CourseDirectory.autograded_directory = layout.AUTOGRADED
    c.CourseDirectory.feedback_directory = layout.FEEDBACK
    c.CourseDirectory.db_url = layout.gradebook_url(root)
    # Only the notebook is graded; data files next to it are copied as they are.
    c.CourseDirectory.notebook_id = "*"

    # Released notebooks carry no outputs and no execution metadata, so a release is deterministic
    # and CI can diff it against what is committed.
    c.ClearOutput.enabled = True
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

    # Student code runs with a minimal traceback: a failing hidden test shows its assertion
    # message, never its source (nbgrader#917). Setting extra_arguments replaces nbgrader's
    # default, which keeps the kernel's history in memory.
    c.Execute.extra_arguments = [
        "--InteractiveShell.xmode=Minimal",
        "--HistoryManager.hist_file=:memory:",
    ]
    c.Execute.timeout = 120
    # After a cell's reply, nbclient waits this long for its last outputs, and nbgrader fails the
    # whole notebook if they are late (raise_on_iopub_timeout): 4 s by default, which a busy machine
    # grading in parallel can exceed. A generous wait costs nothing when the outputs come at once.
    c.Execute.iopub_timeout = 30
    c.GenerateFeedback.preprocessors = [
        "nbgrader.preprocessors.GetGrades",
        # outputs that quote hidden tests (a submission can print them) are replaced first
        "bertlab_grader.feedback_redaction.RedactHiddenTests",
        "nbgrader.preprocessors.ClearHiddenTests",
        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    ]

    # Test cells run in a kernel of their own, which never holds the submission's code: nbgrader's
    # Execute, sandboxed, with a second kernel (bertlab_grader.guarded_execute).
    c.Autograde.autograde_preprocessors = swapped(
        "autograde_preprocessors", Execute, GuardedExecute
    )
    # A test cell pasted twice keeps its last copy's grade id; the others become ordinary cells
    # (nbgrader's own DeduplicateIds leaves them empty metadata, and the notebook is refused).
    c.Autograde.sanitize_preprocessors = swapped(
        "sanitize_preprocessors", DeduplicateIds, DropDuplicateIds
    )

    # The course's due dates (c.Deadlines) reach the gradebook and the released notebook's first
    # cell on release; nbgrader's late-submission plugin learns a share off per day
    # (c.LatePolicy: the course's policy; bertlab_grader.deadlines, bertlab_grader.late_policy).
    c.GenerateAssignment.preprocessors = swapped(
        "preprocessors", IncludeHeaderFooter, ReleaseDueDate, GenerateAssignment
    )
    c.AssignLatePenalties.plugin_class = LatePolicy
    return c

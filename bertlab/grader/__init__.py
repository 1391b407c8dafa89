"""The instructor's grader, as one tool (issue: parallel, limited grading).

- :mod:`bertlab.grader.parallel`: ``autograde --workers N``, many students at once, each in
  its own scratch course and sandboxed kernel, one process writing the gradebook;
- ``python -m bertlab.grader``: its command line (``make autograde`` calls it).

The older flat modules (:mod:`bertlab.grading`, :mod:`bertlab.guarded_execute`,
:mod:`bertlab.kernel_guard`, :mod:`bertlab.kernel_sandbox`, :mod:`bertlab.feedback_redaction`,
:mod:`bertlab.grade_report`) are still imported from where they are; they move in here next.
"""

"""The instructor's grader, as one tool: ``python -m bertlab_grader`` (release, collect,
autograde, regrade, feedback, export), apart from the course it grades.

It imports nothing of the course: what it must know of one (the models to prepare before a
kernel starts, the library functions tests take their expected values from) is set in the
course's ``autograder/nbgrader_config.py`` (``GuardedExecute.prepare``, ``GuardedExecute.oracles``),
and the course is any folder laid out as :mod:`~bertlab_grader.layout` says.

Its parts, one idea each:

- :mod:`~bertlab_grader.layout`: the course's folders and gradebook URL, written down once;
- :mod:`~bertlab_grader.nbgrader_course`: nbgrader's API and command line on a course, and the
  scratch copies of it that graders work in;
- :mod:`~bertlab_grader.parallel`: ``autograde --workers N``, many students at once, each in a
  scratch course and a sandboxed kernel, one process writing the gradebook, regrades idempotent;
- :mod:`~bertlab_grader.distributed`: ``autograde --scheduler ADDRESS``, one Dask task per
  submission, each graded by :mod:`~bertlab_grader.grade_one` in a child process of the worker;
- :mod:`~bertlab_grader.records`: what grading one submission produced (one shape for both
  graders) and the one process that writes it into the gradebook;
- :mod:`~bertlab_grader.guarded_execute`: nbgrader's ``Execute`` as the course grades with it
  (sandboxed, fingerprinted, capped; a dead kernel costs the cells from that point), on
  :mod:`~bertlab_grader.bounded_execute` (its wall clock and output budget);
- :mod:`~bertlab_grader.sandbox` (bubblewrap, no network: the command line in
  :mod:`~bertlab_grader.sandbox.bwrap`, what it lets a kernel see in
  :mod:`~bertlab_grader.sandbox.allowed`, the kernel manager in :mod:`~bertlab_grader.sandbox.manager`),
  :mod:`~bertlab_grader.kernel_limits` (memory and process caps), :mod:`~bertlab_grader.kernel_guard`
  (the fingerprint) and :mod:`~bertlab_grader.kernel_origins` (where the oracles and graded
  functions come from; both run inside the student's kernel, so they import the standard library
  only),
  :mod:`~bertlab_grader.warm` (kernels forked from one process that imported torch and transformers
  once: its protocol, zygote, stub and pool);
- :mod:`~bertlab_grader.feedback_redaction`: no hidden test in the feedback;
- :mod:`~bertlab_grader.pasted_cells`: a graded cell pasted twice is not a reason to refuse a notebook;
- :mod:`~bertlab_grader.collect`, :mod:`~bertlab_grader.grade_report`, :mod:`~bertlab_grader.export`:
  submissions in, the per-student table, CSV out.
- :mod:`~bertlab_grader.unused_imports`: what its processes never import (a second of each start).

The nbgrader round trip the tests run in a scratch course is the tests' own
(``tests/course_fixture.py``).

Its dependencies are the ``grader`` extra of ``pyproject.toml``; it is configured by
``autograder/nbgrader_config.py`` and explained in ``docs/instructors.md``.
"""

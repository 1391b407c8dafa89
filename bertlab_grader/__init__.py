"""The instructor's grader, as one tool: ``python -m bertlab_grader`` (release, collect,
autograde, regrade, feedback, export), apart from the course it grades.

It imports nothing of the course: what it must know of one (the models to prepare before a
kernel starts, the library functions tests take their expected values from) is set in the
course's ``autograder/nbgrader_config.py`` (``GuardedExecute.prepare``, ``Sandbox.warm_imports``, ...),
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
- :mod:`~bertlab_grader.guarded_execute`: nbgrader's ``Execute`` as the course grades with it: the
  student's cells in the student's kernel, the set-up and test cells in a tests' kernel of their
  own (:mod:`~bertlab_grader.tests_kernel`), which calls the graded functions across a socket
  (:mod:`~bertlab_grader.crossing`: the calls, what comes back read without running code);
  sandboxed, capped, a dead kernel costing the cells from that point; on
  :mod:`~bertlab_grader.bounded_execute` (its wall clock and output budget), with
  :mod:`~bertlab_grader.answer_key` (a graded function that is the course's own code, read from
  the submitted cells);
- :mod:`~bertlab_grader.sandbox` (bubblewrap, no network: the command line in
  :mod:`~bertlab_grader.sandbox.bwrap`, what it lets a kernel see in
  :mod:`~bertlab_grader.sandbox.allowed`, the kernel manager in :mod:`~bertlab_grader.sandbox.manager`),
  :mod:`~bertlab_grader.kernel_limits` (memory and process caps),
  :mod:`~bertlab_grader.warm` (kernels forked from one process that imported torch and transformers
  once: its protocol, zygote, stub and pool);
- :mod:`~bertlab_grader.feedback_redaction`: no hidden input in the feedback;
- :mod:`~bertlab_grader.pasted_cells`: a graded cell pasted twice is not a reason to refuse a notebook;
- :mod:`~bertlab_grader.collect`, :mod:`~bertlab_grader.grade_report`, :mod:`~bertlab_grader.export`:
  submissions in, the per-student table, CSV out.
- :mod:`~bertlab_grader.unused_imports`: what its processes never import (a second of each start).

The nbgrader round trip the tests run in a scratch course is the tests' own
(``tests/course_fixture.py``).

Its dependencies are the ``grader`` extra of ``pyproject.toml``; it is configured by
``autograder/nbgrader_config.py`` and explained in ``docs/instructors.md``.
"""

"""The instructor's grader, as one tool: ``python -m bertlab_grader`` (release, collect, publish,
autograde, regrade, feedback, export, similarity, doctor), apart from the course it grades.

It imports nothing of the course: what it must know of one (the models to prepare before a kernel
starts, the course's own packages, what its kernels import first and may read) is set in the
course's ``autograder/nbgrader_config.py`` (``GuardedExecute.prepare``, ``Sandbox.warm_imports``,
...), and the course is any folder laid out as :mod:`~bertlab_grader.layout` says. Its parts, by
where they run:

**The instructor's commands and the course's files**

- :mod:`~bertlab_grader.__main__` (the commands; their arguments in
  :mod:`~bertlab_grader.arguments`), :mod:`~bertlab_grader.config` (the grader's
  settings, one call in a course's config), :mod:`~bertlab_grader.layout` (the course's folders and
  gradebook URL), :mod:`~bertlab_grader.nbgrader_course` (nbgrader's API and command line on a
  course, and scratch copies of it), :mod:`~bertlab_grader.doctor` (what a kernel can see here);
- :mod:`~bertlab_grader.collect` (submissions in, from a folder or an LMS zip),
  :mod:`~bertlab_grader.exchange` (nbgrader's exchange, a class's hub),
  :mod:`~bertlab_grader.grade_report` and :mod:`~bertlab_grader.export` (the per-student table,
  CSV out).

**The class's rules**

- :mod:`~bertlab_grader.deadlines` (due dates from the course's config and extensions from a CSV,
  into nbgrader's gradebook and the released notebook) and :mod:`~bertlab_grader.late_policy`
  (nbgrader's late-submission plugin with a share off per day, a floor and a grace period);
- :mod:`~bertlab_grader.similarity` and :mod:`~bertlab_grader.similarity_report` (every student's
  answers against every other's and the public reference code, with copydetect; no score changes).

**Grading a batch**

- :mod:`~bertlab_grader.parallel` (``autograde --workers N``: workers on scratch courses, one
  process writing the gradebook, regrades idempotent), :mod:`~bertlab_grader.distributed`
  (``--scheduler ADDRESS``: one Dask task per submission, :mod:`~bertlab_grader.grade_one` in a
  child process), :mod:`~bertlab_grader.records` (what grading one submission produced),
  :mod:`~bertlab_grader.unused_imports` (what its processes never import).

**One notebook: nbgrader's preprocessors, in the grader's process**

- :mod:`~bertlab_grader.guarded_execute` (nbgrader's ``Execute``: two kernels per notebook, the
  student's and the tests', which never holds student code), with
  :mod:`~bertlab_grader.test_cells` (set-up and test cells run in the tests' kernel),
  :mod:`~bertlab_grader.tests_kernel` (starting it; what the grader runs in either kernel),
  :mod:`~bertlab_grader.bounded_execute` (the wall clock and the output budget) and
  :mod:`~bertlab_grader.answer_key` (a graded function that is the course's own code, read from
  the submitted cells);
- :mod:`~bertlab_grader.feedback_redaction` (no hidden input in the feedback) and
  :mod:`~bertlab_grader.pasted_cells` (a graded cell pasted twice is not a reason to refuse a
  notebook).

**Between the two kernels** (:mod:`~bertlab_grader.crossing`: the calls of a test cell to the
student's functions, what crosses, and what comes back read without running code): the tests'
side, in the tests' kernel; the student's side, imported in the student's kernel (the standard
library only, and the kernel's own torch).

**Around a kernel** (:mod:`~bertlab_grader.sandbox`): bubblewrap's command line
(:mod:`~bertlab_grader.sandbox.bwrap`, what it lets a kernel read and keep in
:mod:`~bertlab_grader.sandbox.allowed`, its settings in :mod:`~bertlab_grader.sandbox.settings`),
the kernel manager (:mod:`~bertlab_grader.sandbox.manager`), the caps
(:mod:`~bertlab_grader.sandbox.limits`, polled, and :mod:`~bertlab_grader.sandbox.cgroup`, hard;
``/proc`` read in :mod:`~bertlab_grader.sandbox.procfs`), and the warm kernels forked from a zygote
that imported torch and transformers once (:mod:`~bertlab_grader.sandbox.warm`).

The nbgrader round trip the tests run in a scratch course is the tests' own
(``tests/course_fixture.py``). Its dependencies are the ``grader`` extra of ``pyproject.toml``; it
is explained in ``docs/instructors.md``.
"""

"""nbgrader configuration of the grader's test course (``tests/grader_course``).

A tiny course that loads no model, for the grader's own tests (``tests/grader/test_hostile.py``,
``tests/grader/test_parallel_grader.py``), as nbgrader tests itself on small fixture notebooks. The
grader's settings are the same call the course's ``autograder/nbgrader_config.py`` makes
(:func:`bertlab_grader.config.configure`); nothing of a course follows it (no models to prepare,
no answer-key packages, no warm imports).
"""

import os

from bertlab_grader.config import configure

c = get_config()  # noqa: F821 - injected by traitlets

# The tests grade in a scratch copy of this course: the root moves with this file.
configure(
    c, root=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), course_id="grader-fixture"
)

# Nothing of a course: no models to prepare.
c.GuardedExecute.prepare = []

# The similarity report compares with the public reference code: here, the solutions' answer cells.
c.Similarity.references = ["solutions/{assignment}/*.ipynb"]

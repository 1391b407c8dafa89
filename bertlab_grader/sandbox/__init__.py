"""The grading kernel's sandbox: :mod:`~bertlab_grader.sandbox.bwrap` builds the bubblewrap command
line (a leaf, which the warm kernels' zygote uses too), :mod:`~bertlab_grader.sandbox.manager` is the
kernel manager nbgrader's ``Execute`` starts sandboxed kernels with."""

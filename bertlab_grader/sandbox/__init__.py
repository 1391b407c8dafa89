"""Around a grading kernel: :mod:`~bertlab_grader.sandbox.bwrap` builds the bubblewrap command line
(a leaf, which the warm kernels' zygote uses too), from what :mod:`~bertlab_grader.sandbox.allowed`
lets a kernel read and keep and the course's :mod:`~bertlab_grader.sandbox.settings`;
:mod:`~bertlab_grader.sandbox.manager` is the kernel manager nbgrader's ``Execute`` starts
sandboxed kernels with; :mod:`~bertlab_grader.sandbox.limits` (polled) and
:mod:`~bertlab_grader.sandbox.cgroup` (hard) cap their memory, processes and threads, reading
``/proc`` through :mod:`~bertlab_grader.sandbox.procfs`; :mod:`~bertlab_grader.sandbox.warm` forks
them from a zygote that imported the course's first imports once."""

"""Warm kernels: torch and transformers are imported once per grader process, not once per notebook.

Every course notebook starts with ``import torch`` and a transformers model class, and in a fresh
kernel that costs about 8 s of CPU (torch 2.5 s, transformers 2 s, the modeling classes 3.5 s),
more than most notebooks then spend on their own cells. A grader that starts one kernel per
submission pays it every time. Here one process, the *zygote*, imports them once (the modules
the course names in ``c.Sandbox.warm_imports``) inside a sandbox of
:mod:`bertlab_grader.sandbox.bwrap`, and forks a kernel for each notebook: the
same ``ipykernel_launcher`` command line, environment and working directory a fresh kernel would
get, started in well under a second. The fork is the technique of Android's zygote and of
``multiprocessing``'s forkserver; ``multiprocessing`` itself is not used, because the child must
become an ordinary Jupyter kernel that jupyter_client can interrupt, watch and kill.

How the parts meet, one module each (three programs, in three processes, and how they talk):

- :mod:`~bertlab_grader.sandbox.warm.protocol`: one JSON object per line over a Unix socket, file
  descriptors beside it, and the PID of a process of the sandbox as the grader sees it;
- :class:`~bertlab_grader.sandbox.warm.pool.Zygote` (in the grader, :mod:`~bertlab_grader.sandbox.warm.pool`)
  starts ``python -m bertlab_grader.sandbox.warm.zygote`` in a
  sandbox whose writable folder is the zygote's own scratch folder, with the course's private
  folders hidden, no network and no capabilities, and keeps a pipe to it: when the grader
  ends, however it ends, the zygote reads end-of-file and exits, and the sandbox with it.
- jupyter_client's kernel process is a small *stub* (:mod:`~bertlab_grader.sandbox.warm.stub`, the
  standard library only): it hands the zygote the kernel's command line, environment, connection file and its
  own stdin, stdout and stderr over a Unix socket, forwards the signals jupyter_client sends
  (an interrupt is SIGINT), and exits with the kernel's exit status. If the stub is killed, the
  zygote kills the kernel.
- The zygote (:mod:`~bertlab_grader.sandbox.warm.zygote`, the standard library only) serves one kernel
  at a time. Before each fork and after each kernel ends it kills
  every other process in its sandbox and empties ``/tmp`` and ``/dev/shm``; the grader also
  kills whatever is left before the next kernel (:meth:`~bertlab_grader.sandbox.warm.pool.Zygote.clear`), so nothing one
  submission leaves behind (a daemon, an IPython startup file) meets the next. The zygote is
  not dumpable, so a kernel cannot trace it or read its memory; a kernel that kills it only
  makes the next kernel start cold while a new zygote starts.
- :mod:`~bertlab_grader.sandbox.warm.fork` is what the zygote does around a fork (read a stub's
  request, become the kernel); :mod:`~bertlab_grader.sandbox.warm.many` is a zygote that forks
  several tests' kernels at once, the one a parallel grader's workers share
  (:mod:`~bertlab_grader.sandbox.warm.shared`): tests' kernels hold no submission's code.
- The memory, process and thread caps (:class:`bertlab_grader.sandbox.limits.KernelWatch`)
  watch everything in the sandbox except the zygote itself.

``c.Sandbox.warm_kernels = False`` (or ``BERTLAB_WARM_KERNEL=off``) starts every kernel cold (as
nbgrader does, inside its own sandbox); without a working sandbox kernels are always cold. A kernel
forked from the zygote differs from a fresh one in what is already imported, and nothing else a
notebook can rely on: ``random`` and numpy's global generator are seeded afresh from the OS, as at a
fresh start. Used by :class:`bertlab_grader.sandbox.manager.SandboxedKernelManager`;
``docs/instructors.md`` says what it saves.
"""

"""Memory and process caps for a grading kernel, enforced from outside it.

A submission's kernel may allocate until the machine swaps, or fork until it cannot: PrairieLearn
grades in 2 GiB with a process limit. ``RLIMIT_AS`` cannot be that cap (PyTorch reserves far
more address space than it uses, so an honest notebook would fail), ``RLIMIT_NPROC`` does not bind
root, and cgroups are not writable on every grading machine. :class:`KernelWatch` is portable: a
thread in the grader reads ``/proc`` five times a second, sums the resident memory of the
kernel's whole process tree and counts its processes, and kills the tree (SIGKILL) the moment
either is over its cap. The kernel then counts as dead, so
:class:`bertlab_grader.guarded_execute.GuardedExecute` scores the cell it died in and every later one 0,
says why in the feedback, and the batch goes on. A burst faster than one poll could overshoot it:
where the grader may make cgroups, each kernel also has one (:mod:`bertlab_grader.sandbox.cgroup`),
whose ``memory.max`` and ``pids.max`` the Linux kernel enforces itself, so the machine never sees
the burst; :func:`hard_caps` says which is in force.

``c.Sandbox.memory_mb`` (default 3072: the heaviest reference solution, a decoder and an
encoder side by side, stays well under it), ``c.Sandbox.processes`` (default 64) and
``c.Sandbox.threads`` (default 512, over every process of the tree: a tokenizer's thread pool has
one per core) set the caps (:mod:`bertlab_grader.sandbox.settings`); 0 turns one off. Their
defaults are ``BERTLAB_KERNEL_MEMORY_MB``, ``BERTLAB_KERNEL_PROCESSES`` and
``BERTLAB_KERNEL_THREADS`` when set (:func:`caps`). :meth:`KernelWatch.kill` also serves the
notebook's wall clock (:class:`bertlab_grader.guarded_execute.GuardedExecute`).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from bertlab_grader.sandbox.procfs import folder_use, kill_all, process_tree, resident_bytes

MEMORY_ENV, PROCESSES_ENV, THREADS_ENV = (
    "BERTLAB_KERNEL_MEMORY_MB",
    "BERTLAB_KERNEL_PROCESSES",
    "BERTLAB_KERNEL_THREADS",
)


def caps() -> tuple[int, int, int]:
    """(memory cap in bytes, process cap, thread cap) from the environment, else the defaults; 0
    means no cap. The defaults of ``c.Sandbox.memory_mb``, ``.processes`` and ``.threads``."""

    def number(name: str, default: int) -> int:
        value = os.environ.get(name, "").strip()
        try:
            return int(value) if value else default
        except ValueError:
            raise ValueError(
                f"{name}={value!r}: give a whole number (0 turns the cap off)"
            ) from None

    return number(MEMORY_ENV, 3072) * 2**20, number(PROCESSES_ENV, 64), number(THREADS_ENV, 512)


#: Processes a kernel's cgroup allows beyond the polled cap: the poll kills a tree over the cap
#: and says why; the cgroup stops a fork bomb faster than a poll could, at twice the cap (room
#: enough that a bomb that starts 100 processes at once is still stopped by the poll, in its cell).
PIDS_HEADROOM = 64


def hard_caps() -> str:
    """Which caps are hard here, in words (the grader's log and ``doctor`` say it)."""
    from bertlab_grader.sandbox import cgroup

    problem = cgroup.why_unavailable()
    if problem is None:
        return "memory and processes: hard (a cgroup per kernel), and polled"
    return f"memory and processes: polled five times a second only ({problem})"


class KernelWatch:
    """Watch one kernel's process tree; kill it when over a cap. ``reason`` says why it was killed."""

    def __init__(
        self,
        pid: int,
        memory_bytes: int,
        processes: int,
        period: float = 0.2,
        threads: int = 0,
        exclude: tuple[int, ...] = (),
        group: int | None = None,
        cgroup=None,
        disk: tuple[Path, int] | None = None,
    ):
        """Watch ``pid`` and its descendants, except the processes in ``exclude`` (neither counted
        nor killed; a warm kernel's zygote, :mod:`bertlab_grader.sandbox.warm`). ``group``: a process
        group to kill first (default: ``pid``'s own, if it leads one and nothing is excluded).
        ``cgroup``: the kernel's :class:`bertlab_grader.sandbox.cgroup.KernelCgroup`, whose hard
        caps stand behind the poll; its OOM kill is a reason too. ``disk``: (a folder on the
        grader's disk the kernel can write, the most bytes it may hold), e.g. a warm kernel's
        zygote's socket folder, which no tmpfs caps (at most 10,000 files)."""
        self.pid, self.memory_bytes, self.processes, self.period = (
            pid,
            memory_bytes,
            processes,
            period,
        )
        self.threads, self.exclude = threads, frozenset(exclude)
        self.group = group if group is not None or self.exclude else pid
        self.cgroup, self.disk = cgroup, disk
        self._reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kernel-watch-{pid}", daemon=True)

    @property
    def reason(self) -> str | None:
        """Why the kernel was killed: by this watch, or by its cgroup's OOM killer; None if not."""
        return self._reason or (self.cgroup.reason() if self.cgroup is not None else None)

    def start(self) -> "KernelWatch":
        if self.memory_bytes or self.processes or self.threads or self.disk:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def over_cap(self) -> str | None:
        """Why the tree is over a cap now, or None."""
        threads: dict[int, int] = {}
        tree = self.tree(threads)
        if self.processes and len(tree) > self.processes:
            return f"it ran {len(tree)} processes, more than the cap of {self.processes}"
        if self.threads:
            total = sum(threads.get(pid, 0) for pid in tree)
            if total > self.threads:
                return f"it ran {total} threads, more than the cap of {self.threads}"
        if self.memory_bytes:
            # the cgroup's own count where there is one: resident sizes count the pages a fork
            # shares with its parent once per process (64 forks of a 75 MB kernel "use" 4.8 GB)
            used = self.cgroup.memory_used() if self.cgroup is not None else None
            used = resident_bytes(tree) if used is None else used
            if used > self.memory_bytes:
                return (
                    f"it went over the memory cap: it used {used / 2**20:,.0f} MB of memory, more than "
                    f"the cap of {self.memory_bytes / 2**20:,.0f} MB"
                )
        if self.disk:
            folder, most = self.disk
            used, files = folder_use(folder)
            if used > most or files > 10_000:
                return (
                    f"it went over the disk cap: it wrote {used / 2**20:,.0f} MB in {files:,} files to "
                    f"the grader's disk, more than the cap of {most / 2**20:,.0f} MB"
                )
        return None

    def tree(self, threads: dict[int, int] | None = None) -> list[int]:
        """The processes watched now."""
        return [pid for pid in process_tree(self.pid, threads) if pid not in self.exclude]

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            if not Path(f"/proc/{self.pid}").exists():
                return
            why = self.over_cap()
            if why:
                self.kill(why)
                return

    def kill(self, reason: str) -> None:
        """Kill the kernel's whole process tree now (SIGKILL), and say why in ``reason``."""
        self._reason = self.reason or reason
        # its process group first (jupyter_client starts a kernel as a session leader, and a fork
        # still in flight is in that group too); then every process of the tree
        try:
            if self.group is not None and os.getpgid(self.group) == self.group:
                os.killpg(self.group, signal.SIGKILL)
        except OSError:
            pass
        kill_all(self.tree())
        if self.cgroup is not None:
            self.cgroup.kill()

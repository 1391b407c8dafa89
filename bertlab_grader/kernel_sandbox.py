"""The autograder's sandbox: a submission's kernel can write only into its own folder.

nbgrader runs each submission in an ordinary Jupyter kernel, as the instructor's user, with the
course folder next to it. Code in a notebook can therefore open the gradebook (a plain SQLite
file) and give itself or a classmate extra credit, overwrite another student's submission, or
read the hidden tests from the source notebooks or from ``.git``. The kernel guard
(:mod:`bertlab_grader.kernel_guard`) cannot see any of that: it only watches the kernel.

:class:`SandboxedKernelManager` is jupyter_client's ``AsyncKernelManager`` (the one nbgrader's
``Execute`` uses) with the kernel command wrapped in bubblewrap (``bwrap``, the sandbox behind
Flatpak): the whole file system is mounted read-only, the course's folders with hidden tests
and grades are empty, the submission's own autograded folder is writable, ``/tmp`` is a
private tmpfs, in its own PID namespace the kernel cannot see or signal the grader, and in its
own network namespace it reaches no network at all, not even the grader's loopback. It talks to
the grader over ZeroMQ's IPC transport instead: Unix sockets in a fresh folder with a short
absolute path, bound into the sandbox. IPC also removes the TCP port race of parallel kernels
(jupyter_client picks a port by binding port 0 and releasing it, and two kernels starting at
once can pick the same one: ``ZMQError: Address already in use``, nbgrader#174).
Every kernel it starts, sandboxed or not, is watched by :class:`bertlab_grader.kernel_limits.KernelWatch`
(a memory cap and a process cap on its whole process tree).
``guarded_execute.GuardedExecute`` uses it, so ``nbgrader autograde`` with the course's config
always starts sandboxed kernels.

Without a working ``bwrap`` (macOS; a Linux without ``apt install bubblewrap``; a container
that forbids user namespaces) the kernel runs as nbgrader runs it, and the grader says so on
every notebook; ``BERTLAB_SANDBOX=off`` turns the
sandbox off on purpose, ``BERTLAB_SANDBOX=require`` makes a missing ``bwrap`` an error.
Whatever a kernel needs to write must therefore exist before it starts: the grader first calls
the functions the course names in ``GuardedExecute.prepare`` (which assemble its models into
their cache).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from bertlab_grader import layout, warm_kernel
from bertlab_grader.kernel_limits import KernelWatch, caps

ENV_VAR = "BERTLAB_SANDBOX"  # "on" (default: sandbox if bwrap exists), "require", or "off"
PACKAGE = Path(__file__).resolve().parent  # bertlab_grader/, whose kernel_guard the probe imports in the kernel


IGNORE_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
)


class SandboxUnavailable(RuntimeError):
    pass


def mode() -> str:
    value = os.environ.get(ENV_VAR, "on").strip().lower() or "on"
    if value not in {"on", "require", "off"}:
        raise SandboxUnavailable(f"{ENV_VAR}={value!r}: use on (the default), require or off")
    return value


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def sandbox_problem(bwrap: str) -> str | None:
    """None if ``bwrap`` can build the sandbox here, else why not (once per process).

    bwrap needs user namespaces: a Docker container under its default seccomp profile, or a
    kernel that forbids them to unprivileged users, refuses ("No permissions to create new
    namespace"), and every kernel would die at start."""
    probe = [bwrap, "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        return f"bwrap cannot create a sandbox here: {done.stderr.strip() or f'exit status {done.returncode}'}"
    return None


def why_unavailable() -> str | None:
    """None if kernels can be sandboxed here, else why not (no bwrap, or a bwrap that can't)."""
    bwrap = bwrap_path()
    return "bwrap is not installed (apt install bubblewrap)" if bwrap is None else sandbox_problem(bwrap)


def hidden_folders(course_root: Path | None) -> list[Path]:
    """What a kernel must not see: the course's folders with hidden tests, grades and history."""
    if course_root is None:
        return []
    root = Path(course_root).resolve()
    return [root / name for name in layout.PRIVATE if (root / name).is_dir()]


def sandbox_command(cmd: list[str], *, writable: Path, readable: list[Path], hidden: list[Path],
                    bwrap: str, sockets: Path | None = None) -> list[str]:
    """``cmd`` wrapped in bubblewrap: all read-only, ``hidden`` empty, ``writable`` writable.

    ``/tmp`` is a private tmpfs; every other path the kernel writes to fails with an OSError.
    There is no network (``--unshare-net``); ``sockets``, a folder for the kernel's IPC sockets,
    is bound writable at its own path (it may lie in ``/tmp``: it is bound after the tmpfs).

    Mounts apply in order, so a folder bound after a hidden one shows through it (the
    submission's folder lies inside the hidden ``autograder/``)."""
    # Own PID namespace: the kernel can't see or signal the grader (or anything else). ipykernel
    # would take its new parent (PID 1) for a dead grader and quit: it is not told the grader's
    # PID; --die-with-parent ends it with bwrap instead.
    # No capabilities: a grader run as root would otherwise hand its kernels CAP_SYS_ADMIN, and
    # a kernel could remount the course read-write. Its own IPC namespace (no System V shared memory
    # with the grader's machine).
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL",
            "--unsetenv", "JPY_PARENT_PID",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if sockets is not None:
        args += ["--bind", str(sockets), str(sockets)]
    for folder in hidden:
        args += ["--tmpfs", str(folder)]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(writable), str(writable)]
    for folder in hidden:  # empty and read-only (after the binds, which need mount points there)
        args += ["--remount-ro", str(folder)]
    args += ["--chdir", str(writable),
             "--setenv", "MPLCONFIGDIR", "/tmp/matplotlib", "--setenv", "IPYTHONDIR", "/tmp/ipython",
             "--die-with-parent", "--"]
    # jupyter_client interrupts a kernel (nbgrader: a cell past its timeout) with SIGINT to its
    # process group, which bwrap leads: bwrap itself must ignore it, or it dies and takes the
    # kernel with it. An ignored signal stays ignored across exec; ipykernel installs its own
    # SIGINT handler while it runs a cell, so the kernel is still interrupted.
    return [sys.executable, "-c", IGNORE_SIGINT_THEN_EXEC] + args + cmd


class SandboxedKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager, with the kernel started inside bubblewrap and its
    channels on IPC sockets in a folder of its own (short, absolute: a Unix socket's path may
    have at most 107 bytes)."""

    _socket_dir: Path | None = None
    watch: KernelWatch | None = None  # the memory and process caps (bertlab_grader.kernel_limits)
    _warm: warm_kernel.Zygote | None = None  # the zygote this kernel is forked from, if it is warm
    _cold_cmd: list[str] | None = None  # the same kernel started cold, if the warm start fails

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        await super()._async_launch_kernel(kernel_cmd, **kw)
        memory, processes, threads = caps()
        if self._warm is not None:
            pid = await self._warm_kernel_pid()
            if pid is not None:  # watch the whole sandbox but the zygote and its init
                zygote = self._warm
                self.watch = KernelWatch(zygote.init_pid, memory, processes, threads=threads,
                                         exclude=(zygote.init_pid, zygote.pid), group=pid).start()
                return
            self.log.warning("The warm kernel did not start: starting this one cold")
            await self.provisioner.kill()
            await self.provisioner.wait()
            self._release_zygote()
            await super()._async_launch_kernel(self._cold_cmd, **kw)
        pid = getattr(self.provisioner, "pid", None)
        if pid is not None:
            self.watch = KernelWatch(pid, memory, processes, threads=threads).start()

    async def _warm_kernel_pid(self, timeout: float = 60) -> int | None:
        """The forked kernel's PID, which the stub writes once the zygote has forked it; None if
        the stub ends first or nothing comes in ``timeout`` seconds."""
        import asyncio

        written = self._socket_dir / "kernel.pid"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if written.is_file():
                return int(written.read_text())
            if await self.provisioner.poll() is not None:
                return None
            await asyncio.sleep(0.01)
        return None

    def _release_zygote(self) -> None:
        """The kernel is over: nothing it started may live on in the zygote's sandbox."""
        zygote, self._warm = self._warm, None
        if zygote is None:
            return
        if zygote.clear():
            zygote.busy = False
        else:  # something would not die: that zygote serves no one else
            self.log.warning("A warm kernel's processes would not end: its zygote is stopped")
            zygote.stop()

    def _course_root(self) -> Path | None:
        course = self.config.CourseDirectory if "CourseDirectory" in self.config else {}
        root = course["root"] if "root" in course and isinstance(course["root"], str) else None
        return Path(root) if root else None

    async def _async_pre_start_kernel(self, **kw):
        """IPC sockets in a folder of the kernel's own; a warm kernel's folder lies in its zygote's."""
        self._warm = None
        warm = (mode() != "off" and why_unavailable() is None
                and list(getattr(self.kernel_spec, "argv", [])[1:3]) == ["-m", "ipykernel_launcher"])
        zygote = warm_kernel.zygote_for(hidden_folders(self._course_root()), self.log) if warm else None
        if zygote is not None:
            zygote.busy, self._warm = True, zygote
            if self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = zygote.new_slot()
        elif self._socket_dir is None:
            self._socket_dir = Path(tempfile.mkdtemp(prefix="bertlab-kernel-"))
        self.transport, self.ip = "ipc", str(self._socket_dir / "k")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        if self.watch is not None:
            self.watch.stop()
        self._release_zygote()
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    # AsyncKernelManager binds cleanup_resources to the base class's coroutine, and nbclient calls it
    # (not shutdown_kernel) after a kernel died: without this, that path skipped the override.
    cleanup_resources = _async_cleanup_resources

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        cmd = super().format_kernel_cmd(extra_arguments)
        if mode() == "off":
            return cmd
        problem = why_unavailable()
        if problem:
            if mode() == "require":
                raise SandboxUnavailable(f"{ENV_VAR}=require, but {problem}")
            self.log.warning("The kernel is NOT sandboxed (%s): a submission can write to the gradebook. "
                             "Grade where bubblewrap works, or in a throwaway container.", problem)
            return cmd
        cwd = Path((self._launch_args or {}).get("cwd") or os.getcwd()).resolve()
        readable = [PACKAGE, Path(self.connection_file).resolve(), Path(sys.prefix).resolve()]
        cold = sandbox_command(cmd, writable=cwd, readable=readable, hidden=hidden_folders(self._course_root()),
                               bwrap=bwrap_path(), sockets=self._socket_dir)
        if self._warm is None:
            return cold
        if cmd[1:3] != ["-m", "ipykernel_launcher"] or "-f" not in cmd \
                or Path(cmd[0]).resolve() != Path(sys.executable).resolve():
            self._release_zygote()  # not the kernel the zygote has warmed
            return cold
        # The kernel works in a copy of its folder (the zygote's sandbox cannot see the course's);
        # jupyter_client starts the stub, which has the zygote fork the kernel.
        if not warm_kernel.copy_folder(cwd, self._socket_dir / "work"):
            self._release_zygote()  # a folder too big to copy for each kernel (a submission is small)
            return cold
        self._cold_cmd = cold
        return [sys.executable, "-m", "bertlab_grader.warm_kernel", "stub", "--control", str(self._warm.control),
                "--slot", str(self._socket_dir), "--init-pid", str(self._warm.init_pid), "--", *cmd]

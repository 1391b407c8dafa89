"""The kernel manager of the autograder's sandbox: a submission's kernel sees its own folder and nothing of the course.

nbgrader runs each submission in an ordinary Jupyter kernel, as the instructor's user, with the
course folder next to it. Code in a notebook could therefore open the gradebook (a plain SQLite
file) and give itself or a classmate extra credit, overwrite another student's submission, or
read the hidden tests from the source notebooks or from ``.git``.

:class:`SandboxedKernelManager` is jupyter_client's ``AsyncKernelManager`` (the one nbgrader's
``Execute`` uses) with the kernel command wrapped in bubblewrap (``bwrap``, the sandbox behind
Flatpak; the command line is :func:`bertlab_grader.sandbox.bwrap.sandbox_command`): the kernel's
root holds only the system, the Python environment, the folders the course names
(``c.Sandbox.readable``: its model cache) and a size-capped copy of the submission's own folder;
no home folder, no course repository, no gradebook, no other submission. In its own PID
namespace the kernel cannot see or signal the grader, and in its own network namespace it
reaches no network at all, not even the grader's loopback. It talks to the grader over ZeroMQ's
IPC transport instead: Unix sockets in a fresh folder with a short absolute path, bound into the
sandbox. IPC also removes the TCP port race of parallel kernels (jupyter_client picks a port by
binding port 0 and releasing it, and two kernels starting at once can pick the same one:
``ZMQError: Address already in use``, nbgrader#174).
Every kernel it starts, sandboxed or not, is watched by :class:`bertlab_grader.sandbox.limits.KernelWatch`
(a memory cap and a process cap on its whole process tree), and, where the grader may make
cgroups, started in a cgroup of its own whose caps the Linux kernel enforces
(:mod:`bertlab_grader.sandbox.cgroup`). A kernel starts warm, forked from a zygote that imported
torch and transformers once (:mod:`bertlab_grader.sandbox.warm`), where it can.
``guarded_execute.GuardedExecute`` uses it, so ``nbgrader autograde`` with the course's config
always starts sandboxed kernels.

Without a working ``bwrap`` (macOS; a Linux without ``apt install bubblewrap``; a container
that forbids user namespaces) no kernel starts: :func:`unsandboxed_refusal` says why and what to
do; ``c.Sandbox.mode = "off"`` (or ``BERTLAB_SANDBOX=off``) runs kernels as nbgrader runs them,
on purpose.
Whatever a kernel needs to write must therefore exist before it starts: the grader first calls
the functions the course names in ``GuardedExecute.prepare`` (which assemble its models into
their cache).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from bertlab_grader.sandbox.limits import PIDS_HEADROOM, KernelWatch
from bertlab_grader.sandbox.procfs import process_tree
from bertlab_grader.sandbox import allowed, bwrap
from bertlab_grader.sandbox.cgroup import KernelCgroup
from bertlab_grader.sandbox.settings import Sandbox
from bertlab_grader.sandbox.warm import pool, shared, stub


def unsandboxed_refusal(mode: str) -> str | None:
    """Why no kernel may start in ``mode`` (``c.Sandbox.mode``) on this machine, or None: the
    sandbox is off on purpose, or bubblewrap builds it here."""
    problem = None if mode == "off" else bwrap.why_unavailable()
    if not problem:
        return None
    return (
        f"Sandbox.mode is {mode}, but {problem}. A kernel outside the sandbox runs with your rights: a "
        "submission could read the answer key and write the gradebook. Install bubblewrap (sudo apt "
        "install bubblewrap; make doctor checks it), or grade unsandboxed on purpose with "
        f'c.Sandbox.mode = "off" in autograder/nbgrader_config.py ({bwrap.ENV_VAR}=off).'
    )


class SandboxedKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager, with the kernel started inside bubblewrap and its
    channels on IPC sockets in a folder of its own (short, absolute: a Unix socket's path may
    have at most 107 bytes)."""

    _socket_dir: Path | None = None
    watch: KernelWatch | None = None  # the memory and process caps (bertlab_grader.sandbox.limits)
    _warm: pool.Zygote | None = None  # the zygote this kernel is forked from, if it is warm
    _cold_cmd: list[str] | None = None  # the same kernel started cold, if the warm start fails
    _cgroup: KernelCgroup | None = None  # the kernel's hard caps, where cgroups can be made
    _cgroup_problem: str | None = None  # why not, said once per process
    #: "student" (the default) or "tests": a tests' kernel is never forked from a zygote that forked
    #: a student's kernel (bertlab_grader.tests_kernel)
    role: str = "student"
    #: folders it may read besides the course's (a tests' kernel: where the student's kernel serves)
    extra_readable: tuple[Path, ...] = ()

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        await super()._async_launch_kernel(kernel_cmd, **kw)
        memory, processes, threads = self._settings().caps()
        if self._warm is not None:
            pid = await self._warm_kernel_pid()
            if pid is not None:  # watch the whole sandbox but the zygote and its init
                zygote = self._warm
                if self._cgroup is not None:  # forked by the zygote, outside the cgroup: move it in
                    self._cgroup.add(process_tree(pid))
                if (
                    zygote.many
                ):  # a zygote of tests' kernels, several at once: watch this one's tree
                    disk = (self._socket_dir, self._settings().work_mb * 2**20)
                    self.watch = KernelWatch(
                        pid, memory, processes, threads=threads, disk=disk, cgroup=self._cgroup
                    ).start()
                    return
                # the zygote's socket folder lies on the grader's disk, and its kernels can write there
                disk = (zygote.scratch, self._settings().work_mb * 2**20)
                self.watch = KernelWatch(
                    zygote.init_pid,
                    memory,
                    processes,
                    threads=threads,
                    disk=disk,
                    exclude=(zygote.init_pid, zygote.pid),
                    group=pid,
                    cgroup=self._cgroup,
                ).start()
                return
            self.log.warning("The warm kernel did not start: starting this one cold")
            await self.provisioner.kill()
            await self.provisioner.wait()
            self._release_zygote()
            await super()._async_launch_kernel(self._cold_cmd, **kw)
        pid = getattr(self.provisioner, "pid", None)
        if pid is not None:
            self.watch = KernelWatch(
                pid, memory, processes, threads=threads, cgroup=self._cgroup
            ).start()

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Wait for the kernel's process to end. jupyter_client checks every ``pollinterval``
        (0.1 s); a killed kernel ends within milliseconds, and every notebook waits for two (the
        student's and the tests'), so the checks start at 2 ms and double up to it."""
        import asyncio

        delay = 0.002
        while await self._async_is_alive():
            await asyncio.sleep(delay)
            delay = min(delay * 2, pollinterval)

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

    def _settings(self) -> Sandbox:
        return Sandbox(config=self.config)

    def _readable(self) -> list[Path]:
        """What the kernel may read besides the system: the environment, the course's folders and
        :attr:`extra_readable`."""
        return allowed.readable_paths([*self._settings().readable_folders(), *self.extra_readable])

    def _environment(self) -> dict[str, str]:
        """The environment variables the kernel keeps (the grader's list and the course's)."""
        return allowed.kept_environment(
            dict((self._launch_args or {}).get("env") or os.environ), self._settings().environment
        )

    def _new_cgroup(self) -> KernelCgroup | None:
        """The kernel's own cgroup with its hard caps, or None where the grader may make none."""
        memory, processes, _ = self._settings().caps()
        if not (memory or processes) or SandboxedKernelManager._cgroup_problem:
            return None
        try:
            return KernelCgroup.create(memory, processes + PIDS_HEADROOM if processes else 0)
        except OSError as exc:
            SandboxedKernelManager._cgroup_problem = str(exc)
            self.log.warning(
                "The memory and process caps are polled, not hard: no cgroup (%s)", exc
            )
            return None

    async def _async_pre_start_kernel(self, **kw):
        """IPC sockets in a folder of the kernel's own; a warm kernel's folder lies in its zygote's."""
        self._warm = None
        self._launch_args = {**(self._launch_args or {}), **kw}
        settings = self._settings()
        sandboxed = settings.mode != "off" and bwrap.why_unavailable() is None
        self._cgroup = self._new_cgroup()
        warm = (
            sandboxed
            and settings.warm_kernels
            and list(getattr(self.kernel_spec, "argv", [])[1:3]) == ["-m", "ipykernel_launcher"]
        )
        zygote = None
        if warm and self.role == "tests":  # the zygote a parallel grader's workers share, if any
            zygote = shared.zygote_for(
                self._readable(),
                self._environment(),
                self.log,
                imports=settings.warm_imports,
                **settings.sizes(),
            )
        if warm and zygote is None:
            zygote = pool.zygote_for(
                self._readable(),
                self._environment(),
                self.log,
                imports=settings.warm_imports,
                role=self.role,
                **settings.sizes(),
            )
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
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if not restart and self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    # AsyncKernelManager binds cleanup_resources to the base class's coroutine, and nbclient calls it
    # (not shutdown_kernel) after a kernel died: without this, that path skipped the override.
    cleanup_resources = _async_cleanup_resources

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        cmd = super().format_kernel_cmd(extra_arguments)
        mode = self._settings().mode
        if mode == "off":
            return cmd
        refusal = unsandboxed_refusal(mode)
        if refusal:
            raise bwrap.SandboxUnavailable(refusal)
        cwd = Path((self._launch_args or {}).get("cwd") or os.getcwd()).resolve()
        readable = [*self._readable(), Path(self.connection_file).resolve()]
        environment = self._environment()
        cold = bwrap.sandbox_command(
            cmd,
            writable=cwd,
            readable=readable,
            bwrap=bwrap.bwrap_path(),
            sockets=self._socket_dir,
            environment=environment,
            **self._settings().sizes(),
            cgroups=list(self._cgroup.folders.values()) if self._cgroup else (),
        )
        if self._warm is None:
            return cold
        if (
            cmd[1:3] != ["-m", "ipykernel_launcher"]
            or "-f" not in cmd
            or Path(cmd[0]).resolve() != Path(sys.executable).resolve()
        ):
            self._release_zygote()  # not the kernel the zygote has warmed
            return cold
        # The kernel works in a copy of its folder (the zygote's sandbox cannot see the course's);
        # jupyter_client starts the stub, which has the zygote fork the kernel.
        if not pool.copy_folder(cwd, self._socket_dir / "work"):
            self._release_zygote()  # a folder too big to copy for each kernel (a submission is small)
            return cold
        self._cold_cmd = cold
        (self._socket_dir / "env.json").write_text(__import__("json").dumps(environment))
        return [
            sys.executable,
            "-m",
            stub.__name__,
            "--control",
            str(self._warm.control),
            "--slot",
            str(self._socket_dir),
            "--init-pid",
            str(self._warm.init_pid),
            "--",
            *cmd,
        ]

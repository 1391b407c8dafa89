"""The grader's side of warm kernels: one zygote per grader process, started on first use.

:class:`Zygote` starts ``python -m bertlab_grader.sandbox.warm.zygote`` in a sandbox of its own
(:func:`bertlab_grader.sandbox.bwrap.sandbox_command`), keeps a pipe to it (its lifeline), and kills
whatever a kernel left in that sandbox before the next one starts. :func:`zygote_for` is what
:class:`bertlab_grader.sandbox.manager.SandboxedKernelManager` asks for a zygote; it returns None,
and the kernel starts cold, when the zygote is busy or could not start (the manager does not ask
when warm kernels are off: ``c.Sandbox.warm_kernels``, default ``$BERTLAB_WARM_KERNEL``).
:func:`copy_folder` gives a warm kernel a copy of its working folder, which the zygote's sandbox
cannot see.
"""

from __future__ import annotations

import json
import os
import selectors
import sys
import time
from pathlib import Path

from bertlab_grader.sandbox.procfs import kill_all, process_tree
from bertlab_grader.sandbox.bwrap import bwrap_path, sandbox_command
from bertlab_grader.sandbox.warm.protocol import READY, ns_pids

ENV_VAR = (
    "BERTLAB_WARM_KERNEL"  # "on" (the default) or "off": the default of c.Sandbox.warm_kernels
)
ZYGOTE = __name__.rpartition(".")[0] + ".zygote"  # the module the zygote runs (python -m)
#: Where a grader's workers make their zygotes' scratch folders (:mod:`.shared`)
ROOT_ENV = "BERTLAB_WARM_ROOT"
#: The file in which a grader's workers read of the tests' zygote they share (:meth:`Zygote.shared`)
SHARED_ENV = "BERTLAB_TESTS_ZYGOTE"


def enabled() -> bool:
    """``$BERTLAB_WARM_KERNEL`` (on or off, else on): the default of ``c.Sandbox.warm_kernels``."""
    value = os.environ.get(ENV_VAR, "on").strip().lower() or "on"
    if value not in {"on", "off"}:
        raise ValueError(f"{ENV_VAR}={value!r}: use on (the default) or off")
    return value == "on"


def copy_folder(
    source: Path, target: Path, max_files: int = 2000, max_bytes: int = 200 * 2**20
) -> bool:
    """Copy a kernel's working folder (its regular files and folders) for a warm kernel; False,
    copying nothing, if it holds more than ``max_files`` files or ``max_bytes`` bytes, or the
    target inside it (the zygote's scratch folder)."""
    import shutil

    source = Path(source).resolve()
    if Path(target).resolve().is_relative_to(source):
        return False
    files, size = 0, 0
    for root, _, names in os.walk(source):
        for name in names:
            files += 1
            try:
                size += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
            if files > max_files or size > max_bytes:
                return False

    def ignore(folder, names):  # sockets, devices and pipes are not copied
        import stat

        return [
            n
            for n in names
            if not (
                stat.S_ISREG(m := os.lstat(os.path.join(folder, n)).st_mode)
                or stat.S_ISDIR(m)
                or stat.S_ISLNK(m)
            )
        ]

    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    return True


class Zygote:
    """A zygote process in its own sandbox, and what the grader needs to use and clean it."""

    def __init__(
        self,
        readable: list[Path],
        environment: dict[str, str],
        tmp_bytes: int = 2**30,
        file_bytes: int = 2**30,
        imports: list[str] | tuple[str, ...] = (),
        many: bool = False,
    ):
        """A zygote in a sandbox that reads ``readable`` (and the system), keeps only ``environment``,
        and writes only its scratch folder, a ``/tmp`` of ``tmp_bytes`` (where each kernel works, in a
        copy of its folder) and files of at most ``file_bytes``; it imports ``imports`` (the course's
        ``c.Sandbox.warm_imports``) and the kernel's own modules before it forks. With ``many`` it
        serves several kernels at once (tests' kernels only: :mod:`.shared`). Its
        scratch folder lies in ``$BERTLAB_WARM_ROOT`` where that is set, unless ``many``."""
        import subprocess
        import tempfile

        root = None if many else os.environ.get(ROOT_ENV)  # a shared one reads that folder
        self.scratch = Path(tempfile.mkdtemp(prefix="bertlab-warm-", dir=root))
        self.control = self.scratch / "control"
        self.busy, self.many = False, many
        self.failed_imports: list[str] = []
        read, self._lifeline = os.pipe()
        cmd = sandbox_command(
            [
                sys.executable,
                "-m",
                ZYGOTE,
                str(self.control),
                str(read),
                *(["--many"] if many else []),
                *imports,
            ],
            writable=self.scratch,
            readable=readable,
            bwrap=bwrap_path(),
            environment=environment,
            tmp_bytes=tmp_bytes,
            file_bytes=file_bytes,
        )
        self.process = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, pass_fds=(read,), start_new_session=True
        )
        os.close(read)
        self.pid = self.init_pid = None
        line = self._ready_line(timeout=180)
        if not line.startswith(READY):
            self.stop()
            raise RuntimeError(
                f"the warm-kernel zygote did not start: {line or 'no reply in 180 s'}"
            )
        told = json.loads(line[len(READY) :] or "{}")
        self.failed_imports = told.get("failed", [])
        self.init_pid, self.pid = self._sandbox_pids()
        if self.pid is None:
            self.stop()
            raise RuntimeError("the warm-kernel zygote started, but its process cannot be found")

    def _ready_line(self, timeout: float) -> str:
        events = selectors.DefaultSelector()
        events.register(self.process.stdout, selectors.EVENT_READ)
        if not events.select(timeout):
            return ""
        return self.process.stdout.readline().decode(errors="replace").strip()

    def _sandbox_pids(self) -> tuple[int | None, int | None]:
        """(the sandbox's init, the zygote), as PIDs seen from here."""
        init = zygote = None
        for pid in process_tree(self.process.pid):
            found = ns_pids(pid)
            if len(found) > 1 and found[-1] == 1:
                init = pid
            elif len(found) > 1 and found[-1] == 2:
                zygote = pid
        return init, zygote

    def alive(self) -> bool:
        return (
            self.process.poll() is None
            and self.pid is not None
            and Path(f"/proc/{self.pid}").exists()
        )

    def new_slot(self) -> Path:
        """A fresh folder for one kernel: its IPC sockets, its connection file, its working copy."""
        import tempfile

        return Path(tempfile.mkdtemp(prefix="k", dir=self.scratch))

    def others(self) -> list[int]:
        """Every process in the sandbox but its init and the zygote: the kernel and what it started."""
        return [p for p in process_tree(self.init_pid) if p not in (self.init_pid, self.pid)]

    def clear(self, timeout: float = 10) -> bool:
        """Kill every process in the sandbox but its init and the zygote, and wait until they are gone."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.others()
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            kill_all(left)
            time.sleep(0.02)

    def stop(self) -> None:
        import shutil

        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        try:
            self.process.wait(10)
        except Exception:  # noqa: BLE001 - it would not go: kill it
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def shared(
        self, readable: list[Path], environment: dict[str, str], sizes: dict, imports
    ) -> dict:
        """What a worker needs to use this zygote (a ``many`` one) as its own
        (:class:`~bertlab_grader.sandbox.warm.shared.SharedZygote`): where it listens, its PIDs,
        and what it was started with."""
        return {
            "control": str(self.control),
            "scratch": str(self.scratch),
            "init_pid": self.init_pid,
            "pid": self.pid,
            "readable": [str(p) for p in readable],
            "environment": environment,
            "sizes": sizes,
            "imports": list(imports),
        }


_zygotes: dict = {}  # in each grader process: sandbox layout and environment -> its Zygote


def _stop_all() -> None:
    for zygote in list(_zygotes.values()):
        zygote.stop()
    _zygotes.clear()


def zygote_for(
    readable: list[Path],
    environment: dict[str, str],
    log,
    work_bytes: int = 0,
    tmp_bytes: int = 2**30,
    file_bytes: int = 2**30,
    imports: list[str] | tuple[str, ...] = (),
    role: str = "student",
) -> Zygote | None:
    """This process's idle zygote for kernels of ``role`` ("student" or "tests": a zygote forks
    kernels of one role only) that read ``readable`` and keep ``environment``, having imported
    ``imports`` (started on first use), or None: the zygote is busy with another kernel, or it could
    not start (logged). A warm kernel works in a copy of its folder in the zygote's ``/tmp``
    (``tmp_bytes``), so ``work_bytes`` is not used."""
    import atexit

    key = (
        tuple(str(p) for p in readable),
        sys.executable,
        tuple(sorted(environment.items())),
        tmp_bytes,
        file_bytes,
        tuple(imports),
        role,
    )
    zygote = _zygotes.get(key)
    if zygote is not None and not zygote.alive():  # a kernel killed it: start another
        _zygotes.pop(key).stop()
        zygote = None
    if zygote is None:
        for other in [
            k for k in _zygotes if k[0] == key[0] and k[-1] == role
        ]:  # the environment changed
            _zygotes.pop(other).stop()
        try:
            zygote = Zygote(
                readable,
                environment,
                tmp_bytes=tmp_bytes,
                file_bytes=file_bytes,
                imports=imports,
            )
        except Exception as exc:  # noqa: BLE001 - cold kernels still grade
            log.warning("Kernels start cold (no warm-kernel zygote: %s)", exc)
            return None
        if not _zygotes:
            atexit.register(_stop_all)
        _zygotes[key] = zygote
        if zygote.failed_imports:
            log.warning(
                "The warm-kernel zygote could not import: %s", "; ".join(zygote.failed_imports)
            )
    return None if zygote.busy else zygote

"""One tests' zygote for all of a grader's workers, started by the grader's parent process.

A parallel grader's worker would otherwise start two zygotes (:mod:`bertlab_grader.sandbox.warm.pool`):
one for the submissions' kernels, one for the tests' kernels, each importing torch and transformers
(about 4 CPU-seconds), and every worker after the first pays that again. Tests' kernels hold no
submission's code (:mod:`bertlab_grader.tests_kernel`), so one zygote started with ``--many``
(:mod:`bertlab_grader.sandbox.warm.many`) serves all of them, several at once;
:class:`SharedTestsZygote` starts it beside the workers (:mod:`bertlab_grader.parallel`),
and :class:`SharedZygote` is what a worker sees of it. Each worker keeps a submissions' zygote of
its own, one kernel at a time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from bertlab_grader.sandbox.warm.pool import ROOT_ENV, SHARED_ENV, Zygote

_shared: list = []  # in a worker: the SharedZygote it was told of, once read


class SharedZygote:
    """A ``many`` zygote that another process (the grader's parent, :class:`SharedTestsZygote`)
    started and stops: a worker forks its tests' kernels from it. It serves kernels several at
    once and cleans up after each itself (its kernels hold no submission's code), so it is never
    busy and clears nothing."""

    busy, many = False, True

    def __init__(self, told: dict):
        self.control, self.scratch = Path(told["control"]), Path(told["scratch"])
        self.init_pid, self.pid = told["init_pid"], told["pid"]
        self.readable = [Path(p) for p in told["readable"]]
        self.told = told

    def serves(self, readable: list[Path], environment: dict, sizes: dict, imports) -> bool:
        """Whether a tests' kernel that reads ``readable`` (etc.) may come from it: everything else
        the same, and each folder it must read one it reads or a folder inside
        ``$BERTLAB_WARM_ROOT`` (a worker's student zygote's scratch), which it reads."""
        root = os.environ.get(ROOT_ENV)
        covered = all(
            Path(p) in self.readable or (root and Path(p).is_relative_to(root)) for p in readable
        )
        return (
            covered
            and self.told["environment"] == environment
            and self.told["sizes"] == sizes
            and self.told["imports"] == list(imports)
        )

    def alive(self) -> bool:
        return Path(f"/proc/{self.pid}").exists()

    def new_slot(self) -> Path:
        import tempfile

        return Path(tempfile.mkdtemp(prefix="k", dir=self.scratch))

    def others(self) -> list[int]:
        return []

    def clear(self, timeout: float = 10) -> bool:
        return True

    def stop(self) -> None:  # the process that started it stops it
        pass


class SharedTestsZygote:
    """One tests' zygote for all of a grader's workers: a worker otherwise starts two zygotes
    (students' and tests', each importing torch and transformers: about 4 CPU-seconds), and every
    worker after the first pays that again. Tests' kernels hold no submission's code
    (:mod:`bertlab_grader.tests_kernel`), so one zygote may serve several at once; each worker keeps
    a students' zygote of its own, one kernel at a time.

    The grader's parent process makes it before its workers start (:meth:`start`): it starts
    beside them, in a thread, and tells them through a file (``$BERTLAB_TESTS_ZYGOTE``) which a
    worker reads when it first needs a tests' kernel. Its sandbox reads what a tests' kernel
    reads (``settings()``: the course's :class:`~bertlab_grader.sandbox.settings.Sandbox`) and
    the folder in which every worker makes its students' zygote (``$BERTLAB_WARM_ROOT``), where
    the students' kernels serve their calls. Where kernels start cold, or it cannot start (logged),
    the file says so and each worker starts its own, as without it."""

    def __init__(self, settings, environ: dict[str, str], log):
        """``settings``: a function that returns the course's Sandbox settings (called in the
        thread, after whatever makes the folders a kernel reads); ``environ``: the environment
        the workers' kernels start in."""
        import tempfile
        import threading

        self.root = Path(tempfile.mkdtemp(prefix="bertlab-workers-"))
        self.told = self.root / "tests-zygote.json"
        #: what the workers' environment needs to use it
        self.env = {ROOT_ENV: str(self.root), SHARED_ENV: str(self.told)}
        self.zygote: Zygote | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(settings, environ, log), daemon=True
        )

    def start(self) -> "SharedTestsZygote":
        self._thread.start()
        return self

    def _run(self, settings, environ, log) -> None:
        """Start the zygote, say so, and stop it when told: in one thread, since the sandbox dies
        with the thread that started it (bubblewrap's ``--die-with-parent`` is the Linux parent-death
        signal, which follows the thread)."""
        self._start(settings, environ, log)
        self._done.wait()
        if self.zygote is not None:
            self.zygote.stop()

    def _start(self, settings, environ, log) -> None:
        from bertlab_grader.sandbox import allowed, bwrap

        told = {"failed": "not started"}
        try:
            settings = settings()
            if settings.mode == "off" or bwrap.why_unavailable() is not None:
                told = {"failed": "kernels are not sandboxed"}
            elif not settings.warm_kernels:
                told = {"failed": "kernels start cold"}
            else:
                readable = allowed.readable_paths([*settings.readable_folders(), self.root])
                environment = allowed.kept_environment(environ, settings.environment)
                sizes = {k: v for k, v in settings.sizes().items() if k != "work_bytes"}
                imports = settings.warm_imports
                self.zygote = Zygote(readable, environment, imports=imports, many=True, **sizes)
                told = self.zygote.shared(readable, environment, sizes, imports)
        except Exception as exc:  # noqa: BLE001 - each worker starts its own
            log.warning("No tests' zygote shared by the workers (%s): each starts its own", exc)
            told = {"failed": f"{type(exc).__name__}: {exc}"}
        finally:
            part = self.told.with_suffix(".part")
            part.write_text(json.dumps(told))
            part.rename(self.told)

    def stop(self) -> None:
        """Stop the zygote and remove the workers' zygotes' folder (after the workers end)."""
        import shutil

        self._done.set()
        self._thread.join()
        shutil.rmtree(self.root, ignore_errors=True)


def told_zygote(log, timeout: float = 180) -> SharedZygote | None:
    """In a worker: the shared tests' zygote its parent started, once it has said so (None, logged
    once, if it could not start or says nothing in ``timeout`` seconds)."""
    if not _shared:
        told_file, deadline = Path(os.environ[SHARED_ENV]), time.monotonic() + timeout
        told = {"failed": f"nothing in {told_file} after {timeout:.0f} s"}
        while time.monotonic() < deadline:
            if told_file.is_file():
                told = json.loads(told_file.read_text())
                break
            time.sleep(0.05)
        if "failed" in told:
            log.warning("No tests' zygote shared by the workers (%s)", told["failed"])
        _shared.append(None if "failed" in told else SharedZygote(told))
    return _shared[0]


def zygote_for(
    readable: list[Path],
    environment: dict[str, str],
    log,
    work_bytes: int = 0,
    tmp_bytes: int = 2**30,
    file_bytes: int = 2**30,
    imports: list[str] | tuple[str, ...] = (),
) -> SharedZygote | None:
    """In a worker whose parent shares a tests' zygote (``$BERTLAB_TESTS_ZYGOTE``): that zygote,
    if a tests' kernel that reads ``readable`` and keeps ``environment`` may come from it (the
    arguments of :func:`bertlab_grader.sandbox.warm.pool.zygote_for`); else None, and the worker
    starts its own."""
    if not os.environ.get(SHARED_ENV):
        return None
    shared = told_zygote(log)
    if shared is None:
        return None
    sizes = {"tmp_bytes": tmp_bytes, "file_bytes": file_bytes}
    if shared.alive() and shared.serves(readable, environment, sizes, imports):
        return shared
    log.warning("The workers' tests' zygote does not fit this kernel: this worker starts its own")
    return None

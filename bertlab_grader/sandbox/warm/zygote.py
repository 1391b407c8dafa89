"""The warm-kernel zygote: inside its sandbox, it imports once and forks a kernel per request.

``python -m bertlab_grader.sandbox.warm.zygote CONTROL LIFELINE_FD [--many] [MODULE ...]`` imports the
modules (the course's ``c.Sandbox.warm_imports``) and :data:`KERNEL_IMPORTS`, prints
:data:`bertlab_grader.sandbox.warm.protocol.READY` with the imports that failed, then listens on the
Unix socket ``CONTROL`` for the grader's stubs (:mod:`bertlab_grader.sandbox.warm.stub`), one kernel
at a time: it forks the child, which becomes the kernel a fresh ``python -m ipykernel_launcher``
would be, and reports its exit status. Before each fork and after each kernel it kills every other
process of its sandbox and empties ``/tmp`` and ``/dev/shm``. With ``--many``, several at once
(:mod:`bertlab_grader.sandbox.warm.many`: tests' kernels only). It exits when the grader's end of
``LIFELINE_FD`` closes. Started by :class:`bertlab_grader.sandbox.warm.pool.Zygote`; the standard
library and the grader's kernel-side modules only, besides what it warms.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import stat
import sys
import time
from pathlib import Path

from bertlab_grader.sandbox.procfs import kill_all
from bertlab_grader.sandbox.warm.many import serve_many
from bertlab_grader.sandbox.warm.fork import (
    child,
    kill_group,
    read_request,
    set_dumpable,
    stub_gone,
)
from bertlab_grader.sandbox.warm.protocol import READY, send

#: What the zygote imports before it forks besides the course's modules: the kernel itself, and
#: what a kernel imports as it starts (its debugger, about 80 ms of CPU, and IPython's history).
#: A module that fails to import is left out (the grader logs it).
KERNEL_IMPORTS = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.debugger", "sqlite3")


def _kill_others() -> None:
    """Kill every process of this PID namespace but its init (PID 1) and the zygote, and wait."""
    me = os.getpid()
    for _ in range(200):
        left = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) not in (1, me):
                try:
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except (OSError, IndexError):
                    continue
                if state != "Z":
                    left.append(int(entry))
        if not left:
            return
        kill_all(left)
        time.sleep(0.02)


def _empty(folder: str, keep: set[str]) -> None:
    import shutil

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name in keep:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _clean(scratch: Path, slot: Path | None = None) -> None:
    """Nothing of the last kernel is left for the next: no process, no file in /tmp or /dev/shm;
    given the next kernel's ``slot`` (which the grader has just filled with its copy of the
    kernel's folder), no file in the scratch folder outside it but sockets (the grader's stubs and
    the kernels' IPC). Run before each fork: after a kernel ends the grader may already be filling
    the next slot."""
    _kill_others()
    keep = (
        {scratch.parts[2]}
        if scratch.parts[:2] == ("/", "tmp") and len(scratch.parts) > 2
        else set()
    )
    _empty("/tmp", keep)
    _empty("/dev/shm", set())
    for folder, dirs, files in os.walk(scratch) if slot is not None else ():
        dirs[:] = [d for d in dirs if Path(folder, d) != slot]
        for name in files:
            path = os.path.join(folder, name)
            try:
                if not stat.S_ISSOCK(os.lstat(path).st_mode):
                    os.unlink(path)
            except OSError:
                pass


def _serve_one(conn: socket.socket, listener: socket.socket, lifeline: int, scratch: Path) -> bool:
    """Fork one kernel for the stub on ``conn`` and wait for it. False if the grader has gone."""
    request, fds = read_request(conn)
    if request is None:
        return True
    _clean(scratch, Path(request["slot"]))
    pid = os.fork()
    if pid == 0:
        try:
            child(request, fds, [conn, listener, lifeline])
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    gone = False
    try:
        send(conn, {"pid": pid})
    except OSError:
        kill_group(pid)
    pidfd = os.pidfd_open(pid)
    watch = selectors.DefaultSelector()
    watch.register(pidfd, selectors.EVENT_READ, "kernel")
    watch.register(conn, selectors.EVENT_READ, "stub")
    watch.register(lifeline, selectors.EVENT_READ, "grader")
    status = None
    while status is None:
        for key, _ in watch.select():
            if key.data == "kernel":
                status = os.waitpid(pid, 0)[1]
            elif key.data == "stub":
                if stub_gone(conn):  # so is its kernel
                    watch.unregister(conn)
                    kill_group(pid)
            elif key.data == "grader" and not os.read(lifeline, 1):
                gone = True
                watch.unregister(lifeline)
                kill_group(pid)
    watch.close()
    os.close(pidfd)
    _clean(scratch)
    try:
        send(conn, {"exit": os.waitstatus_to_exitcode(status)})
    except OSError:
        pass
    conn.close()
    return not gone


def serve(
    control: str,
    lifeline: int,
    imports: list[str] | tuple[str, ...] = (),
    many: bool = False,
) -> int:
    """The zygote: import ``imports`` and :data:`KERNEL_IMPORTS`, then fork a kernel for each stub
    that connects: one at a time, or with ``many`` several at once
    (:func:`bertlab_grader.sandbox.warm.many.serve_many`)."""
    import importlib

    set_dumpable(False)
    failed = []
    # pydevd (under ipykernel's debugger) warns on import of a check a kernel never needs
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    for name in (*imports, *KERNEL_IMPORTS):
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - left out, and said
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    scratch = Path(control).parent
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(control)
    listener.listen(8)
    print(READY, json.dumps({"failed": failed}), flush=True)
    if many:
        return serve_many(listener, lifeline)
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ, "stub")
    events.register(lifeline, selectors.EVENT_READ, "grader")
    while True:
        for key, _ in events.select():
            if key.data == "grader":
                if not os.read(lifeline, 1):
                    return 0
            else:
                conn, _ = listener.accept()
                if not _serve_one(conn, listener, lifeline, scratch):
                    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(
            "usage: python -m bertlab_grader.sandbox.warm.zygote CONTROL_SOCKET LIFELINE_FD [--many] "
            "[MODULE ...]",
            file=sys.stderr,
        )
        return 2
    many = argv[2:3] == ["--many"]
    return serve(argv[0], int(argv[1]), argv[2 + many :], many=many)


if __name__ == "__main__":
    status = main(sys.argv[1:])
    # Out at once: tearing down an interpreter that imported torch and transformers takes most of
    # a second at the end of every grading run, and a zygote holds nothing that needs it (the
    # grader removes its scratch folder, and its sandbox's processes end with the sandbox).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

"""The warm-kernel zygote: inside its sandbox, it imports once and forks a kernel per request.

``python -m bertlab_grader.sandbox.warm.zygote CONTROL LIFELINE_FD [--many] [MODULE ...]`` imports the
modules (the course's ``c.Sandbox.warm_imports``, passed on its command line) and
:data:`KERNEL_IMPORTS`, prints :data:`bertlab_grader.sandbox.warm.protocol.READY` with the imports that
failed, then listens on the Unix socket ``CONTROL`` for the
grader's stubs (:mod:`bertlab_grader.sandbox.warm.stub`), one kernel at a time: it forks the child, which
becomes the kernel a fresh ``python -m ipykernel_launcher`` would be, and reports its exit status.
Before each fork and after each kernel it kills every other process of its sandbox and empties
``/tmp`` and ``/dev/shm``. With ``--many`` (a zygote of tests' kernels, which hold no submission's
code, shared by a grader's workers) it serves several kernels at once, each in a ``/tmp`` folder of
its own that goes with it. It exits when the grader's end of ``LIFELINE_FD`` closes. Started by
:class:`bertlab_grader.sandbox.warm.pool.Zygote`; the standard library and the grader's kernel-side modules
only, besides what it warms.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import stat
import sys
import time
from pathlib import Path

from bertlab_grader.sandbox.procfs import kill_all
from bertlab_grader.sandbox.warm.protocol import READY, receive, send

#: What the zygote imports before it forks besides the course's modules: the kernel itself, and
#: what a kernel imports as it starts (its debugger, about 80 ms of CPU, and IPython's history).
#: A module that fails to import is left out (the grader logs it).
KERNEL_IMPORTS = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.debugger", "sqlite3")


def _from_outside(conn: socket.socket) -> bool:
    """Whether the peer of ``conn`` is outside this PID namespace: the grader's stub is, and a
    kernel in the sandbox is not (SO_PEERCRED reports a process of another namespace as PID 0)."""
    import struct

    pid, _, _ = struct.unpack(
        "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    )
    return pid == 0


def _set_dumpable(flag: bool) -> None:
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be traced or have its memory
    read by another process of the same user."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, int(flag), 0, 0, 0)
    except (OSError, AttributeError):
        pass


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


def _kill_group(pid: int) -> None:
    """SIGKILL a kernel's process group (its PID leads it); a group already gone is skipped."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


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


def _child(request: dict, fds: list[int], close: list, own_tmp: bool = False) -> None:
    """In the forked child: become the kernel a fresh ``python -m ipykernel_launcher`` would be.
    ``own_tmp``: its work folder and IPython's lie in a folder of ``/tmp`` of its own (a zygote
    that serves many kernels at once, :func:`_serve_many`), not in ``/tmp`` itself."""
    import random
    import runpy

    os.setsid()  # its own process group, as jupyter_client starts a kernel: killpg reaches it all
    for item in close:
        item.close() if hasattr(item, "close") else os.close(item)
    for number, fd in enumerate(fds[:3]):
        os.dup2(fd, number)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_dumpable(True)
    slot = Path(request["slot"])
    connection = slot / "connection.json"
    connection.write_text(json.dumps(request["connection"]))
    argv = list(request["argv"])
    argv[argv.index("-f") + 1] = str(connection)
    env = {k: v for k, v in request["env"].items() if k != "JPY_PARENT_PID"}
    tmp = Path("/tmp") / slot.name if own_tmp else Path("/tmp")
    env.update(MPLCONFIGDIR=str(tmp / "matplotlib"), IPYTHONDIR=str(tmp / "ipython"))
    os.environ.clear()
    os.environ.update(env)
    # The kernel works in a copy of its folder in /tmp, a size-capped tmpfs the zygote empties
    # after each kernel: what it writes there is capped and thrown away, as a cold kernel's is.
    import shutil

    work = tmp / Path(request["cwd"]).name
    shutil.copytree(request["cwd"], work, symlinks=True, dirs_exist_ok=True)
    os.chdir(work)
    sys.path[0] = os.getcwd()  # where `python -m` puts it
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    sys.argv = ["ipykernel_launcher", *argv]
    code = 0
    try:
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the kernel's own crash, reported as a fresh one would be
        import traceback

        traceback.print_exc()
        code = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _serve_one(conn: socket.socket, listener: socket.socket, lifeline: int, scratch: Path) -> bool:
    """Fork one kernel for the stub on ``conn`` and wait for it. False if the grader has gone."""
    request, fds = _request(conn)
    if request is None:
        return True
    _clean(scratch, Path(request["slot"]))
    pid = os.fork()
    if pid == 0:
        try:
            _child(request, fds, [conn, listener, lifeline])
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    gone = False
    try:
        send(conn, {"pid": pid})
    except OSError:
        _kill_group(pid)
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
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                if not data:  # the stub is gone (killed): so is its kernel
                    watch.unregister(conn)
                    _kill_group(pid)
            elif key.data == "grader" and not os.read(lifeline, 1):
                gone = True
                watch.unregister(lifeline)
                _kill_group(pid)
    watch.close()
    os.close(pidfd)
    _clean(scratch)
    try:
        send(conn, {"exit": os.waitstatus_to_exitcode(status)})
    except OSError:
        pass
    conn.close()
    return not gone


def _request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """A stub's request and its stdin, stdout and stderr, or (None, []) (refused: it is not the
    grader's stub, or it is malformed; the connection is then closed)."""
    buffer = bytearray()
    try:
        # only the grader's stubs; a kernel in this sandbox asking for a kernel of its own is refused
        request, fds = receive(conn, buffer, with_fds=True) if _from_outside(conn) else (None, [])
    except (OSError, ValueError):
        request, fds = None, []
    if request is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return None, []
    return request, fds


def _serve_many(listener: socket.socket, lifeline: int) -> int:
    """Fork a kernel for each stub as it connects, several at once: a tests' kernel for each of
    the grader's workers (:mod:`bertlab_grader.tests_kernel`), which holds no submission's code.
    Each kernel works in ``/tmp/<its slot>``, removed with its process group when it ends or its
    stub goes; nothing else is cleared between kernels (a zygote that serves submissions' kernels
    serves one at a time, :func:`_serve_one`)."""
    import shutil

    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ, ("stub",))
    events.register(lifeline, selectors.EVENT_READ, ("grader",))
    kernels: dict[int, tuple[socket.socket, int, str]] = {}  # pid -> (its stub, its pidfd, slot)

    def end(pid: int) -> None:
        conn, pidfd, slot = kernels.pop(pid)
        for item in (conn, pidfd):
            try:
                events.unregister(item)
            except (KeyError, ValueError):
                pass
        _kill_group(pid)
        status = os.waitpid(pid, 0)[1]
        os.close(pidfd)
        shutil.rmtree(Path("/tmp") / Path(slot).name, ignore_errors=True)
        try:
            send(conn, {"exit": os.waitstatus_to_exitcode(status)})
        except OSError:
            pass
        conn.close()

    while True:
        for key, _ in events.select():
            what = key.data
            if what[0] == "grader":
                if not os.read(lifeline, 1):
                    for pid in list(kernels):
                        _kill_group(pid)
                    return 0
            elif what[0] == "stub":
                conn, _ = listener.accept()
                request, fds = _request(conn)
                if request is None:
                    continue
                others = [item for c, fd, _ in kernels.values() for item in (c, fd)]
                pid = os.fork()
                if pid == 0:
                    try:
                        _child(
                            request, fds, [conn, listener, lifeline, events, *others], own_tmp=True
                        )
                    finally:
                        os._exit(70)
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                kernels[pid] = (conn, pidfd, str(request["slot"]))
                events.register(pidfd, selectors.EVENT_READ, ("kernel", pid))
                events.register(conn, selectors.EVENT_READ, ("conn", pid))
                try:
                    send(conn, {"pid": pid})
                except OSError:
                    _kill_group(pid)
            elif what[0] == "kernel" and what[1] in kernels:
                end(what[1])
            elif what[0] == "conn" and what[1] in kernels:
                conn = kernels[what[1]][0]
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                if not data:  # the stub is gone (killed): so is its kernel
                    events.unregister(conn)
                    _kill_group(what[1])


def serve(
    control: str,
    lifeline: int,
    imports: list[str] | tuple[str, ...] = (),
    many: bool = False,
) -> int:
    """The zygote: import ``imports`` and :data:`KERNEL_IMPORTS`, then fork a kernel for each stub
    that connects: one at a time, or with ``many`` several at once (:func:`_serve_many`)."""
    import importlib

    _set_dumpable(False)
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
        return _serve_many(listener, lifeline)
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

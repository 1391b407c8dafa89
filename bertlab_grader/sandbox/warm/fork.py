"""What every zygote does around a fork: read a stub's request, and become the kernel it asks for.

Shared by the zygote that serves one kernel at a time (:mod:`bertlab_grader.sandbox.warm.zygote`)
and the one that serves several (:mod:`bertlab_grader.sandbox.warm.many`). The standard library
only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path

from bertlab_grader.sandbox.warm.protocol import receive


def from_outside(conn: socket.socket) -> bool:
    """Whether the peer of ``conn`` is outside this PID namespace: the grader's stub is, and a
    kernel in the sandbox is not (SO_PEERCRED reports a process of another namespace as PID 0)."""
    import struct

    pid, _, _ = struct.unpack(
        "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    )
    return pid == 0


def set_dumpable(flag: bool) -> None:
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be traced or have its memory
    read by another process of the same user."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, int(flag), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def kill_group(pid: int) -> None:
    """SIGKILL a kernel's process group (its PID leads it); a group already gone is skipped."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def read_request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """A stub's request and its stdin, stdout and stderr, or (None, []) (refused: it is not the
    grader's stub, or it is malformed; the connection is then closed)."""
    buffer = bytearray()
    try:
        # only the grader's stubs; a kernel in this sandbox asking for a kernel of its own is refused
        request, fds = receive(conn, buffer, with_fds=True) if from_outside(conn) else (None, [])
    except (OSError, ValueError):
        request, fds = None, []
    if request is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return None, []
    return request, fds


def child(request: dict, fds: list[int], close: list, own_tmp: bool = False) -> None:
    """In the forked child: become the kernel a fresh ``python -m ipykernel_launcher`` would be.
    ``own_tmp``: its work folder and IPython's lie in a folder of ``/tmp`` of its own (a zygote
    that serves many kernels at once, :func:`bertlab_grader.sandbox.warm.many.serve_many`), not in ``/tmp`` itself."""
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
    set_dumpable(True)
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


def stub_gone(conn: socket.socket) -> bool:
    """Read what the stub on ``conn`` sent (it sends nothing after its request): whether it has
    gone, killed or ended, so that its kernel must go too."""
    try:
        return not conn.recv(4096)
    except OSError:
        return True

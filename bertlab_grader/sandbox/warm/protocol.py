"""How the warm kernels' three programs talk: the grader, the zygote in its sandbox, and the stub.

Messages are one JSON object per line over a Unix stream socket; the stub sends its stdin,
stdout and stderr beside its request (``SCM_RIGHTS``). The zygote lives in a PID namespace of
its own, so a PID it reports is translated (:func:`outer_pid`) before the grader or the stub
signals it. The standard library only: the stub and the zygote import it.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from bertlab_grader.sandbox.procfs import process_tree

#: the zygote's first line on stdout, then JSON: {"failed": imports that failed}
READY = "bertlab-warm-kernel-ready"


def send(conn: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    """Send one message, and the file descriptors ``fds`` with it."""
    data = json.dumps(message).encode() + b"\n"
    if fds:
        socket.send_fds(conn, [data], fds)
    else:
        conn.sendall(data)


def receive(
    conn: socket.socket, buffer: bytearray, with_fds: bool = False
) -> tuple[dict | None, list[int]]:
    """The next message (None at end of file), and the file descriptors sent with it."""
    fds: list[int] = []
    while b"\n" not in buffer:
        if with_fds and not fds:
            data, got, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            fds += got
        else:
            data = conn.recv(1 << 20)
        if not data:
            return None, fds
        buffer += data
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line), fds


def ns_pids(pid: int) -> list[int]:
    """The PIDs of a process in each PID namespace it is in, outermost first (``NSpid``)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return [int(x) for x in line.split()[1:]]
    except OSError:
        pass
    return []


def outer_pid(init_pid: int, inner: int) -> int | None:
    """The PID, seen from here, of the process that is ``inner`` in the sandbox led by ``init_pid``."""
    for pid in process_tree(init_pid):
        found = ns_pids(pid)
        if len(found) > 1 and found[-1] == inner:
            return pid
    return None

"""A zygote that serves several kernels at once: the tests' zygote a grader's workers share.

``python -m bertlab_grader.sandbox.warm.zygote CONTROL LIFELINE_FD --many [MODULE ...]`` imports as
every zygote does (:mod:`bertlab_grader.sandbox.warm.zygote`), then forks a kernel for each of the
grader's stubs as it connects, without waiting for the last one to end. Only tests' kernels come
from it (:mod:`bertlab_grader.sandbox.warm.shared`): they hold no submission's code, so they may
share a sandbox; a submission's kernel always comes from a zygote that serves one kernel at a time
and clears its sandbox between them. The standard library only, as the zygote.
"""

from __future__ import annotations

import os
import selectors
import shutil
import socket
from pathlib import Path

from bertlab_grader.sandbox.warm.protocol import send
from bertlab_grader.sandbox.warm.fork import child, kill_group, read_request, stub_gone


def serve_many(listener: socket.socket, lifeline: int) -> int:
    """Fork a kernel for each stub as it connects, several at once: a tests' kernel for each of
    the grader's workers (:mod:`bertlab_grader.tests_kernel`), which holds no submission's code.
    Each kernel works in ``/tmp/<its slot>``, removed with its process group when it ends or its
    stub goes; nothing else is cleared between kernels (a zygote that serves submissions' kernels
    serves one at a time, :func:`bertlab_grader.sandbox.warm.zygote.serve`)."""
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
        kill_group(pid)
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
                        kill_group(pid)
                    return 0
            elif what[0] == "stub":
                conn, _ = listener.accept()
                request, fds = read_request(conn)
                if request is None:
                    continue
                others = [item for c, fd, _ in kernels.values() for item in (c, fd)]
                pid = os.fork()
                if pid == 0:
                    try:
                        child(
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
                    kill_group(pid)
            elif what[0] == "kernel" and what[1] in kernels:
                end(what[1])
            elif what[0] == "conn" and what[1] in kernels:
                conn = kernels[what[1]][0]
                if stub_gone(conn):  # so is its kernel
                    events.unregister(conn)
                    kill_group(what[1])

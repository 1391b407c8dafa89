"""The warm kernel's stub: the process jupyter_client starts as the kernel.

``python -m bertlab_grader.sandbox.warm.stub --control SOCKET --slot FOLDER --init-pid PID -- PYTHON -m
ipykernel_launcher -f FILE ...`` asks the zygote (:mod:`bertlab_grader.sandbox.warm.zygote`) behind
``SOCKET`` to fork the kernel that command line would start, handing it the stub's own stdin,
stdout and stderr; writes the kernel's PID (as seen from outside the sandbox) into
``FOLDER/kernel.pid``, where :class:`bertlab_grader.sandbox.manager.SandboxedKernelManager` reads
it; forwards the signals jupyter_client sends (an interrupt is SIGINT); and exits with the
kernel's exit status. The standard library only: it starts once per notebook.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

from bertlab_grader.sandbox.warm.protocol import outer_pid, receive, send


def stub(control: str, slot: str, init_pid: int, cmd: list[str]) -> int:
    """Ask the zygote for a kernel running ``cmd`` (``python -m ipykernel_launcher -f FILE ...``),
    write its PID (seen from here) into ``SLOT/kernel.pid``, forward signals, return its exit code."""
    argv = cmd[1:]
    connection = json.loads(Path(argv[argv.index("-f") + 1]).read_text())
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(control)
    # the environment the kernel keeps (the grader wrote it, filtered), else the stub's own
    kept = Path(slot) / "env.json"
    env = json.loads(kept.read_text()) if kept.is_file() else dict(os.environ)
    request = {
        "argv": argv,
        "connection": connection,
        "env": env,
        "cwd": str(Path(slot) / "work"),
        "slot": slot,
    }
    send(conn, request, [0, 1, 2])
    buffer = bytearray()
    reply, _ = receive(conn, buffer)
    if reply is None or "pid" not in reply:
        print(f"warm kernel: the zygote did not start a kernel ({reply})", file=sys.stderr)
        return 1
    pid = None
    for _ in range(500):
        pid = outer_pid(init_pid, reply["pid"])
        if pid is not None:
            break
        time.sleep(0.01)
    if pid is None:
        print("warm kernel: cannot find the kernel the zygote started", file=sys.stderr)
        return 1

    def forward(signum, _frame):
        try:
            os.killpg(pid, signum)
        except OSError:
            pass

    for signum in (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
    ):
        signal.signal(signum, forward)
    written = Path(slot) / "kernel.pid.part"
    written.write_text(str(pid))
    written.rename(Path(slot) / "kernel.pid")
    reply, _ = receive(conn, buffer)
    code = (reply or {}).get("exit", 1)
    return code if code >= 0 else 128 - code


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(
            "usage: python -m bertlab_grader.sandbox.warm.stub --control SOCKET --slot FOLDER --init-pid PID "
            "-- PYTHON -m ipykernel_launcher -f FILE ...",
            file=sys.stderr,
        )
        return 2
    options, cmd = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    values = dict(zip(options[::2], options[1::2]))
    return stub(values["--control"], values["--slot"], int(values["--init-pid"]), cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

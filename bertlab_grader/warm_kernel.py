"""Warm kernels: torch and transformers are imported once per grader process, not once per notebook.

Every course notebook starts with ``import torch`` and a transformers model class, and in a fresh
kernel that costs about 8 s of CPU (torch 2.5 s, transformers 2 s, the modeling classes 3.5 s),
more than most notebooks then spend on their own cells. A grader that starts one kernel per
submission pays it every time. Here one process, the *zygote*, imports them once (:data:`WARM_IMPORTS`)
inside a sandbox of :mod:`bertlab_grader.kernel_sandbox`, and forks a kernel for each notebook: the
same ``ipykernel_launcher`` command line, environment and working directory a fresh kernel would
get, started in well under a second. The fork is the technique of Android's zygote and of
``multiprocessing``'s forkserver; ``multiprocessing`` itself is not used, because the child must
become an ordinary Jupyter kernel that jupyter_client can interrupt, watch and kill.

How the parts meet:

- :class:`Zygote` (in the grader) starts ``python -m bertlab_grader.warm_kernel serve`` in a
  sandbox whose writable folder is the zygote's own scratch folder, with the course's private
  folders hidden, no network and no capabilities, and keeps a pipe to it: when the grader
  ends, however it ends, the zygote reads end-of-file and exits, and the sandbox with it.
- jupyter_client's kernel process is a small *stub* (``warm_kernel stub``, the standard library
  only): it hands the zygote the kernel's command line, environment, connection file and its
  own stdin, stdout and stderr over a Unix socket, forwards the signals jupyter_client sends
  (an interrupt is SIGINT), and exits with the kernel's exit status. If the stub is killed, the
  zygote kills the kernel.
- The zygote serves one kernel at a time. Before each fork and after each kernel ends it kills
  every other process in its sandbox and empties ``/tmp`` and ``/dev/shm``; the grader also
  kills whatever is left before the next kernel (:meth:`Zygote.clear`), so nothing one
  submission leaves behind (a daemon, an IPython startup file) meets the next. The zygote is
  not dumpable, so a kernel cannot trace it or read its memory; a kernel that kills it only
  makes the next kernel start cold while a new zygote starts.
- The memory, process and thread caps (:class:`bertlab_grader.kernel_limits.KernelWatch`)
  watch everything in the sandbox except the zygote itself.

``BERTLAB_WARM_KERNEL=off`` starts every kernel cold (as nbgrader does, inside its own sandbox);
without a working sandbox kernels are always cold. A kernel forked from the zygote differs from
a fresh one in what is already imported, and nothing else a notebook can rely on: ``random``
and numpy's global generator are seeded afresh from the OS, as at a fresh start.
Used by :class:`bertlab_grader.kernel_sandbox.SandboxedKernelManager`; ``docs/instructors.md``
says what it saves.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import time
from pathlib import Path

from bertlab_grader.kernel_limits import kill_all, process_tree

ENV_VAR = "BERTLAB_WARM_KERNEL"  # "on" (the default) or "off"
READY = "bertlab-warm-kernel-ready"

#: What the zygote imports before it forks: what every course notebook's first cell imports,
#: and the kernel itself. A module that fails to import is left out (the grader logs it).
WARM_IMPORTS = (
    "numpy", "torch", "transformers", "transformers.modeling_utils",
    "transformers.models.auto.modeling_auto", "transformers.models.auto.tokenization_auto",
    "transformers.models.bert.modeling_bert", "transformers.models.bert.tokenization_bert",
    "ipykernel.kernelapp", "ipykernel.ipkernel",
)


def enabled() -> bool:
    value = os.environ.get(ENV_VAR, "on").strip().lower() or "on"
    if value not in {"on", "off"}:
        raise ValueError(f"{ENV_VAR}={value!r}: use on (the default) or off")
    return value == "on"


# --- messages: one JSON object per line over a Unix stream socket --------------------------

def _send(conn: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode() + b"\n"
    if fds:
        socket.send_fds(conn, [data], fds)
    else:
        conn.sendall(data)


def _receive(conn: socket.socket, buffer: bytearray, with_fds: bool = False) -> tuple[dict | None, list[int]]:
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


def copy_folder(source: Path, target: Path, max_files: int = 2000, max_bytes: int = 200 * 2**20) -> bool:
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

        return [n for n in names if not (stat.S_ISREG(m := os.lstat(os.path.join(folder, n)).st_mode)
                                         or stat.S_ISDIR(m) or stat.S_ISLNK(m))]

    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    return True


def _from_outside(conn: socket.socket) -> bool:
    """Whether the peer of ``conn`` is outside this PID namespace: the grader's stub is, and a
    kernel in the sandbox is not (SO_PEERCRED reports a process of another namespace as PID 0)."""
    import struct

    pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid == 0


def _set_dumpable(flag: bool) -> None:
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be traced or have its memory
    read by another process of the same user."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, int(flag), 0, 0, 0)
    except (OSError, AttributeError):
        pass


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


# --- the zygote, inside the sandbox ---------------------------------------------------------

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


def _clean(scratch: Path) -> None:
    """Nothing of the last kernel is left for the next: no process, no file in /tmp or /dev/shm."""
    _kill_others()
    keep = {scratch.parts[2]} if scratch.parts[:2] == ("/", "tmp") and len(scratch.parts) > 2 else set()
    _empty("/tmp", keep)
    _empty("/dev/shm", set())


def _child(request: dict, fds: list[int], close: list) -> None:
    """In the forked child: become the kernel a fresh ``python -m ipykernel_launcher`` would be."""
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
    env.update(MPLCONFIGDIR="/tmp/matplotlib", IPYTHONDIR="/tmp/ipython")
    os.environ.clear()
    os.environ.update(env)
    os.chdir(request["cwd"])
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
    buffer = bytearray()
    try:
        # only the grader's stubs; a kernel in this sandbox asking for a kernel of its own is refused
        request, fds = _receive(conn, buffer, with_fds=True) if _from_outside(conn) else (None, [])
    except (OSError, ValueError):
        request, fds = None, []
    if request is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return True
    _clean(scratch)
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
        _send(conn, {"pid": pid})
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
        _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
    except OSError:
        pass
    conn.close()
    return not gone


def serve(control: str, lifeline: int) -> int:
    """The zygote: import :data:`WARM_IMPORTS`, then fork a kernel for each stub that connects."""
    import importlib

    _set_dumpable(False)
    failed = []
    for name in WARM_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - left out, and said
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    scratch = Path(control).parent
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(control)
    listener.listen(8)
    print(READY, json.dumps(failed), flush=True)
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


# --- the stub: the process jupyter_client starts as the kernel ------------------------------

def stub(control: str, slot: str, init_pid: int, cmd: list[str]) -> int:
    """Ask the zygote for a kernel running ``cmd`` (``python -m ipykernel_launcher -f FILE ...``),
    write its PID (seen from here) into ``SLOT/kernel.pid``, forward signals, return its exit code."""
    argv = cmd[1:]
    connection = json.loads(Path(argv[argv.index("-f") + 1]).read_text())
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(control)
    request = {"argv": argv, "connection": connection, "env": dict(os.environ), "cwd": str(Path(slot) / "work"),
               "slot": slot}
    _send(conn, request, [0, 1, 2])
    buffer = bytearray()
    reply, _ = _receive(conn, buffer)
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

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    written = Path(slot) / "kernel.pid.part"
    written.write_text(str(pid))
    written.rename(Path(slot) / "kernel.pid")
    reply, _ = _receive(conn, buffer)
    code = (reply or {}).get("exit", 1)
    return code if code >= 0 else 128 - code


# --- in the grader --------------------------------------------------------------------------

class Zygote:
    """A zygote process in its own sandbox, and what the grader needs to use and clean it."""

    def __init__(self, hidden: list[Path], log=None):
        import subprocess
        import tempfile

        from bertlab_grader.kernel_sandbox import PACKAGE, bwrap_path, sandbox_command

        self.scratch = Path(tempfile.mkdtemp(prefix="bertlab-warm-"))
        self.control = self.scratch / "control"
        self.busy = False
        self.failed_imports: list[str] = []
        read, self._lifeline = os.pipe()
        cmd = sandbox_command([sys.executable, "-m", "bertlab_grader.warm_kernel", "serve", str(self.control), str(read)],
                              writable=self.scratch, readable=[PACKAGE, Path(sys.prefix).resolve()],
                              hidden=hidden, bwrap=bwrap_path())
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, pass_fds=(read,), start_new_session=True)
        os.close(read)
        self.pid = self.init_pid = None
        line = self._ready_line(timeout=180)
        if not line.startswith(READY):
            self.stop()
            raise RuntimeError(f"the warm-kernel zygote did not start: {line or 'no reply in 180 s'}")
        self.failed_imports = json.loads(line[len(READY):] or "[]")
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
        return self.process.poll() is None and self.pid is not None and Path(f"/proc/{self.pid}").exists()

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


_zygotes: dict = {}  # in each grader process: sandbox layout and environment -> its Zygote


def _stop_all() -> None:
    for zygote in list(_zygotes.values()):
        zygote.stop()
    _zygotes.clear()


def zygote_for(hidden: list[Path], log) -> Zygote | None:
    """This process's idle zygote for kernels that hide ``hidden`` (started on first use), or None:
    warm kernels are off, the zygote is busy with another kernel, or it could not start (logged)."""
    import atexit

    if not enabled():
        return None
    key = (tuple(str(p) for p in hidden), sys.executable, tuple(sorted(os.environ.items())))
    zygote = _zygotes.get(key)
    if zygote is not None and not zygote.alive():  # a kernel killed it: start another
        _zygotes.pop(key).stop()
        zygote = None
    if zygote is None:
        for other in [k for k in _zygotes if k[0] == key[0]]:  # the environment changed: a new one
            _zygotes.pop(other).stop()
        try:
            zygote = Zygote(hidden)
        except Exception as exc:  # noqa: BLE001 - cold kernels still grade
            log.warning("Kernels start cold (no warm-kernel zygote: %s)", exc)
            return None
        if not _zygotes:
            atexit.register(_stop_all)
        _zygotes[key] = zygote
        if zygote.failed_imports:
            log.warning("The warm-kernel zygote could not import: %s", "; ".join(zygote.failed_imports))
    return None if zygote.busy else zygote


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        return serve(argv[1], int(argv[2]))
    if argv[:1] == ["stub"] and "--" in argv:
        options, cmd = argv[1:argv.index("--")], argv[argv.index("--") + 1:]
        values = dict(zip(options[::2], options[1::2]))
        return stub(values["--control"], values["--slot"], int(values["--init-pid"]), cmd)
    print("usage: python -m bertlab_grader.warm_kernel serve CONTROL LIFELINE_FD | "
          "stub --control SOCKET --slot FOLDER --init-pid PID -- PYTHON -m ipykernel_launcher -f FILE ...",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

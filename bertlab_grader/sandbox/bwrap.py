"""The bubblewrap command line that sandboxes a grading kernel (or the warm-kernel zygote).

:func:`sandbox_command` wraps a command in ``bwrap`` (the sandbox behind Flatpak) whose root is
an empty, read-only file system that holds only what a kernel needs (an allow-list, not a list
of things to hide):

- the system's library and binary folders (:data:`SYSTEM`) and a few files of ``/etc``
  (:data:`ETC`: the dynamic loader's cache, users, time zone, certificates, fonts);
- the Python environment's own files, each bound at its own path
  (:func:`bertlab_grader.sandbox.allowed.readable_paths`: its
  prefixes, its site-packages, the package folders of editable installs): an environment that
  lies inside the course repository shows its own folder, never the repository around it;
- the folders the course names as what its notebooks read (model caches: ``Sandbox.readable``);
- one writable folder, the kernel's own (for a grading kernel, a size-capped tmpfs holding a copy
  of its submission's folder), and a private, size-capped ``/tmp`` and ``/dev/shm``.

Nothing else: no home folder, no course repository (``solutions/``, ``source/``,
``autograder/``, the gradebook), no other student's submission, no ``/srv`` or ``/opt``, and
no socket of a database. The process gets its own PID, network, IPC and cgroup namespaces (it
sees only its own ``/proc``, reaches no network, not even the grader's loopback), no
capabilities, a hard cap on the size of any file it writes (``RLIMIT_FSIZE``), and only the
environment variables :data:`bertlab_grader.sandbox.allowed.ENVIRONMENT` (and the course's
``Sandbox.environment``) allow.

:func:`why_unavailable` says whether ``bwrap`` can build that sandbox here; :func:`mode` reads
``BERTLAB_SANDBOX`` (``on``, the default, or its old name ``require``: every kernel in a sandbox,
and none started where ``bwrap`` cannot build one; ``off``: no sandbox, on purpose), the default
of ``c.Sandbox.mode``. A leaf of the grader, the standard library only, so both the
kernel manager (:mod:`bertlab_grader.sandbox.manager`) and the warm kernels' pool
(:mod:`bertlab_grader.sandbox.warm.pool`) build their sandboxes with it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bertlab_grader.sandbox.allowed import kept_environment

ENV_VAR = "BERTLAB_SANDBOX"  # the default of c.Sandbox.mode (bertlab_grader.sandbox.settings)
MODES = ("on", "require", "off")  # on (default) = require: sandboxed or refused; off: no sandbox

#: The system's library and binary folders (a merged-/usr system has symlinks for all but /usr).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")

#: What of /etc a kernel reads: the dynamic loader, users and groups (``getpwuid``), the time zone,
#: certificates, fonts (matplotlib), MIME types, the system Python's own configuration.
ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "host.conf",
    "hosts",
    "ssl",
    "ca-certificates",
    "fonts",
    "mime.types",
    "os-release",
    "debian_version",
    f"python{sys.version_info.major}.{sys.version_info.minor}",
)

#: Where, inside the sandbox, the submission's folder is seen read-only before its copy is made.
ORIGINAL = "/run/bertlab/original"

# Runs inside the sandbox, before the command: cap the size of any one file (Python ignores
# SIGXFSZ, so a write past it fails with OSError in the cell that made it), copy the original
# folder into the writable tmpfs and work there, then become the command.
PRELUDE = (
    "import os, resource, shutil, sys\n"
    "size, original, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]\n"
    "if size: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))\n"
    "if original:\n"
    "    shutil.copytree(original, work, symlinks=True, dirs_exist_ok=True)\n"
    "    os.chdir(work)\n"
    "os.execvp(sys.argv[4], sys.argv[4:])"
)

# Runs outside, as the process jupyter_client starts: join the kernel's cgroups (so that every
# process of the sandbox is born in them), ignore SIGINT (below), then become bwrap.
LAUNCHER = (
    "import os, signal, sys\n"
    "for procs in filter(None, sys.argv[1].split(os.pathsep)):\n"
    "    with open(procs, 'w') as f:\n"
    "        f.write(str(os.getpid()))\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "os.execv(sys.argv[2], sys.argv[2:])"
)


class SandboxUnavailable(RuntimeError):
    pass


def mode() -> str:
    """``$BERTLAB_SANDBOX``, else on: the default of ``c.Sandbox.mode``."""
    value = os.environ.get(ENV_VAR, "on").strip().lower() or "on"
    if value not in MODES:
        raise SandboxUnavailable(f"{ENV_VAR}={value!r}: use on (the default), require or off")
    return value


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def sandbox_problem(bwrap: str) -> str | None:
    """None if ``bwrap`` can build the sandbox here, else why not (once per process).

    bwrap needs user namespaces: a Docker container under its default seccomp profile, or a
    kernel that forbids them to unprivileged users, refuses ("No permissions to create new
    namespace"), and every kernel would die at start."""
    probe = [
        bwrap,
        *system_mounts(),
        "--unshare-pid",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(2**20),
        "--tmpfs",
        "/tmp",
        "--remount-ro",
        "/",
        "--",
        "true",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        return f"bwrap cannot create a sandbox here: {done.stderr.strip() or f'exit status {done.returncode}'}"
    return None


def why_unavailable() -> str | None:
    """None if kernels can be sandboxed here, else why not (no bwrap, or a bwrap that can't)."""
    bwrap = bwrap_path()
    return (
        "bwrap is not installed (apt install bubblewrap)"
        if bwrap is None
        else sandbox_problem(bwrap)
    )


def system_mounts() -> list[str]:
    """bwrap arguments for :data:`SYSTEM` and :data:`ETC`: each bound read-only at its own path, a
    symlink made again as a symlink."""
    args = []
    for path in (*SYSTEM, *(f"/etc/{name}" for name in ETC)):
        if os.path.islink(path) and path in SYSTEM:
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def sandbox_command(
    cmd: list[str],
    *,
    writable: Path,
    readable: list[Path],
    bwrap: str,
    sockets: Path | None = None,
    environment: dict[str, str] | None = None,
    work_bytes: int = 0,
    tmp_bytes: int = 2**30,
    file_bytes: int = 2**30,
    cgroups: list[Path] | tuple[Path, ...] = (),
) -> list[str]:
    """``cmd`` wrapped in bubblewrap: an empty read-only root with the system, ``readable`` and one
    writable folder.

    ``writable`` is bound as it is, or, with ``work_bytes``, seen as a tmpfs of that size that holds
    a copy of it (a grading kernel: what it writes there is capped and thrown away). ``/tmp`` and
    ``/dev/shm`` are private tmpfs of ``tmp_bytes`` each; no file may grow past ``file_bytes``.
    ``environment`` (default: :func:`kept_environment` of this process's) is all the process
    sees. ``sockets``, a folder for the kernel's IPC sockets, is bound writable at its own path (it
    may lie in ``/tmp``: it is bound after the tmpfs). There is no network (``--unshare-net``).
    ``cgroups``: folders of cgroups the whole sandbox is started in (its hard caps)."""
    # Own PID namespace: the kernel can't see or signal the grader (or anything else). ipykernel
    # would take its new parent (PID 1) for a dead grader and quit: it is not told the grader's
    # PID; --die-with-parent ends it with bwrap instead.
    # No capabilities: a grader run as root would otherwise hand its kernels CAP_SYS_ADMIN, and
    # a kernel could remount a folder read-write. Its own IPC namespace (no System V shared memory
    # with the grader's machine), and its own cgroup namespace (its cgroup's path is not shown).
    writable = Path(writable)
    args = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for name, value in sorted(
        (kept_environment(dict(os.environ)) if environment is None else environment).items()
    ):
        args += ["--setenv", name, value]
    args += [
        "--setenv",
        "MPLCONFIGDIR",
        "/tmp/matplotlib",
        "--setenv",
        "IPYTHONDIR",
        "/tmp/ipython",
    ]
    args += [
        *system_mounts(),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/tmp",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/dev/shm",
    ]
    if sockets is not None:
        args += ["--bind", str(sockets), str(sockets)]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    if work_bytes:
        args += [
            "--ro-bind",
            str(writable),
            ORIGINAL,
            "--size",
            str(work_bytes),
            "--tmpfs",
            str(writable),
        ]
    else:
        args += ["--bind", str(writable), str(writable)]
    args += ["--remount-ro", "/", "--chdir", str(writable), "--die-with-parent", "--"]
    prelude = [
        sys.executable,
        "-c",
        PRELUDE,
        str(file_bytes),
        ORIGINAL if work_bytes else "",
        str(writable),
    ]
    # jupyter_client interrupts a kernel (nbgrader: a cell past its timeout) with SIGINT to its
    # process group, which bwrap leads: bwrap itself must ignore it, or it dies and takes the
    # kernel with it. An ignored signal stays ignored across exec; ipykernel installs its own
    # SIGINT handler while it runs a cell, so the kernel is still interrupted.
    procs = os.pathsep.join(str(Path(folder) / "cgroup.procs") for folder in cgroups)
    return [sys.executable, "-c", LAUNCHER, procs] + args + prelude + list(cmd)

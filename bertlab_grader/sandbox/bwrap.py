"""The bubblewrap command line that sandboxes a grading kernel (or the warm-kernel zygote).

:func:`sandbox_command` wraps a command in ``bwrap`` (the sandbox behind Flatpak): the whole file
system read-only, the course's private folders (:data:`bertlab_grader.layout.PRIVATE`: hidden tests,
grades, history) empty, one folder writable, a private ``/tmp``, and the process in its own PID,
network and IPC namespaces with no capabilities. :func:`why_unavailable` says whether ``bwrap``
can build that sandbox here; :func:`mode` reads ``BERTLAB_SANDBOX`` (``on``, the default:
sandbox if ``bwrap`` works; ``require``: a missing ``bwrap`` is an error; ``off``).

A leaf: it imports only :mod:`bertlab_grader.layout`, so both the kernel manager
(:mod:`bertlab_grader.sandbox.manager`) and the warm kernels' pool (:mod:`bertlab_grader.warm.pool`)
build their sandboxes with it.

The private ``/tmp`` hides whatever lies under ``/tmp`` outside the folders bound into the
sandbox: the grader's own package (:data:`PACKAGE`, whose ``kernel_guard`` the probe imports in
the kernel), the Python environment and the folders of the packages installed in it in editable
mode (:func:`editable_packages`: a course package installed with ``pip install -e`` from a
checkout under ``/tmp``) are bound read-only. Only those packages' folders: the rest of their
checkout (solutions, hidden tests) stays out of sight.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bertlab_grader import layout

ENV_VAR = "BERTLAB_SANDBOX"  # "on" (default: sandbox if bwrap exists), "require", or "off"
PACKAGE = Path(__file__).resolve().parents[1]  # bertlab_grader/, whose kernel_guard the probe imports in the kernel


IGNORE_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
)


def editable_packages() -> list[Path]:
    """The folders of the top-level packages installed in this environment in editable mode (their
    code lives in a checkout, not in the environment), found from the installed metadata without
    importing them."""
    import importlib.metadata
    import importlib.util
    import json

    folders = []
    for dist in importlib.metadata.distributions():
        try:
            editable = json.loads(dist.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable")
        except ValueError:
            continue
        for name in (dist.read_text("top_level.txt") or "").split() if editable else ():
            spec = importlib.util.find_spec(name) if name.isidentifier() else None
            for location in (spec.submodule_search_locations or []) if spec else []:
                folders.append(Path(location).resolve())
    return sorted(set(folders))


def readable_paths() -> list[Path]:
    """What every sandbox binds read-only: the grader's package, the Python environment and the
    folders of the packages installed in it in editable mode."""
    return sorted({PACKAGE, Path(sys.prefix).resolve(), *editable_packages()})


class SandboxUnavailable(RuntimeError):
    pass


def mode() -> str:
    value = os.environ.get(ENV_VAR, "on").strip().lower() or "on"
    if value not in {"on", "require", "off"}:
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
    probe = [bwrap, "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
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
    return "bwrap is not installed (apt install bubblewrap)" if bwrap is None else sandbox_problem(bwrap)


def hidden_folders(course_root: Path | None) -> list[Path]:
    """What a kernel must not see: the course's folders with hidden tests, grades and history."""
    if course_root is None:
        return []
    root = Path(course_root).resolve()
    return [root / name for name in layout.PRIVATE if (root / name).is_dir()]


def sandbox_command(cmd: list[str], *, writable: Path, readable: list[Path], hidden: list[Path],
                    bwrap: str, sockets: Path | None = None) -> list[str]:
    """``cmd`` wrapped in bubblewrap: all read-only, ``hidden`` empty, ``writable`` writable.

    ``/tmp`` is a private tmpfs; every other path the kernel writes to fails with an OSError.
    There is no network (``--unshare-net``); ``sockets``, a folder for the kernel's IPC sockets,
    is bound writable at its own path (it may lie in ``/tmp``: it is bound after the tmpfs).

    Mounts apply in order, so a folder bound after a hidden one shows through it (the
    submission's folder lies inside the hidden ``autograder/``)."""
    # Own PID namespace: the kernel can't see or signal the grader (or anything else). ipykernel
    # would take its new parent (PID 1) for a dead grader and quit: it is not told the grader's
    # PID; --die-with-parent ends it with bwrap instead.
    # No capabilities: a grader run as root would otherwise hand its kernels CAP_SYS_ADMIN, and
    # a kernel could remount the course read-write. Its own IPC namespace (no System V shared memory
    # with the grader's machine).
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL",
            "--unsetenv", "JPY_PARENT_PID",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if sockets is not None:
        args += ["--bind", str(sockets), str(sockets)]
    for folder in hidden:
        args += ["--tmpfs", str(folder)]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(writable), str(writable)]
    for folder in hidden:  # empty and read-only (after the binds, which need mount points there)
        args += ["--remount-ro", str(folder)]
    args += ["--chdir", str(writable),
             "--setenv", "MPLCONFIGDIR", "/tmp/matplotlib", "--setenv", "IPYTHONDIR", "/tmp/ipython",
             "--die-with-parent", "--"]
    # jupyter_client interrupts a kernel (nbgrader: a cell past its timeout) with SIGINT to its
    # process group, which bwrap leads: bwrap itself must ignore it, or it dies and takes the
    # kernel with it. An ignored signal stays ignored across exec; ipykernel installs its own
    # SIGINT handler while it runs a cell, so the kernel is still interrupted.
    return [sys.executable, "-c", IGNORE_SIGINT_THEN_EXEC] + args + cmd

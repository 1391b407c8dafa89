"""The settings of a grading kernel's sandbox: the folders it reads, the variables it keeps, the
sizes and caps, whether it starts warm and what it imports first.

``c.Sandbox...`` in a course's ``nbgrader_config.py`` (traitlets, as nbgrader's own options).
Everything else a kernel sees is the allow-list of :mod:`bertlab_grader.sandbox.bwrap`. Where an
environment variable names a setting (``BERTLAB_SANDBOX``, ``BERTLAB_WARM_KERNEL``,
``BERTLAB_KERNEL_*``), the variable is the setting's default and a value in the config wins
(the table in ``docs/instructors.md``, "The grader's settings").
"""

from __future__ import annotations

import importlib
from pathlib import Path

from traitlets import Bool, Integer, List, TraitError, Unicode, default, validate
from traitlets.config import Configurable

from bertlab_grader.sandbox import limits
from bertlab_grader.sandbox import bwrap
from bertlab_grader.sandbox.warm import pool


def _paths(spec: str) -> list[Path]:
    """A folder, or the folders a ``"module:function"`` returns (one path or an iterable of them)."""
    if ":" not in spec or Path(spec).is_absolute():
        return [Path(spec).expanduser()]
    module, _, name = spec.partition(":")
    function = importlib.import_module(module)
    for part in name.split("."):
        function = getattr(function, part)
    found = function()
    if found is None:
        return []
    return [Path(found)] if isinstance(found, (str, Path)) else [Path(p) for p in found]


class Sandbox(Configurable):
    """The course's part of a grading kernel's sandbox."""

    readable = List(
        Unicode(),
        default_value=[],
        help=(
            "Folders a kernel may read besides the system and the Python environment, each a path or a "
            '"module:function" that returns paths (the course\'s model cache, say: '
            'c.Sandbox.readable = ["bertlab.models:kernel_folders"]). Called in the grader after '
            "GuardedExecute.prepare. Bound read-only at their own paths."
        ),
    ).tag(config=True)

    environment = List(
        Unicode(),
        default_value=[],
        help=(
            "Environment variables a kernel keeps besides the grader's list (shell patterns: "
            '"BERTLAB_MODEL", "MYCOURSE_*"); every other variable of the grader is removed.'
        ),
    ).tag(config=True)

    work_mb = Integer(
        1024,
        help=(
            "Size of the tmpfs that holds a copy of the submission's folder, which is all a kernel may "
            "write besides /tmp and /dev/shm (its writes are thrown away after grading)."
        ),
    ).tag(config=True)

    tmp_mb = Integer(1024, help="Size of the kernel's private /tmp and of its /dev/shm, each.").tag(
        config=True
    )

    file_mb = Integer(
        1024,
        help=(
            "The largest file a kernel may write anywhere (RLIMIT_FSIZE); a write past it fails with "
            "OSError in the cell that made it."
        ),
    ).tag(config=True)

    mode = Unicode(
        help=(
            "on (or its old name require): sandbox every kernel, and start none where bubblewrap cannot "
            "build the sandbox here; off: no sandbox, on purpose. Default: $BERTLAB_SANDBOX, else on."
        )
    ).tag(config=True)

    warm_kernels = Bool(
        help=(
            "Fork sandboxed kernels from a zygote that imported `warm_imports` once (bertlab_grader.sandbox.warm); "
            "False starts every kernel cold. Default: $BERTLAB_WARM_KERNEL (on or off), else on."
        )
    ).tag(config=True)

    warm_imports = List(
        Unicode(),
        default_value=[],
        help=(
            "Modules the warm-kernel zygote imports before it forks a kernel, besides the kernel's own: "
            'what the course\'s notebooks import first (c.Sandbox.warm_imports = ["torch", ...]). One that '
            "fails to import is left out, and the grader logs it."
        ),
    ).tag(config=True)

    memory_mb = Integer(
        help=(
            "A kernel's memory cap over its whole process tree, in MB (0: none). "
            "Default: $BERTLAB_KERNEL_MEMORY_MB, else 3072."
        )
    ).tag(config=True)

    processes = Integer(
        help=(
            "The most processes a kernel's tree may run (0: no cap). "
            "Default: $BERTLAB_KERNEL_PROCESSES, else 64."
        )
    ).tag(config=True)

    threads = Integer(
        help=(
            "The most threads a kernel's tree may run, over all its processes (0: no cap). "
            "Default: $BERTLAB_KERNEL_THREADS, else 512."
        )
    ).tag(config=True)

    @default("mode")
    def _mode_from_environment(self) -> str:
        return bwrap.mode()

    @validate("mode")
    def _known_mode(self, proposal) -> str:
        value = proposal["value"].strip().lower()
        if value not in bwrap.MODES:
            raise TraitError(
                f"Sandbox.mode={proposal['value']!r}: use on (the default), require or off"
            )
        return value

    @default("warm_kernels")
    def _warm_from_environment(self) -> bool:
        return pool.enabled()

    @default("memory_mb")
    def _memory_from_environment(self) -> int:
        return limits.caps()[0] // 2**20

    @default("processes")
    def _processes_from_environment(self) -> int:
        return limits.caps()[1]

    @default("threads")
    def _threads_from_environment(self) -> int:
        return limits.caps()[2]

    _found: dict = {}  # spec -> its folders, once per grader process

    def readable_folders(self) -> list[Path]:
        """Every folder of :attr:`readable`, the functions called once per process."""
        folders = []
        for spec in self.readable:
            if spec not in Sandbox._found:
                Sandbox._found[spec] = _paths(spec)
            folders += Sandbox._found[spec]
        return folders

    def caps(self) -> tuple[int, int, int]:
        """(memory cap in bytes, process cap, thread cap), as :class:`bertlab_grader.sandbox.limits.KernelWatch`
        takes them; 0 means no cap."""
        return self.memory_mb * 2**20, self.processes, self.threads

    def sizes(self) -> dict[str, int]:
        """The sizes :func:`bertlab_grader.sandbox.bwrap.sandbox_command` takes, in bytes."""
        return {
            "work_bytes": self.work_mb * 2**20,
            "tmp_bytes": self.tmp_mb * 2**20,
            "file_bytes": self.file_mb * 2**20,
        }

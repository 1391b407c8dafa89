"""What a course tells the sandbox: the folders its kernels read, the variables they keep, the sizes.

``c.Sandbox...`` in a course's ``nbgrader_config.py`` (traitlets, as nbgrader's own options).
Everything else a kernel sees is the allow-list of :mod:`bertlab_grader.sandbox.bwrap`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from traitlets import Integer, List, Unicode
from traitlets.config import Configurable


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

    readable = List(Unicode(), default_value=[], help=(
        "Folders a kernel may read besides the system and the Python environment, each a path or a "
        "\"module:function\" that returns paths (the course's model cache, say: "
        "c.Sandbox.readable = [\"bertlab.models:kernel_folders\"]). Called in the grader after "
        "GuardedExecute.prepare. Bound read-only at their own paths.")).tag(config=True)

    environment = List(Unicode(), default_value=[], help=(
        "Environment variables a kernel keeps besides the grader's list (shell patterns: "
        "\"BERTLAB_MODEL\", \"MYCOURSE_*\"); every other variable of the grader is removed.")).tag(config=True)

    work_mb = Integer(1024, help=(
        "Size of the tmpfs that holds a copy of the submission's folder, which is all a kernel may "
        "write besides /tmp and /dev/shm (its writes are thrown away after grading).")).tag(config=True)

    tmp_mb = Integer(1024, help="Size of the kernel's private /tmp and of its /dev/shm, each.").tag(config=True)

    file_mb = Integer(1024, help=(
        "The largest file a kernel may write anywhere (RLIMIT_FSIZE); a write past it fails with "
        "OSError in the cell that made it.")).tag(config=True)

    _found: dict = {}  # spec -> its folders, once per grader process

    def readable_folders(self) -> list[Path]:
        """Every folder of :attr:`readable`, the functions called once per process."""
        folders = []
        for spec in self.readable:
            if spec not in Sandbox._found:
                Sandbox._found[spec] = _paths(spec)
            folders += Sandbox._found[spec]
        return folders

    def sizes(self) -> dict[str, int]:
        """The sizes :func:`bertlab_grader.sandbox.bwrap.sandbox_command` takes, in bytes."""
        return {"work_bytes": self.work_mb * 2**20, "tmp_bytes": self.tmp_mb * 2**20,
                "file_bytes": self.file_mb * 2**20}

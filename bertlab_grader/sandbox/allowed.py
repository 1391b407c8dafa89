"""What a sandboxed kernel may read and keep besides the system: the allow-list the sandbox's
command line (:mod:`bertlab_grader.sandbox.bwrap`) binds and passes on.

- :func:`readable_paths`: the grader's own package (a kernel imports its side of the calls), the
  Python environment's own folders (its prefixes and site-packages, each at its own path: an
  environment inside the course repository shows its own folder, never the repository around it),
  the packages installed in it in editable mode, and the course's extra folders (model caches).
- :func:`kept_environment`: the environment variables :data:`ENVIRONMENT` (and the course's
  ``Sandbox.environment``) allow; every other one is removed.

The standard library only, like the rest of the sandbox's leaf.
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

PACKAGE = (
    Path(__file__).resolve().parents[1]
)  # bertlab_grader/, whose crossing.student_side a student's kernel imports

#: The environment variables a kernel keeps (shell patterns); every other one is removed (a
#: gradebook URL with its password, the instructor's paths). A course adds its own
#: (``c.Sandbox.environment``: the variables that choose its models, say).
ENVIRONMENT = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONUNBUFFERED",
    "PYTHONWARNINGS",
    "PYTHONDONTWRITEBYTECODE",
    "HF_HUB_OFFLINE",
    "HF_HUB_DISABLE_*",
    "HF_DATASETS_OFFLINE",
    "HF_HOME",
    "HF_HUB_CACHE",
    "TRANSFORMERS_*",
    "TOKENIZERS_PARALLELISM",
    "TORCH_*",
    "CUDA_VISIBLE_DEVICES",
    "OMP_*",
    "MKL_*",
    "OPENBLAS_*",
    "KMP_*",
    "MPLBACKEND",
    "XDG_CACHE_HOME",
    "NBGRADER_EXECUTION",
    "PYDEVD_DISABLE_FILE_VALIDATION",
    "JPY_SESSION_NAME",
)


def installed_spec(name: str):
    """Where the environment installs the top-level package ``name``: not a copy in the current
    folder (``python -m`` puts it first on ``sys.path``, and a course folder may hold one), nor a
    module already imported from there: the environment's own finders (an editable install's), then
    its path without the current folder."""
    import importlib.machinery
    import os

    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(name, None)
        except Exception:  # noqa: BLE001 - a finder that cannot answer for this name
            spec = None
        if spec is not None and spec.origin not in (None, "built-in", "frozen"):
            return spec
    here = {"", os.getcwd()}
    return importlib.machinery.PathFinder.find_spec(name, [p for p in sys.path if p not in here])


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
            editable = (
                json.loads(dist.read_text("direct_url.json") or "{}")
                .get("dir_info", {})
                .get("editable")
            )
        except ValueError:
            continue
        for name in (dist.read_text("top_level.txt") or "").split() if editable else ():
            spec = installed_spec(name) if name.isidentifier() else None
            for location in (spec.submodule_search_locations or []) if spec else []:
                folders.append(Path(location).resolve())
    return sorted(set(folders))


def environment_folders() -> list[Path]:
    """The Python environment's own folders: its prefixes and every site-packages folder on
    ``sys.path`` (one a ``.pth`` file added included), never the current folder ``python -m``
    put first on the path."""
    folders = {Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}}
    for entry in sys.path:
        if (
            entry
            and Path(entry).name in {"site-packages", "dist-packages"}
            and Path(entry).is_dir()
        ):
            folders.add(Path(entry).resolve())
    return sorted(folders)


def readable_paths(extra: list[Path] | tuple[Path, ...] = ()) -> list[Path]:
    """What every sandbox binds read-only besides the system: the grader's package, the Python
    environment (:func:`environment_folders`), the folders of the packages installed in it in
    editable mode, and ``extra`` (the course's model caches, say) where they exist."""
    found = {PACKAGE, *environment_folders(), *editable_packages()}
    found |= {Path(p).resolve() for p in extra if Path(p).exists()}
    return sorted(found)


def kept_environment(
    environ: dict[str, str], patterns: list[str] | tuple[str, ...] = ()
) -> dict[str, str]:
    """The variables of ``environ`` a kernel keeps: those :data:`ENVIRONMENT` or ``patterns`` name."""
    allowed = (*ENVIRONMENT, *patterns)
    return {k: v for k, v in environ.items() if any(fnmatch.fnmatchcase(k, p) for p in allowed)}

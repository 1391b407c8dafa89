"""The course cache: model folders built once, atomically, and reused while they are intact.

The course's shipped models are assembled on first use into :func:`cache_root`
(``$BERTLAB_CACHE``, or ``~/.cache/bertlab``): the encoder checkpoint
(:mod:`bertlab.models.encoder`), the decoder converted from its GGUF
(:mod:`bertlab.models.decoder`), the fine-tuned BERT2BERT (:mod:`bertlab.models.bert2bert`) and
the masked diffusion model (:mod:`bertlab.models.diffusion`). Each is written into a temporary
folder beside its final place and renamed, so a crash never leaves half a model, and two
processes racing to build it both end up with one whole folder. A marker file records every
file's size (and whatever the caller adds); a folder whose marker or sizes do not match is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from contextlib import contextmanager
from typing import Callable

MARKER = "bertlab-assembled.json"


def cache_root() -> Path:
    """Where assembled models live: ``$BERTLAB_CACHE``, or ``~/.cache/bertlab``."""
    return Path(os.environ.get("BERTLAB_CACHE") or Path.home() / ".cache" / "bertlab")


def sha256(path: Path) -> str:
    """Hex sha256 of a file (what the shipped manifests record)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def is_intact(folder: Path, **expected) -> bool:
    """True when ``folder``'s marker exists, has every ``expected`` value and every file its size."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text())
        return all(marker.get(k) == v for k, v in expected.items()) and all(
            (Path(folder) / name).stat().st_size == n for name, n in marker["sizes"].items()
        )
    except (OSError, ValueError, KeyError):
        return False


def build_once(final: Path, build: Callable[[Path], None], **marker) -> str:
    """``final`` as a string, after ``build(tmp)`` has filled it, unless it is already intact.

    ``marker`` values are written to the marker and must match for the folder to be reused.
    """
    final = Path(final)
    if is_intact(final, **marker):
        return str(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    try:
        build(tmp)
        sizes = {f.name: f.stat().st_size for f in tmp.iterdir()}
        (tmp / MARKER).write_text(json.dumps({**marker, "sizes": sizes}))
        if is_intact(
            final, **marker
        ):  # another process finished first (and may be reading it): keep its
            return str(final)
        if final.exists():  # an invalid leftover: replace it
            shutil.rmtree(final, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:  # another process won the race: use its folder
            if not is_intact(final, **marker):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return str(final)


@contextmanager
def quiet_hub_bars():
    """No "Writing model shards" bar while a folder is built (pages would save it as a widget)."""
    from huggingface_hub.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    hub_bars = not are_progress_bars_disabled()
    disable_progress_bars()
    try:
        yield
    finally:
        if hub_bars:
            enable_progress_bars()


def public_path(path: str) -> str:
    """``path`` as a page may print it: without the build machine's own folders.

    The course cache becomes ``$BERTLAB_CACHE/...``, an installed package
    ``<site-packages>/...``, the home folder ``~``; a hub id is returned as it is. The site
    test ``test_no_page_publishes_a_build_path`` checks that no page prints more.
    """
    import site
    import sysconfig

    prefixes = [(str(cache_root()), "$BERTLAB_CACHE")]
    prefixes += [
        (p, "<site-packages>") for p in {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    ]
    prefixes += [(str(Path.home()), "~")]
    for prefix, name in prefixes:
        if path == prefix or path.startswith(prefix.rstrip(os.sep) + os.sep):
            return name + path[len(prefix.rstrip(os.sep)) :]
    return path

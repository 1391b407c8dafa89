"""Keep Jupyter Book's execution cache honest about which models the pages ran on.

jupyter-cache re-executes a page only when its code changes, not when ``BERTLAB_MODEL``,
``BERTLAB_DECODER`` or the embedded checkpoint does; cached outputs would then describe the
previous model. ``make book`` runs this first: it records the identity of the models (the BERT
of every chapter, the decoder of Chapters 1, 6 and 8, the shipped BERT2BERT and masked diffusion
model or the folders their switches name) next to the cache and empties the cache
when it changed. Resolving the decoder here also converts it on a fresh machine, once, before
the first page needs it. The folders given after the build folder hold the code the pages
import (the book's ``book/reference`` and this package, ``bertlab``): a change to any ``.py``
file there empties the cache too, so a page never shows what an older helper computed.

    python -m bertlab.book_cache _build book/reference bertlab
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

from bertlab.models import decoder_path, model_path


def folder_identity(name: str) -> str:
    """A resolved model, plus the hash of its config and its weight files' sizes (a re-trained
    checkpoint in the same folder counts as a different model)."""
    path = Path(name)
    digest = hashlib.sha256(str(path).encode())
    if path.is_dir():
        for file in sorted(path.iterdir()):
            if file.suffix in {".json", ".safetensors", ".bin", ".txt"}:
                digest.update(f"{file.name}:{file.stat().st_size}".encode())
                if file.name == "config.json":
                    digest.update(file.read_bytes())
    return digest.hexdigest()


def trained_identity() -> str:
    """The switches and shipped manifests of the models trained for one chapter (BERT2BERT,
    Chapter 7; the masked diffusion model, Chapter 6b; its left-to-right twin, Chapter 6), without
    assembling them."""
    import os

    from bertlab.models import bert2bert, causal, diffusion

    digest = hashlib.sha256()
    for model in (bert2bert, diffusion, causal):
        manifest = model.WEIGHTS_DIR / "manifest.json"
        digest.update(os.environ.get(model.ENV_VAR, "").encode() + b"\0")
        digest.update(manifest.read_bytes() if manifest.is_file() else b"none")
    return digest.hexdigest()


def model_identity() -> str:
    """The identity of the encoder, the decoder and the trained models the pages load, as one string."""
    return (
        folder_identity(model_path())
        + ":"
        + folder_identity(decoder_path())
        + ":"
        + trained_identity()
    )


def code_identity(folders: list[Path]) -> str:
    """The hash of every ``.py`` file under these folders (names and contents)."""
    digest = hashlib.sha256()
    for folder in folders:
        for file in sorted(
            Path(folder).rglob("*.py")
        ):  # by name within the folder: a clone elsewhere is the same code
            digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def refresh(build_dir: Path, code_folders: list[Path] = ()) -> bool:
    """Empty ``build_dir/.jupyter_cache`` if a model or the pages' own code changed since the last build."""
    stamp = build_dir / ".bertlab-model"
    identity = model_identity() + (":" + code_identity(list(code_folders)) if code_folders else "")
    changed = stamp.is_file() and stamp.read_text().strip() != identity
    if changed:
        shutil.rmtree(build_dir / ".jupyter_cache", ignore_errors=True)
        print(
            f"bertlab: a model or the book's own code changed since the last build; re-executing every page "
            f"({model_path()}, {decoder_path()}, {', '.join(map(str, code_folders)) or 'no code folders'})"
        )
    build_dir.mkdir(parents=True, exist_ok=True)
    stamp.write_text(identity + "\n")
    return changed


if __name__ == "__main__":
    refresh(Path(sys.argv[1] if len(sys.argv) > 1 else "_build"), [Path(f) for f in sys.argv[2:]])

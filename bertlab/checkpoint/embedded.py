"""The embedded course checkpoint: shipped weights assembled into a full HF folder on first use.

What ships in ``bertlab/checkpoint/weights/`` is a delta (see ``export.py``): every trained
tensor of a ``BertForMaskedLM`` except the frozen word embeddings (and the decoder tied to
them). :func:`checkpoint_path` adds the pip-installed all-MiniLM-L6-v2 base back, once, and
returns an ordinary Hugging Face folder that ``BertForMaskedLM``, ``AutoModelForMaskedLM``,
``AutoModel`` and ``pipeline("fill-mask")`` load offline with ``from_pretrained``:

- ``config.json``: the base config with ``architectures: ["BertForMaskedLM"]`` and ``bertlab_name``;
- ``model.safetensors``: base + delta, with the BASE's pooler under ``bert.pooler`` (an MLM
  model has no pooler, and ``BertModel`` would otherwise initialise a random one);
- the base tokenizer files, ``vocab.txt`` included (a tokenizer rebuilt from ``vocab_file``
  silently has 5 tokens in transformers 5).

The folder is written to a temporary directory and renamed, so a crash never leaves half a
model; it lives in ``$BERTLAB_CACHE`` (or ``~/.cache/bertlab``) under the manifest's hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from bertlab.cached_folder import MARKER, build_once, is_intact  # noqa: F401 (MARKER: for callers)
from bertlab.models import minilm_path

WEIGHTS_DIR = Path(__file__).with_name("weights")
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


class DamagedCheckpointError(OSError):
    """A shipped checkpoint file does not match the sha256 recorded in its manifest."""


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when the checkpoint's weights are in the package (``weights/manifest.json``)."""
    return (Path(weights_dir or WEIGHTS_DIR) / "manifest.json").is_file()


def sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(weights_dir: Path | None = None) -> dict:
    """Load the manifest and check every shipped file's sha256; returns the manifest."""
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    manifest = json.loads((weights_dir / "manifest.json").read_text())
    for name, info in manifest["files"].items():
        path = weights_dir / name
        if not path.is_file() or sha256(path) != info["sha256"]:
            raise DamagedCheckpointError(
                f"bertlab: the embedded checkpoint file {path} is damaged (sha256 mismatch with "
                f"manifest.json) or missing. Reinstall bertlab (pip install --force-reinstall .) "
                f"or restore it with `git checkout -- {weights_dir}`; if you use Git LFS, run `git lfs pull`."
            )
    return manifest


def cache_root() -> Path:
    """Where assembled models live: ``$BERTLAB_CACHE``, or ``~/.cache/bertlab``."""
    return Path(os.environ.get("BERTLAB_CACHE") or Path.home() / ".cache" / "bertlab")


def assemble(weights_dir: Path, dest: Path, manifest: dict, base: Path | None = None) -> None:
    """Write the full HF folder for ``manifest`` into the (new) directory ``dest``."""
    import torch
    from safetensors.torch import load_file, save_file

    base = Path(base or minilm_path())
    if sha256(base / "model.safetensors") != manifest["base"]["sha256"]:
        raise DamagedCheckpointError(
            f"bertlab: {base}/model.safetensors is not the base this checkpoint was trained from "
            f"(sha256 differs from {manifest['base']['sha256'][:8]}...); reinstall {manifest['base']['package']}."
        )
    state = {f"bert.{k}": v for k, v in load_file(base / "model.safetensors").items()}  # base incl. pooler
    for k, v in load_file(Path(weights_dir) / manifest["delta_file"]).items():
        state[k] = v.to(torch.float32)  # fp16 delta -> fp32 like the base
    save_file(state, dest / "model.safetensors", metadata={"format": "pt"})
    (dest / "config.json").write_text(json.dumps(manifest["config"], indent=2) + "\n")
    for name in TOKENIZER_FILES:
        if (base / name).is_file():
            shutil.copyfile(base / name, dest / name)
    if not (dest / "vocab.txt").is_file():
        raise FileNotFoundError(f"bertlab: {base} has no vocab.txt; cannot build the tokenizer safely")


def _assembled_ok(folder: Path) -> bool:
    """An assembled folder is reused when its marker exists and every file has its recorded size."""
    return is_intact(folder)


def checkpoint_path(weights_dir: Path | None = None, cache_dir: Path | None = None, base: Path | None = None) -> str:
    """Folder of the assembled course checkpoint (built on first use, then reused).

    Raises :class:`DamagedCheckpointError` when a shipped file fails its sha256 check.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    if not is_shipped(weights_dir):
        raise FileNotFoundError(f"bertlab: no embedded checkpoint in {weights_dir} (manifest.json missing)")
    manifest = verify(weights_dir)
    key = hashlib.sha256((weights_dir / "manifest.json").read_bytes()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else cache_root()
    return build_once(root / key, lambda tmp: assemble(weights_dir, tmp, manifest, base),
                      manifest_sha256_16=key, bertlab_name=manifest["bertlab_name"])

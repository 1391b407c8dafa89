"""The shipped masked diffusion model, assembled on first use into an ordinary Hugging Face folder.

What ships in ``bertlab/diffusion/weights/`` (written by ``make diffusion``) is what training
changed: every tensor of the course checkpoint's ``BertForMaskedLM`` but the frozen word
embeddings (and the output projection tied to them), in fp16, with its sha256 in
``manifest.json``. :func:`diffusion_path` loads the course checkpoint, puts the shipped tensors
in and saves the result with ``save_pretrained``, so Chapter 6b loads it with
``AutoModelForMaskedLM.from_pretrained`` offline. The folder lives in ``$BERTLAB_CACHE`` (or
``~/.cache/bertlab``), named by the manifest's hash, and is rebuilt if damaged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bertlab.cached_folder import build_once, quiet_hub_bars
from bertlab.checkpoint.embedded import DamagedCheckpointError, cache_root, sha256
from bertlab.diffusion import ENV_VAR, WEIGHTS_DIR


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when trained weights are in the package (``weights/manifest.json``)."""
    return (Path(weights_dir or WEIGHTS_DIR) / "manifest.json").is_file()


def manifest(weights_dir: Path | None = None) -> dict:
    """The shipped manifest, after checking the weights' sha256 against it."""
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    if not is_shipped(weights_dir):
        raise FileNotFoundError(f"bertlab: no masked diffusion model in {weights_dir} (manifest.json missing); "
                                "train and export one with `make diffusion`")
    record = json.loads((weights_dir / "manifest.json").read_text())
    if sha256(weights_dir / record["weights_file"]) != record["sha256"]:
        raise DamagedCheckpointError(
            f"bertlab: {weights_dir / record['weights_file']} is damaged (sha256 mismatch with manifest.json); "
            f"restore it with `git checkout -- {weights_dir}` or retrain with `make diffusion`.")
    return record


def assemble(weights_dir: Path, dest: Path, record: dict) -> None:
    """Course checkpoint + shipped tensors -> ``save_pretrained`` into the (new) folder ``dest``."""
    from safetensors.torch import load_file
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from bertlab.checkpoint.embedded import checkpoint_path

    path = checkpoint_path()  # trained on the course checkpoint, whatever BERTLAB_MODEL says
    model = AutoModelForMaskedLM.from_pretrained(path)
    shipped = load_file(Path(weights_dir) / record["weights_file"])
    state = model.state_dict()
    unknown = set(shipped) - set(state)
    if unknown:
        raise DamagedCheckpointError(f"bertlab: {weights_dir} holds tensors the course checkpoint lacks "
                                     f"(e.g. {sorted(unknown)[0]}); retrain with `make diffusion`")
    model.load_state_dict({k: v.to(state[k].dtype) for k, v in shipped.items()}, strict=False)
    model.config.bertlab_name = record["bertlab_name"]
    with quiet_hub_bars():
        model.save_pretrained(dest)
        AutoTokenizer.from_pretrained(path).save_pretrained(dest)


def diffusion_path(weights_dir: Path | None = None, cache_dir: Path | None = None) -> str:
    """Folder of the assembled masked diffusion model (built on first use, then reused).

    Raises :class:`~bertlab.checkpoint.embedded.DamagedCheckpointError` when the shipped weights
    fail their sha256 check, ``FileNotFoundError`` (saying to run ``make diffusion``) when none ship.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    record = manifest(weights_dir)
    key = hashlib.sha256((weights_dir / "manifest.json").read_bytes()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else cache_root()
    return build_once(root / f"diffusion-{key}", lambda tmp: assemble(weights_dir, tmp, record),
                      manifest_sha256_16=key, bertlab_name=record["bertlab_name"])


def _not_available(name: str, why: str):
    from bertlab.models import ModelNotAvailableError

    return ModelNotAvailableError(
        f"bertlab: cannot load the masked diffusion model {name!r}: {why}\n"
        f"  - To use the course's, unset {ENV_VAR} (or pass name=None).\n"
        f"  - To use a local BertForMaskedLM-style folder, set {ENV_VAR} to a folder that holds config.json.\n"
        f"  - To use a hub model, go online with HF_HUB_OFFLINE unset and set {ENV_VAR} to its id; "
        "it is downloaded once, then works offline.")


def diffusion_model_path(name: str | None = None) -> str:
    """The masked diffusion model Chapter 6b loads: ``name``, else ``$BERTLAB_DIFFUSION``, else the shipped one."""
    from bertlab.models import resolve_named

    name = name or os.environ.get(ENV_VAR, "").strip() or None
    return diffusion_path() if name is None else resolve_named(name, _not_available)

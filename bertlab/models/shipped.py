"""The models trained for the course ship as deltas; each is checked, then assembled once.

What ships in ``bertlab/models/weights/<model>/`` is only what training changed, in fp16, with
a ``manifest.json`` that records each file's sha256 (the recipes in ``recipes/`` write them).
:func:`manifest` reads a manifest after checking the files against it, and :func:`assemble_once`
builds the full Hugging Face folder (base + delta) into the course cache, named by the
manifest's hash, once: a later call reuses it while it is intact (:mod:`bertlab.models.cache`).
:mod:`bertlab.models.encoder`, :mod:`bertlab.models.bert2bert`, :mod:`bertlab.models.diffusion`
and :mod:`bertlab.models.causal` each say how their folder is assembled; the last two put their
delta into the course checkpoint with :func:`put_delta`.

Two manifest shapes are checked: ``files: {name: {"sha256": ...}}`` (the encoder's, with its
loss curve) and ``weights_file`` + ``sha256`` (one tensor file).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from bertlab.models.cache import build_once, cache_root, sha256

WEIGHTS = Path(__file__).with_name("weights")


class DamagedCheckpointError(OSError):
    """A shipped checkpoint file does not match the sha256 recorded in its manifest."""


def is_shipped(weights_dir: Path) -> bool:
    """True when trained weights are in the package (``weights_dir/manifest.json``)."""
    return (Path(weights_dir) / "manifest.json").is_file()


def manifest(weights_dir: Path, what: str, make_target: str) -> dict:
    """The manifest in ``weights_dir``, after checking every file it lists against its sha256.

    ``what`` names the model and ``make_target`` the recipe that writes it, for the errors:
    ``FileNotFoundError`` when nothing ships, :class:`DamagedCheckpointError` when a file is
    missing or its sha256 differs."""
    weights_dir = Path(weights_dir)
    if not is_shipped(weights_dir):
        raise FileNotFoundError(
            f"bertlab: no {what} in {weights_dir} (manifest.json missing); "
            f"train and export one with `make {make_target}`"
        )
    record = json.loads((weights_dir / "manifest.json").read_text())
    files = record.get("files") or {record["weights_file"]: {"sha256": record["sha256"]}}
    for name, info in files.items():
        path = weights_dir / name
        if not path.is_file() or sha256(path) != info["sha256"]:
            raise DamagedCheckpointError(
                f"bertlab: {path} is damaged (sha256 mismatch with manifest.json) or missing. Restore it with "
                f"`git checkout -- {weights_dir}` (after `git lfs pull` if you use Git LFS), reinstall bertlab "
                f"(pip install --force-reinstall .), or retrain it with `make {make_target}`."
            )
    return record


def assemble_once(
    weights_dir: Path,
    record: dict,
    assemble: Callable[[Path, Path, dict], None],
    prefix: str = "",
    cache_dir: Path | None = None,
) -> str:
    """The folder ``assemble(weights_dir, tmp, record)`` fills, in the cache under ``prefix`` + the
    manifest's hash: built on first use, then reused while intact."""
    key = hashlib.sha256((Path(weights_dir) / "manifest.json").read_bytes()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else cache_root()
    return build_once(
        root / f"{prefix}{key}",
        lambda tmp: assemble(Path(weights_dir), tmp, record),
        manifest_sha256_16=key,
        bertlab_name=record["bertlab_name"],
    )


def put_delta(model, weights_dir: Path, record: dict, make_target: str) -> None:
    """Load the shipped tensors (``record["weights_file"]``, fp16) into ``model`` in place, cast to
    its dtypes, and name it ``record["bertlab_name"]``; a tensor the model lacks means the delta
    was trained on another network (:class:`DamagedCheckpointError`, saying to retrain)."""
    from safetensors.torch import load_file

    trained = load_file(Path(weights_dir) / record["weights_file"])
    state = model.state_dict()
    unknown = set(trained) - set(state)
    if unknown:
        raise DamagedCheckpointError(
            f"bertlab: {weights_dir} holds tensors the course checkpoint lacks "
            f"(e.g. {sorted(unknown)[0]}); retrain with `make {make_target}`"
        )
    model.load_state_dict({k: v.to(state[k].dtype) for k, v in trained.items()}, strict=False)
    model.config.bertlab_name = record["bertlab_name"]

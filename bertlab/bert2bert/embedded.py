"""The shipped fine-tuned BERT2BERT, assembled on first use into an ordinary Hugging Face folder.

What ships in ``bertlab/bert2bert/weights/`` (``make bert2bert`` writes it,
:mod:`bertlab.bert2bert.train`) is only what training changed: the decoder's tensors in fp16,
the word embeddings and the output projection tied to them excepted (both equal the course
checkpoint's). :func:`bert2bert_path` warm-starts the same ``EncoderDecoderModel`` from the
course checkpoint, puts the shipped tensors in, and saves the result with ``save_pretrained``, so Chapter 7 loads it
with ``EncoderDecoderModel.from_pretrained`` offline. The folder lives in ``$BERTLAB_CACHE``
(or ``~/.cache/bertlab``), named by the manifest's hash, and is rebuilt if damaged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bertlab.cached_folder import build_once, quiet_hub_bars
from bertlab.checkpoint.embedded import DamagedCheckpointError, cache_root, sha256

WEIGHTS_DIR = Path(__file__).with_name("weights")
ENV_VAR = "BERTLAB_BERT2BERT"  # a folder or hub id to use instead of the shipped model


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when trained BERT2BERT weights are in the package (``weights/manifest.json``)."""
    return (Path(weights_dir or WEIGHTS_DIR) / "manifest.json").is_file()


def manifest(weights_dir: Path | None = None) -> dict:
    """The shipped manifest, after checking the weights' sha256 against it."""
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    if not is_shipped(weights_dir):
        raise FileNotFoundError(f"bertlab: no trained BERT2BERT in {weights_dir} (manifest.json missing); "
                                "train and export one with `make bert2bert`")
    record = json.loads((weights_dir / "manifest.json").read_text())
    if sha256(weights_dir / record["weights_file"]) != record["sha256"]:
        raise DamagedCheckpointError(
            f"bertlab: {weights_dir / record['weights_file']} is damaged (sha256 mismatch with manifest.json); "
            f"restore it with `git checkout -- {weights_dir}` or retrain with `make bert2bert`.")
    return record


def load_trained(weights_dir: Path, record: dict):
    """Warm start + exported tensors: the trained model, and the course checkpoint's tokenizer.

    ``record["shared"]`` (BERTShare, ``make bert2bert``'s second run) ties the halves first, so
    each shared tensor, exported once under the encoder's name, fills both.
    """
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from bertlab.bert2bert.model import freeze_word_embeddings, trainable_names, trained_names, warm_start
    from bertlab.checkpoint.embedded import checkpoint_path

    path = checkpoint_path()  # the weights were trained on the course checkpoint, whatever BERTLAB_MODEL says
    tokenizer = AutoTokenizer.from_pretrained(path)
    shared = bool(record.get("shared"))
    model = warm_start(path, tokenizer, tie=shared)
    if shared:
        freeze_word_embeddings(model)
    shipped = load_file(Path(weights_dir) / record["weights_file"])
    missing = set(trainable_names(model) if shared else trained_names(model)) - set(shipped)
    if missing:
        raise DamagedCheckpointError(f"bertlab: {weights_dir} lacks {len(missing)} trained tensors "
                                     f"(e.g. {sorted(missing)[0]}); retrain with `make bert2bert`")
    state = model.state_dict()
    model.load_state_dict({k: v.to(state[k].dtype) for k, v in shipped.items()}, strict=False)
    model.config.bertlab_name = record["bertlab_name"]
    return model, tokenizer


def assemble(weights_dir: Path, dest: Path, record: dict) -> None:
    """Warm start + shipped tensors -> ``save_pretrained`` into the (new) folder ``dest``."""
    model, tokenizer = load_trained(weights_dir, record)
    with quiet_hub_bars():
        model.save_pretrained(dest)
        tokenizer.save_pretrained(dest)


def bert2bert_path(weights_dir: Path | None = None, cache_dir: Path | None = None) -> str:
    """Folder of the assembled fine-tuned BERT2BERT (built on first use, then reused).

    Raises :class:`~bertlab.checkpoint.embedded.DamagedCheckpointError` when the shipped weights
    fail their sha256 check, ``FileNotFoundError`` (saying to run ``make bert2bert``) when none ship.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    record = manifest(weights_dir)
    key = hashlib.sha256((weights_dir / "manifest.json").read_bytes()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else cache_root()
    return build_once(root / f"bert2bert-{key}", lambda tmp: assemble(weights_dir, tmp, record),
                      manifest_sha256_16=key, bertlab_name=record["bertlab_name"])


def _not_available(name: str, why: str):
    from bertlab.models import ModelNotAvailableError

    return ModelNotAvailableError(
        f"bertlab: cannot load BERT2BERT {name!r}: {why}\n"
        f"  - To use the course's fine-tuned BERT2BERT, unset {ENV_VAR} (or pass name=None).\n"
        f"  - To use a local EncoderDecoderModel, set {ENV_VAR} to a folder that holds config.json.\n"
        f"  - To use a hub model such as patrickvonplaten/bert2bert_cnn_daily_mail, go online with "
        f"HF_HUB_OFFLINE unset and set {ENV_VAR} to its id; it is downloaded once, then works offline.")


def bert2bert_model_path(name: str | None = None) -> str:
    """The BERT2BERT Chapter 7 loads: ``name``, else ``$BERTLAB_BERT2BERT``, else the shipped one."""
    from bertlab.models import resolve_named

    name = name or os.environ.get(ENV_VAR, "").strip() or None
    return bert2bert_path() if name is None else resolve_named(name, _not_available)

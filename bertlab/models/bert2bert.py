"""The shipped fine-tuned BERT2BERT, assembled on first use into an ordinary Hugging Face folder.

What ships in ``bertlab/models/weights/bert2bert/`` (``make bert2bert`` writes it,
``recipes/bert2bert/train.py``) is only what training changed: the decoder's tensors in fp16,
the word embeddings and the output projection tied to them excepted (both equal the course
checkpoint's). :func:`bert2bert_path` warm-starts the same ``EncoderDecoderModel`` from the
course checkpoint, puts the shipped tensors in, and saves the result with ``save_pretrained``,
so Chapter 7 loads it with ``EncoderDecoderModel.from_pretrained`` offline. The folder lives in
the course cache (:mod:`bertlab.models.shipped`), named by the manifest's hash, and is rebuilt if
damaged. ``$BERTLAB_BERT2BERT`` names another folder or hub id instead.
"""

from __future__ import annotations

from pathlib import Path

from bertlab.models import shipped
from bertlab.models.cache import quiet_hub_bars
from bertlab.models.encoder import checkpoint_path
from bertlab.models.resolve import MODELS, resolve
from bertlab.models.shipped import DamagedCheckpointError

WEIGHTS_DIR = shipped.WEIGHTS / "bert2bert"
ENV_VAR = MODELS["bert2bert"].env_var  # a folder or hub id to use instead of the shipped model


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when trained BERT2BERT weights are in the package (``manifest.json``)."""
    return shipped.is_shipped(weights_dir or WEIGHTS_DIR)


def manifest(weights_dir: Path | None = None) -> dict:
    """The shipped manifest, after checking the weights' sha256 against it."""
    return shipped.manifest(weights_dir or WEIGHTS_DIR, "trained BERT2BERT", "bert2bert")


def load_trained(weights_dir: Path, record: dict):
    """Warm start + exported tensors: the trained model, and the course checkpoint's tokenizer.

    ``record["shared"]`` (BERTShare, ``make bert2bert``'s second run) ties the halves first, so
    each shared tensor, exported once under the encoder's name, fills both.
    """
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from bertlab.bert2bert.model import (
        freeze_word_embeddings,
        trainable_names,
        trained_names,
        warm_start,
    )

    path = (
        checkpoint_path()
    )  # the weights were trained on the course checkpoint, whatever BERTLAB_MODEL says
    tokenizer = AutoTokenizer.from_pretrained(path)
    shared = bool(record.get("shared"))
    model = warm_start(path, tokenizer, tie=shared)
    if shared:
        freeze_word_embeddings(model)
    trained = load_file(Path(weights_dir) / record["weights_file"])
    missing = set(trainable_names(model) if shared else trained_names(model)) - set(trained)
    if missing:
        raise DamagedCheckpointError(
            f"bertlab: {weights_dir} lacks {len(missing)} trained tensors "
            f"(e.g. {sorted(missing)[0]}); retrain with `make bert2bert`"
        )
    state = model.state_dict()
    model.load_state_dict({k: v.to(state[k].dtype) for k, v in trained.items()}, strict=False)
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

    Raises :class:`~bertlab.models.shipped.DamagedCheckpointError` when the shipped weights
    fail their sha256 check, ``FileNotFoundError`` (saying to run ``make bert2bert``) when none ship.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    return shipped.assemble_once(
        weights_dir, manifest(weights_dir), assemble, "bert2bert-", cache_dir
    )


def bert2bert_model_path(name: str | None = None) -> str:
    """The BERT2BERT Chapter 7 loads: ``name``, else ``$BERTLAB_BERT2BERT``, else the shipped one."""
    return resolve("bert2bert", name, bert2bert_path)

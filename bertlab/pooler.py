"""What a checkpoint's pooler is: evidence read from the weight files, not assumed.

BERT's pooler (``BertPooler`` in transformers' ``models/bert/modeling_bert.py``: dense + tanh
on the last-layer ``[CLS]`` vector) was trained for next-sentence prediction in
bert-base-uncased (Devlin et al. 2019, section 3.1). Nothing says the same of the course
checkpoint: all-MiniLM-L6-v2 was fine-tuned with MEAN pooling, so its pooler was never on a
loss path, and ``BertForMaskedLM`` (the course checkpoint's training class) has no pooler at
all. A dense layer that any gradient step reached would not keep a bias of exact zeros.

This module returns facts (counts and a spread), never a sentence: a page states its claim in
its own words, glues these numbers into it and asserts them. Used by the model card (the
pooler's evidence) and Chapter 2.
"""

from __future__ import annotations

import os

import torch
from safetensors.torch import load_file


def _folder(path: str) -> str:
    """The local folder of a checkpoint: ``path`` itself, or a hub id's folder in the local cache."""
    if os.path.isdir(path):
        return path
    from transformers.utils import (
        cached_file,
    )  # a hub id such as bert-base-uncased, downloaded once

    return os.path.dirname(cached_file(path, "model.safetensors"))


def _pooler_weights(folder: str) -> dict[str, torch.Tensor]:
    """``{"weight", "bias"}`` of the pooler's dense layer in a checkpoint folder."""
    tensors = load_file(os.path.join(folder, "model.safetensors"))
    found = {}
    for key, value in tensors.items():
        if key.endswith("pooler.dense.weight"):
            found["weight"] = value.float()
        elif key.endswith("pooler.dense.bias"):
            found["bias"] = value.float()
    if set(found) != {"weight", "bias"}:
        raise KeyError(
            f"bertlab: {folder} has no pooler weights (a BertForMaskedLM checkpoint has none)"
        )
    return found


def pooler_evidence(path: str, minilm_folder: str | None = None) -> dict:
    """Facts about the pooler of the checkpoint at ``path`` (a folder, or a hub id in the cache).

    Returns ``bias_zeros`` and ``bias_size`` (how many of the bias's entries are exactly 0),
    ``weight_std`` (BERT initialises dense layers with std 0.02), and, when ``minilm_folder``
    is given, ``same_as_minilm``: whether the pooler is, value for value, the pip MiniLM's.
    """
    pooler = _pooler_weights(_folder(path))
    evidence = {
        "bias_zeros": int((pooler["bias"] == 0).sum()),
        "bias_size": pooler["bias"].numel(),
        "weight_std": float(pooler["weight"].std()),
    }
    if minilm_folder is not None:
        minilm = _pooler_weights(minilm_folder)
        evidence["same_as_minilm"] = all(torch.equal(pooler[k], minilm[k]) for k in pooler)
    return evidence


def course_pooler_evidence() -> dict:
    """:func:`pooler_evidence` of the course's default model, whichever model a page ran on.

    The default is the course checkpoint when its weights ship, else the pip all-MiniLM-L6-v2;
    the two hold the same pooler, value for value (the model card checks it), so the evidence
    is the same. Pages that say "the course checkpoint's pooler was never trained" assert
    ``bias_zeros == bias_size`` on this."""
    from bertlab.models import default_model_path

    return pooler_evidence(default_model_path())

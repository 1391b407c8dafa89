"""What the checkpoint's pooler is: evidence read from the weight files, not assumed.

BERT's pooler (``BertPooler`` in transformers' ``models/bert/modeling_bert.py``: dense + tanh
on the last-layer ``[CLS]`` vector) was trained for next-sentence prediction in
bert-base-uncased (Devlin et al. 2019, section 3.1). Nothing says the same of the model these
pages run on: all-MiniLM-L6-v2 was fine-tuned with MEAN pooling, so its pooler was never on a
loss path, and ``BertForMaskedLM`` (the course checkpoint's training class) has no pooler at
all. A dense layer that any gradient step reached would not keep a bias of exact zeros.

Used by the model card (the pooler's evidence), Chapter 0 and Chapter 2.
"""

from __future__ import annotations

import os

import torch
from safetensors.torch import load_file


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
        raise KeyError(f"bertlab: {folder} has no pooler weights (a BertForMaskedLM checkpoint has none)")
    return found


def pooler_evidence(folder: str, minilm_folder: str | None = None) -> dict:
    """Facts about the pooler stored in ``folder``.

    Returns ``bias_zeros`` and ``bias_size`` (how many of the bias's entries are exactly 0),
    ``weight_std`` (BERT initialises dense layers with std 0.02), and, when ``minilm_folder``
    is given, ``same_as_minilm``: whether the pooler is, value for value, the pip MiniLM's.
    """
    pooler = _pooler_weights(folder)
    evidence = {
        "bias_zeros": int((pooler["bias"] == 0).sum()),
        "bias_size": pooler["bias"].numel(),
        "weight_std": float(pooler["weight"].std()),
    }
    if minilm_folder is not None:
        minilm = _pooler_weights(minilm_folder)
        evidence["same_as_minilm"] = all(torch.equal(pooler[k], minilm[k]) for k in pooler)
    return evidence


def pooler_was_trained(path: str) -> bool:
    """Whether the pooler of a checkpoint (a folder, or a hub id in the local cache) shows any
    sign of training: False when every bias entry is exactly 0, as in the course checkpoint."""
    folder = path
    if not os.path.isdir(path):  # a hub id such as bert-base-uncased, downloaded once
        from transformers.utils import cached_file

        folder = os.path.dirname(cached_file(path, "model.safetensors"))
    evidence = pooler_evidence(folder)
    return evidence["bias_zeros"] < evidence["bias_size"]


def pooler_sentence(path: str) -> str:
    """One sentence, true of the checkpoint at ``path``, on what its pooler was trained for."""
    if pooler_was_trained(path):
        return ("its weights show training; in bert-base-uncased that training was next-sentence "
                "prediction")
    return ("in bert-base-uncased that layer was trained for next-sentence prediction, but in this "
            "checkpoint it was never trained (every entry of its bias is exactly 0; the model card shows "
            "the evidence)")

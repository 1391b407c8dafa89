"""Attention masks and parameter counts: the tools of Chapter 1, "An encoder, not a decoder".

Two questions of that chapter are answered by walking a live ``BertModel``:

- where do its parameters sit? :func:`parameters_per_block` counts them per block
  (embeddings, each layer's self-attention, attention output, feed-forward, pooler);
- is there a decoder anywhere? :func:`find_modules` searches module names (a BERT encoder has
  no ``crossattention``; a BART decoder has ``encoder_attn`` in every layer).

Module layout follows transformers' ``models/bert/modeling_bert.py`` (Devlin et al. 2019,
"BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding").
"""

from __future__ import annotations

from torch import nn

#: The sub-blocks of one BERT layer, in the order the data flows through them.
LAYER_BLOCKS = ("attention.self", "attention.output", "intermediate", "output")


def count_parameters(module: nn.Module) -> int:
    """Number of scalars in ``module``'s parameters (works on the meta device too)."""
    return sum(p.numel() for p in module.parameters())


def parameters_per_block(model: nn.Module) -> dict[str, int]:
    """Parameter count of every block of a ``BertModel``, in forward order.

    Keys: ``"embeddings"``, then ``"layer {i} {block}"`` for each layer ``i`` and each
    ``block`` of :data:`LAYER_BLOCKS` (plus ``"layer {i} crossattention"`` if a decoder-style
    BERT has one), then ``"pooler"`` if the model has a pooler. The values add up to
    ``count_parameters(model)``.
    """
    counts = {"embeddings": count_parameters(model.embeddings)}
    for i, layer in enumerate(model.encoder.layer):
        for name, child in layer.named_children():
            if name == "attention":  # BertAttention = self-attention + its output projection
                for sub_name, sub in child.named_children():
                    counts[f"layer {i} attention.{sub_name}"] = count_parameters(sub)
            else:
                counts[f"layer {i} {name}"] = count_parameters(child)
    if getattr(model, "pooler", None) is not None:
        counts["pooler"] = count_parameters(model.pooler)
    counts = {k: v for k, v in counts.items() if v > 0}  # dropout modules have no parameters
    assert sum(counts.values()) == count_parameters(model), "a block was missed"
    return counts


def block_kind(key: str) -> str:
    """``"layer 3 intermediate"`` -> ``"intermediate"``; ``"embeddings"`` stays as it is."""
    return key.split(" ", 2)[2] if key.startswith("layer ") else key


def find_modules(model: nn.Module, *words: str) -> list[str]:
    """Names of the modules of ``model`` whose name contains one of ``words`` (any case)."""
    words = tuple(w.lower() for w in words)
    return [name for name, _ in model.named_modules() if any(w in name.lower() for w in words)]


def parameters_per_kind(counts: dict[str, int]) -> dict[str, int]:
    """Sum :func:`parameters_per_block`'s counts over the layers: one total per kind of block."""
    totals: dict[str, int] = {}
    for key, value in counts.items():
        totals[block_kind(key)] = totals.get(block_kind(key), 0) + value
    return totals

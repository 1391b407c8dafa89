"""Attention masks and parameter counts: the tools of Chapter 1, "An encoder, not a decoder".

Two questions of that chapter are answered by walking a live ``BertModel``:

- where do its parameters sit? :func:`parameters_per_block` counts them per block
  (embeddings, each layer's self-attention, attention output, feed-forward, pooler) and
  :func:`plot_parameters_per_block` draws the count;
- is there a decoder anywhere? :func:`find_modules` searches module names (a BERT encoder has
  no ``crossattention``; a BART decoder has ``encoder_attn`` in every layer).

And one picture: :func:`plot_masks` draws boolean T x T attention masks side by side (rows are
queries, columns are keys), e.g. BERT's bidirectional mask next to a decoder's causal mask.

Module layout follows transformers' ``models/bert/modeling_bert.py`` (Devlin et al. 2019,
"BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding").
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
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


_KIND_COLOURS = {
    "embeddings": "#7f7f7f",
    "attention.self": "#1f77b4",
    "attention.output": "#aec7e8",
    "intermediate": "#ff7f0e",
    "output": "#ffbb78",
    "crossattention": "#d62728",
    "pooler": "#2ca02c",
}


def plot_parameters_per_block(counts: dict[str, int], *, title: str = "", ax=None):
    """Horizontal bar chart of :func:`parameters_per_block`'s counts, one bar per block.

    Bars are coloured by kind of block, so the repeating pattern of the layers shows.
    Returns the matplotlib Axes.
    """
    names = list(counts)
    values = np.array([counts[n] for n in names], dtype=float) / 1e6  # millions
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.24 * len(names) + 1.2))
    colours = [_KIND_COLOURS.get(block_kind(n), "#9467bd") for n in names]
    ax.barh(range(len(names)), values, color=colours)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()  # forward order, top to bottom
    ax.set_xlabel("parameters (millions)")
    for y, v in enumerate(values):
        ax.text(v, y, f" {v:.2f}M", va="center", fontsize=7)
    ax.set_xlim(0, values.max() * 1.18)
    if title:
        ax.set_title(title)
    return ax


def plot_masks(masks: dict, tokens: list[str], *, title: str = "", axes=None):
    """Draw boolean [T, T] attention masks side by side, one panel per entry of ``masks``.

    Row i is the query token, column j the key token; a filled cell means "i may attend to j".

    Args:
        masks: panel title -> BoolTensor or array of shape [T, T] (True = may attend).
        tokens: the T token strings, written along both axes.
    Returns:
        The array of matplotlib Axes.
    """
    length = len(tokens)
    if axes is None:
        side = max(3.5, 0.38 * length + 1.5)
        _, axes = plt.subplots(1, len(masks), figsize=(side * len(masks), side), squeeze=False)
        axes = axes[0]
    for ax, (name, mask) in zip(axes, masks.items()):
        grid = np.asarray(mask, dtype=float)  # [T, T]
        assert grid.shape == (length, length), f"{name}: mask is {grid.shape}, tokens give {length}"
        ax.imshow(grid, cmap="Blues", vmin=0, vmax=1.25)
        ax.set_xticks(range(length), tokens, rotation=90, fontsize=8)
        ax.set_yticks(range(length), tokens, fontsize=8)
        ax.set_xlabel("key j (attended to)")
        ax.set_ylabel("query i (attending)")
        ax.set_title(f"{name}\n{int(grid.sum())} of {length * length} pairs allowed", fontsize=10)
        ax.set_xticks(np.arange(-0.5, length), minor=True)
        ax.set_yticks(np.arange(-0.5, length), minor=True)
        ax.grid(which="minor", color="white", linewidth=0.8)
        ax.tick_params(which="minor", length=0)
    if title:
        axes[0].figure.suptitle(title)
    axes[0].figure.tight_layout()
    return axes


def parameters_per_kind(counts: dict[str, int]) -> dict[str, int]:
    """Sum :func:`parameters_per_block`'s counts over the layers: one total per kind of block."""
    totals: dict[str, int] = {}
    for key, value in counts.items():
        totals[block_kind(key)] = totals.get(block_kind(key), 0) + value
    return totals

"""Figures the chapters share: a grid of tokens coloured by a value per token.

One look for every page (a light style, token labels on the axes), so a reader learns to read
these pictures once. First used in the book's "A first look at BERT" page.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def token_grid(
    values,
    row_labels: list[str],
    tokens: list[list[str]],
    *,
    title: str = "",
    cmap: str = "Blues",
    vmin: float | None = None,
    vmax: float | None = None,
    ax=None,
):
    """Draw a [rows, T] array as coloured cells, each cell labelled with its token.

    Args:
        values: array-like of shape [R, T] (e.g. an attention mask, or token_type_ids).
        row_labels: R labels for the rows (e.g. "sentence 1").
        tokens: R lists of T token strings written into the cells.
    Returns:
        The matplotlib Axes.
    """
    values = np.asarray(values, dtype=float)  # [R, T]
    rows, length = values.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.62 * length), 0.55 * rows + 1.0))
    ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    norm_hi = values.max() if vmax is None else vmax
    for r in range(rows):
        for t in range(length):
            dark = norm_hi > 0 and values[r, t] > 0.6 * norm_hi
            ax.text(
                t,
                r,
                tokens[r][t],
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
                rotation=90 if len(tokens[r][t]) > 6 else 0,
            )
    ax.set_yticks(range(rows), row_labels)
    ax.set_xticks(range(length), [str(t) for t in range(length)], fontsize=7)
    ax.set_xlabel("position t")
    if title:
        ax.set_title(title)
    return ax


def vectors_heatmap(matrix, tokens: list[str], *, dims: int = 48, title: str = "", ax=None):
    """Show the first ``dims`` coordinates of one vector per token ([T, H] -> picture)."""
    matrix = np.asarray(matrix)[:, :dims]  # [T, dims]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.32 * len(tokens) + 1.2))
    limit = np.abs(matrix).max()
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
    ax.set_xlabel(f"hidden dimension (first {matrix.shape[1]})")
    plt.colorbar(image, ax=ax, fraction=0.03)
    if title:
        ax.set_title(title)
    return ax

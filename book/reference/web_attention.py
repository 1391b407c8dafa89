"""The numpy twin of Chapter 1's attention box (``book/live/attention.mjs``): the additive masks,
each head's weights under both, and how far each token's vector moves when a later word changes
(the chapter's ``relative_change``). :mod:`recipes.site.web_references` writes their answers into
the site's ``reference.json``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def attention_bias(length: int, causal: bool) -> np.ndarray:
    """float32 [1, 1, T, T]: 0 where query i may attend to key j, -1e9 where not (Chapter 1's
    additive 4-D mask; -1e9 is exact in float32 and gives a weight of exactly 0)."""
    bias = np.zeros((1, 1, length, length), dtype=np.float32)
    if causal:
        bias[0, 0][np.triu_indices(length, 1)] = -1e9  # key j > query i
    return bias


def relative_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Chapter 1's ``relative_change``: ||a_t - b_t|| / ||a_t|| for each token, a, b [T, Hd] -> [T]."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(a, axis=-1)


def attention_reference(run_attention: Callable, ids: list[int], decimals: int = 6) -> dict:
    """Every layer's and head's attention [L][H][T][T] under both masks, rounded, for the box.

    ``run_attention(ids, causal)`` -> (attentions [L, H, T, T], hidden [T, Hd])."""
    return {
        mask: np.round(
            run_attention(ids, mask == "causal")[0].astype(np.float64), decimals
        ).tolist()
        for mask in ("bidirectional", "causal")
    }


def edit_reference(run_attention: Callable, ids_a: list[int], ids_b: list[int]) -> dict:
    """Which tokens' vectors change when a sentence's later word changes, under each mask:
    the first differing position and each token's :func:`relative_change` ([T] per mask)."""
    changed = next(i for i, (a, b) in enumerate(zip(ids_a, ids_b)) if a != b)
    moved = {}
    for mask in ("bidirectional", "causal"):
        hidden_a = run_attention(ids_a, mask == "causal")[1]  # [T, Hd]
        hidden_b = run_attention(ids_b, mask == "causal")[1]  # [T, Hd]
        moved[mask] = relative_change(hidden_a, hidden_b).tolist()
    return {"changed_from": changed, "moved": moved}

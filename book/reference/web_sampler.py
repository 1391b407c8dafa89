"""What the website's live models compute, in numpy: the twin of ``book/live/*.mjs``.

The build step (``recipes/site/web_models.py``) runs these on onnxruntime's logits to write the
reference file the browser tests hold the page's JavaScript to, so each function here is
written to match its JavaScript twin step for step:

- :func:`top_fills` mirrors ``fillmask.mjs`` ``topFills``: a softmax at each ``[MASK]`` and the
  top k (Chapter 4, "Filling in a blank, two ways").
- :func:`fill_canvas` mirrors ``canvas.mjs`` ``fillCanvas`` and, step for step, the chapter's
  ``book/reference/diffusion_sampler.py`` ``fill_canvas`` without blocks (Chapter 6b, "Writing on
  a canvas"): ``tokens_per_step`` commitments per pass, chosen by confidence (LLaDA's
  low-confidence remasking) or at random (MDLM's ancestral sampler, greedy).
- :func:`mulberry32` is the random order's generator: torch's generator has no JavaScript twin,
  so both sides draw from this small 32-bit PRNG (Tommy Ettinger's Mulberry32), one number per
  canvas position per step, as ``commit_random`` draws ``torch.rand(canvas.shape)``.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

#: Chapter 4's box's examples: its flagship sentence, then the two of "Fill in the blank is not
#: generation". The page computes them with PyTorch; the build, with the exported model.
FILL_EXAMPLES = (
    "The capital of France is [MASK].",
    "The [MASK] barked in the garden all morning.",
    "The [MASK] sang in the garden all morning.",
    "She drinks a cup of [MASK] every morning.",
)

_M32 = 0xFFFFFFFF


def mulberry32(seed: int) -> Iterator[float]:
    """Uniform floats in [0, 1), each a multiple of 2**-32: ``canvas.mjs`` ``mulberry32``."""
    state = seed & _M32
    while True:
        state = (state + 0x6D2B79F5) & _M32
        t = ((state ^ (state >> 15)) * (state | 1)) & _M32
        t = ((t + (((t ^ (t >> 7)) * (t | 61)) & _M32)) & _M32) ^ t
        yield ((t ^ (t >> 14)) & _M32) / 4294967296


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis in float64 (the browser computes in JavaScript's doubles)."""
    z = logits.astype(np.float64)
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def top_fills(logits: np.ndarray, input_ids: list[int], mask_id: int, k: int = 5) -> list[dict]:
    """For each ``[MASK]`` of one sentence: its position, and the top ``k`` ids and probabilities.

    logits: [T, V] float32. Ties go to the smaller id (a stable sort), as in ``topFills``."""
    out = []
    for position in [i for i, t in enumerate(input_ids) if t == mask_id]:
        probs = softmax(logits[position])  # [V]
        top = np.argsort(-probs, kind="stable")[:k]
        out.append({"position": position, "ids": top.tolist(), "probs": probs[top].tolist()})
    return out


def tokens_per_step(n_masked: int, steps: int) -> list[int]:
    """``reference.diffusion.tokens_per_step``: as even as possible, earlier steps take the rest."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    base, extra = divmod(n_masked, steps)
    return [base + (1 if i < extra else 0) for i in range(steps)]


def layout(source_ids: list[int], n_tokens: int, cls_id: int, sep_id: int, mask_id: int) -> dict:
    """One canvas, ``[CLS] source [SEP] [MASK] x N [SEP]``, as ``diffusion_sampler.layout`` lays
    out a batch of one: the source cut to 40 tokens, segment 1 from the first [MASK] on."""
    source_ids = source_ids[:40]
    ids = [cls_id, *source_ids, sep_id] + [mask_id] * n_tokens + [sep_id]
    start = len(source_ids) + 2
    types = [0] * start + [1] * (n_tokens + 1)
    return {"input_ids": ids, "token_type_ids": types, "start": start}


def fill_canvas(
    logits_of: Callable[[list[int], list[int]], np.ndarray],
    source_ids: list[int],
    n_tokens: int,
    steps: int,
    special: dict,
    order: str = "confidence",
    seed: int = 0,
) -> list[dict]:
    """Write ``n_tokens`` after ``source_ids`` in ``steps`` passes of ``logits_of(ids, types)`` -> [T, V].

    ``special`` holds the ids ``cls``, ``sep``, ``pad``, ``mask``; none of the four is ever written.
    Returns the steps, the first the all-[MASK] canvas: each ``{"canvas": the N answer ids,
    "committed": positions in the answer written at this step, "probs": the probability of each}``.
    """
    if order not in ("confidence", "random"):
        raise ValueError(f"order is 'confidence' or 'random', not {order!r}")
    canvas = layout(source_ids, n_tokens, special["cls"], special["sep"], special["mask"])
    ids, start, mask_id = list(canvas["input_ids"]), canvas["start"], special["mask"]
    banned = [special[k] for k in ("cls", "sep", "pad", "mask")]
    draws = mulberry32(seed)
    history = [{"canvas": ids[start : start + n_tokens], "committed": [], "probs": []}]
    for n in tokens_per_step(n_tokens, steps):
        logits = logits_of(ids, canvas["token_type_ids"]).astype(np.float64)  # [T, V]
        logits[:, banned] = -np.inf  # never write [MASK], [SEP], ...
        probs = softmax(logits)  # [T, V]
        choice = probs.argmax(-1)  # [T], the first of equal maxima
        masked = np.array(ids) == mask_id  # [T]
        if order == "random":
            score = np.array([next(draws) for _ in ids])  # [T], one draw per position
        else:
            score = probs.max(-1)  # [T]
        score[~masked] = -1.0
        k = min(n, int(masked.sum()))
        chosen = np.argsort(-score, kind="stable")[:k]  # ties: the earlier position
        for position in chosen:
            ids[position] = int(choice[position])
        history.append(
            {
                "canvas": ids[start : start + n_tokens],
                "committed": [int(p) - start for p in chosen],
                "probs": [float(probs[p, choice[p]]) for p in chosen],
            }
        )
    return history

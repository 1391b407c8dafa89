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
- the writers of Chapter 6's "Who can write?" (``writers.mjs``), each returning one step per
  forward pass: :func:`write_left_to_right` (the causal writer, which stops itself),
  :func:`force_append`, :func:`force_gibbs` and :func:`force_mask_predict` (BERT forced to
  write, after Chapter 6's ``book/reference/bert_sampling.py``).

Chapter 1's attention box has its twin in :mod:`reference.web_attention`.
"""

from __future__ import annotations

import math
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


def _banned_probs(logits: np.ndarray, banned: list[int]) -> np.ndarray:
    """Softmax [V] of one row of logits in float64, the ``banned`` ids at -inf (probability 0)."""
    row = logits.astype(np.float64)  # [V]
    row[banned] = -np.inf
    return softmax(row)


def _start(answer: list[int]) -> dict:
    return {"ids": list(answer), "committed": [], "probs": []}


def write_left_to_right(
    logits_of: Callable[[list[int], list[int]], np.ndarray],
    source_ids: list[int],
    n_tokens: int,
    special: dict,
) -> list[dict]:
    """A decoder writes after ``[CLS] source [SEP]``: one token per pass, greedy, until [SEP].

    Each pass runs the whole sequence again (no cache, as Chapter 6 counts passes) and commits the
    argmax of the last row (``logits[t]`` predicts token t + 1) as segment 1, banning [CLS], [PAD]
    and [MASK] but not [SEP]: [SEP] is the writer's stop (``recipes/causal/train.py`` trains it
    to write one). Stops after the pass that writes [SEP], kept as the last id, or after
    ``n_tokens`` passes. Returns the steps: ``{"ids": the answer so far, "committed": [its
    position], "probs": [its probability]}``, the first the empty answer.
    """
    source_ids = source_ids[:40]
    ids = [special["cls"], *source_ids, special["sep"]]
    types = [0] * len(ids)
    start, banned = len(ids), [special[k] for k in ("cls", "pad", "mask")]
    history = [_start([])]
    for j in range(n_tokens):
        probs = _banned_probs(logits_of(ids, types)[-1], banned)  # [V]: the next token's
        token = int(probs.argmax())
        ids.append(token)
        types.append(1)
        history.append({"ids": ids[start:], "committed": [j], "probs": [float(probs[token])]})
        if token == special["sep"]:
            break
    return history


def force_append(
    logits_of: Callable[[list[int], list[int]], np.ndarray],
    source_ids: list[int],
    n_tokens: int,
    special: dict,
) -> list[dict]:
    """Chapter 6's ``append_masks_one_at_a_time`` for one prompt: each pass lays out
    ``[CLS] source [SEP] written... [MASK] [SEP]`` and commits the argmax at the [MASK].

    Exactly ``n_tokens`` passes: BERT has no stop. Where it differs from the chapter's: a [SEP]
    between the source and the answer, and the answer (with its [SEP]) in segment 1, the layout
    the masked diffusion model was trained on (:func:`layout`); and [CLS], [SEP], [PAD], [MASK]
    are banned, where the chapter bans nothing, so the forced column never writes a [SEP] that
    would read as a stop. With the chapter's prompt ending in [SEP] and a model that ranks no
    special token first, the two write the same ids (``tests/course/test_web_sampler.py``).
    """
    source_ids = source_ids[:40]
    start = len(source_ids) + 2
    banned = [special[k] for k in ("cls", "sep", "pad", "mask")]
    written, history = [], [_start([])]
    for j in range(n_tokens):
        ids = [
            special["cls"],
            *source_ids,
            special["sep"],
            *written,
            special["mask"],
            special["sep"],
        ]
        types = [0] * start + [1] * (j + 2)
        probs = _banned_probs(logits_of(ids, types)[start + j], banned)  # [V] at the [MASK]
        token = int(probs.argmax())
        written.append(token)
        history.append({"ids": list(written), "committed": [j], "probs": [float(probs[token])]})
    return history


def sample_top_k(probs: np.ndarray, top_k: int, u: float) -> int:
    """One id from the ``top_k`` most probable, renormalised, by one uniform draw ``u``: the
    first (by probability, ties the smaller id) whose cumulative probability exceeds u * total."""
    top = np.argsort(-probs, kind="stable")[:top_k]  # [k]
    total = sum(float(probs[t]) for t in top)
    cumulative = 0.0
    for token in top:
        cumulative += float(probs[token])
        if cumulative > u * total:
            return int(token)
    return int(top[-1])  # u * total rounded past the sum


def force_gibbs(
    logits_of: Callable[[list[int], list[int]], np.ndarray],
    source_ids: list[int],
    n_tokens: int,
    special: dict,
    passes: int | None = None,
    seed: int = 0,
    top_k: int = 10,
) -> list[dict]:
    """Chapter 6's ``gibbs_sample`` for one prompt (Wang & Cho 2019), with :func:`mulberry32`.

    On the canvas ``[CLS] source [SEP] [MASK] x N [SEP]`` (:func:`layout`), each pass re-masks
    one answer position, runs the model and samples it from the top ``top_k`` of its softmax
    (:func:`sample_top_k`). The first N passes visit the positions in a random order, so none is
    left [MASK]; later passes pick one uniformly. Draws, in order: N - 1 for a Fisher-Yates
    shuffle of 0..N-1 (i from N - 1 down to 1 swaps i with floor(draw * (i + 1))), then per
    pass the position's draw (after the first N passes: floor(draw * N)) and the sample's.
    Differs from the chapter's: no burn-in (the chapter's first ``burn_in`` passes sample the
    whole vocabulary), mulberry32 for torch's generator, the canvas's layout (see
    :func:`force_append`), and [UNK] may be written (the chapter bans all special ids).
    ``passes`` defaults to 2N. Each step's "probs" is the full banned softmax's probability.
    """
    passes = 2 * n_tokens if passes is None else passes
    canvas = layout(source_ids, n_tokens, special["cls"], special["sep"], special["mask"])
    ids, types, start = list(canvas["input_ids"]), canvas["token_type_ids"], canvas["start"]
    banned = [special[k] for k in ("cls", "sep", "pad", "mask")]
    draws = mulberry32(seed)
    order = list(range(n_tokens))
    for i in range(n_tokens - 1, 0, -1):
        j = math.floor(next(draws) * (i + 1))
        order[i], order[j] = order[j], order[i]
    history = [_start(ids[start : start + n_tokens])]
    for step in range(passes):
        position = order[step] if step < n_tokens else math.floor(next(draws) * n_tokens)
        ids[start + position] = special["mask"]
        probs = _banned_probs(logits_of(ids, types)[start + position], banned)  # [V]
        token = sample_top_k(probs, top_k, next(draws))
        ids[start + position] = token
        history.append(
            {
                "ids": ids[start : start + n_tokens],
                "committed": [position],
                "probs": [float(probs[token])],
            }
        )
    return history


def force_mask_predict(
    logits_of: Callable[[list[int], list[int]], np.ndarray],
    source_ids: list[int],
    n_tokens: int,
    special: dict,
    iterations: int,
) -> list[dict]:
    """Chapter 6's ``mask_predict`` for one prompt (Ghazvininejad et al. 2019, "Mask-Predict").

    Pass 1 predicts every blank (argmax) and keeps each one's probability; pass t + 1 (t = 1..T-1)
    re-masks the floor(N (T - t) / T) least confident (ties: the earlier position) and predicts
    those again; it stops early when that count is 0. Each step commits the re-predicted
    positions in order. Where it differs from the chapter's: the canvas's layout and the banned
    specials, as :func:`force_append` says (the banned softmax also renormalises the
    probabilities that rank the re-masking), and the stable ties (``torch.topk`` promises none).
    """
    canvas = layout(source_ids, n_tokens, special["cls"], special["sep"], special["mask"])
    ids, types, start = list(canvas["input_ids"]), canvas["token_type_ids"], canvas["start"]
    banned = [special[k] for k in ("cls", "sep", "pad", "mask")]
    confidence = np.zeros(n_tokens)  # [N]
    remask = list(range(n_tokens))  # pass 1 predicts every blank
    history = [_start(ids[start : start + n_tokens])]
    for t in range(iterations):
        if t > 0:
            count = n_tokens * (iterations - t) // iterations
            if count == 0:
                break
            remask = sorted(int(p) for p in np.argsort(confidence, kind="stable")[:count])
            for p in remask:
                ids[start + p] = special["mask"]
        logits = logits_of(ids, types)[start : start + n_tokens]  # [N, V]
        probs = np.stack([_banned_probs(row, banned) for row in logits])  # [N, V]
        best = probs.argmax(-1)  # [N]
        for p in remask:
            ids[start + p] = int(best[p])
            confidence[p] = probs[p, best[p]]
        history.append(
            {
                "ids": ids[start : start + n_tokens],
                "committed": remask,
                "probs": [float(confidence[p]) for p in remask],
            }
        )
    return history

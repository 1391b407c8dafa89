"""Chapter 6b's sampler: write a definition on a canvas of [MASK]s, a few positions per step.

The canvas is a BERT sentence pair, ``[CLS] word : sentence [SEP] [MASK] x N [SEP]``, the layout
the masked diffusion model was trained on (``diffusion_training.encode``). Each step runs the
model on the whole canvas and commits some masked positions: the most confident ones
(:func:`reference.diffusion.unmask_step`, LLaDA's low-confidence remasking) or, with
``order="random"``, a random choice of them (LLaDA's random remasking at temperature 0). How many at
each step comes from :func:`reference.diffusion.tokens_per_step`. With ``block`` set, the canvas
is written block by block from the left (LLaDA's semi-autoregressive sampling), each block taking
an equal share of the steps.
"""

from __future__ import annotations

import torch

from reference.diffusion import tokens_per_step, unmask_step


def layout(tokenizer, sources: list[str], n_tokens: int) -> dict:
    """The canvases of a batch: ``input_ids``, ``token_type_ids``, ``attention_mask`` [B, T]
    (right-padded), and ``start`` [B], the first [MASK]'s index in each row."""
    rows = [tokenizer(s, add_special_tokens=False)["input_ids"][:40] for s in sources]
    T = max(len(r) for r in rows) + n_tokens + 3
    ids = torch.full((len(rows), T), tokenizer.pad_token_id)
    segments = torch.zeros(len(rows), T, dtype=torch.long)
    attention = torch.zeros(len(rows), T, dtype=torch.long)
    start = torch.zeros(len(rows), dtype=torch.long)
    for i, r in enumerate(rows):
        row = (
            [tokenizer.cls_token_id, *r, tokenizer.sep_token_id]
            + [tokenizer.mask_token_id] * n_tokens
            + [tokenizer.sep_token_id]
        )
        ids[i, : len(row)] = torch.tensor(row)
        segments[i, len(r) + 2 : len(row)] = 1
        attention[i, : len(row)] = 1
        start[i] = len(r) + 2
    return {
        "input_ids": ids,
        "token_type_ids": segments,
        "attention_mask": attention,
        "start": start,
    }


def commit_random(
    canvas: torch.Tensor,
    logits: torch.Tensor,
    n_commit: int,
    mask_token_id: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Like :func:`~reference.diffusion.unmask_step`, but the ``n_commit`` positions of each row
    are drawn at random among its masked ones; each gets its most likely token."""
    score = torch.rand(canvas.shape, generator=generator).masked_fill(
        canvas != mask_token_id, -1.0
    )  # [B, T]
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        k = min(n_commit, int((canvas[row] == mask_token_id).sum()))
        chosen = score[row].topk(k).indices
        out[row, chosen] = logits[row, chosen].argmax(-1)
    return out


@torch.inference_mode()
def fill_canvas(
    model,
    tokenizer,
    sources: list[str],
    n_tokens: int,
    steps: int,
    order: str = "confidence",
    block: int | None = None,
    generator: torch.Generator | None = None,
):
    """Write ``n_tokens`` after each source in ``steps`` forward passes.

    Returns (written: one id list per source, history: [steps + 1, B, T] canvases, the first
    all-[MASK]). Special tokens are never written: every position holds a word piece at the end.
    ``order`` is "confidence" (commit the most confident) or "random".
    """
    canvas = layout(tokenizer, sources, n_tokens)
    ids, mask_id = canvas["input_ids"], tokenizer.mask_token_id
    offsets = (
        torch.arange(ids.shape[1])[None, :] - canvas["start"][:, None]
    )  # [B, T]: index within the answer
    blocks = (
        [(0, n_tokens)]
        if not block
        else [(b, min(b + block, n_tokens)) for b in range(0, n_tokens, block)]
    )
    schedule = []  # (block start, end, n to commit)
    for (lo, hi), share in zip(blocks, tokens_per_step(steps, len(blocks))):
        schedule += [(lo, hi, n) for n in tokens_per_step(hi - lo, max(share, 1))]
    special = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id, mask_id]
    history = [ids.clone()]
    for lo, hi, n in schedule:
        logits = model(
            input_ids=ids,
            token_type_ids=canvas["token_type_ids"],
            attention_mask=canvas["attention_mask"],
        ).logits  # [B, T, V]
        logits[..., special] = float("-inf")  # never write [MASK], [SEP], ...
        outside = (ids == mask_id) & (
            (offsets < lo) | (offsets >= hi)
        )  # masks of later blocks wait
        view = ids.masked_fill(outside, tokenizer.pad_token_id)
        if order == "random":
            new = commit_random(view, logits, n, mask_id, generator)
        else:
            new = unmask_step(view, logits, n, mask_id)
        ids = torch.where(outside, ids, new)
        history.append(ids.clone())
    written = [ids[i, s : s + n_tokens].tolist() for i, s in enumerate(canvas["start"].tolist())]
    return written, torch.stack(history)

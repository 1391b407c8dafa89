"""Ways to make a masked language model write (Chapter 6, "Forcing BERT to write").

BERT was trained to fill blanks whose number and places are given; it has no order, no length and
no stop. Each function here lays the blanks out first, ``[CLS] prompt [MASK] ... [MASK] [SEP]``,
and differs only in which blank it fills when, and how:

- :func:`fill_left_to_right`: one blank per forward pass, leftmost first (greedy, or sampled):
  Wang & Cho's sequential sampler (2019, "BERT has a mouth, and it must speak",
  https://arxiv.org/abs/1902.04094);
- :func:`append_masks_one_at_a_time`: the tempting variant that appends one ``[MASK]`` before
  ``[SEP]`` per step, so the blank it fills is always the last token of the sentence;
- :func:`gibbs_sample`: re-mask a random position and resample it, many times (Wang & Cho's
  Gibbs-style sampler: burn-in from the full distribution, then top-k);
- :func:`mask_predict`: predict every blank in parallel, then re-mask the least confident and
  predict again, for T iterations (Ghazvininejad et al. 2019, "Mask-Predict",
  https://arxiv.org/abs/1904.09324).

Each takes a list of prompts and runs them as one right-padded batch (one forward pass per step
for the whole batch, with no cache: :class:`bertlab.generation.ForwardCounter` counts them), and returns the
generated token ids of each prompt. ps06 asks for one-sequence versions of ``gibbs_step`` and
``mask_predict``, and for ``fill_left_to_right`` in blocks, so these live with the book, not in the installed package
(see :mod:`reference`); ``tests/course/test_forced_generation.py`` checks that these batched ones agree
with plain one-sequence loops.
"""

from __future__ import annotations

import torch


def layout(
    tokenizer, prompts: list[str], n_tokens: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``[CLS] prompt [MASK] x n_tokens [SEP] [PAD]...`` for each prompt.

    Returns ids [B, T], attention_mask [B, T] and the index of each row's first blank [B].
    """
    rows = [tokenizer(p)["input_ids"] for p in prompts]  # each [CLS] ... [SEP]
    rows = [r[:-1] + [tokenizer.mask_token_id] * n_tokens + r[-1:] for r in rows]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), tokenizer.pad_token_id)  # [B, T]
    attention = torch.zeros(len(rows), width, dtype=torch.long)  # [B, T]
    for b, r in enumerate(rows):
        ids[b, : len(r)], attention[b, : len(r)] = torch.tensor(r), 1
    starts = torch.tensor([len(r) - 1 - n_tokens for r in rows])  # [B]
    return ids, attention, starts


@torch.inference_mode()
def logits_at(
    model, ids: torch.Tensor, attention: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """The MLM logits at the given positions: ids [B, T], positions [B] or [B, N] -> [B, V] or [B, N, V].

    The same numbers as ``model(ids).logits[rows, positions]``, but the MLM head (whose vocabulary
    projection costs more than the 6-layer encoder) runs on the wanted positions only.
    """
    rows = torch.arange(len(ids)) if positions.dim() == 1 else torch.arange(len(ids))[:, None]
    if hasattr(model, "cls") and hasattr(model, "bert"):  # BertForMaskedLM: encoder, then head
        hidden = model.bert(input_ids=ids, attention_mask=attention).last_hidden_state  # [B, T, H]
        return model.cls(hidden[rows, positions])  # [B, (N,) V]
    return model(input_ids=ids, attention_mask=attention).logits[rows, positions]


def choose(
    scores: torch.Tensor,
    temperature: float = 0.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
    banned: list[int] | None = None,
) -> torch.Tensor:
    """One token per row of logits [B, V] -> [B]: the argmax when ``temperature == 0``, else a
    sample from softmax(logits / temperature), over each row's ``top_k`` best when given."""
    scores = scores.float().clone()  # [B, V]
    if banned:
        scores[:, banned] = float("-inf")
    if temperature == 0:
        return scores.argmax(-1)
    scores = scores / temperature
    if top_k:
        values, ids = scores.topk(top_k, dim=-1)  # [B, k], [B, k]
        pick = torch.multinomial(values.softmax(-1), 1, generator=generator)  # [B, 1]
        return ids.gather(1, pick)[:, 0]
    return torch.multinomial(scores.softmax(-1), 1, generator=generator)[:, 0]


def _generated(ids: torch.Tensor, starts: torch.Tensor, n_tokens: int) -> list[list[int]]:
    return [ids[b, s : s + n_tokens].tolist() for b, s in enumerate(starts.tolist())]


def fill_left_to_right(
    model,
    tokenizer,
    prompts: list[str],
    n_tokens: int,
    temperature: float = 0.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> list[list[int]]:
    """Lay out ``n_tokens`` blanks before [SEP], then fill them leftmost first, one per forward pass."""
    ids, attention, starts = layout(tokenizer, prompts, n_tokens)
    rows = torch.arange(len(prompts))
    for j in range(n_tokens):
        scores = logits_at(model, ids, attention, starts + j)  # [B, V]
        ids[rows, starts + j] = choose(scores, temperature, top_k, generator)
    return _generated(ids, starts, n_tokens)


def append_masks_one_at_a_time(
    model, tokenizer, prompts: list[str], n_tokens: int
) -> list[list[int]]:
    """Greedy: append one [MASK] before [SEP], fill it, repeat. The blank is always the last word."""
    chosen = [[] for _ in prompts]
    for j in range(n_tokens):
        ids, attention, starts = layout(tokenizer, prompts, j + 1)  # j filled tokens + one blank
        for b, tokens in enumerate(chosen):
            ids[b, starts[b] : starts[b] + j] = torch.tensor(tokens, dtype=torch.long)
        best = choose(logits_at(model, ids, attention, starts + j))  # [B]
        for b, token in enumerate(best.tolist()):
            chosen[b].append(token)
    return chosen


def gibbs_sample(
    model,
    tokenizer,
    prompts: list[str],
    n_tokens: int,
    n_steps: int,
    burn_in: int,
    temperature: float = 1.0,
    top_k: int | None = 10,
    generator: torch.Generator | None = None,
) -> list[list[int]]:
    """Wang & Cho's Gibbs-style sampler on ``n_tokens`` blanks after each prompt.

    Each step re-masks one generated position per row and resamples it given all the others. The
    first ``n_tokens`` steps visit the blanks in a random order (so none is left as [MASK]), later
    ones pick a uniformly random position. Steps before ``burn_in`` sample from the full tempered
    distribution, later ones from its ``top_k`` best (``top_k=None``: the argmax). Special tokens
    are never sampled.
    """
    ids, attention, starts = layout(tokenizer, prompts, n_tokens)
    rows, banned = torch.arange(len(prompts)), list(tokenizer.all_special_ids)
    order = torch.stack([torch.randperm(n_tokens, generator=generator) for _ in prompts])  # [B, N]
    for step in range(n_steps):
        offsets = (
            order[:, step]
            if step < n_tokens
            else torch.randint(n_tokens, (len(prompts),), generator=generator)
        )
        positions = starts + offsets  # [B]
        ids[rows, positions] = tokenizer.mask_token_id
        scores = logits_at(model, ids, attention, positions)  # [B, V]
        if step < burn_in:
            ids[rows, positions] = choose(scores, temperature, None, generator, banned)
        else:
            ids[rows, positions] = choose(
                scores, temperature if top_k else 0.0, top_k, generator, banned
            )
    return _generated(ids, starts, n_tokens)


@torch.inference_mode()
def mask_predict(
    model, tokenizer, prompts: list[str], n_tokens: int, iterations: int
) -> list[list[int]]:
    """Mask-Predict (Ghazvininejad et al. 2019) on ``n_tokens`` blanks after each prompt.

    Iteration 0 predicts every blank (argmax) and keeps each one's probability. Iteration
    t = 1, ..., T - 1 re-masks the n = floor(N (T - t) / T) least confident generated tokens and
    predicts only those again, updating their tokens and probabilities.
    """
    ids, attention, starts = layout(tokenizer, prompts, n_tokens)
    span = starts[:, None] + torch.arange(n_tokens)  # [B, N], the blanks' indices
    rows = torch.arange(len(prompts))[:, None]  # [B, 1]
    confidence = torch.zeros(span.shape)  # [B, N]
    remask = torch.arange(n_tokens).expand(
        len(prompts), n_tokens
    )  # [B, N]: iteration 0 predicts all
    for t in range(iterations):
        if t > 0:
            n = n_tokens * (iterations - t) // iterations
            if n == 0:
                break
            remask = confidence.topk(
                n, dim=-1, largest=False
            ).indices  # [B, n], the least confident
            ids[rows, span.gather(1, remask)] = tokenizer.mask_token_id
        best, tokens = logits_at(model, ids, attention, span).softmax(-1).max(-1)  # [B, N], [B, N]
        ids[rows, span.gather(1, remask)] = tokens.gather(1, remask)
        confidence.scatter_(1, remask, best.gather(1, remask))
    return _generated(ids, starts, n_tokens)

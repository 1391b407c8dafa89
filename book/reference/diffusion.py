"""Masked diffusion with a BERT: the noise, the loss, the unmasking schedule and one sampler step.

A masked diffusion language model is BERT-shaped: a bidirectional encoder and the masked-token
cross-entropy. The one change is the masking ratio. BERT masks a fixed ~15%; a masked diffusion
model draws a ratio t ~ U(0, 1) for every sequence, masks each position with probability t, and
weights each masked token's loss by 1/t, which makes the loss an upper bound on the negative
log-likelihood (Sahoo et al. 2024, MDLM; Nie et al. 2025, LLaDA, whose ``get_log_likelihood``
and ``generate.py`` these functions follow). Ou et al. (2024, RADD) show that the network needs
no input for t, so a plain ``BertForMaskedLM`` serves.

It generates from a canvas of a prompt and N [MASK] tokens in K steps: at each step it predicts
every masked position and commits the most confident few (LLaDA's "low-confidence remasking":
the others stay masked for later steps).

These are the reference versions of the masked-diffusion assignment's graded functions (where
this module has the even ``tokens_per_step``, ps06b grades MaskGIT's cosine schedule), so they
live with the book, not in the installed package.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

#: The smallest masking ratio drawn: keeps the 1/t weight finite (LLaDA's ``eps``).
MIN_RATIO = 1e-3


def diffusion_mask(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_token_id: int,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Noise a batch for masked diffusion: one ratio per sequence, then [MASK] with that probability.

    input_ids: [B, T]; maskable: bool [B, T], False at special tokens, padding and any prompt
    prefix, which are never masked. Draws t ~ U(MIN_RATIO, 1) per row, then masks each maskable
    position independently with probability t (the first ``B`` draws of ``generator`` are the
    ratios, the next ``B * T`` the positions). The input is not modified.

    Returns (noisy_ids [B, T], masked bool [B, T], t [B]).
    """
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)  # [B]
    masked = (torch.rand(B, T, generator=generator) < t[:, None]) & maskable  # [B, T]
    return input_ids.masked_fill(masked, mask_token_id), masked, t


def diffusion_loss(
    logits: torch.Tensor,
    targets: torch.Tensor,
    masked: torch.Tensor,
    t: torch.Tensor,
    maskable: torch.Tensor,
) -> torch.Tensor:
    """The masked-diffusion loss: each masked token's cross-entropy weighted by 1/t of its row.

    logits: [B, T, V]; targets: [B, T] (the clean ids); masked: bool [B, T]; t: [B];
    maskable: bool [B, T]. Returns a scalar: the sum over masked positions of CE / t, divided by
    the number of maskable positions in the batch (LLaDA divides by B * T, its sequences having
    no padding). Unmasked positions contribute nothing.
    """
    ce = F.cross_entropy(logits[masked], targets[masked], reduction="none")  # [M]
    weight = (1.0 / t)[:, None].expand_as(masked)[masked]  # [M]
    return (ce * weight).sum() / maskable.sum().clamp(min=1)


def tokens_per_step(n_masked: int, steps: int) -> list[int]:
    """How many positions to commit at each of ``steps`` steps so that all ``n_masked`` are
    committed by the last: as even as possible, the earlier steps taking the remainder
    (LLaDA's ``get_num_transfer_tokens``). E.g. (10, 4) -> [3, 3, 2, 2]."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    base, extra = divmod(n_masked, steps)
    return [base + (1 if i < extra else 0) for i in range(steps)]


def unmask_step(
    canvas: torch.Tensor, logits: torch.Tensor, n_commit: int, mask_token_id: int
) -> torch.Tensor:
    """One sampler step with low-confidence remasking, greedy.

    canvas: [B, T] ids, [MASK] where still to be written; logits: [B, T, V] for that canvas.
    For each row, among its masked positions only, commits the ``n_commit`` whose most likely
    token has the highest probability (all of them if fewer are masked), writing that token; ties
    go to the earlier position. Committed positions never change again. Returns a new canvas.
    """
    masked = canvas == mask_token_id  # [B, T]
    confidence, choice = logits.softmax(-1).max(-1)  # [B, T], [B, T]
    confidence = confidence.masked_fill(~masked, -1.0)
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        k = min(n_commit, int(masked[row].sum()))
        if k == 0:
            continue
        # a stable sort keeps the earlier of two equal confidences first
        order = torch.sort(confidence[row], descending=True, stable=True).indices[:k]
        out[row, order] = choice[row, order]
    return out

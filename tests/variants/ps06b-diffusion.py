"""Known-wrong and alternative-correct implementations of ps06b-diffusion: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # diffusion_mask ----------------------------------------------------------------------------
    # maskable ignored: [CLS], [SEP], padding and the prompt are masked like the text.
    "mask_ignores_maskable": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)
    masked = torch.rand(B, T, generator=generator) < t[:, None]
    return input_ids.masked_fill(masked, mask_token_id), masked, t
""",
    },
    # One ratio drawn for the whole batch (returned once per row).
    "mask_one_ratio_for_the_batch": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    ratio = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(1, generator=generator)
    masked = (torch.rand(B, T, generator=generator) < ratio) & maskable
    return input_ids.masked_fill(masked, mask_token_id), masked, ratio.expand(B).clone()
""",
    },
    # A ratio per position, not per row: every row ends up masked at about 50%; its "t" is the mean.
    "mask_ratio_per_position": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    ratio = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(input_ids.shape, generator=generator)
    masked = (torch.rand(input_ids.shape, generator=generator) < ratio) & maskable
    return input_ids.masked_fill(masked, mask_token_id), masked, ratio.mean(dim=1)
""",
    },
    # t ~ U(0, 1): no floor, so 1/t can be huge.
    "mask_no_min_ratio": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = torch.rand(B, generator=generator)
    masked = (torch.rand(B, T, generator=generator) < t[:, None]) & maskable
    return input_ids.masked_fill(masked, mask_token_id), masked, t
""",
    },
    # Writes [MASK] into input_ids itself.
    "mask_in_place": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)
    masked = (torch.rand(B, T, generator=generator) < t[:, None]) & maskable
    input_ids[masked] = mask_token_id
    return input_ids, masked, t
""",
    },
    # Exactly round(t * n) masks per row (Google's BERT-style fixed count), not each position independently.
    "mask_fixed_count_per_row": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)
    masked = torch.zeros(B, T, dtype=torch.bool)
    for b in range(B):
        candidates = maskable[b].nonzero().flatten()
        k = int(round(float(t[b]) * len(candidates)))
        masked[b, candidates[torch.randperm(len(candidates), generator=generator)[:k]]] = True
    return input_ids.masked_fill(masked, mask_token_id), masked, t
""",
    },
    # The positions are drawn from torch's global random state, not from `generator`.
    "mask_ignores_generator": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)
    masked = (torch.rand(B, T) < t[:, None]) & maskable
    return input_ids.masked_fill(masked, mask_token_id), masked, t
""",
    },
    # Masks with probability 1 - t (t read as the share kept).
    "mask_with_one_minus_t": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    t = MIN_RATIO + (1 - MIN_RATIO) * torch.rand(B, generator=generator)
    masked = (torch.rand(B, T, generator=generator) < 1 - t[:, None]) & maskable
    return input_ids.masked_fill(masked, mask_token_id), masked, t
""",
    },
    # diffusion_loss ----------------------------------------------------------------------------
    # No 1/t weight: BERT's masked cross-entropy, summed and divided by the maskable positions.
    "loss_no_one_over_t": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    ce = F.cross_entropy(logits[masked], targets[masked], reduction="none")
    return ce.sum() / maskable.sum()
""",
    },
    # Weighted by t instead of 1/t.
    "loss_weight_t": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    ce = F.cross_entropy(logits[masked], targets[masked], reduction="none")
    weight = t[:, None].expand_as(masked)[masked]
    return (ce * weight).sum() / maskable.sum()
""",
    },
    # Divided by the number of masked positions (a mean over the masked, which undoes the weights).
    "loss_divide_by_masked": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    ce = F.cross_entropy(logits[masked], targets[masked], reduction="none")
    weight = (1.0 / t)[:, None].expand_as(masked)[masked]
    return (ce * weight).sum() / masked.sum().clamp(min=1)
""",
    },
    # Divided by B * T (LLaDA's normalisation, whose batches have no padding or prompt).
    "loss_divide_by_all_positions": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    ce = F.cross_entropy(logits[masked], targets[masked], reduction="none")
    weight = (1.0 / t)[:, None].expand_as(masked)[masked]
    return (ce * weight).sum() / masked.numel()
""",
    },
    # Each row normalised by its own maskable positions, then the rows averaged.
    "loss_mean_of_row_means": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    B, T, V = logits.shape
    ce = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none").reshape(B, T)
    rows = (ce * masked).sum(dim=1) / t / maskable.sum(dim=1).clamp(min=1)
    return rows.mean()
""",
    },
    # The cross-entropy over every maskable position, masked or not.
    "loss_counts_unmasked_positions": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    ce = F.cross_entropy(logits[maskable], targets[maskable], reduction="none")
    weight = (1.0 / t)[:, None].expand_as(maskable)[maskable]
    return (ce * weight).sum() / maskable.sum()
""",
    },
    # log(softmax(...)): -inf where a probability underflows (a confident model).
    "loss_log_of_softmax": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    p = logits.softmax(-1).gather(-1, targets[..., None])[..., 0]
    ce = -torch.log(p)
    return (ce * masked / t[:, None]).sum() / maskable.sum()
""",
    },
    # The right number, but detached from the logits: nothing to train.
    "loss_detached": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    total = 0.0
    for b, i in masked.nonzero().tolist():
        total += F.cross_entropy(logits[b, i][None], targets[b, i][None]).item() / t[b].item()
    return torch.tensor(total / maskable.sum().item())
""",
    },
    # cosine_tokens_per_step --------------------------------------------------------------------
    # The page's even schedule copied: as many positions early as late.
    "cosine_even_schedule": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    return [n_masked // steps + (i < n_masked % steps) for i in range(steps)]
""",
    },
    # sin for cos: the schedule reversed, most positions committed early, few late.
    "cosine_most_first": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [math.floor(n_masked * (1 - math.sin(math.pi * k / (2 * steps)))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # The paper's ceiling for the floor (the last step set to 0 by hand).
    "cosine_ceil": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [math.ceil(n_masked * math.cos(math.pi * k / (2 * steps))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # round() for the floor.
    "cosine_round": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [round(n_masked * math.cos(math.pi * k / (2 * steps))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # Each step's share of the curve rounded down on its own, the remainder to the last step.
    "cosine_remainder_to_last": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    gamma = [math.cos(math.pi * k / (2 * steps)) for k in range(steps + 1)]
    plan = [math.floor(n_masked * (gamma[k - 1] - gamma[k])) for k in range(1, steps)]
    return plan + [n_masked - sum(plan)]
""",
    },
    # Off by one step (the paper's t/T read with t = 0 ... T - 1): the first step commits nothing.
    "cosine_one_step_late": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [n_masked] + [math.floor(n_masked * math.cos(math.pi * t / (2 * steps))) for t in range(steps)]
    still[-1] = 0
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # google-research/maskgit's clamps: every step but the last keeps at least one mask and commits at least one.
    "cosine_reference_clamps": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [n_masked]
    for k in range(1, steps):
        masked = math.floor(n_masked * math.cos(math.pi * k / (2 * steps)))
        still.append(max(1, min(still[-1] - 1, masked)) if n_masked else 0)
    still.append(0)
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # One position per step when the steps suffice (a decoder's pace), the cosine otherwise.
    "cosine_one_per_step_when_k_ge_n": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    if steps >= n_masked:
        return [1] * n_masked + [0] * (steps - n_masked)
    still = [math.floor(n_masked * math.cos(math.pi * k / (2 * steps))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # Nothing masked: an empty plan, not K zeros.
    "cosine_empty_when_nothing_masked": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    if n_masked == 0:
        return []
    still = [math.floor(n_masked * math.cos(math.pi * k / (2 * steps))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # No check of steps: 0 steps divides by zero, negative steps return [].
    "cosine_no_value_error": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    still = [math.floor(n_masked * math.cos(math.pi * k / (2 * steps))) for k in range(steps)] + [0]
    return [still[k - 1] - still[k] for k in range(1, steps + 1)]
""",
    },
    # unmask_step -------------------------------------------------------------------------------
    # The most confident positions of the whole row, committed ones included: written tokens change.
    "step_all_positions": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    confidence, choice = logits.softmax(-1).max(-1)
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        k = min(n_commit, int((canvas[row] == mask_token_id).sum()))
        if k:
            order = torch.sort(confidence[row], descending=True, stable=True).indices[:k]
            out[row, order] = choice[row, order]
    return out
""",
    },
    # The least confident masked positions.
    "step_least_confident": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, 2.0)
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        k = min(n_commit, int(masked[row].sum()))
        if k:
            order = torch.sort(confidence[row], stable=True).indices[:k]
            out[row, order] = choice[row, order]
    return out
""",
    },
    # n_commit positions even when fewer are masked: the rest are taken from the written positions.
    "step_always_n_commit": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, -1.0)
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        if masked[row].any():
            order = torch.sort(confidence[row], descending=True, stable=True).indices[:n_commit]
            out[row, order] = choice[row, order]
    return out
""",
    },
    # Ties go to the later position (an ascending sort, reversed).
    "step_ties_to_later": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    probs = logits.softmax(-1)
    out = canvas.clone()
    for b in range(canvas.shape[0]):
        masked = [i for i in range(canvas.shape[1]) if canvas[b, i] == mask_token_id]
        ranked = sorted(masked, key=lambda i: float(probs[b, i].max()))[::-1]
        for i in ranked[:n_commit]:
            out[b, i] = probs[b, i].argmax()
    return out
""",
    },
    # The confidence is the largest raw logit, not the largest probability.
    "step_largest_logit": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    score, choice = logits.max(-1)
    score = score.masked_fill(~masked, float("-inf"))
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        k = min(n_commit, int(masked[row].sum()))
        if k:
            order = torch.sort(score[row], descending=True, stable=True).indices[:k]
            out[row, order] = choice[row, order]
    return out
""",
    },
    # n_commit for the whole batch: the most confident masked positions over all rows together.
    "step_n_commit_over_the_batch": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, -1.0).flatten()
    k = min(n_commit, int(masked.sum()))
    chosen = torch.sort(confidence, descending=True, stable=True).indices[:k]
    out = canvas.clone().flatten()
    out[chosen] = choice.flatten()[chosen]
    return out.reshape(canvas.shape)
""",
    },
    # Writes into the canvas itself.
    "step_in_place": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, -1.0)
    for row in range(canvas.shape[0]):
        k = min(n_commit, int(masked[row].sum()))
        if k:
            order = torch.sort(confidence[row], descending=True, stable=True).indices[:k]
            canvas[row, order] = choice[row, order]
    return canvas
""",
    },
    # How many to commit is worked out from the first row's masks, for every row.
    "step_count_from_first_row": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, -1.0)
    k = min(n_commit, int(masked[0].sum()))
    out = canvas.clone()
    for row in range(canvas.shape[0]):
        if k:
            order = torch.sort(confidence[row], descending=True, stable=True).indices[:k]
            out[row, order] = choice[row, order]
    return out
""",
    },
    # The prediction, a wrong letter (the weight t instead of 1/t): right in form, wrong in answer.
    "predict_wrong_letter": {
        "impl_predict_loss_weight": """
PREDICT_LOSS_WEIGHT = "b"
""",
    },
}

# The core mistake of each function, and the words its visible test's message must say.
CORE = {
    "mask_ignores_maskable": "not maskable",
    "loss_no_one_over_t": "1/t",
    "cosine_even_schedule": "few positions early, many late",
    "step_all_positions": "masked positions only",
}

CORRECT = {
    # The positions' uniform numbers drawn first, the ratios after (another draw order), with uniform_.
    "mask_positions_drawn_first": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    t = torch.empty(input_ids.shape[0]).uniform_(MIN_RATIO, 1.0, generator=generator)
    masked = maskable & (u < t[:, None])
    noisy = input_ids.clone()
    noisy[masked] = mask_token_id
    return noisy, masked, t
""",
    },
    # One row at a time, Bernoulli draws over the maskable positions only.
    "mask_row_by_row_bernoulli": {
        "impl_diffusion_mask": """
def diffusion_mask(input_ids, maskable, mask_token_id, generator=None):
    B, T = input_ids.shape
    noisy, masked, t = input_ids.clone(), torch.zeros(B, T, dtype=torch.bool), torch.empty(B)
    for b in range(B):
        t[b] = MIN_RATIO + (1 - MIN_RATIO) * torch.rand((), generator=generator)
        where = maskable[b].nonzero().flatten()
        hit = torch.bernoulli(torch.full((len(where),), float(t[b])), generator=generator).bool()
        masked[b, where[hit]] = True
    noisy[masked] = mask_token_id
    return noisy, masked, t
""",
    },
    # The cross-entropy written out with a one-hot matrix and log_softmax.
    "loss_one_hot": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    one_hot = F.one_hot(targets, logits.shape[-1]).to(logits.dtype)
    nll = -(one_hot * logits.log_softmax(-1)).sum(-1)
    return (nll * masked.to(logits.dtype) / t[:, None]).sum() / maskable.sum()
""",
    },
    # Row by row, log_softmax and gather.
    "loss_row_by_row": {
        "impl_diffusion_loss": """
def diffusion_loss(logits, targets, masked, t, maskable):
    total = logits.sum() * 0.0
    for b in range(logits.shape[0]):
        log_p = logits[b][masked[b]].log_softmax(-1)
        nll = -log_p.gather(1, targets[b][masked[b]][:, None]).sum()
        total = total + nll / t[b]
    return total / maskable.sum()
""",
    },
    # numpy over every step at once; the masks left after the last step set to 0.
    "cosine_numpy": {
        "impl_cosine_tokens_per_step": """
import numpy as np


def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError(f"steps = {steps}")
    still = np.floor(n_masked * np.cos(np.pi / 2 * np.arange(steps + 1) / steps)).astype(int)
    still[-1] = 0
    return (-np.diff(still)).tolist()
""",
    },
    # The committed count by step k, ceil(N (1 - cos)), in a loop; each step the difference.
    "cosine_committed_so_far": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("no steps")
    plan, done = [], 0
    for k in range(1, steps + 1):
        by_now = n_masked if k == steps else math.ceil(n_masked * (1 - math.cos(math.pi * k / (2 * steps))))
        plan.append(by_now - done)
        done = by_now
    return plan
""",
    },
    # cos(pi k / 2K) written as sin(pi (K - k) / 2K), int() for the floor (the counts are not negative).
    "cosine_as_sine_int": {
        "impl_cosine_tokens_per_step": """
def cosine_tokens_per_step(n_masked, steps):
    if steps < 1:
        raise ValueError("steps must be at least 1")
    still = [int(n_masked * math.sin(math.pi * (steps - k) / (2 * steps))) for k in range(steps + 1)]
    return [a - b for a, b in zip(still, still[1:])]
""",
    },
    # Vectorised: a stable sort of every row, then each position's rank against the row's count.
    "step_vectorised_ranks": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    masked = canvas == mask_token_id
    confidence, choice = logits.softmax(-1).max(-1)
    confidence = confidence.masked_fill(~masked, -1.0)
    order = torch.sort(confidence, dim=-1, descending=True, stable=True).indices
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(canvas.shape[1]).expand_as(order).contiguous())
    k = masked.sum(-1, keepdim=True).clamp(max=n_commit)
    commit = masked & (rank < k)
    return torch.where(commit, choice, canvas)
""",
    },
    # Plain Python: sort each row's masked positions by (-confidence, position), log-probabilities.
    "step_python_log_softmax": {
        "impl_unmask_step": """
def unmask_step(canvas, logits, n_commit, mask_token_id):
    log_p = logits.log_softmax(-1)
    out = canvas.clone()
    for b in range(canvas.shape[0]):
        masked = [i for i in range(canvas.shape[1]) if int(canvas[b, i]) == mask_token_id]
        ranked = sorted(masked, key=lambda i: (-float(log_p[b, i].max()), i))
        for i in ranked[:n_commit]:
            out[b, i] = int(log_p[b, i].argmax())
    return out
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_loss_weight": """
PREDICT_LOSS_WEIGHT = " A "
""",
    },
}

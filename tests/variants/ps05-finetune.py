"""Known-wrong and alternative-correct implementations of ps05-finetune: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # The word's label on every one of its pieces.
    "align_every_piece": {
        "impl_align_labels_with_tokens": """
def align_labels_with_tokens(word_labels, word_ids):
    return [-100 if w is None else word_labels[w] for w in word_ids]
""",
    },
    # Backwards: -100 on the first piece, the label on the later ones.
    "align_label_on_later_pieces": {
        "impl_align_labels_with_tokens": """
def align_labels_with_tokens(word_labels, word_ids):
    out, prev = [], None
    for w in word_ids:
        out.append(-100 if w is None or w != prev else word_labels[w])
        prev = w
    return out
""",
    },
    # Special tokens get label 0 ("O") instead of -100.
    "align_specials_labelled": {
        "impl_align_labels_with_tokens": """
def align_labels_with_tokens(word_labels, word_ids):
    out, prev = [], None
    for w in word_ids:
        if w is None:
            out.append(0)
        else:
            out.append(word_labels[w] if w != prev else -100)
        prev = w
    return out
""",
    },
    # Treats label 0 ("O") as "no label": the model never learns the O class.
    "align_o_ignored": {
        "impl_align_labels_with_tokens": """
def align_labels_with_tokens(word_labels, word_ids):
    out, prev = [], None
    for w in word_ids:
        out.append(-100 if w is None or w == prev else (word_labels[w] or -100))
        prev = w
    return out
""",
    },
    # Each window starts window - stride - 1 after the previous: one token too many shared.
    "window_overlap_one_too_many": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    if not 0 <= stride < window:
        raise ValueError("need 0 <= stride < window")
    spans, start = [], 0
    while True:
        end = min(start + window, n_tokens)
        spans.append((start, end))
        if end == n_tokens:
            return spans
        start += max(1, window - stride - 1)
""",
    },
    # One token too few shared.
    "window_overlap_one_too_few": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    if not 0 <= stride < window:
        raise ValueError("need 0 <= stride < window")
    spans, start = [], 0
    while True:
        end = min(start + window, n_tokens)
        spans.append((start, end))
        if end == n_tokens:
            return spans
        start += window - stride + 1
""",
    },
    # Only full windows: the tail of the document is never read.
    "window_last_dropped": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    if not 0 <= stride < window:
        raise ValueError("need 0 <= stride < window")
    step = window - stride
    spans = [(a, a + window) for a in range(0, max(1, n_tokens - window + 1), step)]
    return [(a, min(b, n_tokens)) for a, b in spans]
""",
    },
    # The last window's end is not clipped to the sequence.
    "window_end_not_clipped": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    if not 0 <= stride < window:
        raise ValueError("need 0 <= stride < window")
    spans, start = [], 0
    while True:
        spans.append((start, start + window))
        if start + window >= n_tokens:
            return spans
        start += window - stride
""",
    },
    # No check of the arguments: stride >= window loops or goes backwards instead of failing.
    "window_no_value_error": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    spans, start = [], 0
    while True:
        end = min(start + window, n_tokens)
        spans.append((start, end))
        if end == n_tokens or len(spans) > n_tokens:
            return spans
        start += max(1, window - stride)
""",
    },
    # Warmup divides by W + 1: the multiplier never reaches 1.
    "warmup_never_reaches_one": {
        "impl_linear_warmup_decay": """
def linear_warmup_decay(step, warmup_steps, total_steps):
    if step <= warmup_steps:
        return step / (warmup_steps + 1)
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
""",
    },
    # Decays towards N + 1: still above 0 at the last step.
    "decay_never_reaches_zero": {
        "impl_linear_warmup_decay": """
def linear_warmup_decay(step, warmup_steps, total_steps):
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    return max(0.0, (total_steps + 1 - step) / max(1, total_steps + 1 - warmup_steps))
""",
    },
    # No clamp: the multiplier goes negative after total_steps (the model climbs the loss).
    "decay_goes_negative": {
        "impl_linear_warmup_decay": """
def linear_warmup_decay(step, warmup_steps, total_steps):
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    return (total_steps - step) / max(1, total_steps - warmup_steps)
""",
    },
    # No zero_grad: gradients accumulate across steps.
    "train_gradients_accumulate": {
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()
""",
    },
    # The scheduler steps before the optimizer: every update uses the next step's rate.
    "train_scheduler_first": {
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    scheduler.step()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()
""",
    },
    # Never switches to train mode: dropout stays off if the model was in eval mode.
    "train_eval_mode": {
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return loss.item()
""",
    },
    # Returns the loss of the updated model (a second forward pass), not the loss it trained on.
    "train_loss_after_update": {
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    model(**batch).loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    with torch.no_grad():
        return model(**batch).loss.item()
""",
    },
    # No max(1, W): with no warmup (W = 0) the first step divides by zero.
    "warmup_zero_division": {
        "impl_linear_warmup_decay": """
def linear_warmup_decay(step, warmup_steps, total_steps):
    if step <= warmup_steps:
        return step / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
""",
    },
    # Clips after the update: the step used the unclipped gradients.
    "train_clip_after_step": {
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    scheduler.step()
    optimizer.zero_grad()
    return loss.item()
""",
    },
    # No argument check: a window that does not advance (stride >= window) loops for ever (found by review).
    "window_loops_for_ever": {
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    spans, start = [], 0
    while True:
        spans.append((start, min(start + window, n_tokens)))
        if start + window >= n_tokens:
            return spans
        start += window - stride
""",
    },
    # Pops the labels out of the caller's batch to compute the loss itself (found by review).
    "train_pops_labels_from_batch": {
        "impl_train_step": """
import torch.nn.functional as F

def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    labels = batch.pop("labels")
    logits = model(**batch).logits
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return loss.item()
""",
    },
    # The prediction, a wrong letter (0.45, a decay over all N steps): right in form, wrong in answer.
    "predict_wrong_letter": {
        "impl_predict_warmup": """
PREDICT_WARMUP = "a"
""",
    },
}

#: The core conceptual mistake of each function -> words its visible-test failure must contain.
CORE = {
    "align_every_piece": "first piece",
    "window_overlap_one_too_many": "share exactly",
    "warmup_never_reaches_one": "warmup",
    "train_gradients_accumulate": "accumulate",
}

CORRECT = {
    # A set of words already labelled; windows from range(); the schedule with min/max;
    # gradients set to zero tensors and clipping by hand.
    "seen_set_range_manual_clip": {
        "impl_align_labels_with_tokens": """
def align_labels_with_tokens(word_labels, word_ids):
    seen = set()
    labels = []
    for w in word_ids:
        if w is not None and w not in seen:
            seen.add(w)
            labels.append(int(word_labels[w]))
        else:
            labels.append(-100)
    return labels
""",
        "impl_window_spans": """
def window_spans(n_tokens, window, stride):
    if stride < 0 or stride >= window:
        raise ValueError("stride must be in [0, window)")
    step = window - stride
    n_windows = 1 if n_tokens <= window else 1 + -(-(n_tokens - window) // step)
    return [(k * step, min(k * step + window, n_tokens)) for k in range(n_windows)]
""",
        "impl_linear_warmup_decay": """
def linear_warmup_decay(step, warmup_steps, total_steps):
    if warmup_steps > 0 and step < warmup_steps:
        return step / warmup_steps
    return float(min(1.0, max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))))
""",
        "impl_train_step": """
def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    model.train()
    output = model(**batch)
    output.loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    factor = torch.clamp(max_grad_norm / (norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(factor)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=False)
    return float(output.loss.detach())
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_warmup": """
PREDICT_WARMUP = " B "
""",
    },
}

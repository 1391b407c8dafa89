"""Known-wrong and alternative-correct implementations of ps04-mlm: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # 10% random "of the rest": bernoulli(0.1) on the 20% not masked gives 2% random, 18% kept.
    "random_two_percent": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), input_ids.clone()
    prob = torch.full(input_ids.shape, float(mlm_probability))
    prob[special_tokens_mask.bool()] = 0.0
    selected = torch.bernoulli(prob, generator=generator).bool()
    labels[~selected] = -100
    to_mask = torch.bernoulli(torch.full(input_ids.shape, 0.8), generator=generator).bool() & selected
    inputs[to_mask] = mask_token_id
    to_random = torch.bernoulli(torch.full(input_ids.shape, 0.1), generator=generator).bool() & selected & ~to_mask
    inputs[to_random] = torch.randint(vocab_size, input_ids.shape, generator=generator)[to_random]
    return inputs, labels
""",
    },
    # CORE: ignores special_tokens_mask: [CLS], [SEP] and padding get selected and scored too.
    "selects_special_tokens": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), input_ids.clone()
    selected = torch.rand(input_ids.shape, generator=generator) < mlm_probability
    labels[~selected] = -100
    u = torch.rand(input_ids.shape, generator=generator)
    inputs[selected & (u < 0.8)] = mask_token_id
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = torch.randint(vocab_size, input_ids.shape, generator=generator)[to_random]
    return inputs, labels
""",
    },
    # CORE: labels 0 ([PAD]'s id) instead of -100 at the positions that are not selected.
    "labels_zero_for_unselected": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), input_ids.clone()
    prob = torch.full(input_ids.shape, float(mlm_probability)).masked_fill(special_tokens_mask.bool(), 0.0)
    selected = torch.bernoulli(prob, generator=generator).bool()
    labels[~selected] = 0
    u = torch.rand(input_ids.shape, generator=generator)
    inputs[selected & (u < 0.8)] = mask_token_id
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = torch.randint(vocab_size, input_ids.shape, generator=generator)[to_random]
    return inputs, labels
""",
    },
    # Google's create_pretraining_data.py recipe, not the one asked for: a fixed count,
    # round(p * n), of each row's shuffled candidates. The overall rate is right; the spread
    # of the count per row is not.
    "fixed_count_per_row": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), torch.full_like(input_ids, -100)
    for b in range(input_ids.shape[0]):
        candidates = (special_tokens_mask[b] == 0).nonzero().flatten()
        n = int(round(mlm_probability * len(candidates)))
        chosen = candidates[torch.randperm(len(candidates), generator=generator)[:n]]
        labels[b, chosen] = input_ids[b, chosen]
        u = torch.rand(len(chosen), generator=generator)
        random_ids = torch.randint(vocab_size, (len(chosen),), generator=generator)
        inputs[b, chosen[u < 0.8]] = mask_token_id
        keep = (u >= 0.8) & (u < 0.9)
        inputs[b, chosen[keep]] = random_ids[keep]
    return inputs, labels
""",
    },
    # Draws from torch's global random state: a seeded generator does not reproduce the masking.
    "global_rng": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), input_ids.clone()
    selected = (torch.rand(input_ids.shape) < mlm_probability) & (special_tokens_mask == 0)
    labels[~selected] = -100
    u = torch.rand(input_ids.shape)
    inputs[selected & (u < 0.8)] = mask_token_id
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = torch.randint(vocab_size, input_ids.shape)[to_random]
    return inputs, labels
""",
    },
    # CORE: unscored positions count as zero loss and the mean runs over every position.
    "loss_mean_over_all_positions": {
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    V = logits.shape[-1]
    per_position = F.cross_entropy(logits.reshape(-1, V), labels.clamp(min=0).reshape(-1), reduction="none")
    return (per_position * (labels.reshape(-1) != -100)).mean()
""",
    },
    # The mean of each sequence's mean: right when every row has as many scored positions.
    "loss_mean_of_row_means": {
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    per_row = []
    for b in range(labels.shape[0]):
        scored = labels[b] != -100
        per_row.append(F.cross_entropy(logits[b][scored], labels[b][scored]))
    return torch.stack(per_row).mean()
""",
    },
    # Only the first [MASK] of a text is filled.
    "fill_first_mask_only": {
        "impl_fill_mask": """
def fill_mask(model, tokenizer, text, k=5):
    enc = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0]
    t = (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0]
    top = logits[t].softmax(-1).topk(k)
    return [[(tokenizer.decode([int(i)]), float(p)) for p, i in zip(top.values, top.indices)]]
""",
    },
    # CORE: softmax over the k best logits only: the probabilities are renormalised to sum to 1.
    "fill_renormalised_top_k": {
        "impl_fill_mask": """
def fill_mask(model, tokenizer, text, k=5):
    enc = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0]
    out = []
    for t in (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[:, 0]:
        top = logits[t].topk(k)
        probs = top.values.softmax(-1)
        out.append([(tokenizer.decode([int(i)]), float(p)) for p, i in zip(probs, top.indices)])
    return out
""",
    },
    # generator=None: a fresh torch.Generator() (a fixed default seed), not torch's global random state.
    "mask_fresh_generator_when_none": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id: int, vocab_size: int,
                mlm_probability=0.15, generator=None):
    if generator is None:
        generator = torch.Generator()
    inputs, labels = input_ids.clone(), input_ids.clone()
    prob = torch.full(input_ids.shape, float(mlm_probability)).masked_fill(special_tokens_mask.bool(), 0.0)
    sel = torch.bernoulli(prob, generator=generator).bool()
    labels[~sel] = -100
    u = torch.rand(input_ids.shape, generator=generator)
    inputs[sel & (u < 0.8)] = mask_token_id
    r = sel & (u >= 0.8) & (u < 0.9)
    inputs[r] = torch.randint(vocab_size, input_ids.shape, generator=generator)[r]
    return inputs, labels
""",
    },
    # Writes 0 over the caller's -100 labels in place (the value is right, the labels are spoiled).
    "loss_overwrites_labels": {
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    keep = labels != -100
    labels[~keep] = 0
    lp = logits.log_softmax(-1).gather(-1, labels[..., None])[..., 0]
    return -(lp * keep).sum() / keep.sum()
""",
    },
    # Predicts 'a': 15%, the share selected, taken for the share that shows [MASK].
    # The visible test (a letter) passes; the hidden one fails.
    "prediction_tempting_wrong": {"impl_predict_mask_share": 'PREDICT_MASK_SHARE = "a"\n'},
    # Writes the measured number instead of a letter: the visible test names the form.
    "prediction_not_a_letter": {
        "impl_predict_mask_share": 'PREDICT_MASK_SHARE = "the measured number"\n'
    },
}

CORE = {
    "selects_special_tokens": "special tokens are never selected",
    "labels_zero_for_unselected": "the value the loss ignores",
    "loss_mean_over_all_positions": "-100 labels are not scored",
    "fill_renormalised_top_k": "whole vocabulary",
    "prediction_not_a_letter": "one letter",
}

CORRECT = {
    # Uniform numbers compared with thresholds; loops over the masks; log-softmax by hand.
    "rand_thresholds_and_loops": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs = input_ids.clone()
    labels = torch.full_like(input_ids, -100)
    selected = (torch.rand(input_ids.shape, generator=generator) < mlm_probability) & (special_tokens_mask == 0)
    labels[selected] = input_ids[selected]
    u = torch.rand(input_ids.shape, generator=generator)
    random_ids = torch.randint(0, vocab_size, input_ids.shape, generator=generator)
    inputs = torch.where(selected & (u < 0.8), torch.full_like(inputs, mask_token_id), inputs)
    inputs = torch.where(selected & (u >= 0.8) & (u < 0.9), random_ids, inputs)
    return inputs, labels
""",
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    total, count = 0.0, 0
    log_probs = torch.log_softmax(logits, dim=-1)
    for b in range(labels.shape[0]):
        for t in range(labels.shape[1]):
            if labels[b, t] != -100:
                total = total - log_probs[b, t, labels[b, t]]
                count += 1
    return total / count
""",
        "impl_fill_mask": """
def fill_mask(model, tokenizer, text, k=5):
    enc = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits
    results = []
    for t, token_id in enumerate(enc["input_ids"][0].tolist()):
        if token_id == tokenizer.mask_token_id:
            probs = torch.softmax(logits[0, t].double(), dim=0)
            order = torch.argsort(probs, descending=True)[:k]
            results.append([(tokenizer.decode([int(i)]), probs[i].item()) for i in order])
    return results
""",
    },
    # One multinomial draw per selected position picks [MASK] / random / keep.
    "multinomial_and_library_loss": {
        "impl_mask_tokens": """
def mask_tokens(input_ids, special_tokens_mask, mask_token_id, vocab_size, mlm_probability=0.15, generator=None):
    inputs, labels = input_ids.clone(), input_ids.clone()
    p = torch.full(input_ids.shape, float(mlm_probability)) * (1 - special_tokens_mask.long())
    selected = torch.bernoulli(p, generator=generator).bool()
    labels[~selected] = -100
    n = int(selected.sum())
    if n:
        choice = torch.multinomial(torch.tensor([0.8, 0.1, 0.1]), n, replacement=True, generator=generator)
        new = inputs[selected]
        new[choice == 0] = mask_token_id
        new[choice == 1] = torch.randint(vocab_size, (int((choice == 1).sum()),), generator=generator)
        inputs[selected] = new
    return inputs, labels
""",
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
""",
    },
    # Log-softmax in float64: returns a float64 0-dim tensor with the right value.
    "loss_in_float64": {
        "impl_mlm_loss": """
def mlm_loss(logits, labels):
    keep = labels != -100
    lp = torch.log_softmax(logits[keep].double(), dim=-1)   # double precision for a stable mean
    return -lp[torch.arange(lp.shape[0]), labels[keep]].mean()
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_mask_share": 'PREDICT_MASK_SHARE = "b"  # measured, and it holds\n'
    },
}

"""Known-wrong and alternative-correct implementations of ps06-generation: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # fill_in_blocks ----------------------------------------------------------------------------
    # One forward pass per blank, block or not: each blank of a block sees the ones filled before it.
    "blocks_one_blank_per_pass": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for start in range(first, first + n_tokens, block_size):
            for position in range(start, min(start + block_size, first + n_tokens)):
                ids[position] = model(input_ids=ids[None]).logits[0, position].argmax()
    return ids[first:first + n_tokens].tolist()
""",
    },
    # Every blank from one forward pass: block_size ignored.
    "blocks_all_in_one_pass": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        logits = model(input_ids=ids[None]).logits[0]
    ids[first:first + n_tokens] = logits[first:first + n_tokens].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # The blocks cut from the left, but the rightmost filled first.
    "blocks_rightmost_first": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for start in reversed(range(first, first + n_tokens, block_size)):
            block = slice(start, min(start + block_size, first + n_tokens))
            ids[block] = model(input_ids=ids[None]).logits[0, block].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # The shorter last block cut at the front: blocks 1 | 2 3 | 4 5 instead of 1 2 | 3 4 | 5.
    "blocks_remainder_first": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    end = first + n_tokens
    bounds = list(range(end, first, -block_size))[::-1]
    with torch.no_grad():
        for lo, hi in zip([first] + bounds[:-1], bounds):
            ids[lo:hi] = model(input_ids=ids[None]).logits[0, lo:hi].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # n // b + 1 passes: right when b does not divide n, one pass too many (filling nothing) when it does.
    "blocks_extra_pass_when_divisible": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for k in range(n_tokens // block_size + 1):
            lo = first + k * block_size
            hi = min(lo + block_size, first + n_tokens)
            ids[lo:hi] = model(input_ids=ids[None]).logits[0, lo:hi].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # n // b passes: the blanks of a shorter last block are never filled.
    "blocks_floor_drops_remainder": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for k in range(n_tokens // block_size):
            lo = first + k * block_size
            ids[lo:lo + block_size] = model(input_ids=ids[None]).logits[0, lo:lo + block_size].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # The later blocks are not laid out: each pass appends the next block's blanks before [SEP].
    "blocks_appended_block_by_block": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first, written = len(ids) - 1, []
    while len(written) < n_tokens:
        size = min(block_size, n_tokens - len(written))
        x = torch.tensor(ids[:-1] + written + [tokenizer.mask_token_id] * size + ids[-1:])
        with torch.no_grad():
            logits = model(input_ids=x[None]).logits[0]
        lo = first + len(written)
        written += logits[lo:lo + size].argmax(-1).tolist()
    return written
""",
    },
    # The blanks laid out after [SEP], at the end of the sequence.
    "blocks_after_sep": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids)
    ids = torch.tensor(ids + [tokenizer.mask_token_id] * n_tokens)
    with torch.no_grad():
        for start in range(first, first + n_tokens, block_size):
            block = slice(start, min(start + block_size, first + n_tokens))
            ids[block] = model(input_ids=ids[None]).logits[0, block].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # Special tokens excluded from the argmax at each blank.
    "blocks_exclude_special_tokens": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for start in range(first, first + n_tokens, block_size):
            block = slice(start, min(start + block_size, first + n_tokens))
            logits = model(input_ids=ids[None]).logits[0, block]
            logits[:, tokenizer.all_special_ids] = float("-inf")
            ids[block] = logits.argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # Each pass writes its block and rewrites every block before it from the same logits.
    "blocks_rewrite_earlier_blocks": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    ids = tokenizer(prompt)["input_ids"]
    first = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    with torch.no_grad():
        for start in range(first, first + n_tokens, block_size):
            done = slice(first, min(start + block_size, first + n_tokens))
            ids[done] = model(input_ids=ids[None]).logits[0, done].argmax(-1)
    return ids[first:first + n_tokens].tolist()
""",
    },
    # gibbs_step ----------------------------------------------------------------------------------
    # The position is not re-masked: the model sees the very token it is asked to resample.
    "gibbs_no_mask": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position] / temperature
    scores[tokenizer.all_special_ids] = float("-inf")
    values, candidates = scores.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1, generator=generator)[0]]
    return ids
""",
    },
    # The temperature is ignored.
    "gibbs_no_temperature": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position]
    scores[tokenizer.all_special_ids] = float("-inf")
    values, candidates = scores.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1, generator=generator)[0]]
    return ids
""",
    },
    # Samples in proportion to the (shifted) logits themselves: no softmax.
    "gibbs_no_softmax": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position] / temperature
    scores[tokenizer.all_special_ids] = float("-inf")
    values, candidates = scores.topk(top_k)
    weights = values - values.min() + 1e-3
    ids[position] = candidates[torch.multinomial(weights, 1, generator=generator)[0]]
    return ids
""",
    },
    # The top-k threshold is taken over the positions (dim 0 of [T, V]) instead of the vocabulary.
    "gibbs_top_k_wrong_axis": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0] / temperature
    scores[:, tokenizer.all_special_ids] = float("-inf")
    k = min(top_k, scores.shape[0])
    kth = scores.topk(k, dim=0).values[-1]
    row = scores[position].masked_fill(scores[position] < kth, float("-inf"))
    ids[position] = torch.multinomial(row.softmax(-1), 1, generator=generator)[0]
    return ids
""",
    },
    # Writes into input_ids itself (and returns it).
    "gibbs_in_place": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position] / temperature
    scores[tokenizer.all_special_ids] = float("-inf")
    values, candidates = scores.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1, generator=generator)[0]]
    return ids
""",
    },
    # Special tokens are not excluded: [SEP], [CLS] or [MASK] can be drawn.
    "gibbs_samples_special_tokens": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position] / temperature
    values, candidates = scores.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1, generator=generator)[0]]
    return ids
""",
    },
    # mask_predict --------------------------------------------------------------------------------
    # Re-masks the MOST confident tokens.
    "mask_predict_remasks_most_confident": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    confidence = torch.zeros(length)
    redo = torch.arange(length)
    for t in range(iterations):
        if t > 0:
            n = length * (iterations - t) // iterations
            if n == 0:
                break
            redo = confidence.topk(n).indices
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0, 1:-1].softmax(-1)
        best, tokens = probs.max(-1)
        ids[1 + redo] = tokens[redo]
        confidence[redo] = best[redo]
    return ids[1:-1].tolist()
""",
    },
    # The same number, N (T - 1) / T, re-masked in every round instead of a shrinking one.
    "mask_predict_fixed_number": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    confidence = torch.zeros(length)
    redo = torch.arange(length)
    n = length * (iterations - 1) // iterations
    for t in range(iterations):
        if t > 0:
            if n == 0:
                break
            redo = confidence.topk(n, largest=False).indices
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0, 1:-1].softmax(-1)
        best, tokens = probs.max(-1)
        ids[1 + redo] = tokens[redo]
        confidence[redo] = best[redo]
    return ids[1:-1].tolist()
""",
    },
    # Every pass updates the tokens and confidences of ALL positions, not only the re-masked ones.
    "mask_predict_updates_every_position": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    confidence = torch.zeros(length)
    for t in range(iterations):
        if t > 0:
            n = length * (iterations - t) // iterations
            if n == 0:
                break
            ids[1 + confidence.topk(n, largest=False).indices] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0, 1:-1].softmax(-1)
        confidence, ids[1:-1] = probs.max(-1)
    return ids[1:-1].tolist()
""",
    },
    # distinct_n ----------------------------------------------------------------------------------
    # distinct-n of each text, averaged over the texts.
    "distinct_per_text_averaged": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    ratios = []
    for text in texts:
        words = text.lower().split()
        grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
        if grams:
            ratios.append(len(set(grams)) / len(grams))
    return sum(ratios) / len(ratios) if ratios else 0.0
""",
    },
    # Not lower-cased: "The" and "the" count as two words.
    "distinct_not_lowercased": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    grams = []
    for text in texts:
        words = text.split()
        grams += [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
""",
    },
    # The texts are joined into one: n-grams span the boundary between two texts.
    "distinct_across_texts": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    words = " ".join(texts).lower().split()
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
""",
    },
    # No n-gram at all divides by zero.
    "distinct_divides_by_zero": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    grams = []
    for text in texts:
        words = text.lower().split()
        grams += [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams)
""",
    },
    # Samples with torch's global generator, not the one it was given (found by review).
    "gibbs_global_generator": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        z = model(input_ids=ids[None]).logits[0, position] / temperature
    z[tokenizer.all_special_ids] = float("-inf")
    values, candidates = z.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1)[0]]
    return ids
""",
    },
    # Ranks confidence by the raw max logit instead of its softmax probability (found by review).
    "mask_predict_logit_confidence": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    conf, redo = torch.zeros(length), torch.arange(length)
    for t in range(iterations):
        if t > 0:
            n = length * (iterations - t) // iterations
            if n == 0:
                break
            redo = conf.topk(n, largest=False).indices
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            z = model(input_ids=ids[None]).logits[0, 1:-1]
        best, tokens = z.max(-1)
        ids[1 + redo], conf[redo] = tokens[redo], best[redo]
    return ids[1:-1].tolist()
""",
    },
    # Splits on single spaces only: a tab or newline glues two words (found by review).
    "distinct_splits_on_spaces_only": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    grams = []
    for text in texts:
        words = [w for w in text.lower().split(" ") if w]
        grams += [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
""",
    },
    # Joins the words of an n-gram with nothing between them: "ab c" and "a bc" collide.
    "distinct_joins_without_separator": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    grams = []
    for text in texts:
        words = text.lower().split()
        grams += ["".join(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
""",
    },
    # "Draw a new token": the token already at the position is excluded from the candidates (found by review).
    "gibbs_excludes_current_token": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        scores = model(input_ids=ids[None]).logits[0, position] / temperature
    scores[tokenizer.all_special_ids] = float("-inf")
    scores[input_ids[position]] = float("-inf")
    values, candidates = scores.topk(top_k)
    ids[position] = candidates[torch.multinomial(values.softmax(-1), 1, generator=generator)[0]]
    return ids
""",
    },
    # Special tokens excluded from the argmax and the confidence (found by review).
    "mask_predict_excludes_special_tokens": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    confidence = torch.zeros(length)
    redo = torch.arange(length)
    for t in range(iterations):
        if t > 0:
            n = length * (iterations - t) // iterations
            if n == 0:
                break
            redo = confidence.topk(n, largest=False).indices
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0, 1:-1].softmax(-1)
        probs[:, tokenizer.all_special_ids] = 0.0
        best, tokens = probs.max(-1)
        ids[1 + redo] = tokens[redo]
        confidence[redo] = best[redo]
    return ids[1:-1].tolist()
""",
    },
    # Re-masks the least confident among the previous round's re-masked positions only (found by review).
    "mask_predict_remasks_within_last_round": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.tensor([tokenizer.cls_token_id] + [tokenizer.mask_token_id] * length + [tokenizer.sep_token_id])
    confidence = torch.zeros(length)
    redo = torch.arange(length)
    for t in range(iterations):
        if t > 0:
            n = length * (iterations - t) // iterations
            if n == 0:
                break
            redo = redo[confidence[redo].topk(n, largest=False).indices]
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0, 1:-1].softmax(-1)
        best, tokens = probs.max(-1)
        ids[1 + redo] = tokens[redo]
        confidence[redo] = best[redo]
    return ids[1:-1].tolist()
""",
    },
    # Returns the int 0, not the float 0.0, when there is no n-gram (found by review).
    "distinct_int_zero": {
        "impl_distinct_n": """
def distinct_n(texts, n):
    grams = []
    for text in texts:
        words = text.lower().split()
        grams += [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0
""",
    },
    # The prediction, a wrong letter (BERT read as a left-to-right reader): right in form, wrong in answer.
    "predict_wrong_letter": {
        "impl_predict_blanks": """
PREDICT_BLANKS = "a"
""",
    },
}

CORE = {
    "blocks_one_blank_per_pass": "share one forward pass",
    "blocks_all_in_one_pass": "one forward pass per block",
    "gibbs_no_mask": "[MASK] before the forward pass",
    "mask_predict_remasks_most_confident": "least confident",
    "distinct_per_text_averaged": "over all texts together",
}

CORRECT = {
    # The blanks' positions split into blocks (torch.split), an attention mask passed, inference_mode.
    "blocks_split_positions": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    enc = tokenizer(prompt)["input_ids"]
    ids = torch.tensor([enc[:-1] + [tokenizer.mask_token_id] * n_tokens + enc[-1:]])
    blanks = torch.arange(len(enc) - 1, len(enc) - 1 + n_tokens)
    for block in blanks.split(block_size):
        with torch.inference_mode():
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
        ids[0, block] = logits[0, block].argmax(dim=-1)
    return [int(t) for t in ids[0, blanks]]
""",
    },
    # Python lists, math.ceil for the passes, the model called positionally, topk(1) for the argmax.
    "blocks_lists_and_ceil": {
        "impl_fill_in_blocks": """
import math


def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    enc = tokenizer(prompt)["input_ids"]
    first = len(enc) - 1
    ids = enc[:-1] + [tokenizer.mask_token_id] * n_tokens + enc[-1:]
    for k in range(math.ceil(n_tokens / block_size)):
        lo, hi = first + k * block_size, first + min((k + 1) * block_size, n_tokens)
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        ids[lo:hi] = logits[lo:hi].topk(1, dim=-1).indices[:, 0].tolist()
    return ids[first:first + n_tokens]
""",
    },
    # A while loop over a count of blanks written, the block's end clipped by min.
    "blocks_while_written": {
        "impl_fill_in_blocks": """
def fill_in_blocks(model, tokenizer, prompt, n_tokens, block_size):
    enc = tokenizer(prompt, return_tensors="pt")["input_ids"][0]
    first = enc.numel() - 1
    mask = torch.full((n_tokens,), tokenizer.mask_token_id)
    ids = torch.cat([enc[:-1], mask, enc[-1:]])
    written = 0
    while written < n_tokens:
        size = min(block_size, n_tokens - written)
        with torch.no_grad():
            logits = model(input_ids=ids.unsqueeze(0)).logits.squeeze(0)
        where = torch.arange(first + written, first + written + size)
        ids[where] = torch.argmax(logits[where], dim=-1)
        written += size
    return ids[first:first + n_tokens].tolist()
""",
    },
    # Samples over the whole vocabulary with everything outside the top k at -inf (another draw path).
    "gibbs_full_vocabulary_multinomial": {
        "impl_gibbs_step": """
def gibbs_step(model, tokenizer, input_ids, position, temperature, top_k, generator):
    ids = input_ids.clone()
    ids[position] = tokenizer.mask_token_id
    with torch.no_grad():
        z = model(input_ids=ids.unsqueeze(0)).logits[0, position].clone()
    z[tokenizer.all_special_ids] = float("-inf")
    z = z / temperature
    kth = torch.topk(z, top_k).values[-1]
    z[z < kth] = float("-inf")
    probs = torch.softmax(z, dim=-1)
    ids[position] = torch.multinomial(probs, 1, generator=generator).item()
    return ids
""",
    },
    # argsort for the least confident; the last iteration with n == 0 still runs (and changes nothing).
    "mask_predict_argsort": {
        "impl_mask_predict": """
def mask_predict(model, tokenizer, length, iterations):
    ids = torch.full((length + 2,), tokenizer.mask_token_id)
    ids[0], ids[-1] = tokenizer.cls_token_id, tokenizer.sep_token_id
    conf = torch.zeros(length)
    for t in range(iterations):
        if t == 0:
            redo = torch.arange(length)
        else:
            redo = torch.argsort(conf)[: length * (iterations - t) // iterations]
            if len(redo) == 0:
                continue
            ids[1 + redo] = tokenizer.mask_token_id
        with torch.no_grad():
            p = torch.softmax(model(input_ids=ids[None]).logits[0], dim=-1)[1:-1]
        conf[redo] = p[redo].max(dim=-1).values
        ids[1 + redo] = p[redo].argmax(dim=-1)
    return [int(t) for t in ids[1:-1]]
""",
    },
    # collections.Counter and zip for the n-grams.
    "distinct_counter_zip": {
        "impl_distinct_n": """
from collections import Counter


def distinct_n(texts, n):
    counts = Counter()
    for text in texts:
        words = text.lower().split()
        counts.update(zip(*[words[i:] for i in range(n)]))
    total = sum(counts.values())
    return float(len(counts) / total) if total else 0.0
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_blanks": """
PREDICT_BLANKS = " B "
""",
    },
}

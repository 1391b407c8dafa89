"""Known-wrong and alternative-correct implementations of ps06-generation: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # fill_left_to_right ------------------------------------------------------------------------
    # All blanks filled from one forward pass: no blank sees the words chosen before it.
    "fill_all_in_one_pass": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    ids = tokenizer(prompt)["input_ids"]
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    start = len(ids) - 1 - n_tokens
    with torch.no_grad():
        logits = model(input_ids=ids[None]).logits[0]
    ids[start:start + n_tokens] = logits[start:start + n_tokens].argmax(-1)
    return tokenizer.decode(ids, skip_special_tokens=True)
""",
    },
    # The most confident blank is filled first (an easy-first order), not the leftmost.
    "fill_most_confident_first": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    ids = tokenizer(prompt)["input_ids"]
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    for _ in range(n_tokens):
        with torch.no_grad():
            probs = model(input_ids=ids[None]).logits[0].softmax(-1)
        best, tokens = probs.max(-1)
        best[ids != tokenizer.mask_token_id] = -1.0
        position = int(best.argmax())
        ids[position] = tokens[position]
    return tokenizer.decode(ids, skip_special_tokens=True)
""",
    },
    # One blank too many: n_tokens + 1 [MASK]s laid out, n_tokens filled, the last left (and dropped by decode).
    "fill_one_blank_too_many": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    ids = tokenizer(prompt)["input_ids"]
    start = len(ids) - 1
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * (n_tokens + 1) + ids[-1:])
    with torch.no_grad():
        for position in range(start, start + n_tokens):
            ids[position] = model(input_ids=ids[None]).logits[0, position].argmax()
    return tokenizer.decode(ids, skip_special_tokens=True)
""",
    },
    # [SEP] dropped: the blanks are appended after the prompt with nothing closing the sentence.
    "fill_drops_sep": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    ids = tokenizer(prompt)["input_ids"][:-1]
    start = len(ids)
    ids = torch.tensor(ids + [tokenizer.mask_token_id] * n_tokens)
    with torch.no_grad():
        for position in range(start, start + n_tokens):
            ids[position] = model(input_ids=ids[None]).logits[0, position].argmax()
    return tokenizer.decode(ids, skip_special_tokens=True)
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
    # Special tokens excluded from the argmax at each blank (found by review).
    "fill_excludes_special_tokens": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    ids = tokenizer(prompt)["input_ids"]
    ids = torch.tensor(ids[:-1] + [tokenizer.mask_token_id] * n_tokens + ids[-1:])
    start = len(ids) - 1 - n_tokens
    with torch.no_grad():
        for position in range(start, start + n_tokens):
            logits = model(input_ids=ids[None]).logits[0, position]
            logits[tokenizer.all_special_ids] = float("-inf")
            ids[position] = logits.argmax()
    return tokenizer.decode(ids, skip_special_tokens=True)
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
    # Decodes without skip_special_tokens=True: a special token that wins a blank stays in the text.
    "fill_decode_keeps_special_tokens": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    enc = tokenizer(prompt)["input_ids"]
    ids = list(enc[:-1]) + [tokenizer.mask_token_id] * n_tokens + [enc[-1]]
    for j in range(n_tokens):
        position = len(ids) - 1 - n_tokens + j
        with torch.inference_mode():
            mask = torch.ones(1, len(ids), dtype=torch.long)
            logits = model(input_ids=torch.tensor([ids]), attention_mask=mask).logits
        ids[position] = int(logits[0, position].argmax())
    return tokenizer.decode(ids[1:-1])
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
    "fill_all_in_one_pass": "one at a time",
    "gibbs_no_mask": "[MASK] before the forward pass",
    "mask_predict_remasks_most_confident": "least confident",
    "distinct_per_text_averaged": "over all texts together",
}

CORRECT = {
    # Decodes the inside of [CLS] ... [SEP]; a Python loop over the blanks counted from the end.
    "fill_decode_inside": {
        "impl_fill_left_to_right": """
def fill_left_to_right(model, tokenizer, prompt, n_tokens):
    enc = tokenizer(prompt)["input_ids"]
    ids = list(enc[:-1]) + [tokenizer.mask_token_id] * n_tokens + [enc[-1]]
    for j in range(n_tokens):
        position = len(ids) - 1 - n_tokens + j
        with torch.inference_mode():
            mask = torch.ones(1, len(ids), dtype=torch.long)
            logits = model(input_ids=torch.tensor([ids]), attention_mask=mask).logits
        ids[position] = int(logits[0, position].argmax())
    return tokenizer.decode(ids[1:-1], skip_special_tokens=True)
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

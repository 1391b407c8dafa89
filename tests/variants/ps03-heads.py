"""Known-wrong and alternative-correct implementations of ps03-heads: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # CORE: forgets the head's LayerNorm: dense -> GELU -> vocabulary.
    "mlm_without_layernorm": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    x = F.gelu(F.linear(hidden_states, p.transform.dense.weight, p.transform.dense.bias))
    return x @ mlm_model.bert.embeddings.word_embeddings.weight.T + p.bias
""",
    },
    # CORE: projects onto the vocabulary without the output bias.
    "mlm_without_bias": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    x = ACT2FN[mlm_model.config.hidden_act](p.transform.dense(hidden_states))
    x = p.transform.LayerNorm(x)
    return x @ p.decoder.weight.T
""",
    },
    # The Transformer-default ReLU instead of BERT's GELU.
    "mlm_relu": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    x = torch.relu(p.transform.dense(hidden_states))
    x = p.transform.LayerNorm(x)
    return x @ p.decoder.weight.T + p.bias
""",
    },
    # LayerNorm with F.layer_norm's default eps (1e-5) instead of the module's own.
    "mlm_default_eps": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    x = ACT2FN[mlm_model.config.hidden_act](p.transform.dense(hidden_states))
    x = F.layer_norm(x, x.shape[-1:], p.transform.LayerNorm.weight, p.transform.LayerNorm.bias)
    return x @ mlm_model.bert.embeddings.word_embeddings.weight.T + p.bias
""",
    },
    # CORE: scores every pair within the length limit in either order: end may come before start.
    "qa_end_before_start": {
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = start_logits.shape[0]
    ok = torch.ones(T, dtype=torch.bool) if allowed is None else allowed
    best = None
    for i in range(T):
        for j in range(T):
            if ok[i] and ok[j] and abs(j - i) < max_answer_len:
                score = float(start_logits[i] + end_logits[j])
                if best is None or score > best[0]:
                    best = (score, i, j)
    if best is None:
        raise ValueError("no span")
    return best[1], best[2]
""",
    },
    # Enforces start <= end but forgets the length limit.
    "qa_ignores_max_len": {
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = start_logits.shape[0]
    ok = torch.ones(T, dtype=torch.bool) if allowed is None else allowed
    scores = start_logits[:, None] + end_logits[None, :]
    valid = torch.ones(T, T, dtype=torch.bool).triu() & ok[:, None] & ok[None, :]
    if not valid.any():
        raise ValueError("no span")
    flat = int(scores.masked_fill(~valid, float("-inf")).argmax())
    return flat // T, flat % T
""",
    },
    # Masks the start with `allowed` but lets the span end anywhere (e.g. on the final [SEP]).
    "qa_end_ignores_allowed": {
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = start_logits.shape[0]
    best = None
    for i in range(T):
        if allowed is not None and not allowed[i]:
            continue
        for j in range(i, min(T, i + max_answer_len)):
            score = float(start_logits[i]) + float(end_logits[j])
            if best is None or score > best[0]:
                best = (score, i, j)
    if best is None:
        raise ValueError("no span")
    return best[1], best[2]
""",
    },
    # CORE: keeps overwriting a word's label, so its LAST piece decides.
    "words_last_piece": {
        "impl_word_level_predictions": """
def word_level_predictions(logits, word_ids):
    by_word = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            by_word[w] = int(logits[t].argmax())
    return list(by_word.values())
""",
    },
    # Averages the logits of all pieces of a word.
    "words_average_pieces": {
        "impl_word_level_predictions": """
def word_level_predictions(logits, word_ids):
    words = list(dict.fromkeys(w for w in word_ids if w is not None))
    out = []
    for w in words:
        rows = [t for t, x in enumerate(word_ids) if x == w]
        out.append(int(logits[rows].mean(dim=0).argmax()))
    return out
""",
    },
    # Uses the word index as a list index: wrong for windows whose word ids do not start at 0.
    "words_index_from_zero": {
        "impl_word_level_predictions": """
def word_level_predictions(logits, word_ids):
    words = [w for w in word_ids if w is not None]
    if not words:
        return []
    labels = [None] * (max(words) + 1)
    for t in reversed(range(len(word_ids))):
        if word_ids[t] is not None:
            labels[word_ids[t]] = int(logits[t].argmax())
    return labels
""",
    },
    # Calls the whole head, mlm_model.cls(...), instead of building it from its weights.
    "mlm_calls_whole_head": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    return mlm_model.cls(hidden_states)
""",
    },
    # Ties: `>=` keeps the LAST best span in (i, j) order, not the first.
    "qa_ties_keep_last": {
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = len(start_logits)
    ok = [True] * T if allowed is None else [bool(a) for a in allowed]
    best, best_score = None, None
    for i in range(T):
        if not ok[i]:
            continue
        for j in range(i, min(T, i + max_answer_len)):
            sc = float(start_logits[i]) + float(end_logits[j])
            if ok[j] and (best is None or sc >= best_score):
                best, best_score = (i, j), sc
    if best is None:
        raise ValueError("no span")
    return best
""",
    },
    # Ties: argmax over the flipped score matrix, the LAST maximum in (i, j) order.
    "qa_ties_last_maximum_vectorised": {
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = start_logits.shape[0]
    ok = torch.ones(T, dtype=torch.bool) if allowed is None else allowed.bool()
    scores = start_logits[:, None] + end_logits[None, :]
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    valid = (j >= i) & (j - i < max_answer_len) & ok[:, None] & ok[None, :]
    if not bool(valid.any()):
        raise ValueError("no valid span")
    # argmax over the flipped matrix: the LAST maximum in (i, j) order
    flat = int(scores.masked_fill(~valid, -torch.inf).flatten().flip(0).argmax())
    flat = T * T - 1 - flat
    return flat // T, flat % T
""",
    },
    # Assumes word ids have no gaps: looks up words[0], words[0] + 1, ... (a word with no token breaks it).
    "words_assume_no_gaps": {
        "impl_word_level_predictions": """
def word_level_predictions(logits, word_ids):
    words = [w for w in word_ids if w is not None]
    if not words:
        return []
    out = []
    for w in range(len(set(words))):
        out.append(int(logits[word_ids.index(w + words[0])].argmax(-1)))
    return out
""",
    },
    # Predicts 'd': one score per (start, end) pair, what qa_best_span ranks.
    # The visible test (a letter) passes; the hidden one fails.
    "prediction_tempting_wrong": {"impl_predict_qa_scores": 'PREDICT_QA_SCORES = "d"\n'},
    # Writes the measured number instead of a letter: the visible test names the form.
    "prediction_not_a_letter": {
        "impl_predict_qa_scores": 'PREDICT_QA_SCORES = "the measured number"\n'
    },
}

CORE = {
    "mlm_without_layernorm": "LayerNorm",
    "mlm_without_bias": "bias",
    "qa_end_before_start": "end before start",
    "words_last_piece": "first piece",
    "prediction_not_a_letter": "one letter",
}

CORRECT = {
    "modules_and_vectorised": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    act = ACT2FN[mlm_model.config.hidden_act]
    x = p.transform.LayerNorm(act(p.transform.dense(hidden_states)))  # [B, T, H]
    return x @ p.decoder.weight.T + p.decoder.bias  # [B, T, V]
""",
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = start_logits.shape[0]
    ok = torch.ones(T, dtype=torch.bool) if allowed is None else allowed.bool()
    scores = start_logits[:, None] + end_logits[None, :]  # [T, T]
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    valid = (j >= i) & (j - i < max_answer_len) & ok[:, None] & ok[None, :]
    if not bool(valid.any()):
        raise ValueError("no valid span")
    flat = int(scores.masked_fill(~valid, -torch.inf).argmax())  # first maximum in (i, j) order
    return flat // T, flat % T
""",
        "impl_word_level_predictions": """
def word_level_predictions(logits, word_ids):
    first = [t for t, w in enumerate(word_ids) if w is not None and (t == 0 or word_ids[t - 1] != w)]
    return logits[first].argmax(dim=-1).tolist() if first else []
""",
    },
    "formulas_and_loops": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    cfg = mlm_model.config
    t = mlm_model.cls.predictions.transform
    x = torch.einsum("bth,oh->bto", hidden_states, t.dense.weight) + t.dense.bias
    x = F.gelu(x) if cfg.hidden_act == "gelu" else ACT2FN[cfg.hidden_act](x)
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    x = (x - mean) / torch.sqrt(var + cfg.layer_norm_eps) * t.LayerNorm.weight + t.LayerNorm.bias
    E = mlm_model.get_input_embeddings().weight
    return torch.einsum("bth,vh->btv", x, E) + mlm_model.cls.predictions.bias
""",
        "impl_qa_best_span": """
def qa_best_span(start_logits, end_logits, max_answer_len, allowed=None):
    T = len(start_logits)
    best_score, best = -float("inf"), None
    for i in range(T):
        if allowed is not None and not allowed[i]:
            continue
        for j in range(i, T):
            if j - i + 1 > max_answer_len:
                break
            if allowed is not None and not allowed[j]:
                continue
            score = start_logits[i].item() + end_logits[j].item()
            if score > best_score:
                best_score, best = score, (i, j)
    if best is None:
        raise ValueError("no valid span")
    return best
""",
        "impl_word_level_predictions": """
import itertools

def word_level_predictions(logits, word_ids):
    out, t = [], 0
    for w, run in itertools.groupby(word_ids):
        n = len(list(run))
        if w is not None:
            out.append(int(torch.argmax(logits[t])))
        t += n
    return out
""",
    },
    # Computes in float64 and returns float64 logits: the same values.
    "mlm_in_float64": {
        "impl_mlm_head_logits": """
def mlm_head_logits(hidden_states, mlm_model):
    p = mlm_model.cls.predictions
    t = p.transform
    h = hidden_states.double()
    x = h @ t.dense.weight.double().T + t.dense.bias.double()
    x = ACT2FN[mlm_model.config.hidden_act](x)
    x = F.layer_norm(x, (x.shape[-1],), t.LayerNorm.weight.double(), t.LayerNorm.bias.double(), t.LayerNorm.eps)
    return x @ mlm_model.bert.embeddings.word_embeddings.weight.double().T + p.bias.double()
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_qa_scores": 'PREDICT_QA_SCORES = "b"  # measured, and it holds\n'
    },
}

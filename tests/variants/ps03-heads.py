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
    # word_labels_by_average -------------------------------------------------------------------
    # CORE: the page's rule (Chapter 3): the first piece's argmax, the other pieces ignored.
    "words_first_piece": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    labels, seen = [], set()
    for t, w in enumerate(word_ids):
        if w is not None and w not in seen:
            seen.add(w)
            labels.append(int(logits[t].argmax()))
    return labels
""",
    },
    # CORE: a majority vote of the pieces' argmaxes (ties: the label seen first): confidence ignored.
    "words_majority_vote": {
        "impl_word_labels_by_average": """
from collections import Counter

def word_labels_by_average(logits, word_ids):
    votes = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            votes.setdefault(w, []).append(int(logits[t].argmax()))
    return [Counter(v).most_common(1)[0][0] for v in votes.values()]
""",
    },
    # CORE: averages the logits, not the probabilities: one huge logit outweighs the other pieces.
    "words_average_logits": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    words = list(dict.fromkeys(w for w in word_ids if w is not None))
    out = []
    for w in words:
        rows = [t for t, x in enumerate(word_ids) if x == w]
        out.append(int(logits[rows].mean(dim=0).argmax()))
    return out
""",
    },
    # The log-probabilities averaged (a geometric mean of probabilities): the argmax of the mean logits again.
    "words_average_log_probabilities": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    logp = torch.log_softmax(logits, dim=-1)
    rows = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            rows.setdefault(w, []).append(t)
    return [int(logp[r].mean(dim=0).argmax()) for r in rows.values()]
""",
    },
    # The pipeline's "max" strategy: the label of the single most confident piece.
    "words_most_confident_piece": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    probs = logits.softmax(dim=-1)
    best = {}
    for t, w in enumerate(word_ids):
        if w is not None and (w not in best or probs[t].max() > best[w][0]):
            best[w] = (probs[t].max(), int(probs[t].argmax()))
    return [label for _, label in best.values()]
""",
    },
    # Keeps overwriting a word's label, so its LAST piece decides.
    "words_last_piece": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    by_word = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            by_word[w] = int(logits[t].argmax())
    return list(by_word.values())
""",
    },
    # The softmax over the tokens (dim=0) instead of over the labels: every token, [CLS] and [SEP]
    # included, changes every other token's probabilities.
    "words_softmax_over_tokens": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    probs = torch.softmax(logits, dim=0)
    rows = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            rows.setdefault(w, []).append(t)
    return [int(probs[r].mean(dim=0).argmax()) for r in rows.values()]
""",
    },
    # A special token joins the word before it ([SEP] is averaged into the last word).
    "words_special_tokens_join_the_word_before": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    probs = logits.softmax(dim=-1)
    rows, current = {}, None
    for t, w in enumerate(word_ids):
        current = w if w is not None else current
        if current is not None:
            rows.setdefault(current, []).append(t)
    return [int(probs[r].mean(dim=0).argmax()) for r in rows.values()]
""",
    },
    # Uses the word index as a list index: wrong for windows whose word ids do not start at 0.
    "words_index_from_zero": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    words = [w for w in word_ids if w is not None]
    if not words:
        return []
    probs = logits.softmax(dim=-1)
    sums = torch.zeros(max(words) + 1, logits.shape[-1])
    for t, w in enumerate(word_ids):
        if w is not None:
            sums[w] += probs[t]
    return [int(x) for x in sums.argmax(dim=-1)]
""",
    },
    # Assumes word ids have no gaps: looks up words[0], words[0] + 1, ... (a word with no token breaks it).
    "words_assume_no_gaps": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    words = [w for w in word_ids if w is not None]
    if not words:
        return []
    probs = logits.softmax(dim=-1)
    out = []
    for k in range(len(set(words))):
        rows = [t for t, w in enumerate(word_ids) if w == words[0] + k]
        out.append(int(probs[rows].mean(dim=0).argmax()) if rows else 0)
    return out
""",
    },
    # Ties: sorting the labels by probability keeps the LAST of equally probable labels.
    "words_ties_last_label": {
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    probs = logits.softmax(dim=-1)
    rows = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            rows.setdefault(w, []).append(t)
    out = []
    for r in rows.values():
        mean = probs[r].mean(dim=0).tolist()
        out.append(sorted(range(len(mean)), key=mean.__getitem__)[-1])
    return out
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
    "words_first_piece": "every piece",
    "words_majority_vote": "vote",
    "words_average_logits": "not logits",
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
        "impl_word_labels_by_average": """
def word_labels_by_average(logits, word_ids):
    keep = [t for t, w in enumerate(word_ids) if w is not None]
    if not keep:
        return []
    _, word = torch.unique_consecutive(torch.tensor([word_ids[t] for t in keep]), return_inverse=True)
    probs = torch.softmax(logits[keep], dim=-1)  # [N, L]
    sums = torch.zeros(int(word.max()) + 1, logits.shape[-1]).index_add_(0, word, probs)  # [W, L]
    counts = torch.bincount(word).unsqueeze(-1)  # [W, 1]
    return (sums / counts).argmax(dim=-1).tolist()
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
        "impl_word_labels_by_average": """
import itertools
import math

def word_labels_by_average(logits, word_ids):
    out, t = [], 0
    for w, run in itertools.groupby(word_ids):
        n = len(list(run))
        if w is not None:
            totals = [0.0] * logits.shape[1]  # summed, not averaged: the same argmax
            for row in logits[t : t + n].tolist():
                top = max(row)
                e = [math.exp(x - top) for x in row]
                for label, x in enumerate(e):
                    totals[label] += x / sum(e)
            best = 0
            for label, x in enumerate(totals):
                if x > totals[best]:
                    best = label
            out.append(best)
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
    # numpy in float64, the log-sum-exp way; the words found from where the word id changes.
    "words_numpy_float64": {
        "impl_word_labels_by_average": """
import numpy as np

def word_labels_by_average(logits, word_ids):
    x = logits.detach().double().numpy()
    logz = np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)) + x.max(axis=1, keepdims=True)
    probs = np.exp(x - logz)  # [T, L]
    starts = [t for t, w in enumerate(word_ids) if w is not None and (t == 0 or word_ids[t - 1] != w)]
    out = []
    for t in starts:
        end = t
        while end < len(word_ids) and word_ids[end] == word_ids[t]:
            end += 1
        out.append(int(np.argmax(probs[t:end].mean(axis=0))))
    return out
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_qa_scores": 'PREDICT_QA_SCORES = "b"  # measured, and it holds\n'
    },
}

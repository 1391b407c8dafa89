"""Known-wrong and alternative-correct implementations of ps08-retrieval: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # CORE: the mean runs over every position, padding included.
    "padding_in_mean": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
            rows.append(F.normalize(model(**batch).last_hidden_state.mean(1), dim=-1))
    return torch.cat(rows)
""",
    },
    "rows_not_normalised": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            rows.append((hidden * mask).sum(1) / mask.sum(1))
    return torch.cat(rows)
""",
    },
    # The [CLS] vector instead of the mean: unit length and batch-independent, so the visible
    # test passes; the hidden test compares with the mean.
    "cls_vector": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
            rows.append(F.normalize(model(**batch).last_hidden_state[:, 0], dim=-1))
    return torch.cat(rows)
""",
    },
    # [CLS] and [SEP] left out of the mean: also batch-independent, but not what was asked.
    "special_tokens_left_out": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                              return_tensors="pt", return_special_tokens_mask=True)
            words = (1 - batch.pop("special_tokens_mask")).unsqueeze(-1).float()
            hidden = model(**batch).last_hidden_state
            rows.append(F.normalize((hidden * words).sum(1) / words.sum(1).clamp(min=1), dim=-1))
    return torch.cat(rows)
""",
    },
    # CORE: the dot product of unnormalised vectors ranks long documents first.
    "dot_product": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    if k > doc_vecs.shape[0]:
        raise ValueError("k too large")
    scores = query_vecs @ doc_vecs.T
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[:, :k]
    return scores.gather(1, order), order
""",
    },
    # The right k documents, returned in document order instead of best first.
    "not_sorted": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    if k > doc_vecs.shape[0]:
        raise ValueError("k too large")
    scores = F.normalize(query_vecs, dim=-1) @ F.normalize(doc_vecs, dim=-1).T
    order = torch.topk(scores, k, dim=-1).indices.sort(dim=-1).values
    return scores.gather(1, order), order
""",
    },
    # Equal scores come out higher index first.
    "ties_by_higher_index": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    if k > doc_vecs.shape[0]:
        raise ValueError("k too large")
    scores = F.normalize(query_vecs, dim=-1) @ F.normalize(doc_vecs, dim=-1).T
    n = scores.shape[1]
    flipped = torch.sort(scores.flip(-1), dim=-1, descending=True, stable=True).indices[:, :k]
    order = n - 1 - flipped
    return scores.gather(1, order), order
""",
    },
    # k > N quietly returns all N documents.
    "k_clamped_instead_of_error": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    k = min(k, doc_vecs.shape[0])
    scores = F.normalize(query_vecs, dim=-1) @ F.normalize(doc_vecs, dim=-1).T
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[:, :k]
    return scores.gather(1, order), order
""",
    },
    # Only the documents are normalised: the ranking is right, the scores are scaled by |q|.
    "query_not_normalised": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    if k > doc_vecs.shape[0]:
        raise ValueError("k too large")
    scores = query_vecs @ F.normalize(doc_vecs, dim=-1).T
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[:, :k]
    return scores.gather(1, order), order
""",
    },
    # CORE: divides by k (precision@k), not by the number of relevant documents.
    "divided_by_k": {
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    shares = [len(set(r[:k]) & s) / k for r, s in zip(retrieved, relevant) if s]
    return sum(shares) / len(shares) if shares else 0.0
""",
    },
    # Queries with no relevant document count as recall 0.
    "empty_queries_counted": {
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    shares = [len(set(r[:k]) & s) / len(s) if s else 0.0 for r, s in zip(retrieved, relevant)]
    return sum(shares) / len(shares) if shares else 0.0
""",
    },
    "ignores_k": {
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    shares = [len(set(r) & s) / len(s) for r, s in zip(retrieved, relevant) if s]
    return sum(shares) / len(shares) if shares else 0.0
""",
    },
    # Divides by min(k, |R|): right whenever |R| <= k, as in the visible example.
    "denominator_min_k_relevant": {
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    shares = [len(set(r[:k]) & s) / min(k, len(s)) for r, s in zip(retrieved, relevant) if s]
    return sum(shares) / len(shares) if shares else 0.0
""",
    },
    # CORE: the question first, the passages after it.
    "question_first": {
        "impl_build_messages": """
def build_messages(question, passages):
    numbered = "".join(f"[{i}] {p}\\n" for i, p in enumerate(passages, start=1))
    return [{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"{question}\\n{numbered}"}]
""",
    },
    "numbered_from_zero": {
        "impl_build_messages": """
def build_messages(question, passages):
    numbered = "".join(f"[{i}] {p}\\n" for i, p in enumerate(passages))
    return [{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"{numbered}{question}"}]
""",
    },
    # Keeps only the first three passages.
    "first_three_passages": {
        "impl_build_messages": """
def build_messages(question, passages):
    numbered = "".join(f"[{i}] {p}\\n" for i, p in enumerate(passages[:3], start=1))
    return [{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"{numbered}{question}"}]
""",
    },
    # The attention_mask is used for the mean but not given to the model: tokens attend to padding (found by review).
    "attention_mask_not_given_to_model": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
            hidden = model(input_ids=batch["input_ids"]).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            rows.append(F.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1))
    return torch.cat(rows)
""",
    },
    # batch_size ignored: every text in one forward pass (found by review).
    "ignores_batch_size": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    with torch.inference_mode():
        batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return F.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
""",
    },
    # Runs the model with gradients on (no inference_mode / no_grad): the result carries the
    # autograd graph (found by review).
    "embeds_with_gradients": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    rows = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        rows.append(F.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1))
    return torch.cat(rows)
""",
    },
    # An epsilon in the cosine's denominator: scaled copies of a document no longer tie (found by review).
    "cosine_denominator_epsilon": {
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    if k > doc_vecs.shape[0]:
        raise ValueError("k too large")
    cos = (query_vecs @ doc_vecs.T) / (query_vecs.norm(dim=1, keepdim=True) * doc_vecs.norm(dim=1)[None] + 1e-6)
    order = torch.sort(cos, dim=1, descending=True, stable=True).indices[:, :k]
    return cos.gather(1, order), order
""",
    },
    # No newline between the last passage and the question: they share a line (found by review).
    "question_on_last_passage_line": {
        "impl_build_messages": """
def build_messages(question, passages):
    numbered = "\\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1))
    return [{"role": "system", "content": "Answer in a few words."},
            {"role": "user", "content": numbered + question}]
""",
    },
    # Passages as list items, "- [i] <passage>": the lines do not start with "[i] " (found by review).
    "passages_as_list_items": {
        "impl_build_messages": """
def build_messages(question, passages):
    body = "\\n".join(f"- [{i}] {p}" for i, p in enumerate(passages, 1))
    user = f"Passages:\\n{body}\\n\\nQuestion: {question}" if passages else question
    return [{"role": "system", "content": "Answer in a few words, using the passages when they help."},
            {"role": "user", "content": user}]
""",
    },
    # The prediction, a wrong letter (recall@k read as precision@k, which can fall): right in form, wrong in answer.
    "predict_wrong_letter": {
        "impl_predict_recall": """
PREDICT_RECALL = "a"
""",
    },
}

CORE = {
    "padding_in_mean": "padding",
    "dot_product": "cosine",
    "divided_by_k": "number of relevant documents",
    "question_first": "before the question",
}

CORRECT = {
    # One text at a time: no padding ever, so the plain mean is right.
    "one_text_at_a_time": {
        "impl_embed_texts": """
def embed_texts(model, tokenizer, texts, batch_size=32):
    with torch.no_grad():
        rows = [model(**tokenizer([t], return_tensors="pt")).last_hidden_state[0].mean(0) for t in texts]
    return F.normalize(torch.stack(rows), dim=-1)
""",
        "impl_top_k": """
def top_k(query_vecs, doc_vecs, k):
    n = doc_vecs.shape[0]
    if k > n:
        raise ValueError(f"only {n} documents")
    q = query_vecs / query_vecs.norm(dim=1, keepdim=True)
    d = doc_vecs / doc_vecs.norm(dim=1, keepdim=True)
    scores = q @ d.T
    rows = [sorted(range(n), key=lambda j: (-row[j], j))[:k] for row in scores.tolist()]
    order = torch.tensor(rows, dtype=torch.long)
    return torch.gather(scores, 1, order), order
""",
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    total, count = 0.0, 0
    for ranked, wanted in zip(retrieved, relevant):
        if not wanted:
            continue
        total += sum(1 for d in ranked[:k] if d in wanted) / len(wanted)
        count += 1
    return total / count if count else 0.0
""",
        "impl_build_messages": """
def build_messages(question, passages):
    lines = [f"[{i + 1}] {p}" for i, p in enumerate(passages)]
    user = "\\n".join(["Use these passages:", *lines, "", question]) if passages else question
    return [dict(role="system", content="Be brief."), dict(role="user", content=user)]
""",
    },
    # An answer cue after the question ("Answer:"): the passages still come first (found by review).
    "answer_cue_after_question": {
        "impl_build_messages": r"""
def build_messages(question, passages):
    ctx = "".join(f"[{i}] {p}\n" for i, p in enumerate(passages, 1))
    return [{"role": "system", "content": "Answer in a few words."},
            {"role": "user", "content": f"{ctx}Question: {question}\nAnswer:"}]
""",
    },
    # Float32 arithmetic through torch: about 2e-8 off, well inside a sensible tolerance (found by review).
    "recall_float32_torch_mean": {
        "impl_recall_at_k": """
def recall_at_k(retrieved, relevant, k):
    shares = [len(set(r[:k]) & s) / len(s) for r, s in zip(retrieved, relevant) if len(s) > 0]
    if len(shares) == 0:
        return 0.0
    return torch.tensor(shares).mean().item()
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_recall": """
PREDICT_RECALL = " B "
""",
    },
}

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
    # CORE: the rank of the last relevant document in the top k, not the first one's.
    "last_relevant_rank": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if not wanted:
            continue
        ranks = [j for j, d in enumerate(found[:k], start=1) if d in wanted]
        rr.append(1 / ranks[-1] if ranks else 0.0)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # CORE: 0-based ranks, 1 / index: the top document divides by zero.
    "zero_based_ranks": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if wanted:
            hits = [j for j, d in enumerate(found[:k]) if d in wanted]
            rr.append(1 / hits[0] if hits else 0.0)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # 1-based ranks shifted once more: the top document scores 1/2.
    "rank_shifted_twice": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if wanted:
            hits = [j for j, d in enumerate(found[:k], start=1) if d in wanted]
            rr.append(1 / (hits[0] + 1) if hits else 0.0)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # CORE: the mean over the queries that found something, not over every judged query.
    "mean_over_hits_only": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        for j, d in enumerate(found[:k], start=1):
            if d in wanted:
                rr.append(1 / j)
                break
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    "ignores_k": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if wanted:
            hits = [j for j, d in enumerate(found, start=1) if d in wanted]
            rr.append(1 / hits[0] if hits else 0.0)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # Queries with no relevant document count as 0 instead of being left out.
    "empty_relevant_counted": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        hits = [j for j, d in enumerate(found[:k], start=1) if d in wanted]
        rr.append(1 / hits[0] if hits else 0.0)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # Reads found[0] .. found[k - 1]: a list shorter than k (or empty) raises IndexError.
    "assumes_k_documents": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if not wanted:
            continue
        score = 0.0
        for j in range(k):
            if found[j] in wanted:
                score = 1 / (j + 1)
                break
        rr.append(score)
    return sum(rr) / len(rr) if rr else 0.0
""",
    },
    # No query with a relevant document: 0 / 0 instead of 0.0.
    "no_judged_query_divides_by_zero": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if wanted:
            hits = [j for j, d in enumerate(found[:k], start=1) if d in wanted]
            rr.append(1 / hits[0] if hits else 0.0)
    return sum(rr) / len(rr)
""",
    },
    # Walks the relevant set in increasing index, not the ranking: the rank of the relevant
    # document with the smallest index, which is the first only by chance (as in the visible example).
    "smallest_relevant_index": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rr = []
    for found, wanted in zip(retrieved, relevant):
        if not wanted:
            continue
        score = 0.0
        for d in sorted(wanted):
            if d in found[:k]:
                score = 1 / (found.index(d) + 1)
                break
        rr.append(score)
    return sum(rr) / len(rr) if rr else 0.0
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
    "last_relevant_rank": "first relevant document",
    "zero_based_ranks": "ranks count from 1",
    "mean_over_hits_only": "every query",
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
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    total, count = 0.0, 0
    for ranked, wanted in zip(retrieved, relevant):
        if not wanted:
            continue
        count += 1
        for rank, doc in enumerate(ranked[:k], start=1):
            if doc in wanted:
                total += 1 / rank
                break
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
    # A [Q, k] hit matrix in float32 torch: the first hit has the largest hit / rank; about 1e-8 off.
    "mrr_torch_hit_matrix": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    rows = [(r[:k], s) for r, s in zip(retrieved, relevant) if len(s) > 0]
    if not rows:
        return 0.0
    hit = torch.zeros(len(rows), k)
    for i, (top, s) in enumerate(rows):
        hit[i, : len(top)] = torch.tensor([float(d in s) for d in top])
    rr = (hit / torch.arange(1, k + 1)).max(dim=1).values
    return rr.mean().item()
""",
    },
    # The smallest rank over the relevant documents found, through list.index.
    "mrr_min_rank_over_relevant": {
        "impl_mrr_at_k": """
def mrr_at_k(retrieved, relevant, k):
    scores = []
    for ranked, wanted in zip(retrieved, relevant):
        if wanted:
            top = list(ranked[:k])
            rank = min((top.index(d) + 1 for d in wanted if d in top), default=0)
            scores.append(1 / rank if rank else 0.0)
    return float(sum(scores) / len(scores)) if scores else 0.0
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_recall": """
PREDICT_RECALL = " B "
""",
    },
}

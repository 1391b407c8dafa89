"""Dense retrieval with an encoder, and the prompt that hands what it found to a decoder.

The pattern of Chapter 8 ("Retrieve, then generate"): an encoder turns every passage and every
question into one unit-length vector (the mean of its token vectors, padding left out), the
passages nearest a question by cosine similarity are taken, and a decoder writes the answer
with them in its prompt. Lewis et al. (2020), "Retrieval-Augmented Generation for
Knowledge-Intensive NLP Tasks", and Karpukhin et al. (2020), "Dense Passage Retrieval", are the
references; mean pooling is what sentence-transformers' all-MiniLM-L6-v2 was trained with
(Reimers and Gurevych 2019, "Sentence-BERT").

embed_texts, top_k and build_messages are the reference versions of functions ps08-retrieval
grades, so they live with the book (Chapter 8 imports them), not in the installed package.
ps08 grades MRR@k in place of recall_at_k: the page reports recall only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SYSTEM_PROMPT = (
    "You answer questions in a few words. Use the numbered passages when they contain the answer."
)


def embed_texts(model, tokenizer, texts: list[str], batch_size: int = 32) -> torch.Tensor:
    """Mean-pooled, L2-normalised sentence vectors ``[N, H]`` from an encoder (eval mode).

    The mean runs over real tokens only (``attention_mask`` 1, [CLS] and [SEP] included),
    so a row does not depend on how much padding its batch needed.
    """
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(
                texts[start : start + batch_size],
                padding=True,
                truncation=True,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state  # [B, T, H]
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)  # [B, H]
            rows.append(F.normalize(mean, dim=-1))
    if not rows:
        return torch.empty(0, model.config.hidden_size)
    return torch.cat(rows)  # [N, H]


def top_k(
    query_vecs: torch.Tensor, doc_vecs: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosine scores ``[Q, k]`` and indices ``[Q, k]`` of the k nearest documents, best first;
    equal scores keep the lower index first. ``k`` larger than the number of documents is a
    ValueError."""
    if k > doc_vecs.shape[0]:
        raise ValueError(f"k={k} but there are only {doc_vecs.shape[0]} documents")
    scores = F.normalize(query_vecs, dim=-1) @ F.normalize(doc_vecs, dim=-1).T  # [Q, N]
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[:, :k]  # [Q, k]
    return scores.gather(1, order), order


def recall_at_k(retrieved: list[list[int]], relevant: list[set[int]], k: int) -> float:
    """Mean over queries of |top-k retrieved ∩ relevant| / |relevant|; queries with no
    relevant document are left out (0.0 if none is left)."""
    shares = [
        len(set(found[:k]) & wanted) / len(wanted)
        for found, wanted in zip(retrieved, relevant)
        if wanted
    ]
    return sum(shares) / len(shares) if shares else 0.0


def build_messages(question: str, passages: list[str]) -> list[dict]:
    """Chat messages for ``tokenizer.apply_chat_template``: a system message, then one user
    message with the passages numbered [1], [2], ... before the question (no passages: the
    question alone)."""
    numbered = "".join(f"[{i}] {p}\n" for i, p in enumerate(passages, start=1))
    user = f"Passages:\n{numbered}\nQuestion: {question}" if passages else f"Question: {question}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

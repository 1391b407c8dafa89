"""Extractive QA for Chapter 5: answer spans, SQuAD's metrics, and documents longer than 512.

Explained in Chapter 5, "Fine-tuning BERT for answer spans" (book/05c-question-answering.md).
The span rule is Chapter 3's (start <= end, at most ``max_answer_len`` tokens, both ends in the
context); the metrics are those of SQuAD v1.1's official script (Rajpurkar et al. 2016):
answers lower-cased, punctuation and the articles a/an/the removed, then exact match and the
F1 of the two bags of words.
"""

from __future__ import annotations

import collections
import re
import string

import torch


def best_span(
    start_logits, end_logits, allowed, max_answer_len: int
) -> tuple[tuple[int, int], float]:
    """The best permitted (start, end) token pair and its score start[s] + end[e].

    start_logits, end_logits: [T]; allowed: bool [T], True at the context's tokens.
    """
    T = start_logits.shape[0]
    scores = start_logits[:, None] + end_logits[None, :]  # [T, T]: row = start, column = end
    offset = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # [T, T]: e - s
    permitted = (offset >= 0) & (offset < max_answer_len) & allowed[:, None] & allowed[None, :]
    flat = scores.masked_fill(~permitted, float("-inf")).flatten()
    best = int(flat.argmax())
    return divmod(best, T), float(flat[best])


def normalise(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalise(prediction) == normalise(gold))


def f1(prediction: str, gold: str) -> float:
    predicted, wanted = normalise(prediction).split(), normalise(gold).split()
    common = sum((collections.Counter(predicted) & collections.Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


@torch.inference_mode()
def answer(
    model,
    tokenizer,
    question: str,
    context: str,
    max_length: int = 384,
    stride: int = 128,
    max_answer_len: int = 8,
) -> dict:
    """Answer from a context of any length: the tokenizer cuts the context into windows of at most
    ``max_length`` tokens (question included) that overlap by ``stride`` tokens; the best span
    of every window is scored and the best score over all windows wins.

    Returns a dict: ``text`` (the answer, cut from the context with the offset mapping),
    ``score``, ``window`` (the winning window's index), ``windows`` (how many there were),
    ``char_span`` (start, end) in the context.
    """
    enc = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=True,
        return_tensors="pt",
    )
    offsets = enc.pop("offset_mapping")  # [W, T, 2]: character span of each token
    enc.pop("overflow_to_sample_mapping")
    out = model(**enc)
    best = None
    for w in range(enc["input_ids"].shape[0]):
        allowed = torch.tensor([sid == 1 for sid in enc.sequence_ids(w)])  # [T]: context tokens
        (s, e), score = best_span(out.start_logits[w], out.end_logits[w], allowed, max_answer_len)
        if best is None or score > best["score"]:
            chars = (int(offsets[w, s, 0]), int(offsets[w, e, 1]))
            best = {
                "text": context[chars[0] : chars[1]],
                "score": score,
                "window": w,
                "char_span": chars,
            }
    best["windows"] = enc["input_ids"].shape[0]
    return best

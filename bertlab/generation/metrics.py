"""How alike and how fluent generated texts are (Chapter 6, "Measured side by side").

Distinct-n (Li et al. 2016) is graded in ps06, so the chapter's copy and its within-text twin,
the repetition rate, live with the book (``book/reference/diversity.py``), not in this package.

- :func:`self_bleu` (Zhu et al. 2018, "Texygen"): each text's BLEU against all the others, averaged
  (sacrebleu's sentence BLEU); high when the texts resemble each other;
- :func:`perplexities`: each continuation's perplexity under a causal language model, given its
  prompt. A judge that is itself a language model prefers text like its own.
"""

from __future__ import annotations

import math

import torch


def self_bleu(texts: list[str]) -> float:
    """Mean sentence BLEU (0-100) of each text against all the other texts as references."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(effective_order=True)
    scores = [
        bleu.sentence_score(text, texts[:i] + texts[i + 1 :]).score for i, text in enumerate(texts)
    ]
    return sum(scores) / len(scores)


@torch.inference_mode()
def perplexities(model, tokenizer, prompts: list[str], continuations: list[str]) -> list[float]:
    """exp(mean negative log-likelihood) of each continuation's tokens given its prompt, under a
    causal LM, in one right-padded batch. A continuation is scored as it follows ``prompt + " "``
    (tokenized as the tokenizer does by default: no beginning-of-text token is added for a
    tokenizer that adds none); an empty one gets nan."""
    rows, contexts = [], []
    for prompt, text in zip(prompts, continuations):
        context = tokenizer(prompt)["input_ids"]
        full = tokenizer(prompt + " " + text)["input_ids"] if text.strip() else context
        rows.append(full)
        contexts.append(len(context))
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])  # [B, T]
    attention = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])  # [B, T]
    logits = model(input_ids=ids, attention_mask=attention).logits[
        :, :-1
    ]  # [B, T - 1, V]: i predicts i + 1
    nll = torch.nn.functional.cross_entropy(
        logits.float().transpose(1, 2), ids[:, 1:], reduction="none"
    )  # [B, T - 1]
    result = []
    for b, (r, c) in enumerate(zip(rows, contexts)):
        scored = nll[b, c - 1 : len(r) - 1]  # the continuation's tokens only
        result.append(math.exp(scored.mean().item()) if len(scored) else float("nan"))
    return result

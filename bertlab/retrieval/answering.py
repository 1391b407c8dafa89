"""Let the decoder answer: batched greedy generation from chat messages (Chapter 8, the FAQ).

A decoder writes one token per forward pass, so its cost grows with the answer's length; a
batch of prompts shares each pass. Prompts of different lengths are padded on the *left*, so
that every row's last real token sits at the same position, where generation continues
(padding on the right would put pad tokens between the prompt and the answer).
"""

from __future__ import annotations

import re

import torch


def generate_answers(
    decoder,
    tokenizer,
    conversations: list[list[dict]],
    max_new_tokens: int = 12,
    batch_size: int = 16,
) -> list[str]:
    """The decoder's greedy reply to each conversation (a list of chat messages), as text."""
    prompts = [
        tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
        for m in conversations
    ]
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    replies = []
    try:
        for start in range(0, len(prompts), batch_size):
            batch = tokenizer(
                prompts[start : start + batch_size],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            )  # the chat template already has them
            with torch.inference_mode():
                out = decoder.generate(
                    **batch,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )  # [B, T + new]
            new = out[:, batch["input_ids"].shape[1] :]  # [B, new]
            replies += [t.strip() for t in tokenizer.batch_decode(new, skip_special_tokens=True)]
    finally:
        tokenizer.padding_side = side
    return replies


def answer_matches(answer: str, accepted: list[str]) -> bool:
    """Whether a generated answer names one of the accepted answers (whole words, any case)."""
    return any(
        re.search(rf"(?<!\w){re.escape(a)}(?!\w)", answer, flags=re.IGNORECASE) for a in accepted
    )


def copied_passage(answer: str, passages: list[str]) -> int | None:
    """Which of ``passages`` a generated answer copies (Chapter 8): the index of the passage that
    holds the largest share of the answer's words (lower-cased, letters and digits), or None
    when none holds at least half of them, or when two passages hold the same largest share
    (the words do not say which one was copied)."""
    words = re.findall(r"\w+", answer.lower())
    if not words:
        return None
    shares = [
        sum(w in set(re.findall(r"\w+", p.lower())) for w in words) / len(words) for p in passages
    ]
    best = max(range(len(passages)), key=lambda i: (shares[i], -i))
    unique = shares.count(shares[best]) == 1
    return best if shares[best] >= 0.5 and unique else None

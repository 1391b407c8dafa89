"""Guessing a blank from word frequencies alone: the baseline beside every fill-in-the-blank score.

A masked language model's accuracy or loss means little until it stands beside what no context
at all gets on the same blanks: a *unigram* model, which always guesses the most frequent
tokens of the training text and gives each token its frequency as its probability. The course
checkpoint's recipe counts the tokens of its last training mix (``recipes/checkpoint/
baselines.py``) and ships the counts beside the weights (``models/weights/encoder/unigram.json``);
the model card and Chapters 3 and 4 compute the baseline on their own sentences from them.

Counts are kept by token *string*, so the baseline also runs on a page switched to another BERT
(``BERTLAB_MODEL``): a token the course vocabulary lacks counts 0.
"""

from __future__ import annotations

import json
from functools import cache

import torch

from bertlab.models.encoder import WEIGHTS_DIR


@cache
def counts() -> dict[str, int]:
    """How often each WordPiece token occurs in the training text of the course checkpoint's
    last stage (mix v4), by token string."""
    from transformers import AutoTokenizer

    from bertlab.models import minilm_path

    shipped = json.loads((WEIGHTS_DIR / "unigram.json").read_text())
    vocab = AutoTokenizer.from_pretrained(minilm_path()).convert_ids_to_tokens(
        list(range(len(shipped["counts"])))
    )
    return dict(zip(vocab, shipped["counts"]))


def log_probs(tokenizer) -> torch.Tensor:
    """``[len(tokenizer)]``: the unigram model's log probability of each of ``tokenizer``'s
    tokens, with one count added to every token (so none has probability 0). Special tokens
    (``[SEP]``, ...) count 0: a blank's answer is never one."""
    found = counts()
    n = torch.tensor(
        [
            0 if _special(t) else found.get(t, 0)
            for t in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        ],
        dtype=torch.float64,
    )  # [V]
    return torch.log((n + 1) / (n.sum() + len(n)))


def most_frequent(k: int, words_only: bool = False) -> list[str]:
    """The ``k`` most frequent tokens of the training text, special tokens left out; with
    ``words_only``, whole words only (letters, no ``##`` piece), as a blank in a sentence asks."""
    found = counts()
    keep = [
        t for t in found if not _special(t) and (not words_only or (t.isalpha() and t.isascii()))
    ]
    return sorted(keep, key=lambda t: -found[t])[:k]


def _special(token: str) -> bool:
    """``[CLS]``, ``[SEP]``, ``[unused0]`` and the like."""
    return token.startswith("[") and token.endswith("]")

"""The copy rate: how often a masked LM fills a blank with a word it can already see.

A small masked language model often answers a cloze by repeating a word of its own context
("The moon orbits the [MASK]." -> *moon*). BERT's objective (Devlin et al. 2019, section 3.1)
does not forbid that, and a model that does it writes loops when Chapter 6 makes it generate.
The course checkpoint's model card reports this figure before and after each training stage
(issue: "Course checkpoint, next stage"): the checkpoint recipe measures it over a held-out set
(``recipes/checkpoint/evaluate.py``, ``copy_rate``), :func:`bertlab.probes.probe_eval` on the probes.

**Definition.** Over the masked positions of a held-out set, the share whose top-1 guess

- is a *word* (a WordPiece token made of letters, not a ``##`` continuation), and
- appears elsewhere in the same sentence of the model's input, while
- the answer does not (so copying could not have been right).

A *sentence* runs up to and including a ``.``, ``!``, ``?`` or special token; the packed
training rows hold several. "Elsewhere" means at another position of the input the model saw
(a word hidden under another ``[MASK]`` cannot be copied).

    copy_flags(input_ids, labels, guesses, tokenizer) -> [n_masked] bool
"""

from __future__ import annotations

import torch

BOUNDARIES = (".", "!", "?")


def word_token_mask(tokenizer) -> torch.Tensor:
    """``[vocab]`` bool: True for tokens that are whole words (letters only, no ``##``)."""
    vocab = tokenizer.get_vocab()
    mask = torch.zeros(max(vocab.values()) + 1, dtype=torch.bool)
    for token, i in vocab.items():
        mask[i] = token.isalpha() and token.isascii()
    return mask


def sentence_ids(input_ids: torch.Tensor, boundary_ids: torch.Tensor) -> torch.Tensor:
    """``[B, L]`` -> ``[B, L]`` sentence number of each position; a boundary token ends its own."""
    is_boundary = torch.isin(input_ids, boundary_ids).long()  # [B, L]
    return is_boundary.cumsum(dim=1) - is_boundary  # the boundary belongs to the sentence it ends


def copy_flags(
    input_ids: torch.Tensor,
    labels: torch.Tensor,
    guesses: torch.Tensor,
    tokenizer,
    is_word: torch.Tensor | None = None,
) -> torch.Tensor:
    """Which masked positions were filled by copying (the definition in the module docstring).

    ``input_ids``, ``labels``: ``[B, L]`` as a ``DataCollatorForLanguageModeling`` returns them
    (labels -100 where nothing was masked); ``guesses``: ``[B, L]`` top-1 ids (only the masked
    positions are read); ``is_word``: :func:`word_token_mask`, computed once by a caller that
    calls this per batch. Returns ``[n_masked]`` bool, in the order of ``labels != -100``.
    """
    masked = labels != -100  # [B, L]
    boundary = torch.tensor(
        [tokenizer.convert_tokens_to_ids(t) for t in BOUNDARIES] + tokenizer.all_special_ids
    )
    sent = sentence_ids(input_ids, boundary)  # [B, L]
    L = input_ids.shape[1]
    elsewhere = (sent[:, :, None] == sent[:, None, :]) & ~torch.eye(
        L, dtype=torch.bool
    )  # [B, L(i), L(j)]

    def seen(tok):  # [B, L]: the token occurs elsewhere in its sentence
        return ((input_ids[:, None, :] == tok[:, :, None]) & elsewhere).any(-1)

    is_word = word_token_mask(tokenizer) if is_word is None else is_word  # [vocab]
    answer = torch.where(masked, labels, input_ids)  # [B, L]
    copied = is_word[guesses.clamp(min=0)] & seen(guesses) & ~seen(answer)  # [B, L]
    return copied[masked]

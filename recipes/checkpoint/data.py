"""The training data of the checkpoint recipe: packed rows, BERT's masking, the fixed eval set.

Paragraphs are tokenized and packed, separated by ``[SEP]``, into ``[CLS] ... [SEP]`` rows of
``seq_len`` tokens, cached per corpus in the run folder. The masking is BERT's (Devlin et al.
2019, section 3.1, "Task #1: Masked LM"): 15% of the WordPiece tokens are chosen; of those 80%
become ``[MASK]``, 10% a random token, 10% stay. We use transformers' reference implementation,
``DataCollatorForLanguageModeling``, optionally on whole words.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from tqdm import tqdm

from bertlab.models import minilm_path


def load_tokenizer(path: str | None = None):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(
        path or minilm_path()
    )  # never from vocab_file (5-token vocab)


def pack(lines: list[str], tokenizer, seq_len: int) -> torch.Tensor:
    """Tokenize paragraphs and pack them, separated by [SEP], into ``[CLS] ... [SEP]`` rows.

    Returns int16 ids (the vocabulary has 30,522 < 32,767 entries): ``[n_rows, seq_len]``.
    """
    body = seq_len - 2
    stream: list[int] = []
    for i in tqdm(range(0, len(lines), 2000), desc="tokenize", leave=False):
        for ids in tokenizer(lines[i : i + 2000], add_special_tokens=False)["input_ids"]:
            stream.extend(ids)
            stream.append(tokenizer.sep_token_id)
    n = len(stream) // body
    rows = torch.tensor(stream[: n * body], dtype=torch.int16).view(n, body)  # [n, body]
    cls = torch.full((n, 1), tokenizer.cls_token_id, dtype=torch.int16)
    sep = torch.full((n, 1), tokenizer.sep_token_id, dtype=torch.int16)
    return torch.cat([cls, rows, sep], dim=1)  # [n, seq_len]


def corpus_id(corpus: Path) -> str:
    """A short fingerprint of a built corpus (its manifest, else its training text)."""
    import hashlib

    f = corpus / "manifest.json"
    return hashlib.sha1((f if f.is_file() else corpus / "train.txt").read_bytes()).hexdigest()[:10]


def data_cache(corpus: Path, out: Path, seq_len: int) -> Path:
    return out / f"data-{corpus_id(corpus)}-{seq_len}.pt"


def load_data(
    corpus: Path, out: Path, tokenizer, seq_len: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed train and held-out rows, cached in ``out/data-<corpus id>-<seq_len>.pt``.

    A run may continue on another corpus (the shipped checkpoint's stage 2): each has its cache."""
    cache = data_cache(corpus, out, seq_len)
    if cache.is_file():
        d = torch.load(cache)
        return d["train"], d["heldout"]

    def read(name: str) -> list[str]:
        return [
            line
            for line in (corpus / name).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]

    train, heldout = (
        pack(read("train.txt"), tokenizer, seq_len),
        pack(read("heldout.txt"), tokenizer, seq_len),
    )
    torch.save({"train": train, "heldout": heldout}, str(cache) + ".tmp")
    os.replace(str(cache) + ".tmp", cache)
    return train, heldout


def make_collator(tokenizer, seed: int, whole_word: bool = False):
    """BERT's 15% / 80-10-10 masking; with ``whole_word``, every piece of a chosen word is masked.

    transformers' whole-word masking sets ``mask_replace_prob`` to 1 (no random or kept tokens);
    we put 80-10-10 back on the chosen words, as Google's whole-word-masking BERT models did
    (google-research/bert, README, "Whole Word Masking"). Otherwise a model trained this way
    never sees a chosen token left in place, and the held-out measure (80-10-10 on tokens, the
    same for every stage) would score it at a disadvantage it did not earn."""
    import warnings

    from transformers import DataCollatorForLanguageModeling

    with warnings.catch_warnings():  # "Setting mask_replace_prob to 1": undone below
        warnings.simplefilter("ignore", UserWarning)
        collator = DataCollatorForLanguageModeling(
            tokenizer,
            mlm_probability=0.15,
            mask_replace_prob=0.8,
            random_replace_prob=0.1,
            seed=seed,
            whole_word_mask=whole_word,
        )
    collator.mask_replace_prob, collator.random_replace_prob = 0.8, 0.1
    return collator


def masking_description(whole_word: bool) -> str:
    words = "whole_word_mask=True, " if whole_word else ""
    probabilities = "mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1"
    return f"DataCollatorForLanguageModeling({words}{probabilities})"


def continuation_mask(tokenizer) -> torch.Tensor:
    """``[vocab]`` bool: True for WordPiece continuations (``##...``)."""
    continuation = torch.zeros(len(tokenizer), dtype=torch.bool)
    for token, i in tokenizer.get_vocab().items():
        continuation[i] = token.startswith("##")
    return continuation


def word_examples(
    rows: torch.Tensor, tokenizer, continuation: torch.Tensor | None = None
) -> list[dict]:
    """Packed ``[B, L]`` ids as the examples whole-word masking needs: ``input_ids``, a
    ``special_tokens_mask`` and an ``offset_mapping`` in which a ``##`` piece touches the piece
    before it and a new word leaves a gap (the collator finds word starts from those offsets).
    ``continuation``: :func:`continuation_mask`, computed once by a caller that calls this per batch."""
    continuation = continuation_mask(tokenizer) if continuation is None else continuation
    ids = rows.long()  # [B, L]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))  # [B, L]
    new_word = (~continuation[ids]).long()  # [B, L]
    start = torch.arange(ids.shape[1]) + new_word.cumsum(
        dim=1
    )  # [B, L]: a continuation starts where the last piece ended
    offsets = torch.stack([start, start + 1], dim=-1)  # [B, L, 2]
    return [
        {"input_ids": i, "special_tokens_mask": s.long(), "offset_mapping": o}
        for i, s, o in zip(ids, special, offsets)
    ]


#: The seed of the held-out masking every score of the checkpoint is read on (its model and baselines).
EVAL_SEED = 1234


def fixed_eval_set(heldout: torch.Tensor, tokenizer, n: int, seed: int = EVAL_SEED) -> dict:
    """The first ``n`` held-out rows masked once with a fixed seed: every eval sees the same."""
    batch = make_collator(tokenizer, seed)([r.long() for r in heldout[:n]])
    return {"input_ids": batch["input_ids"], "labels": batch["labels"]}  # [n, seq_len] each

"""A model of the checkpoint's recipe loaded and scored on a corpus's held-out blanks: accuracy,
loss and copy rate (how often it fills a blank with a word of its own sentence,
:mod:`bertlab.copying`), on the fixed masking of :data:`recipes.checkpoint.data.EVAL_SEED`. Used
by :mod:`recipes.checkpoint.evaluate` and :mod:`recipes.checkpoint.baselines`.
"""

from __future__ import annotations

from pathlib import Path

import torch

from bertlab.copying import copy_flags, word_token_mask
from bertlab.models import minilm_path
from recipes.checkpoint.data import EVAL_SEED, data_cache, fixed_eval_set, load_tokenizer, pack
from recipes.checkpoint.model import build_model, evaluate, masked_logits


def load_model(spec: str | None, corpus: Path, run: Path | None = None):
    """(model, tokenizer, path) for a folder, ``base``, or the embedded checkpoint (None)."""
    from transformers import AutoTokenizer, BertForMaskedLM
    from transformers.utils import logging

    if spec == "base":
        cache = data_cache(corpus, run, 128) if run else None
        if cache and cache.is_file():
            rows = torch.load(cache)["train"]
        else:
            lines = (corpus / "train.txt").read_text(encoding="utf-8").splitlines()
            rows = pack([line for line in lines if line.strip()], load_tokenizer(), 128)
        return build_model(rows).eval(), load_tokenizer(), minilm_path()
    if spec is None:
        from bertlab.models import checkpoint_path

        spec = checkpoint_path()
    logging.set_verbosity_error()  # the folder also holds the base pooler (unused by an MLM)
    model = BertForMaskedLM.from_pretrained(spec).eval()
    logging.set_verbosity_warning()
    return model, AutoTokenizer.from_pretrained(spec), spec


def heldout_eval(model, tokenizer, corpus: Path, n_seqs: int = 0, seq_len: int = 128) -> dict:
    lines = [
        line
        for line in (corpus / "heldout.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = pack(lines, tokenizer, seq_len)  # [n, seq_len]
    eval_set = fixed_eval_set(rows, tokenizer, n_seqs or len(rows), seed=EVAL_SEED)
    loss, acc = evaluate(model, eval_set)
    n_masked = int((eval_set["labels"] != -100).sum())
    copies = copy_rate(model, eval_set, tokenizer)
    return {
        "accuracy": acc,
        "loss": loss,
        "n_seqs": len(eval_set["input_ids"]),
        "n_masked": n_masked,
        "copy_rate": copies["copy_rate"],
        "n_copied": copies["n_copied"],
    }


@torch.no_grad()
def copy_rate(model, eval_set: dict, tokenizer, batch_size: int = 32) -> dict:
    """The copy rate of ``model`` (a ``BertForMaskedLM``) over ``eval_set``'s masked positions.

    ``eval_set``: ``{"input_ids", "labels"}``, ``[n, L]`` each (``data.fixed_eval_set``). Runs
    in eval mode and leaves the model in the mode it found it in.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    is_word = word_token_mask(tokenizer)  # [vocab], once for every batch
    copied = n = 0
    for i in range(0, len(eval_set["input_ids"]), batch_size):
        ids, labels = (
            eval_set["input_ids"][i : i + batch_size],
            eval_set["labels"][i : i + batch_size],
        )
        guesses = torch.full_like(ids, -1)  # [B, L]; the decoder runs at the masked positions only
        guesses[labels != -100] = (
            masked_logits(model, ids.to(device), labels.to(device))[0].argmax(-1).cpu()
        )
        flags = copy_flags(ids, labels, guesses, tokenizer, is_word)  # [n_masked in batch]
        copied, n = copied + int(flags.sum()), n + len(flags)
    model.train(was_training)
    return {"copy_rate": copied / max(n, 1), "n_copied": copied, "n_masked": n}

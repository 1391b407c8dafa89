"""Chapter 7's trainer: ``Seq2SeqTrainer`` on the definitions task, the same for the book and the recipe.

:func:`make_trainer` is what ``make bert2bert`` (``recipes/bert2bert/train.py``) fine-tunes the
shipped BERT2BERT with, and what Chapter 7's live run calls for its few steps: AdamW with linear
warm-up and decay, teacher forcing (labels shifted right into decoder inputs by the model
itself), seeded. :class:`CurveLog` appends every logged step to ``curve.jsonl``; Chapter 6b's
masked diffusion trainer logs with it too.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch

from bertlab.bert2bert import definitions

# EncoderDecoderModel warns on every loss it computes from labels that models fine-tuned before
# transformers 4.12 may train differently: true, and nothing to do with a model built today.
warnings.filterwarnings("ignore", message="Version v4.12.0 introduces", category=FutureWarning)

MAX_SOURCE_TOKENS, MAX_TARGET_TOKENS = 48, 32


class Pairs(torch.utils.data.Dataset):
    """Tokenized (source, definition) pairs: ``input_ids`` and ``attention_mask`` for the
    encoder, ``labels`` = the definition's ids without [CLS] (the decoder starts from it), ending
    in [SEP]."""

    def __init__(self, rows: list[dict], tokenizer):
        sources = tokenizer(
            [definitions.source_text(r) for r in rows],
            truncation=True,
            max_length=MAX_SOURCE_TOKENS,
        )
        targets = tokenizer(
            [r["definition"] for r in rows], truncation=True, max_length=MAX_TARGET_TOKENS + 1
        )
        self.items = [
            {"input_ids": s, "attention_mask": m, "labels": t[1:]}
            for s, m, t in zip(
                sources["input_ids"], sources["attention_mask"], targets["input_ids"]
            )
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict:
        return self.items[i]


class CurveLog:
    """A ``TrainerCallback`` (duck-typed) appending every log row to ``curve.jsonl``."""

    def __init__(self, path: Path):
        self.path = path

    def __getattr__(self, name):  # every other callback event: nothing to do
        return lambda *args, **kwargs: None

    def on_log(self, args, state, control, logs=None, **kwargs):
        with open(self.path, "a") as f:
            f.write(json.dumps({"step": state.global_step, **(logs or {})}) + "\n")


def training_arguments(
    out: Path,
    max_steps: int,
    batch_size: int,
    lr: float,
    warmup: int,
    log_steps: int,
    save_steps: int | None,
    seed: int,
    seq2seq: bool = False,
    **more,
):
    """The ``TrainingArguments`` Chapters 6b and 7 train with (``make diffusion``, ``make
    bert2bert`` and the pages' live runs): AdamW with linear warm-up and decay, weight decay 0.01,
    a checkpoint in ``out`` every ``save_steps`` steps (None: none; the last two kept), the loss
    logged every ``log_steps``, the data order seeded too, the CPU unless there is a GPU, no
    reporting. ``seq2seq``: ``Seq2SeqTrainingArguments``; ``more``: any other argument."""
    from transformers import Seq2SeqTrainingArguments, TrainingArguments

    return (Seq2SeqTrainingArguments if seq2seq else TrainingArguments)(
        output_dir=str(out),
        max_steps=max_steps,
        per_device_train_batch_size=batch_size,
        learning_rate=lr,
        warmup_steps=warmup,
        lr_scheduler_type="linear",
        weight_decay=0.01,
        logging_steps=log_steps,
        save_strategy="steps" if save_steps else "no",
        save_steps=save_steps or 500,
        save_total_limit=2,
        seed=seed,
        data_seed=seed,
        report_to=[],
        use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0,
        disable_tqdm=False,
        **more,
    )


def make_trainer(
    model,
    tokenizer,
    rows: list[dict],
    out: Path,
    max_steps: int,
    batch_size: int = 32,
    lr: float = 3e-4,
    warmup: int = 200,
    log_steps: int = 25,
    save_steps: int | None = 250,
    seed: int = 0,
    callbacks: list = (),
):
    """A ``Seq2SeqTrainer`` on ``rows``: AdamW with linear warm-up and decay, a checkpoint in
    ``out`` every ``save_steps`` steps (None: none), the loss logged every ``log_steps``.
    ``make bert2bert`` and Chapter 7's live run both train through it."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer

    training = training_arguments(
        out, max_steps, batch_size, lr, warmup, log_steps, save_steps, seed, seq2seq=True
    )
    return Seq2SeqTrainer(
        model=model,
        args=training,
        train_dataset=Pairs(rows, tokenizer),
        data_collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100),
        callbacks=list(callbacks),
    )

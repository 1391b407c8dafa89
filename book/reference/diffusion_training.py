"""Chapter 6b's trainer: the course checkpoint continued as a masked diffusion model.

The text is Chapter 7's definitions task (:mod:`bertlab.bert2bert.definitions`, training synsets
only) as a BERT sentence pair, ``[CLS] word : sentence [SEP] definition [SEP]``: the prompt (the
first segment) and the special tokens are never masked; every other position is masked with a ratio t ~ U(0, 1) drawn
per sequence and its loss weighted by 1/t (:func:`reference.diffusion.diffusion_mask`, the loss of
:func:`reference.diffusion.diffusion_loss`). The network is the course's ``BertForMaskedLM``,
unchanged and given no input for t (Ou et al. 2024, RADD).

Two tricks buy steps on a CPU: sequences are short (``MAX_SOURCE_TOKENS``,
``MAX_DEFINITION_TOKENS``), and the MLM head runs only at the masked positions
(``model.cls(hidden[masked])``: [M, V] logits instead of [B, T, V]). The word embeddings stay frozen
(the MLM head's output projection is tied to them), so what ships is the rest, in fp16.

Training is transformers' ``Trainer`` with :func:`make_trainer`'s ``compute_loss``: seeded,
a checkpoint every ``save_steps``, so a run resumes after a kill; every logged step goes to
``curve.jsonl`` (:class:`bertlab.bert2bert.trainer.CurveLog`). ``make diffusion``
(``recipes/diffusion/train.py``) trains the shipped model with it and exports what it trained;
Chapter 6b's short live run uses the same trainer.

These pieces live with the book, not in the installed package, because they train through the
functions the masked-diffusion assignment grades.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
import torch.nn.functional as F

from bertlab.bert2bert.trainer import (  # Chapter 6b's live run logs with CurveLog too
    CurveLog,  # noqa: F401
    training_arguments,
)
from reference.diffusion import diffusion_mask

MAX_SOURCE_TOKENS, MAX_DEFINITION_TOKENS = (
    40,
    32,
)  # Chapter 7's limits (sources <= 24 words, definitions <= 16)


def definition_pairs(split: str = "train") -> list[tuple[str, str]]:
    """(source, definition) for every pair of the definitions set's ``split``, in file order; the
    source is Chapter 7's ``word : sentence`` (:func:`bertlab.bert2bert.definitions.source_text`)."""
    from bertlab.bert2bert import definitions

    return [(definitions.source_text(r), r["definition"]) for r in definitions.load(split)]


def encode(tokenizer, source: str, definition: str) -> dict:
    """``[CLS] source [SEP] definition [SEP]`` as a BERT sentence pair: ids, segment ids, and
    which positions may be masked (the definition's; never the prompt or a special token)."""
    source_ids = tokenizer(source, add_special_tokens=False)["input_ids"][:MAX_SOURCE_TOKENS]
    body = tokenizer(definition, add_special_tokens=False)["input_ids"][:MAX_DEFINITION_TOKENS]
    ids = [
        tokenizer.cls_token_id,
        *source_ids,
        tokenizer.sep_token_id,
        *body,
        tokenizer.sep_token_id,
    ]
    segments = [0] * (len(source_ids) + 2) + [1] * (len(body) + 1)
    maskable = [False] * (len(source_ids) + 2) + [True] * len(body) + [False]
    return {"input_ids": ids, "token_type_ids": segments, "maskable": maskable}


class Definitions(torch.utils.data.Dataset):
    """(source, definition) pairs, each encoded by :func:`encode` when a batch asks for it."""

    def __init__(self, pairs: list[tuple[str, str]], tokenizer):
        self.pairs, self.tokenizer = pairs, tokenizer

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> dict:
        return encode(self.tokenizer, *self.pairs[i])


def collate(items: list[dict], pad_id: int = 0) -> dict:
    """Pad a batch: ``input_ids``, ``token_type_ids``, ``attention_mask`` [B, T], ``maskable`` bool [B, T]."""
    T = max(len(x["input_ids"]) for x in items)
    ids = torch.full((len(items), T), pad_id)
    segments = torch.zeros(len(items), T, dtype=torch.long)
    attention = torch.zeros(len(items), T, dtype=torch.long)
    maskable = torch.zeros(len(items), T, dtype=torch.bool)
    for i, x in enumerate(items):
        n = len(x["input_ids"])
        ids[i, :n] = torch.tensor(x["input_ids"])
        segments[i, :n] = torch.tensor(x["token_type_ids"])
        attention[i, :n] = 1
        maskable[i, :n] = torch.tensor(x["maskable"])
    return {
        "input_ids": ids,
        "token_type_ids": segments,
        "attention_mask": attention,
        "maskable": maskable,
    }


def fixed_ratio_mask(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_token_id: int,
    ratio: float,
    generator: torch.Generator | None = None,
):
    """The control for Chapter 6b: :func:`reference.diffusion.diffusion_mask` with every row's t
    fixed at ``ratio`` (0.15: BERT's share, without its 80/10/10 replacement). The same draws are
    taken (``B`` ratios, then ``B * T`` positions), so a seed gives the same batches and positions
    as the diffusion run. Returns (noisy_ids [B, T], masked bool [B, T], t [B])."""
    if not 0 < ratio <= 1:
        raise ValueError(f"a fixed masking ratio must be in (0, 1], got {ratio}")
    B, T = input_ids.shape
    torch.rand(B, generator=generator)  # the ratio draws of diffusion_mask, discarded
    t = torch.full((B,), float(ratio))  # [B]
    masked = (torch.rand(B, T, generator=generator) < t[:, None]) & maskable  # [B, T]
    return input_ids.masked_fill(masked, mask_token_id), masked, t


def diffusion_step_loss(
    model,
    batch: dict,
    mask_token_id: int,
    generator: torch.Generator | None = None,
    fixed_ratio: float | None = None,
):
    """The masked-diffusion loss of one batch, logits computed at the masked positions only.

    Equal to :func:`reference.diffusion.diffusion_loss` on the full logits (sum over masked
    positions of CE / t, divided by the number of maskable positions), for a fraction of the
    MLM head's cost. With ``fixed_ratio`` every row is masked at that ratio instead
    (:func:`fixed_ratio_mask`; 1/t is then a constant factor). Returns (loss, number of masked tokens).
    """
    ids, maskable = batch["input_ids"], batch["maskable"]
    if fixed_ratio is None:
        noisy, masked, t = diffusion_mask(
            ids, maskable, mask_token_id, generator
        )  # [B, T], [B, T], [B]
    else:
        noisy, masked, t = fixed_ratio_mask(ids, maskable, mask_token_id, fixed_ratio, generator)
    hidden = model.bert(
        input_ids=noisy,
        token_type_ids=batch["token_type_ids"],
        attention_mask=batch["attention_mask"],
    ).last_hidden_state  # [B, T, H]
    logits = model.cls(hidden[masked])  # [M, V]
    ce = F.cross_entropy(logits, ids[masked], reduction="none")  # [M]
    weight = (1.0 / t)[:, None].expand_as(masked)[masked]  # [M]
    return (ce * weight).sum() / maskable.sum().clamp(min=1), int(masked.sum())


def make_trainer(
    model,
    tokenizer,
    pairs: list[tuple[str, str]],
    out: Path,
    max_steps: int,
    batch_size: int = 32,
    lr: float = 2e-4,
    warmup: int = 100,
    log_steps: int = 25,
    save_steps: int | None = 250,
    seed: int = 0,
    callbacks: list = (),
    minutes: float | None = None,
    fixed_ratio: float | None = None,
):
    """A ``Trainer`` whose loss is :func:`diffusion_step_loss`; the masks come from torch's global
    generator, which the Trainer seeds and restores on resume. ``make diffusion`` and Chapter 6b's
    live run both train through it; ``fixed_ratio`` trains the control (``make diffusion-control``)."""
    from transformers import Trainer

    class DiffusionTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss, _ = diffusion_step_loss(
                model, inputs, tokenizer.mask_token_id, fixed_ratio=fixed_ratio
            )
            return (loss, None) if return_outputs else loss

    args = training_arguments(
        out, max_steps, batch_size, lr, warmup, log_steps, save_steps, seed,
        remove_unused_columns=False,  # keep maskable: the loss reads it, the model takes no such input
    )  # fmt: skip
    return DiffusionTrainer(
        model=model,
        args=args,
        train_dataset=Definitions(pairs, tokenizer),
        data_collator=lambda items: collate(items, tokenizer.pad_token_id),
        callbacks=list(callbacks) + ([TimeLimit(minutes)] if minutes else []),
    )


class TimeLimit:
    """A ``TrainerCallback`` (duck-typed) that saves and stops after ``minutes`` of this session:
    run the command again to go on from that checkpoint."""

    def __init__(self, minutes: float):
        self.deadline = time.monotonic() + 60 * minutes

    def __getattr__(self, name):
        return lambda *args, **kwargs: None

    def on_step_end(self, args, state, control, **kwargs):
        if time.monotonic() > self.deadline:
            control.should_training_stop = control.should_save = True


def freeze_word_embeddings(model) -> int:
    """Freeze the word embeddings (and the output projection tied to them); returns how many
    parameters still train."""
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def trained_names(model) -> list[str]:
    """The state-dict names training changes: every tensor but the word embeddings and the tied
    decoder weight (the MLM head's bias trains)."""
    frozen = {"bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight"}
    return [k for k in model.state_dict() if k not in frozen and "position_ids" not in k]

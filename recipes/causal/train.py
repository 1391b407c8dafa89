"""``make causal``: the course checkpoint continued as a left-to-right writer, then exported.

The like-for-like decoder Chapter 6b's canvas lacks, and the decoder of Chapter 6's "Who can
write?" box. Everything but the attention mask and the objective is the masked diffusion run's
(``recipes/diffusion/train.py``): the network (the course checkpoint's six layers, loaded as
transformers' ``BertLMHeadModel`` with ``is_decoder=True``, so every position sees itself and
the positions before it only), the text (Chapter 7's training definitions as
``[CLS] word : sentence [SEP] definition [SEP]``, the definition as segment B), the trainer
settings (steps, batch, learning rate, warm-up, seed) and the frozen word embeddings. The loss
is next-token cross-entropy on the definition's tokens and its closing ``[SEP]`` (the writer's
stop), averaged over those tokens; the prompt is read, never predicted. The MLM head runs only
at the positions that predict a target ([M, V] logits, as the diffusion trainer does).

What ships, like the diffusion model's: every trained tensor in fp16, its sha256 and a manifest
in ``bertlab/models/weights/causal/``, which :mod:`bertlab.models.causal` assembles on first use.

    PYTHONPATH=book python -m recipes.causal.train --out runs/causal --minutes 90

Resumable: a checkpoint every ``--save-steps``; it stops after ``--minutes`` and goes on from
``--out`` when run again.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from bertlab.bert2bert.trainer import training_arguments
from bertlab.models.causal import WEIGHTS_DIR
from bertlab.models.encoder import checkpoint_path
from recipes import hf_run
from recipes.diffusion.train import export as export_delta, total_seconds
from reference.diffusion_training import (
    Definitions,
    TimeLimit,
    collate,
    definition_pairs,
    freeze_word_embeddings,
)


def targets(batch: dict) -> torch.Tensor:
    """bool [B, T]: the positions a left-to-right writer is scored on, the definition's tokens
    (``maskable``) and the ``[SEP]`` that closes it (each row's last real position)."""
    scored = batch["maskable"].clone()  # [B, T]
    last = batch["attention_mask"].sum(dim=1) - 1  # [B]
    scored[torch.arange(len(last)), last] = True
    return scored


def causal_step_loss(model, batch: dict):
    """Mean next-token cross-entropy over :func:`targets`, logits at the predicting positions only.

    Position t predicts token t + 1, as ``BertLMHeadModel``'s own loss shifts its labels; equal to
    that loss with every label outside :func:`targets` set to -100. Returns (loss, tokens scored)."""
    ids = batch["input_ids"]  # [B, T]
    hidden = model.bert(
        input_ids=ids,
        token_type_ids=batch["token_type_ids"],
        attention_mask=batch["attention_mask"],
    ).last_hidden_state  # [B, T, H], causal: model.config.is_decoder
    scored = targets(batch)[:, 1:]  # [B, T-1]: token t+1 is a target
    logits = model.cls(hidden[:, :-1][scored])  # [M, V]
    return F.cross_entropy(logits, ids[:, 1:][scored]), int(scored.sum())


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
):
    """A ``Trainer`` whose loss is :func:`causal_step_loss`, with the diffusion trainer's
    arguments (:func:`reference.diffusion_training.make_trainer`)."""
    from transformers import Trainer

    class CausalTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss, _ = causal_step_loss(model, inputs)
            return (loss, None) if return_outputs else loss

    args = training_arguments(
        out, max_steps, batch_size, lr, warmup, log_steps, save_steps, seed,
        remove_unused_columns=False,  # keep maskable: the targets read it
    )  # fmt: skip
    return CausalTrainer(
        model=model,
        args=args,
        train_dataset=Definitions(pairs, tokenizer),
        data_collator=lambda items: collate(items, tokenizer.pad_token_id),
        callbacks=list(callbacks) + ([TimeLimit(minutes)] if minutes else []),
    )


def load_causal(path: str):
    """The course checkpoint as ``BertLMHeadModel`` under a causal mask (``is_decoder=True``)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(path, is_decoder=True)
    return AutoModelForCausalLM.from_pretrained(path, config=config)


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/causal", help="run folder (checkpoints, curve.jsonl)")
    ap.add_argument("--max-steps", type=int, default=6000)
    ap.add_argument(
        "--minutes", type=float, default=90.0, help="stop after this many minutes (0: no limit)"
    )
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-steps", type=int, default=25)
    ap.add_argument("--save-steps", type=int, default=250)
    ap.add_argument(
        "--no-resume", action="store_true", help="start over even if OUT has checkpoints"
    )
    ap.add_argument("--weights", type=Path, default=WEIGHTS_DIR, help="where to export")
    return ap.parse_args(argv)


def main(argv=None) -> None:
    from transformers import AutoTokenizer

    args = parse_args(argv)
    path = checkpoint_path()  # the delta is assembled onto the course checkpoint
    tokenizer = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(args.seed)
    model = load_causal(path)
    trainable = freeze_word_embeddings(model)
    pairs = definition_pairs("train")
    print(
        f"left-to-right writer from the course checkpoint: {trainable:,} parameters train, {len(pairs):,} definitions"
    )
    trainer, start = hf_run.train(
        make_trainer, model, tokenizer, pairs, args, minutes=args.minutes or None
    )
    out = Path(args.out)
    trainer.save_model(str(out / "last"))
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "weights", "no_resume")}
    session = time.perf_counter() - start
    folder = export_delta(
        model,
        out,
        {
            **settings,
            "objective": "next-token cross-entropy on the definition and its closing [SEP], causal mask",
            "steps_done": trainer.state.global_step,
            "last_session_seconds": round(session),
            "total_seconds": total_seconds(out, session),
        },
        args.weights,
        name="bertlab-causal-definitions",
        base=(
            "the course checkpoint (bertlab-minilm-l6-mlm) as BertLMHeadModel, is_decoder=True;"
            " word embeddings frozen"
        ),
    )
    print(f"exported to {folder} ({(folder / 'delta.safetensors').stat().st_size / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()

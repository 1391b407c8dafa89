"""``make bert2bert``: fine-tune the course's BERT2BERT on the definitions task, then export it.

The model is :func:`bertlab.bert2bert.model.warm_start` on the course checkpoint, with the
encoder frozen (:func:`~bertlab.bert2bert.model.freeze_encoder`): the encoder stays the one every
chapter reads with, and only what BERT lacks trains, the decoder copy and its new
cross-attention (14.6M parameters). That halves the backward pass on a CPU and keeps what ships
small: the decoder's trained tensors in fp16 (~29 MB), beside the encoder the course already
ships. Rothe et al. (2020) fine-tune both halves; Chapter 7 says what that costs and gains.

``--share`` trains BERTShare instead (Rothe et al. 2020, section 3;
:func:`~bertlab.bert2bert.model.share_halves`): one set of weights serves both halves, so the
encoder cannot stay frozen; everything but the word embeddings trains (14.7M parameters, about
as many as BERT2BERT's run). Its tensors are exported to ``OUT/weights`` for
:mod:`recipes.bert2bert.evaluate` to score, not shipped: Chapter 7 quotes its figures from
``evaluation.json`` and ships one trained model, not two.

Training is transformers' ``Seq2SeqTrainer`` (teacher forcing: labels shifted right into decoder
inputs by the model itself), seeded, with a checkpoint every ``--save-steps`` steps, so the
same command resumes after a kill. Every logged step goes to ``OUT/curve.jsonl``. At the end
the decoder's trained tensors and a manifest (sha256, config, the run's settings, its loss curve)
are written to ``bertlab/models/weights/bert2bert/``, which :mod:`bertlab.models.bert2bert` assembles.
The trainer itself is :func:`bertlab.bert2bert.trainer.make_trainer`, which Chapter 7 runs live.

    python -m recipes.bert2bert.train --out runs/bert2bert --max-steps 3000
    python -m recipes.bert2bert.train --share --out runs/bertshare --max-steps 3000
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from bertlab.bert2bert import definitions
from bertlab.bert2bert.model import (
    freeze_encoder,
    freeze_word_embeddings,
    trainable_names,
    trained_names,
    warm_start,
)
from bertlab.bert2bert.trainer import make_trainer
from bertlab.models.bert2bert import WEIGHTS_DIR
from bertlab.models.cache import sha256
from recipes import hf_run
from recipes.hardware import hardware

WEIGHTS_FILE = "decoder.safetensors"


def train(args: argparse.Namespace):
    from transformers import AutoTokenizer

    from bertlab.models import checkpoint_path, public_path

    path = (
        checkpoint_path()
    )  # the course checkpoint: what bertlab.models.bert2bert assembles the export onto
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = warm_start(path, tokenizer, tie=args.share, seed=args.seed)
    trainable = freeze_word_embeddings(model) if args.share else freeze_encoder(model)
    print(
        f"{'BERTShare' if args.share else 'BERT2BERT'} from {public_path(path)}: {trainable:,} of "
        f"{sum(p.numel() for p in model.parameters()):,} parameters train"
    )
    rows = definitions.load("train")
    if args.limit:
        rows = rows[: args.limit]
    _, start = hf_run.train(make_trainer, model, tokenizer, rows, args)
    return model, tokenizer, time.perf_counter() - start


def export(
    model, run: Path, settings: dict, weights_dir: Path = WEIGHTS_DIR, share: bool = False
) -> Path:
    """Write the trained tensors (fp16) and the manifest into ``weights_dir``: the decoder's for
    BERT2BERT, every trained one (each shared tensor once) for BERTShare."""
    from safetensors.torch import save_file

    weights_dir.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    names = trainable_names(model) if share else trained_names(model)
    save_file(
        {k: state[k].detach().to(torch.float16).contiguous() for k in names},
        weights_dir / WEIGHTS_FILE,
        metadata={"format": "pt"},
    )
    curve = hf_run.curve(run)
    manifest = {
        "bertlab_name": f"bertlab-{'bertshare' if share else 'bert2bert'}-definitions",
        "weights_file": WEIGHTS_FILE,
        "sha256": sha256(weights_dir / WEIGHTS_FILE),
        "encoder": "shared with the decoder, trained" if share else "the course checkpoint, frozen",
        "shared": share,
        "trained_parameters": sum(state[k].numel() for k in names),
        "settings": settings,
        "hardware": hardware(),
        "curve": [r for r in curve if "loss" in r],
    }
    (weights_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return weights_dir


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bert2bert", help="run folder (checkpoints, curve.jsonl)")
    ap.add_argument("--max-steps", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-steps", type=int, default=25)
    ap.add_argument("--save-steps", type=int, default=250)
    ap.add_argument("--limit", type=int, default=0, help="train on the first N pairs only (0: all)")
    ap.add_argument(
        "--no-resume", action="store_true", help="start over even if OUT has checkpoints"
    )
    ap.add_argument(
        "--share", action="store_true", help="train BERTShare (one set of weights for both halves)"
    )
    ap.add_argument(
        "--weights",
        type=Path,
        default=None,
        help=f"where the trained weights are exported (default: {WEIGHTS_DIR} for BERT2BERT, "
        "OUT/weights for BERTShare)",
    )
    return ap.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    model, _, seconds = train(args)
    settings = {
        k: v for k, v in vars(args).items() if k not in ("out", "weights", "no_resume", "share")
    }
    weights = args.weights or (Path(args.out) / "weights" if args.share else WEIGHTS_DIR)
    folder = export(
        model,
        Path(args.out),
        {**settings, "last_session_seconds": round(seconds)},
        weights,
        args.share,
    )
    print(f"exported to {folder} ({(folder / WEIGHTS_FILE).stat().st_size / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()

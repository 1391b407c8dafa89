"""A recipe's run of a transformers ``Trainer`` (``make bert2bert``, ``make diffusion``): its
folder, its curve, and resuming from the folder's last checkpoint, written once.

Each recipe builds its own trainer (:func:`bertlab.bert2bert.trainer.make_trainer`,
:func:`reference.diffusion_training.make_trainer`, which Chapters 7 and 6b run live); both take
the same settings from the same command-line flags, which :func:`train` passes on.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bertlab.bert2bert.trainer import CurveLog


def train(make_trainer, model, tokenizer, data, args, **more):
    """``make_trainer(model, tokenizer, data, OUT, ...)`` with ``args``' ``--max-steps``,
    ``--batch-size``, ``--lr``, ``--warmup``, ``--log-steps``, ``--save-steps`` and ``--seed``,
    every logged step into ``OUT/curve.jsonl``, and ``more``; then trained, resuming from
    ``OUT``'s last ``checkpoint-*`` unless ``--no-resume``. Returns the trainer and the
    ``time.perf_counter()`` its training started at."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    trainer = make_trainer(
        model,
        tokenizer,
        data,
        out,
        args.max_steps,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup=args.warmup,
        log_steps=args.log_steps,
        save_steps=args.save_steps,
        seed=args.seed,
        callbacks=[CurveLog(out / "curve.jsonl")],
        **more,
    )
    resume = any(out.glob("checkpoint-*")) and not args.no_resume
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=True if resume else None)
    return trainer, start


def curve(run: Path) -> list[dict]:
    """The run's logged steps, as :class:`~bertlab.bert2bert.trainer.CurveLog` wrote them."""
    return [json.loads(line) for line in (Path(run) / "curve.jsonl").read_text().splitlines()]

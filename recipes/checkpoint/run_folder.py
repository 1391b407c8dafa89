"""A training run's folder (``runs/train``): its checkpoint written atomically, and a run seeded
from the shipped weights so that a new stage can start on a machine without the old run's
folder (``train.py --init-from``). The schedule a run follows is :func:`lr_factor`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

WARMUP = 100  # steps of linear learning-rate warm-up


def lr_factor(step: int, progress: float) -> float:
    """Linear warmup over WARMUP steps, then linear decay to 10% as ``progress`` goes 0 -> 1.

    ``step`` counts from the start of the schedule (the run's step 0, or the step a run started
    with ``--init-from`` was seeded at); ``progress`` is the fraction of the budget used since
    then: steps / max_steps, or, with ``--minutes``, trained wall time / time budget (so a CPU
    shared with other work still ends its run with a decayed learning rate).
    """
    if step < WARMUP:
        return (step + 1) / WARMUP
    return max(0.1, 1.0 - 0.9 * min(1.0, progress))


def save(path: Path, state: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a kill -9 leaves the previous checkpoint intact


def seed_from_shipped(weights_dir: Path, out: Path) -> None:
    """Write ``out/checkpoint.pt`` (model only), ``curve.jsonl`` and ``prior_stages.json`` from a
    shipped checkpoint, so that the next stage can start on a machine without its run folder.

    The step count and wall time go on from the shipped run's; the optimizer and the schedule
    start afresh at that step (``schedule_from_step``)."""
    from transformers import BertForMaskedLM
    from transformers.utils import logging

    from bertlab.models import encoder

    manifest = encoder.verify(weights_dir)
    logging.set_verbosity_error()  # the assembled folder also holds the base pooler (unused by an MLM)
    model = BertForMaskedLM.from_pretrained(encoder.checkpoint_path(weights_dir))
    logging.set_verbosity_warning()
    t = manifest["training"]
    st = {
        "step": t["steps"],
        "epoch": 0,
        "index": 0,
        "wall": float(t["wall_s"]),
        "budget_s": 0.0,
        "schedule_from_step": t["steps"],
        "schedule_from_wall": float(t["wall_s"]),
    }
    out.mkdir(parents=True, exist_ok=True)
    curve = (Path(weights_dir) / "curve.jsonl").read_bytes()
    (out / "prior_stages.json").write_text(
        json.dumps(
            {
                "stages": manifest["stages"],
                "curve_rows": len(curve.splitlines()),
                "manifest": manifest["files"],
            },
            indent=1,
        )
        + "\n"
    )
    (out / "curve.jsonl").write_bytes(curve)
    save(
        out / "checkpoint.pt",
        {
            "model": model.state_dict(),
            "state": st,
            "seeded_from": manifest["files"],
            "args": {"batch_size": str(t["batch_size"]), "threads": str(t["threads"])},
            "seq_len": t["seq_len"],
        },
    )
    print(f"seeded {out} from {weights_dir} at step {st['step']}")

"""``make diffusion``: continue the course checkpoint as a masked diffusion model, then export it.

The objective, the text and the trainer are Chapter 6b's (``book/reference/diffusion_training.py``,
which trains through the masking and the loss the masked-diffusion assignment grades, so it is
never installed): t ~ U(0, 1) per pair, the definition masked at that ratio, the loss weighted by
1/t, the prompt never masked. This recipe runs that trainer on every training pair, resumable (a
checkpoint every ``--save-steps``; it stops after ``--minutes`` and goes on when run again), then
exports the trained tensors (fp16), their sha256 and a manifest (the settings, the curve) to
``bertlab/models/weights/diffusion/``, which :mod:`bertlab.models.diffusion` assembles on first use.

    PYTHONPATH=book python -m recipes.diffusion.train --out runs/diffusion --minutes 85

``--fixed-ratio 0.15`` trains the control Chapter 6b lacks: the same trainer, pairs, format, seed,
steps and frozen word embeddings, with every pair masked at 0.15 instead of t ~ U(0, 1); it
exports to ``bertlab/models/weights/diffusion-fixed-15/`` (load it with
``bertlab.models.diffusion.diffusion_path(weights_dir)``). ``make diffusion-control`` runs it.

(``PYTHONPATH=book``: the book's ``reference`` package, where the trainer lives.)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from bertlab.models.cache import sha256
from bertlab.models.diffusion import WEIGHTS_DIR
from bertlab.models.encoder import checkpoint_path
from recipes import hf_run
from recipes.hardware import hardware
from reference.diffusion_training import (
    definition_pairs,
    freeze_word_embeddings,
    make_trainer,
    trained_names,
)


def control_weights_dir(fixed_ratio: float) -> Path:
    """Where a fixed-ratio control exports: ``diffusion-fixed-15`` beside the shipped model's folder."""
    return WEIGHTS_DIR.parent / f"diffusion-fixed-{round(100 * fixed_ratio)}"


def total_seconds(run: Path, this_session: float) -> int:
    """Wall-clock seconds over every session of a resumable run (kept in ``sessions.json``)."""
    log = run / "sessions.json"
    sessions = json.loads(log.read_text()) if log.exists() else []
    sessions.append(round(this_session))
    log.write_text(json.dumps(sessions) + "\n")
    return sum(sessions)


def export(
    model,
    run: Path,
    settings: dict,
    weights_dir: Path,
    name: str | None = None,
    base: str = "the course checkpoint (bertlab-minilm-l6-mlm); word embeddings frozen",
) -> Path:
    """The trained tensors (fp16) and the manifest (sha256, settings, curve) into ``weights_dir``;
    ``name`` and ``base`` describe the model (``recipes/causal/train.py`` exports through it too)."""
    from safetensors.torch import save_file

    weights_dir.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    names = trained_names(model)
    save_file(
        {k: state[k].detach().to(torch.float16).contiguous() for k in names},
        weights_dir / "delta.safetensors",
        metadata={"format": "pt"},
    )
    curve = hf_run.curve(run)
    fixed = settings.get("fixed_ratio")
    name = name or (
        f"bertlab-fixed-ratio-{round(100 * fixed)}-definitions"
        if fixed
        else "bertlab-masked-diffusion-definitions"
    )
    manifest = {
        "bertlab_name": name,
        "weights_file": "delta.safetensors",
        "sha256": sha256(weights_dir / "delta.safetensors"),
        "base": base,
        "trained_parameters": sum(state[k].numel() for k in names),
        "settings": settings,
        "hardware": hardware(),
        "curve": [r for r in curve if "loss" in r],
    }
    (weights_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return weights_dir


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/diffusion", help="run folder (checkpoints, curve.jsonl)")
    ap.add_argument("--max-steps", type=int, default=6000)
    ap.add_argument(
        "--minutes",
        type=float,
        default=85.0,
        help="stop after this many minutes of this session (0: no limit)",
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
    ap.add_argument(
        "--fixed-ratio",
        type=float,
        default=None,
        help="mask every pair at this ratio instead of t ~ U(0, 1): the control run (e.g. 0.15)",
    )
    ap.add_argument(
        "--weights",
        type=Path,
        default=None,
        help=f"where to export (default: {WEIGHTS_DIR}, or diffusion-fixed-NN beside it with --fixed-ratio)",
    )
    args = ap.parse_args(argv)
    if args.fixed_ratio is not None and not 0 < args.fixed_ratio <= 1:
        ap.error(f"--fixed-ratio must be in (0, 1], got {args.fixed_ratio}")
    if args.weights is None:
        args.weights = (
            WEIGHTS_DIR if args.fixed_ratio is None else control_weights_dir(args.fixed_ratio)
        )
    return args


def main(argv=None) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    args = parse_args(argv)
    path = (
        checkpoint_path()
    )  # the delta is assembled onto the course checkpoint, whatever BERTLAB_MODEL says
    tokenizer = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(args.seed)
    model = AutoModelForMaskedLM.from_pretrained(path)
    trainable = freeze_word_embeddings(model)
    pairs = definition_pairs("train")
    objective = (
        "masked diffusion"
        if args.fixed_ratio is None
        else f"fixed-ratio control (t = {args.fixed_ratio})"
    )
    print(
        f"{objective} from the course checkpoint: {trainable:,} parameters train, {len(pairs):,} definitions"
    )
    trainer, start = hf_run.train(
        make_trainer, model, tokenizer, pairs, args,
        minutes=args.minutes or None, fixed_ratio=args.fixed_ratio,
    )  # fmt: skip
    out = Path(args.out)
    trainer.save_model(str(out / "last"))
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "weights", "no_resume")}
    session = time.perf_counter() - start
    folder = export(
        model,
        out,
        {
            **settings,
            "steps_done": trainer.state.global_step,
            "last_session_seconds": round(session),
            "total_seconds": total_seconds(out, session),
        },
        args.weights,
    )
    print(f"exported to {folder} ({(folder / 'delta.safetensors').stat().st_size / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()

"""Apply the rule for shipping a new course checkpoint (``RUNS.md``) to a candidate's evaluation.

    python -m recipes.checkpoint.decide runs/evaluation-5a.json \
        [--shipped bertlab/models/weights/encoder/evaluation.json]
    python -m recipes.checkpoint.decide --run runs/train-5b

The second form does a stage's whole check in one command: it exports the run's weights to
``RUN/weights`` (``export.py``; the shipped ones are not touched), evaluates them on mix v4's
held-out split and the probes into ``RUN/evaluation.json`` (``evaluate.py``), and applies the
rule to that, with the delta's size.

Prints each criterion with the candidate's figure and whether it holds, then SHIP or KEEP, and
exits 0 only for SHIP. The candidate's JSON is what ``recipes.checkpoint.evaluate --json`` writes
for it (with ``--corpus runs/corpus-v4`` first, the current mix); the delta's size is read from
``--weights``, the folder ``export`` wrote it to, when given.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bertlab.models.encoder import WEIGHTS_DIR
from recipes.checkpoint.export import MAX_BYTES

FLAGSHIP = "The capital of France is [MASK]."
FLAGSHIP_ANSWER = "paris"
PROBES_TOP1, PROBES_TOP5 = 0.45, 0.70
HELDOUT_ACCURACY, HELDOUT_MIX = 0.50, "v4"


def criteria(
    candidate: dict, shipped: dict, delta_bytes: int | None = None
) -> list[tuple[str, str, bool]]:
    """``(criterion, the candidate's figure, holds)`` for every line of the rule."""
    probes = candidate["probes"]
    flagship = next((p for p in probes["per_probe"] if p["text"] == FLAGSHIP), None)
    heldout = next((h for h in candidate.get("heldout_sets", []) if h["mix"] == HELDOUT_MIX), None)
    shipped_heldout = next(
        (h for h in shipped.get("heldout_sets", []) if h["mix"] == HELDOUT_MIX), None
    )
    if heldout is None or shipped_heldout is None or "copy_rate" not in shipped_heldout:
        raise SystemExit(
            f"bertlab: both evaluations need mix {HELDOUT_MIX}'s held-out set with a copy rate; "
            f"run `python -m recipes.checkpoint.evaluate --corpus runs/corpus-v4 --json ...` on each"
        )
    rows = [
        (
            f"{FLAGSHIP!r} fills {FLAGSHIP_ANSWER} first",
            flagship["top5"][0] if flagship else "(probe missing)",
            bool(flagship) and flagship["top5"][0] == FLAGSHIP_ANSWER,
        ),
        (
            f"probes top-1 >= {PROBES_TOP1:.0%}",
            f"{probes['top1']:.1%}",
            probes["top1"] >= PROBES_TOP1,
        ),
        (
            f"probes top-5 >= {PROBES_TOP5:.0%}",
            f"{probes['top5']:.1%}",
            probes["top5"] >= PROBES_TOP5,
        ),
        (
            f"held-out accuracy (mix {HELDOUT_MIX}) >= {HELDOUT_ACCURACY}",
            f"{heldout['accuracy']:.4f}",
            heldout["accuracy"] >= HELDOUT_ACCURACY,
        ),
        (
            f"held-out copy rate < the shipped {shipped_heldout['copy_rate']:.4f}",
            f"{heldout['copy_rate']:.4f}",
            heldout["copy_rate"] < shipped_heldout["copy_rate"],
        ),
    ]
    if delta_bytes is not None:
        rows.append(
            (
                f"delta <= {MAX_BYTES / 2**20:.0f} MiB",
                f"{delta_bytes / 2**20:.1f} MiB",
                delta_bytes <= MAX_BYTES,
            )
        )
    return rows


def evaluate_run(run: Path, corpus: Path) -> tuple[Path, Path]:
    """Export ``run`` to ``run/weights`` and evaluate it into ``run/evaluation.json``.

    Returns ``(evaluation json, weights folder)``. The assembled model goes to the usual cache
    (:func:`bertlab.models.cache_root`), keyed by the exported manifest like the shipped checkpoint's."""
    from bertlab.models import checkpoint_path
    from recipes.checkpoint import evaluate, export

    if not (run / "checkpoint.pt").is_file():
        raise SystemExit(
            f"bertlab: {run}/checkpoint.pt not found; train a stage into {run} first (RUNS.md)"
        )
    if not (corpus / "heldout.txt").is_file():
        raise SystemExit(
            f"bertlab: {corpus}/heldout.txt not found; build it with "
            f"`python -m recipes.checkpoint.corpus.build --mix {HELDOUT_MIX} --out {corpus}`"
        )
    weights, result = run / "weights", run / "evaluation.json"
    weights.mkdir(exist_ok=True)
    export.export(run, weights, corpora=[corpus])
    model = checkpoint_path(weights)
    evaluate.main(
        [
            "--model",
            model,
            "--corpus",
            str(corpus),
            "--no-load",
            "--no-baselines",
            "--json",
            str(result),
        ]
    )
    return result, weights


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("candidate", type=Path, nargs="?", help="the candidate's evaluation JSON")
    ap.add_argument(
        "--run",
        type=Path,
        default=None,
        help="a stage's training folder: export, evaluate and decide it (instead of CANDIDATE)",
    )
    ap.add_argument(
        "--corpus",
        type=Path,
        default=Path(f"runs/corpus-{HELDOUT_MIX}"),
        help=f"with --run: the built mix {HELDOUT_MIX} corpus whose held-out split to score",
    )
    ap.add_argument("--shipped", type=Path, default=WEIGHTS_DIR / "evaluation.json")
    ap.add_argument(
        "--weights", type=Path, default=None, help="the candidate's exported weights folder"
    )
    args = ap.parse_args(argv)
    if (args.candidate is None) == (args.run is None):
        ap.error("give either a candidate's evaluation JSON or --run RUN")
    if args.run is not None:
        args.candidate, args.weights = evaluate_run(args.run, args.corpus)
    for path in (args.candidate, args.shipped):
        if not path.is_file():
            raise SystemExit(
                f"bertlab: {path} not found; write it with `python -m recipes.checkpoint.evaluate --json {path}`"
            )
    delta = (
        sum(p.stat().st_size for p in args.weights.iterdir() if p.is_file())
        if args.weights
        else None
    )
    rows = criteria(
        json.loads(args.candidate.read_text()), json.loads(args.shipped.read_text()), delta
    )
    for name, figure, holds in rows:
        print(f"  {'holds ' if holds else 'FAILS '} {name:58s} {figure}")
    ship = all(holds for _, _, holds in rows)
    print(
        "SHIP: every line of the rule holds"
        if ship
        else f"KEEP the shipped checkpoint: {sum(not h for *_, h in rows)} of {len(rows)} lines fail"
    )
    return 0 if ship else 1


if __name__ == "__main__":
    sys.exit(main())

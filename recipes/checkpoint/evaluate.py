"""Evaluate a masked-LM checkpoint: held-out masked-token accuracy, cloze probes, load cost.

- Held-out accuracy: BERT's masking (Devlin et al. 2019, section 3.1) applied once, with a
  fixed seed, to the corpus's held-out split; top-1 accuracy and cross-entropy over the masked
  positions (the same measure as the training curve, on more rows).
- Copy rate (:mod:`bertlab.copying`, :func:`copy_rate`): the share of those masked positions
  filled with a word the model could see elsewhere in the same sentence while the answer was not
  there; on the probes, which ones were answered that way.
- Probes: :data:`bertlab.probes.PROBES` through the model (:func:`bertlab.probes.probe_eval`),
  top-1 / top-5 hit rates and per-probe answers.
- Baselines (:mod:`recipes.checkpoint.baselines`): what a lookup of the training text scores
  on the same held-out positions and probes, and the model training started from.
- :func:`measure_load`: cold load (``BertForMaskedLM.from_pretrained``) plus one forward pass
  on a 2 x 16 batch, in a fresh subprocess, with its wall time and peak RSS.

    python -m recipes.checkpoint.evaluate [--model PATH|base] [--corpus runs/corpus-v4 ...] [--json OUT]

With several ``--corpus``, the first is the headline ("heldout") and every one is reported in
"heldout_sets" (the shipped run was trained in four stages, on mixes v1, v2, v3 and v4 of the
corpus). The JSON leaves out the model's path, which is this machine's.

``--model`` defaults to the embedded checkpoint; ``base`` is the starting point: MiniLM with
a fresh MLM head whose bias is the log unigram frequency (step 0 of the training curve).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from bertlab.probes import probe_eval
from recipes.checkpoint.corpus.build import read_manifest
from recipes.checkpoint.data import (
    corpus_id,
)
from recipes.checkpoint.heldout import heldout_eval, load_model

_LOAD_SCRIPT = r"""
import json, resource, sys, time
t0 = time.time()
import torch
from transformers import AutoTokenizer, BertForMaskedLM
t1 = time.time()
torch.set_num_threads(2)
model = BertForMaskedLM.from_pretrained(sys.argv[1]).eval()
tok = AutoTokenizer.from_pretrained(sys.argv[1])
batch = tok(["the cat sat on the [MASK] ."] * 2, padding="max_length", max_length=16, return_tensors="pt")
with torch.no_grad():
    logits = model(**batch).logits  # [2, 16, vocab]
t2 = time.time()
try:  # this process's own high-water mark; ru_maxrss would carry a forking parent's over exec
    peak_kb = int([line for line in open("/proc/self/status") if line.startswith("VmHWM")][0].split()[1])
except OSError:
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"import_s": round(t1 - t0, 2), "load_forward_s": round(t2 - t1, 2),
                  "total_s": round(t2 - t0, 2), "peak_rss_mb": round(peak_kb / 1024, 1),
                  "logits_shape": list(logits.shape)}))
"""


def measure_load(model_path: str) -> dict:
    """Cold load + one 2x16 forward in a fresh interpreter: wall seconds and peak RSS (MB)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_SCRIPT, model_path],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--model", default=None, help="HF folder, 'base', or omitted for the embedded checkpoint"
    )
    ap.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=None,
        help="built corpus whose heldout.txt to score (repeatable; default runs/corpus-v4)",
    )
    ap.add_argument(
        "--run",
        type=Path,
        default=Path("runs/train"),
        help="for 'base': reuse its tokenized corpus",
    )
    ap.add_argument("--eval-seqs", type=int, default=0, help="held-out rows to use (0: all)")
    ap.add_argument("--no-load", action="store_true", help="skip the cold-load measurement")
    ap.add_argument(
        "--no-baselines",
        action="store_true",
        help="skip the lookup baselines and the starting point (recipes/checkpoint/baselines.py)",
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    torch.manual_seed(0)
    corpora = args.corpus or [Path("runs/corpus-v4")]
    model, tokenizer, path = load_model(args.model, corpora[0], args.run)
    result = {"model": args.model or "embedded", "path": path}
    sets = []
    for corpus in corpora:
        if (corpus / "heldout.txt").is_file():
            sets.append(
                {
                    "corpus": corpus.name,
                    "mix": read_manifest(corpus)["mix"],
                    "corpus_id": corpus_id(corpus),
                    **heldout_eval(model, tokenizer, corpus, args.eval_seqs),
                }
            )
        elif args.corpus:  # asked for explicitly: say so rather than skip it
            raise SystemExit(
                f"bertlab: {corpus}/heldout.txt not found; build it with "
                f"`python -m recipes.checkpoint.corpus.build --out {corpus}`"
            )
    if sets:
        result["heldout"], result["heldout_sets"] = sets[0], sets
    result["probes"] = probe_eval(model, tokenizer)
    if sets and not args.no_baselines and args.model != "base":
        from recipes.checkpoint.baselines import attach, write_counts

        scored = [c for c in corpora if (c / "heldout.txt").is_file()]
        attach(result, scored, tokenizer, start=True)
        if args.json:  # the headline corpus's token counts, beside evaluation.json
            args.json.parent.mkdir(parents=True, exist_ok=True)
            write_counts(scored[0], tokenizer, args.json.parent / "unigram.json")
    if not args.no_load and args.model != "base":
        result["load"] = measure_load(path)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({k: v for k, v in result.items() if k != "path"}, indent=1) + "\n"
        )
    for h in result.get("heldout_sets", []):
        print(
            f"held-out {h['corpus']} (mix {h['mix']}): accuracy {h['accuracy']:.4f} over {h['n_masked']} tokens, "
            f"copy rate {h['copy_rate']:.4f}"
        )
    h, p = result.get("heldout", {}), result["probes"]
    print(
        f"{result['model']}: held-out masked accuracy {h.get('accuracy', float('nan')):.4f} "
        f"(loss {h.get('loss', float('nan')):.3f}, {h.get('n_masked', 0)} tokens); "
        f"probes top-1 {p['top1']:.2f} top-5 {p['top5']:.2f} (n={p['n']}); load {result.get('load')}"
    )
    for r in p["per_probe"]:
        mark = "+" if r["top1_hit"] else ("~" if r["top5_hit"] else "-")
        print(f"  {mark}{'c' if r['copied'] else ' '} {r['text']:70s} {' '.join(r['top5'])}")
    return result


if __name__ == "__main__":
    main()

"""Score BERT2BERT on the held-out definitions; ``make bert2bert`` runs it after training.

Five writers on the same held-out sample (:func:`bertlab.bert2bert.scores.held_out_sample`):
the untrained BERT2BERT (warm-started, cross-attention random), the fine-tuned one with greedy
search and with beam search, BERTShare (one set of weights for both halves, trained by
``make bert2bert``'s second run, greedy), and the course's decoder (SmolLM2-135M-Instruct,
Chapter 6) shown three training pairs as examples. Writes
``bertlab/models/weights/bert2bert/evaluation.json``, which Chapter 7 reads and re-checks on a
subset in its own run.

    python -m recipes.bert2bert.evaluate [--n 300] [--bertshare runs/bertshare/weights] [--only WRITER ...]

``--only`` rescores the named writers and keeps the others' figures from the existing file (the
same sample, checked): a retrained BERTShare costs its own minute, not the decoder's five.
The two search settings, :data:`~bertlab.bert2bert.scores.GREEDY` and
:data:`~bertlab.bert2bert.scores.BEAM`, live in the package, where Chapter 7 reuses them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bertlab.bert2bert import definitions
from bertlab.models.bert2bert import WEIGHTS_DIR, bert2bert_path
from bertlab.bert2bert.scores import (
    BEAM,
    GREEDY,
    few_shot_conversation,
    held_out_sample,
    rouge,
    write_definitions,
)

N_SHOTS = 3


def decoder_definitions(rows: list[dict]) -> list[str]:
    """The course decoder's definitions, each prompted with the same three training pairs."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from bertlab.models.decoder import decoder_path
    from bertlab.retrieval.answering import generate_answers

    path = decoder_path()
    decoder, tokenizer = (
        AutoModelForCausalLM.from_pretrained(path),
        AutoTokenizer.from_pretrained(path),
    )
    examples = definitions.load("train")[::5000][:N_SHOTS]
    return generate_answers(
        decoder, tokenizer, [few_shot_conversation(r, examples) for r in rows], max_new_tokens=24
    )


def bertshare(weights_dir: Path):
    """BERTShare as ``python -m recipes.bert2bert.train --share`` exported it, and its manifest."""
    from bertlab.models.bert2bert import load_trained, manifest

    if not (weights_dir / "manifest.json").is_file():
        raise SystemExit(
            f"bertlab: no trained BERTShare in {weights_dir}; train it with "
            f"`python -m recipes.bert2bert.train --share --out {weights_dir.parent}` (or `make bert2bert`)"
        )
    record = manifest(weights_dir)
    return load_trained(weights_dir, record)[0], record


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300, help="held-out pairs to score")
    ap.add_argument("--out", type=Path, default=WEIGHTS_DIR / "evaluation.json")
    ap.add_argument(
        "--bertshare",
        type=Path,
        default=Path("runs/bertshare/weights"),
        help="BERTShare's exported weights (train --share writes them)",
    )
    ap.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="WRITER",
        help="rescore only this writer (repeatable); the others are kept from --out",
    )
    args = ap.parse_args(argv)

    from transformers import AutoTokenizer, EncoderDecoderModel

    from bertlab.bert2bert.model import warm_start
    from bertlab.models.encoder import checkpoint_path

    rows = held_out_sample(args.n)
    references = [r["definition"] for r in rows]
    tokenizer = AutoTokenizer.from_pretrained(checkpoint_path())
    trained = EncoderDecoderModel.from_pretrained(bert2bert_path())
    shared, shared_record = bertshare(args.bertshare)
    writers = {
        "untrained": lambda: write_definitions(
            warm_start(checkpoint_path(), tokenizer), tokenizer, rows, **GREEDY
        ),
        "fine-tuned, greedy": lambda: write_definitions(trained, tokenizer, rows, **GREEDY),
        "fine-tuned, beam 4": lambda: write_definitions(trained, tokenizer, rows, **BEAM),
        "BERTShare, greedy": lambda: write_definitions(shared, tokenizer, rows, **GREEDY),
        f"decoder, {N_SHOTS} examples": lambda: decoder_definitions(rows),
    }
    everyone, results = list(writers), {}
    if args.only:
        unknown = sorted(set(args.only) - set(writers))
        if unknown:
            raise SystemExit(f"bertlab: no writer {unknown}; the writers are {sorted(writers)}")
        kept = json.loads(args.out.read_text()) if args.out.is_file() else {}
        if kept.get("synsets") != [r["synset"] for r in rows]:
            raise SystemExit(
                f"bertlab: {args.out} scored another sample; rescore every writer (drop --only)"
            )
        results = {
            name: kept["results"][name]
            for name in writers
            if name not in args.only and name in kept["results"]
        }
        missing = sorted(set(writers) - set(args.only) - set(results))
        if missing:
            raise SystemExit(
                f"bertlab: {args.out} has no figures for {missing}; rescore them too (--only) or drop --only"
            )
        writers = {name: write for name, write in writers.items() if name in args.only}
    for name, write in writers.items():
        start = time.perf_counter()
        written = write()
        results[name] = {
            **rouge(written, references),
            "seconds": time.perf_counter() - start,
            "written": written,
        }
        print(
            f"{name:24} "
            + "  ".join(f"{k} {v:5.1f}" for k, v in results[name].items() if k != "written")
        )
    bertshare_run = {
        "parameters": sum(p.numel() for p in shared.parameters()),  # a shared tensor once
        "trained_parameters": shared_record["trained_parameters"],
        "settings": shared_record["settings"],
        "hardware": shared_record["hardware"],
        "sha256": shared_record["sha256"],
        "final_loss": shared_record["curve"][-1]["loss"],
    }
    results = {name: results[name] for name in everyone}  # the writers' order, however scored
    record = {
        "n": args.n,
        "synsets": [r["synset"] for r in rows],
        "beam": BEAM,
        "results": results,
        "bertshare": bertshare_run,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()

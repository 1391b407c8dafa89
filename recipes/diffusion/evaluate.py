"""What Chapter 6b's canvas writers write on Chapter 7's 300 held-out senses, recorded once.

Chapter 6b compares its writers with a paired bootstrap over senses, and its key comparison, the
diffusion model against its fixed-15% control, is one training run each: the more senses, the
less of the noise between the two is the sample's. Writing 300 senses with six canvas samplers
takes several CPU minutes, more than the book build can spare, so this recipe writes them and
the page reads the texts, scores them, and re-writes one group of senses itself to check that
they are what the shipped models write (as Chapter 7 does with ``make bert2bert``'s
``evaluation.json``).

The writers are the page's: the course checkpoint (confidence order, and Chapter 6's
Mask-Predict), the shipped diffusion model (confidence order, random order, one token per pass,
and a canvas of 12 masks for every sense) and the shipped control (confidence order). Each
canvas has as many masks as WordNet's definition has tokens (at most 32) and ceil(N / 2) passes,
and the senses are written in groups of equal length, one batch per group, in the order the
page forms them (the random order draws from one generator, seeded 0, per group). Writes
``bertlab/models/weights/diffusion/evaluation.json``: the sample's synsets, the lengths, and per
writer the texts and the forward passes (a batched pass counted once per canvas in it).

    PYTHONPATH=book python -m recipes.diffusion.evaluate [--threads 1]

(``PYTHONPATH=book``: the samplers live with the book, ``reference``.) One thread by default,
as the book build runs: the page's re-check then repeats the arithmetic exactly.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from bertlab.bert2bert import definitions
from bertlab.bert2bert.scores import held_out_sample
from bertlab.generation import ForwardCounter
from bertlab.models.diffusion import (
    CONTROL_DIR,
    EVALUATION,
    WEIGHTS_DIR,
    control_path,
    diffusion_path,
)
from bertlab.models.encoder import checkpoint_path
from recipes.hardware import hardware
from reference import diffusion_sampler
from reference.bert_sampling import mask_predict

N_SENSES = 300
FIXED = 12  # the length section's canvas: 12 masks for every sense


def confident(model, tokenizer, sources, n):
    return diffusion_sampler.fill_canvas(model, tokenizer, sources, n, -(-n // 2))[0]


def random_order(model, tokenizer, sources, n):
    return diffusion_sampler.fill_canvas(
        model,
        tokenizer,
        sources,
        n,
        -(-n // 2),
        order="random",
        generator=torch.Generator().manual_seed(0),
    )[0]


def one_per_pass(model, tokenizer, sources, n):
    return diffusion_sampler.fill_canvas(model, tokenizer, sources, n, n)[0]


def chapter6_mask_predict(model, tokenizer, sources, n):
    return mask_predict(model, tokenizer, sources, n, -(-n // 2))


def fixed_length(model, tokenizer, sources, n):
    return diffusion_sampler.fill_canvas(model, tokenizer, sources, FIXED, FIXED // 2)[0]


#: writer -> (model, sampler), in the page's order and under the page's names
WRITERS = {
    "course checkpoint, canvas (confidence)": ("checkpoint", confident),
    "course checkpoint, Mask-Predict (Chapter 6)": ("checkpoint", chapter6_mask_predict),
    "diffusion model, canvas (confidence)": ("diffusion", confident),
    "diffusion model, canvas (random order)": ("diffusion", random_order),
    "diffusion model, canvas (confidence, K = N)": ("diffusion", one_per_pass),
    "fixed-15% control, canvas (confidence)": ("control", confident),
    f"diffusion model, canvas ({FIXED} masks)": ("diffusion", fixed_length),
}


def length_groups(tokenizer, references: list[str]) -> tuple[list[int], dict[int, list[int]]]:
    """Each definition's length in tokens (at most 32), and the senses of each length in the
    order they first occur: the batches the page writes in."""
    lengths = [len(tokenizer(d, add_special_tokens=False)["input_ids"][:32]) for d in references]
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(n, []).append(i)
    return lengths, groups


def write(model, tokenizer, sampler, sources, groups) -> dict:
    """The texts a sampler writes, one batch per length group, and the forward passes."""
    texts, passes = [None] * len(sources), 0
    for n, group in groups.items():
        with ForwardCounter(model) as counter:
            written = sampler(model, tokenizer, [sources[i] for i in group], n)
        passes += counter.calls * len(group)
        for i, ids in zip(group, written):
            texts[i] = tokenizer.decode(ids, skip_special_tokens=True).strip()
    return {"written": texts, "passes": passes}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=EVALUATION)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint_path())
    models = {
        name: AutoModelForMaskedLM.from_pretrained(path).eval()
        for name, path in (
            ("checkpoint", checkpoint_path()),
            ("diffusion", diffusion_path()),
            ("control", control_path()),
        )
    }
    sample = held_out_sample(N_SENSES)
    sources = [definitions.source_text(r) for r in sample]
    lengths, groups = length_groups(tokenizer, [r["definition"] for r in sample])
    writers = {}
    for name, (model, sampler) in WRITERS.items():
        start = time.perf_counter()
        writers[name] = {
            "model": model,
            **write(models[model], tokenizer, sampler, sources, groups),
            "seconds": round(time.perf_counter() - start, 1),
        }
        print(f"{name:48} {writers[name]['seconds']:6.1f} s")
    record = {
        "n": N_SENSES,
        "synsets": [r["synset"] for r in sample],
        "lengths": lengths,
        "threads": args.threads,
        "hardware": hardware(),
        # which weights wrote them: the shipped manifests' sha256
        "sha256": {
            "diffusion": json.loads((WEIGHTS_DIR / "manifest.json").read_text())["sha256"],
            "control": json.loads((CONTROL_DIR / "manifest.json").read_text())["sha256"],
        },
        "writers": writers,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()

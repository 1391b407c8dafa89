"""Writing definitions and scoring them (Chapter 7, ``make bert2bert``).

ROUGE (Lin 2004) with Google's ``rouge-score`` package (Rothe et al. 2020 report ROUGE F1 but name
no implementation, so their numbers and ours need not match to the decimal): ROUGE-1 and ROUGE-2
count the words and word pairs a written definition shares with WordNet's, ROUGE-L the longest
common subsequence; each is an F1 between 0 and 100 (with Porter stemming), averaged over the
held-out pairs. Exact match compares lower-cased words.
"""

from __future__ import annotations

import statistics
from collections import Counter

import torch
from tqdm.auto import tqdm

from bertlab.bert2bert import definitions

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
#: ``generate`` settings of the two searches Chapter 7 compares and ``make bert2bert`` scores
#: (``recipes/bert2bert/evaluate.py``): the likeliest token at each step, and four beams ranked by
#: length-normalised log-probability with no repeated three-token sequence.
GREEDY = {"num_beams": 1, "do_sample": False}
BEAM = {"num_beams": 4, "length_penalty": 1.0, "no_repeat_ngram_size": 3, "early_stopping": True}


def held_out_sample(n: int = 300) -> list[dict]:
    """The first ``n`` held-out pairs with one example per synset (a fixed, varied sample)."""
    seen, rows = set(), []
    for row in definitions.load("heldout"):
        if row["synset"] not in seen:
            seen.add(row["synset"])
            rows.append(row)
    if len(rows) < n:
        raise ValueError(f"only {len(rows)} held-out synsets, {n} asked")
    return rows[:: len(rows) // n][:n]  # spread over the file: every part of speech


def write_definitions(
    model,
    tokenizer,
    rows: list[dict],
    batch_size: int = 50,
    desc: str = "writing",
    **generate_kwargs,
) -> list[str]:
    """What an ``EncoderDecoderModel`` writes for each pair's source, with ``generate``."""
    written = []
    model.eval()
    for start in tqdm(range(0, len(rows), batch_size), desc=desc, leave=False):
        sources = [definitions.source_text(r) for r in rows[start : start + batch_size]]
        batch = tokenizer(
            sources, padding=True, truncation=True, max_length=48, return_tensors="pt"
        )
        with torch.inference_mode():
            out = model.generate(**batch, **{"max_new_tokens": 24, **generate_kwargs})  # [B, L]
        written += [t.strip() for t in tokenizer.batch_decode(out, skip_special_tokens=True)]
    return written


def commonest_opening(rows: list[dict], pos: str | None = None, n_words: int = 3) -> str:
    """The commonest first ``n_words`` words of the definitions in ``rows`` (those of part of
    speech ``pos``, or all): a writer of form alone, which reads neither the word nor the
    sentence. Chapters 7 and 6b score it as the floor that ROUGE is read against."""
    openings = Counter(
        " ".join(r["definition"].split()[:n_words]) for r in rows if pos in (None, r["pos"])
    )
    if not openings:
        raise ValueError(f"no definition of part of speech {pos!r} in the rows")
    return openings.most_common(1)[0][0]


def rouge(written: list[str], references: list[str]) -> dict[str, float]:
    """Mean ROUGE-1/2/L F1 (x100), exact matches (%) and mean length in words."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    scores = [scorer.score(ref, out) for out, ref in zip(written, references)]
    result = {t: 100 * statistics.fmean(s[t].fmeasure for s in scores) for t in ROUGE_TYPES}
    result["exact"] = 100 * statistics.fmean(
        o.lower().split() == r.lower().split() for o, r in zip(written, references)
    )
    result["words"] = statistics.fmean(len(o.split()) for o in written)
    return result


def rouge_per_text(written: list[str], references: list[str], kind: str = "rougeL") -> list[float]:
    """One ROUGE F1 (x100, stemmed) per written text: what :func:`paired_bootstrap` resamples."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer([kind], use_stemmer=True)
    return [100 * scorer.score(ref, out)[kind].fmeasure for out, ref in zip(written, references)]


def paired_bootstrap(
    a: list[float], b: list[float], resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``a - b`` over the same items and its 95% percentile interval, resampling the items
    with replacement (Efron & Tibshirani 1993; Koehn 2004 for MT scores; Chapter 6b). Both
    lists score the same items in the same order."""
    if len(a) != len(b) or not a:
        raise ValueError(
            f"paired scores need the same, non-zero number of items: {len(a)} and {len(b)}"
        )
    diff = torch.tensor(a, dtype=torch.float64) - torch.tensor(b, dtype=torch.float64)  # [n]
    picks = torch.randint(
        len(diff), (resamples, len(diff)), generator=torch.Generator().manual_seed(seed)
    )
    means = diff[picks].mean(dim=1)  # [resamples]
    low, high = torch.quantile(means, torch.tensor([0.025, 0.975], dtype=torch.float64)).tolist()
    return float(diff.mean()), low, high


def few_shot_conversation(row: dict, examples: list[dict]) -> list[dict]:
    """Chat messages asking a decoder for ``row``'s definition, after ``examples`` answered."""

    def ask(r: dict) -> str:
        return f'Define the word "{r["word"]}" as it is used in: "{r["sentence"]}"'

    messages = [
        {
            "role": "system",
            "content": "You write short dictionary definitions, without the word itself.",
        }
    ]
    for example in examples:
        messages += [
            {"role": "user", "content": ask(example)},
            {"role": "assistant", "content": example["definition"]},
        ]
    return messages + [{"role": "user", "content": ask(row)}]

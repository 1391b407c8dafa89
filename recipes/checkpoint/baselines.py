"""What a lookup of the training text scores on the checkpoint's fill-in-the-blank measures.

A held-out accuracy means little until it stands beside what no learning gets on the same
blanks. Three baselines a skeptic would try first, each built from the training text alone
(``train.txt`` of the corpus) and scored on exactly the positions the model is scored on:

- **most frequent**: the training text's most frequent token at every blank (a unigram model);
- **neighbour lookup**: the token seen most often between the blank's two neighbours in the
  training text, backing off to the token seen most often after its left neighbour, then to the
  most frequent token (a neighbour that is itself ``[MASK]`` is not used);
- **neighbour lookup, shown token kept**: the same, except where the blank shows a token, which
  it keeps. BERT's masking (Devlin et al. 2019, section 3.1) leaves one selected token in ten in
  place, and the model reads those too.

On the held-out set (:func:`recipes.checkpoint.heldout.heldout_eval`'s masked positions) the
blank can be any token; on the cloze probes (:data:`bertlab.probes.PROBES`), whose blanks are
words, the candidates are whole words only. :func:`unigram_counts` is also shipped
(``bertlab/models/weights/encoder/unigram.json``), so that pages can compute the most-frequent
baseline on their own sentences (the model card, Chapters 3 and 4).

    python -m recipes.checkpoint.baselines --corpus runs/corpus-v4 [--corpus ...] \
        --json bertlab/models/weights/encoder/evaluation.json [--counts .../unigram.json] [--start]

adds ``baselines`` to each corpus's held-out set and to the probes in the JSON, and with
``--start`` the starting point's held-out score; ``evaluate.py`` calls :func:`attach` itself.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from bertlab.copying import word_token_mask
from bertlab.probes import PROBES
from recipes.checkpoint.data import EVAL_SEED, corpus_id, fixed_eval_set, load_tokenizer, pack
from recipes.checkpoint.heldout import heldout_eval, load_model

NAMES = ("most frequent", "neighbour lookup", "neighbour lookup, shown token kept")


def token_stream(corpus: Path, tokenizer) -> np.ndarray:
    """The training paragraphs as one stream of ids, each paragraph followed by ``[SEP]``, as
    :func:`recipes.checkpoint.data.pack` lays them out: ``[n_tokens]`` int32."""
    lines = [
        line
        for line in (corpus / "train.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    stream: list[int] = []
    for i in tqdm(range(0, len(lines), 2000), desc="tokenize train.txt", leave=False):
        for ids in tokenizer(lines[i : i + 2000], add_special_tokens=False)["input_ids"]:
            stream.extend(ids)
            stream.append(tokenizer.sep_token_id)
    return np.asarray(stream, dtype=np.int32)


def unigram_counts(stream: np.ndarray, vocab_size: int) -> np.ndarray:
    """How often each vocabulary entry occurs in the stream: ``[vocab]`` int64."""
    return np.bincount(stream, minlength=vocab_size).astype(np.int64)


class NeighbourLookup:
    """The tokens seen between two neighbours, or after one, in a token stream, most frequent
    first. Built for the queries it will answer (the rest of the stream is never counted)."""

    def __init__(
        self,
        stream: np.ndarray,
        queries: list[tuple[int, int]],
        vocab_size: int,
        allowed: np.ndarray,
        fallback: list[int],
    ):
        """``queries``: (left, right) neighbour ids; ``allowed``: ``[vocab]`` bool, the tokens a
        guess may be; ``fallback``: the most frequent allowed tokens, most frequent first."""
        self.V, self.fallback = vocab_size, fallback
        s = stream.astype(np.int64)
        left, middle, right = s[:-2], s[1:-1], s[2:]  # [n - 2] each
        ok = allowed[middle]
        q = np.asarray(queries, dtype=np.int64).reshape(-1, 2)  # [n_queries, 2]
        self.both = self._ranked(left * self.V + right, middle, ok, q[:, 0] * self.V + q[:, 1])
        # the token after the left neighbour: pairs (s[i], s[i + 1])
        ok_next = allowed[s[1:]]
        self.after = self._ranked(s[:-1], s[1:], ok_next, q[:, 0])

    def _ranked(self, keys, values, ok, wanted) -> dict[int, list[int]]:
        """For each key in ``wanted`` seen in ``keys``: its values, most frequent first (ties:
        the lower id first)."""
        keep = ok & np.isin(keys, np.unique(wanted))
        pairs = keys[keep] * self.V + values[keep]
        found, counts = np.unique(pairs, return_counts=True)
        key, value = found // self.V, found % self.V
        order = np.lexsort((value, -counts, key))  # by key, then count (desc), then id
        ranked: dict[int, list[int]] = {}
        for k, v in zip(key[order].tolist(), value[order].tolist()):
            ranked.setdefault(k, []).append(v)
        return ranked

    def guesses(self, left: int, right: int, mask_id: int, k: int = 1) -> list[int]:
        """The first ``k`` guesses for a blank between ``left`` and ``right`` (a neighbour equal
        to ``mask_id`` is unknown): both neighbours, then the left one, then the most frequent."""
        found: list[int] = []
        if left != mask_id and right != mask_id:
            found += self.both.get(left * self.V + right, [])[:k]
        if left != mask_id:
            found += self.after.get(left, [])[:k]
        found += self.fallback[:k]
        return list(dict.fromkeys(found))[:k]


def neighbours(input_ids: torch.Tensor, at: tuple[torch.Tensor, torch.Tensor], tokenizer):
    """(left, right) ids of each blank at ``at`` = (rows, positions); ``[CLS]`` reads as the
    ``[SEP]`` that separates paragraphs in the training stream."""
    ids = input_ids.clone()
    ids[ids == tokenizer.cls_token_id] = tokenizer.sep_token_id
    rows, pos = at
    return list(zip(ids[rows, pos - 1].tolist(), ids[rows, pos + 1].tolist()))


def heldout_baselines(corpus: Path, tokenizer, stream: np.ndarray, seq_len: int = 128) -> dict:
    """The three baselines on the held-out masked positions that
    :func:`recipes.checkpoint.heldout.heldout_eval` scores the model on (same rows, same seed)."""
    lines = [
        line
        for line in (corpus / "heldout.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = pack(lines, tokenizer, seq_len)  # [n, seq_len]
    eval_set = fixed_eval_set(rows, tokenizer, len(rows), seed=EVAL_SEED)
    ids, labels = eval_set["input_ids"], eval_set["labels"]  # [n, seq_len] each
    at = (labels != -100).nonzero(as_tuple=True)
    answers = labels[at].tolist()  # [n_masked]
    shown = ids[at].tolist()  # [n_masked]
    V = len(tokenizer)
    allowed = np.ones(V, dtype=bool)
    allowed[tokenizer.all_special_ids] = False  # a label is never a special token
    counts = unigram_counts(stream, V)
    fallback = [int(i) for i in np.argsort(-np.where(allowed, counts, -1), kind="stable")[:5]]
    pairs = neighbours(ids, at, tokenizer)
    lookup = NeighbourLookup(stream, pairs, V, allowed, fallback)
    mask_id = tokenizer.mask_token_id
    looked = [lookup.guesses(a, b, mask_id)[0] for a, b in pairs]
    kept = [g if s == mask_id else s for g, s in zip(looked, shown)]
    answerable = np.where(allowed, counts, 0)  # special tokens are never an answer
    p = (answerable + 1) / (answerable.sum() + V)  # add-one: no token has probability 0

    def accuracy(guesses):
        return sum(g == a for g, a in zip(guesses, answers)) / len(answers)

    return {
        "n_masked": len(answers),
        "train_tokens": int(len(stream)),
        "most_frequent_token": tokenizer.convert_ids_to_tokens(fallback[0]),
        "accuracy": {
            NAMES[0]: accuracy([fallback[0]] * len(answers)),
            NAMES[1]: accuracy(looked),
            NAMES[2]: accuracy(kept),
        },
        # the unigram model's cross-entropy at the same positions (nats)
        "unigram_loss": float(-np.log(p[answers]).mean()),
    }


def probe_baselines(tokenizer, stream: np.ndarray, k: int = 5) -> dict:
    """The most-frequent-word and neighbour-lookup baselines on the cloze probes, scored as
    :func:`bertlab.probes.probe_eval` scores a model (top-1 and top-``k`` hits)."""
    enc = tokenizer([p.text for p in PROBES], padding=True, return_tensors="pt")
    at = (enc["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    V = len(tokenizer)
    allowed = word_token_mask(tokenizer).numpy()[:V]  # the probes' blanks are words
    counts = unigram_counts(stream, V)
    fallback = [int(i) for i in np.argsort(-np.where(allowed, counts, -1), kind="stable")[:k]]
    pairs = neighbours(enc["input_ids"], at, tokenizer)
    lookup = NeighbourLookup(stream, pairs, V, allowed, fallback)
    result = {}
    for name, guesses in (
        ("most frequent", [fallback] * len(PROBES)),
        ("neighbour lookup", [lookup.guesses(a, b, tokenizer.mask_token_id, k) for a, b in pairs]),
    ):
        words = [tokenizer.convert_ids_to_tokens(g) for g in guesses]
        top1 = [w[0] in p.answers for w, p in zip(words, PROBES)]
        topk = [any(x in p.answers for x in w) for w, p in zip(words, PROBES)]
        result[name] = {
            "top1": sum(top1) / len(PROBES),
            "top5": sum(topk) / len(PROBES),
            "per_probe": [{"text": p.text, "top5": w} for p, w in zip(PROBES, words)],
        }
    return result


def attach(evaluation: dict, corpora: list[Path], tokenizer, start: bool = False) -> None:
    """Add the baselines of each corpus's held-out set to ``evaluation`` (as
    :mod:`recipes.checkpoint.evaluate` writes it), and the probes' baselines from the first
    corpus's training text. With ``start``, also score the model training started from (MiniLM
    with a new head: :func:`recipes.checkpoint.model.build_model`) on the first corpus."""
    for i, corpus in enumerate(corpora):
        stream = token_stream(corpus, tokenizer)
        cid = corpus_id(corpus)
        found = heldout_baselines(corpus, tokenizer, stream)
        for held in evaluation.get("heldout_sets", []) + [evaluation.get("heldout", {})]:
            if held.get("corpus_id") == cid:
                held["baselines"] = found
        if i == 0:
            evaluation["probes"]["baselines"] = probe_baselines(tokenizer, stream)
            evaluation["probes"]["baselines_corpus_id"] = cid
    if start:
        model, tok, _ = load_model("base", corpora[0])
        with torch.no_grad():
            evaluation["heldout"]["start"] = heldout_eval(model, tok, corpora[0])


def write_counts(corpus: Path, tokenizer, path: Path) -> None:
    """Write :func:`unigram_counts` of ``corpus``'s training text to ``path`` (``unigram.json``:
    one count per vocabulary id), which :mod:`bertlab.unigram` reads."""
    stream = token_stream(corpus, tokenizer)
    path.write_text(
        json.dumps(
            {
                "corpus_id": corpus_id(corpus),
                "about": "how often each vocabulary id occurs in the corpus's train.txt "
                "(recipes/checkpoint/baselines.py)",
                "counts": unigram_counts(stream, len(tokenizer)).tolist(),
            },
            separators=(",", ":"),
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=None,
        help="built corpus (repeatable; the first one's text also scores the probes)",
    )
    ap.add_argument("--json", type=Path, required=True, help="the evaluation.json to add them to")
    ap.add_argument(
        "--counts", type=Path, default=None, help="where to write the first corpus's unigram.json"
    )
    ap.add_argument(
        "--start",
        action="store_true",
        help="also score the starting point (MiniLM with a new head) on the first corpus",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    torch.manual_seed(0)
    corpora = args.corpus or [Path("runs/corpus-v4")]
    tokenizer = load_tokenizer()
    evaluation = json.loads(args.json.read_text())
    attach(evaluation, corpora, tokenizer, start=args.start)
    args.json.write_text(json.dumps(evaluation, indent=1) + "\n")
    if args.counts:
        write_counts(corpora[0], tokenizer, args.counts)
    for held in evaluation.get("heldout_sets", []):
        if "baselines" in held:
            print(held["mix"], json.dumps(held["baselines"]["accuracy"]))
    for name, b in evaluation["probes"]["baselines"].items():
        print(f"probes, {name}: top-1 {b['top1']:.3f} top-5 {b['top5']:.3f}")
    if "start" in evaluation["heldout"]:
        print("start:", evaluation["heldout"]["start"])
    return evaluation


if __name__ == "__main__":
    main()

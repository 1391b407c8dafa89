"""Chapter 7's paired task: write the definition of a word as it is used in a sentence.

Built offline from WordNet 3.0 (Princeton University; Debian ``wordnet-base`` 1:3.0-37, the
same files as Chapter 5, :mod:`bertlab.finetuning.wordnet`), whose glosses often end with example
sentences in quotes::

    09213565 ... bank ... | sloping land (especially the slope beside a body of water);
        "they pulled the canoe up on the bank"; "he sat on the bank of the river"

Each example that uses one of the synset's words (the word itself or a form starting with it:
"banks", "banked") gives one pair:

- source: ``bank : they pulled the canoe up on the bank`` (the word, then the sentence);
- target: ``sloping land (especially the slope beside a body of water)`` (the gloss).

The sentence fixes the sense, so the task closes the loop with Chapter 2's two banks: the
encoder must read which bank is meant, and the decoder must write what it means. Every part of
speech is used (nouns, verbs, adjectives, adverbs). Split: a synset is held out when the first
byte of the md5 of its part of speech and offset is below 26 (about 10%), so every example of
a sense is on one side and the split never changes between builds. WordNet's licence
(BSD-style, ``bertlab/finetuning/data/LICENSE-WordNet.txt``) allows redistribution.

    python -m bertlab.bert2bert.definitions --wordnet x/usr/share/wordnet
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from bertlab.finetuning.wordnet import BLOCKLIST, write_jsonl

DATA = Path(__file__).with_name("data") / "definitions.jsonl.gz"
PARTS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
MAX_TARGET_WORDS = 16  # longer glosses are left out: short targets keep CPU training fast
MAX_SOURCE_WORDS = 24
EXAMPLE = re.compile(r'"([^"]+)"')


def held_out(pos: str, offset: str) -> bool:
    """The deterministic split: about 10% of synsets (md5 first byte < 26) are held out."""
    return hashlib.md5(f"{pos}{offset}".encode()).digest()[0] < 26


def word_in(word: str, sentence: str) -> bool:
    """True when ``word`` (or a form of it: "bank" in "banks", "banked") starts a word of the sentence."""
    return re.search(r"\b" + re.escape(word.lower()), sentence.lower()) is not None


def pairs_of(line: str, pos: str) -> list[dict]:
    """The pairs one ``data.<pos>`` line gives (format: WordNet's wndb(5) manual page)."""
    head, gloss = line.split(" | ", 1)
    fields = head.split()
    words = [
        re.sub(r"\(.*\)$", "", fields[4 + 2 * i]).replace("_", " ")
        for i in range(int(fields[3], 16))
    ]
    definition, _, examples = gloss.partition(";")  # the examples follow the definition
    definition = definition.strip()
    if (
        definition.startswith('"')
        or BLOCKLIST.search(gloss)
        or not 2 <= len(definition.split()) <= MAX_TARGET_WORDS
    ):
        return []
    rows = []
    for example in EXAMPLE.findall(examples):
        example = example.strip()
        used = next((w for w in words if word_in(w, example)), None)
        if used is None or len(example.split()) > MAX_SOURCE_WORDS:
            continue
        rows.append(
            {
                "word": used,
                "sentence": example,
                "definition": definition,
                "pos": pos,
                "synset": f"{PARTS[pos]}{fields[0]}",
                "split": "heldout" if held_out(pos, fields[0]) else "train",
            }
        )
    return rows


def build(folder: Path) -> list[dict]:
    rows = []
    for pos in PARTS:
        for line in (folder / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if not line.startswith("  "):  # the licence header
                rows += pairs_of(line, pos)
    return rows


def source_text(row: dict) -> str:
    """What the encoder reads: ``word : sentence``."""
    return f"{row['word']} : {row['sentence']}"


def load(split: str | None = None, path: Path = DATA) -> list[dict]:
    """The shipped pairs (``split``: "train", "heldout" or None for both), in file order."""
    if not path.is_file():
        raise FileNotFoundError(
            f"bertlab: {path} is missing; rebuild it with "
            "`python -m bertlab.bert2bert.definitions --wordnet <wordnet folder>`"
        )
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if split is None or r["split"] == split]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--wordnet", type=Path, required=True, help="folder holding data.noun, data.verb, ..."
    )
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    rows = build(args.wordnet)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(rows, args.out)
    print(
        len(rows),
        "pairs",
        dict(Counter(r["split"] for r in rows)),
        dict(Counter(r["pos"] for r in rows)),
    )


if __name__ == "__main__":
    main()

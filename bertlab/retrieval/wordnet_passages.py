"""Build the retrieval demo's document collection from WordNet 3.0 (run once; the output ships).

The collection is a fixed sample of the *instance* synsets of WordNet's location and person
files (a named place or person, such as "Windhoek" or "Alexander Graham Bell"), one short
passage each, "<name>: <definition>.", with WordNet's quoted example sentences removed. It
always holds the passages the question set (``data/questions.json``) cites, plus about 15% of
the other 6,172 instances (chosen by a hash, see :data:`SAMPLE_BYTE`): under a thousand
passages of encyclopaedic facts, small enough to embed inside a page on a CPU, specific enough
that a 135M-parameter decoder does not know most of them by heart, and with many near
neighbours (dozens of capitals, inventors, founders) for the retriever to confuse.

Source: WordNet 3.0, Princeton University, as packaged by Debian (``wordnet-base``
1:3.0-37; ``apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb x`` gives the
files in ``x/usr/share/wordnet``), under WordNet's licence, which ships beside the data in
``data/LICENSE-WordNet.txt``.

Usage::

    python -m bertlab.retrieval.wordnet_passages --wordnet x/usr/share/wordnet --out bertlab/retrieval/data
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from pathlib import Path

LEXICOGRAPHER_FILES = {15: "location", 18: "person"}  # WordNet's lexnames numbers
#: Passages kept besides the ones the questions cite: those whose md5(offset) starts with a byte
#: below this (about 15% of the 6,172), so the collection is the same on every build and small
#: enough to embed inside a page's time budget on two CPU cores.
SAMPLE_BYTE = 39
_EXAMPLE = re.compile(r';?\s*"[^"]*"')  # a quoted example sentence inside a gloss


def passages(data_noun: Path) -> list[dict]:
    """One passage per instance synset of the location and person files, in WordNet's order.

    Each row: ``id`` (the synset's 8-digit offset), ``kind`` ("location" or "person"),
    ``names`` (every lemma of the synset, spaces for underscores) and ``text``.
    """
    rows = []
    for line in data_noun.read_text(encoding="latin-1").splitlines():
        if line.startswith("  ") or " | " not in line:  # the licence header
            continue
        head, gloss = line.split(" | ", 1)
        fields = head.split()
        offset, lexfile, n_words = fields[0], int(fields[1]), int(fields[3], 16)
        if lexfile not in LEXICOGRAPHER_FILES:
            continue
        names = [fields[4 + 2 * i].replace("_", " ") for i in range(n_words)]
        names = [re.sub(r"\([a-z]+\)$", "", n) for n in names]  # "Victoria(a)" markers
        rest = fields[4 + 2 * n_words :]
        pointers = [rest[1 + 4 * i] for i in range(int(rest[0]))]
        if "@i" not in pointers:  # not an instance of a class: a common noun
            continue
        definition = _EXAMPLE.sub("", gloss).strip().rstrip(";").strip()
        kind = LEXICOGRAPHER_FILES[lexfile]
        # A person's first lemma is often the surname alone ("Bell"): the passage uses the longest
        # lemma that contains it ("Alexander Graham Bell", not the nickname "Father of the Submarine").
        title = max((n for n in names if names[0] in n), key=len) if kind == "person" else names[0]
        rows.append({"id": offset, "kind": kind, "names": names, "text": f"{title}: {definition}."})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet", type=Path, required=True, help="folder holding data.noun")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cited = {q["passage"] for q in json.loads((args.out / "questions.json").read_text())}
    rows = [
        r
        for r in passages(args.wordnet / "data.noun")
        if r["id"] in cited or hashlib.md5(r["id"].encode()).digest()[0] < SAMPLE_BYTE
    ]
    assert cited <= {r["id"] for r in rows}, "a question cites a passage WordNet does not have"
    with gzip.GzipFile(
        args.out / "passages.jsonl.gz", "wb", mtime=0
    ) as raw:  # mtime=0: same bytes each run
        raw.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
    print(f"{len(rows)} passages -> {args.out / 'passages.jsonl.gz'}")


if __name__ == "__main__":
    main()

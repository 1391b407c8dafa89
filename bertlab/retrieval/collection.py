"""The retrieval demo's passages and question set, read from ``data/`` (used by Chapter 8).

**Passages** (``data/passages.jsonl.gz``, 979 rows): named places and people from WordNet 3.0,
one sentence each, built by :mod:`bertlab.retrieval.wordnet_passages`; WordNet's licence ships
beside them (``data/LICENSE-WordNet.txt``).

**Questions** (``data/questions.json``, 48 rows). How they were written: we read WordNet's
definitions of capitals, mountains, inventors, discoverers and founders, and wrote for each
chosen passage one question in our own words whose answer is the name the passage defines
("Which English clergyman invented the power loom?" for *Cartwright: English clergyman who
invented the power loom*). Each row gives the ``question``, the ``answers`` accepted (the name,
and for some its other spellings: "Ndjamena", "Lao-tse"), and the id of the one supporting
``passage``. The questions were written by hand before any model was run on them and not
changed after; they avoid facts a small model is most likely to have memorised (the capitals
of large countries), and several reuse words of other passages ("capital", "inventor"), so
retrieval is not free. Two questions share their answer's surname with another passage
(Bell, Anderson): the id says which one is meant.

The builder checks that every cited passage exists; :func:`questions` checks that each
accepted answer is written in its passage.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


@lru_cache(maxsize=1)
def _passages() -> tuple[dict, ...]:
    with gzip.open(DATA / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        return tuple(json.loads(line) for line in lines)


def passages() -> list[dict]:
    """Every passage: ``id`` (WordNet offset), ``kind`` ("location"/"person"), ``names``, ``text``."""
    return [dict(p) for p in _passages()]


def questions() -> list[dict]:
    """Every question: ``question``, ``answers`` (accepted strings), ``passage`` (a passage id)
    and ``relevant``, the index of that passage in :func:`passages`."""
    index = {p["id"]: i for i, p in enumerate(_passages())}
    rows = json.loads((DATA / "questions.json").read_text(encoding="utf-8"))
    for row in rows:
        row["relevant"] = index[row["passage"]]
        text = _passages()[row["relevant"]]["text"].lower()
        if not any(a.lower() in text for a in row["answers"]):
            raise ValueError(f"no accepted answer of {row['question']!r} is in its passage")
    return rows

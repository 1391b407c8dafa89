"""Chapter 5's labelled data, read from the files in ``data/`` (built by ``wordnet.py``).

Each loader returns ``{"train": [...], "heldout": [...]}``, lists of dicts in a fixed order.
Source: WordNet 3.0, Princeton University (Debian ``wordnet-base`` 1:3.0-37), under the
WordNet 3.0 licence (``data/LICENSE-WordNet.txt``). How each label was made, by which rule,
is written in :mod:`bertlab.finetuning.wordnet`; the split is a hash of the synset's offset
(about 20% held out), and for the tags a hash of each name, so that no held-out name is
trained on. Online, the standard sets take their place: SST-2 (GLUE) for sentence
classification, CoNLL-2003 for named entities, SQuAD for extractive QA
(``datasets.load_dataset("glue", "sst2")``, ``"conll2003"``, ``"squad"``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bertlab.finetuning.wordnet import TAGS, TOPICS

DATA = Path(__file__).resolve().parent / "data"
__all__ = ["TAGS", "TOPICS", "gloss_topics", "name_tags", "kind_of_questions", "kind_of_document"]


def _rows(name: str) -> list:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _split(rows: list[dict]) -> dict[str, list[dict]]:
    return {part: [r for r in rows if r["split"] == part] for part in ("train", "heldout")}


def gloss_topics() -> dict[str, list[dict]]:
    """Noun definitions (``text``) and the lexicographer file of their synset (``label``, an
    index into :data:`TOPICS`: animal, artifact, food, person, plant). 3,500 rows, balanced."""
    return _split(_rows("gloss_topics"))


def name_tags() -> dict[str, list[dict]]:
    """Definitions as ``words`` with BIO ``tags`` (indices into :data:`TAGS`) for the people and
    places WordNet lists as instances; labels by longest-match lookup. 4,000 rows; a row is held
    out when it names a held-out person or place, so none of those names is in a training row."""
    return _split(_rows("name_tags"))


def kind_of_questions() -> dict[str, list[dict]]:
    """SQuAD-style rows: ``question``, ``context`` (three sentences), ``answer`` and its
    character offset ``answer_start`` in the context. 2,000 rows."""
    return _split(_rows("kind_of_questions"))


def kind_of_document() -> list[str]:
    """120 sentences "<word>: a kind of <hypernym>; <definition>." for a document longer than
    BERT's 512 positions."""
    return _rows("kind_of_document")

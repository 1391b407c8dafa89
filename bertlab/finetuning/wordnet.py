"""Build Chapter 5's three labelled data sets from WordNet 3.0 (run once; the output ships).

No labelled data set reaches the course's machines from a hub, so Chapter 5 makes its own
from WordNet 3.0 (Princeton University), as packaged by Debian (``wordnet-base`` 1:3.0-37;
``apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb x`` gives the files in
``x/usr/share/wordnet``). WordNet's licence is permissive (BSD-style): use, copy and
redistribute for any purpose, keeping its copyright notice, which ships beside the data in
``data/LICENSE-WordNet.txt``. The course checkpoint read WordNet's glosses during its MLM
pretraining (``recipes/checkpoint/corpus/``), never these labels.

Every label below is made by a rule from WordNet's own annotations, not by a person reading
the text; the rules are the functions of this module:

- :func:`gloss_topics` (sentence classification): a noun's definition, labelled with the
  lexicographer file its synset lives in (noun.animal, noun.artifact, noun.food,
  noun.person, noun.plant). Lexicographers filed each synset, so the label is a human
  decision, but the text never names the word it defines.
- :func:`name_tags` (token classification): definitions that mention people or places,
  tagged ``B-PER``/``I-PER``/``B-LOC``/``I-LOC`` where a run of words is, letter for letter,
  the name of a WordNet *instance* of a person or a location ("Shakespeare", "New York"),
  longest match first. Names WordNet does not list stay ``O`` (the rule misses them), and a
  name that is both a person and a place in WordNet drops its sentence.
- :func:`kind_of_questions` (extractive QA): short paragraphs of three sentences
  "<word>: a kind of <hypernym>; <definition>." built from three random synsets, and the
  question "What is <word> a kind of?", whose answer is the hypernym's name in the paragraph.

Split: a synset is held out when the first byte of the md5 of its WordNet offset is below 52
(about 20%), so the split never changes between builds. For QA, every fifth paragraph is
held out and made of held-out synsets only, the others of training synsets only: nothing in a
held-out paragraph was read in training. For tags the same hash is taken of each *name*: a
sentence is held out when it names a held-out person or place, so no held-out name occurs in a
training sentence (a held-out sentence may also name people or places seen in training; Chapter
5b scores the seen and the unseen names apart).

Usage::

    python -m bertlab.finetuning.wordnet --wordnet x/usr/share/wordnet --out bertlab/finetuning/data
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: Lexicographer file numbers of the noun files (WordNet's lexnames file).
NOUN_FILES = {
    3: "Tops",
    4: "act",
    5: "animal",
    6: "artifact",
    7: "attribute",
    8: "body",
    9: "cognition",
    10: "communication",
    11: "event",
    12: "feeling",
    13: "food",
    14: "group",
    15: "location",
    16: "motive",
    17: "object",
    18: "person",
    19: "phenomenon",
    20: "plant",
    21: "possession",
    22: "process",
    23: "quantity",
    24: "relation",
    25: "shape",
    26: "state",
    27: "substance",
    28: "time",
}
TOPICS = ["animal", "artifact", "food", "person", "plant"]
TOPICS_PER_CLASS = 700  # 3,500 definitions; about 20% of them held out
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
MAX_WORDS = 24  # definitions are cut at 24 words: short sequences keep CPU fine-tuning fast
QA_PARAGRAPHS = 2000
QA_HELDOUT_EVERY = 5  # every fifth paragraph is held out, made of held-out synsets only
TAG_SENTENCES = 4000  # every definition naming a person, then place-only ones up to this many
#: Definitions with these words are left out: the pages print examples at random.
BLOCKLIST = re.compile(
    r"\b(sex\w*|penis|vagina\w*|genital\w*|intercourse|copulat\w*|homosexual\w*|"
    r"prostitut\w*|obscen\w*|erotic\w*|rape\w*|nigger|slur|offensive|disparaging|"
    r"derogatory|vulgar\w*|buttocks|anus|feces|excrement|urine|breasts?)\b",
    re.I,
)
WORD = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")


@dataclass
class Synset:
    offset: str
    topic: str
    lemmas: list[str]
    pointers: list[tuple[str, str]]  # (symbol, target offset): "@" hypernym, "@i" instance of
    definition: str


def held_out(key: str) -> bool:
    """The deterministic split: about 20% of keys (md5 first byte < 52) are held out."""
    return hashlib.md5(key.encode()).digest()[0] < 52


def read_nouns(folder: Path) -> dict[str, Synset]:
    """Parse ``data.noun`` (format: WordNet's wndb(5) manual page)."""
    synsets = {}
    for line in (folder / "data.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):  # the licence header
            continue
        head, gloss = line.split(" | ", 1)
        f = head.split()
        n_words = int(f[3], 16)
        lemmas = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]).replace("_", " ") for i in range(n_words)]
        i = 4 + 2 * n_words
        pointers = [(f[i + 1 + 4 * k], f[i + 2 + 4 * k]) for k in range(int(f[i]))]
        definition = gloss.split(";")[0].strip().strip('"').strip()
        if BLOCKLIST.search(gloss) or any(BLOCKLIST.search(lemma) for lemma in lemmas):
            continue
        synsets[f[0]] = Synset(f[0], NOUN_FILES[int(f[1])], lemmas, pointers, definition)
    return synsets


def shorten(text: str, max_words: int = MAX_WORDS) -> str:
    words = text.split()
    return " ".join(words[:max_words])


def gloss_topics(synsets: dict[str, Synset], seed: int = 0) -> list[dict]:
    """Definitions labelled with their lexicographer file (5 classes, balanced)."""
    rng = random.Random(seed)
    rows = []
    for topic in TOPICS:
        pool = [
            s
            for s in synsets.values()
            if s.topic == topic
            and len(s.definition.split()) >= 4
            and not any(p == "@i" for p, _ in s.pointers)
        ]  # no named instances
        pool.sort(key=lambda s: s.offset)
        for s in rng.sample(pool, TOPICS_PER_CLASS):
            rows.append(
                {
                    "id": s.offset,
                    "text": shorten(s.definition),
                    "label": TOPICS.index(topic),
                    "split": "heldout" if held_out(s.offset) else "train",
                }
            )
    rng.shuffle(rows)
    return rows


def name_lexicon(
    synsets: dict[str, Synset],
) -> tuple[dict[tuple[str, ...], str], set[tuple[str, ...]]]:
    """Names of WordNet instances of people (PER) and places (LOC), as word tuples; and the
    names that are both (ambiguous)."""
    kinds: dict[tuple[str, ...], set[str]] = {}
    for s in synsets.values():
        if not any(p == "@i" for p, _ in s.pointers) or s.topic not in ("person", "location"):
            continue
        for lemma in s.lemmas:
            if lemma[:1].isupper():
                kinds.setdefault(tuple(WORD.findall(lemma)), set()).add(
                    "PER" if s.topic == "person" else "LOC"
                )
    lexicon = {name: next(iter(k)) for name, k in kinds.items() if len(k) == 1}
    return lexicon, {name for name, k in kinds.items() if len(k) > 1}


def tag_words(words: list[str], lexicon: dict, ambiguous: set, longest: int) -> list[str] | None:
    """BIO tags by longest match against the lexicon; None if an ambiguous name occurs."""
    tags, i = ["O"] * len(words), 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            name = tuple(words[i : i + n])
            if name in ambiguous:
                return None
            if name in lexicon:
                kind = lexicon[name]
                tags[i : i + n] = [f"B-{kind}"] + [f"I-{kind}"] * (n - 1)
                i += n
                break
        else:
            i += 1
    return tags


def tagged_names(words: list[str], tags: list[str]) -> list[str]:
    """The names a sentence's BIO tags mark, as they are written ("New York")."""
    starts = [i for i, t in enumerate(tags) if t.startswith("B-")]
    ends = [
        next((j for j in range(i + 1, len(tags)) if not tags[j].startswith("I-")), len(tags))
        for i in starts
    ]
    return [" ".join(words[i:j]) for i, j in zip(starts, ends)]


def name_tags(synsets: dict[str, Synset], seed: int = 0) -> list[dict]:
    """Definitions that mention at least one listed person or place, tagged per word; held out
    when a name they mention is (the split by names of the module docstring)."""
    lexicon, ambiguous = name_lexicon(synsets)
    longest = max(len(name) for name in lexicon)
    rows = []
    for s in sorted(synsets.values(), key=lambda s: s.offset):
        words = WORD.findall(shorten(s.definition, 32))
        tags = tag_words(words, lexicon, ambiguous, longest)
        if tags is None or all(t == "O" for t in tags):
            continue
        rows.append(
            {
                "id": s.offset,
                "words": words,
                "tags": [TAGS.index(t) for t in tags],
                "split": "heldout" if any(map(held_out, tagged_names(words, tags))) else "train",
            }
        )
    rng = random.Random(seed)
    with_person = [r for r in rows if TAGS.index("B-PER") in r["tags"]]
    places_only = [r for r in rows if TAGS.index("B-PER") not in r["tags"]]
    rows = with_person + rng.sample(places_only, max(0, TAG_SENTENCES - len(with_person)))
    rng.shuffle(rows)
    return rows


def kind_of_sentence(s: Synset, hypernym: str) -> str:
    return f"{s.lemmas[0]}: a kind of {hypernym}; {shorten(s.definition, 12)}."


def kind_of_questions(synsets: dict[str, Synset], seed: int = 0) -> tuple[list[dict], list[str]]:
    """Three-sentence paragraphs and "What is <word> a kind of?" (SQuAD-style fields), and a
    long document of 120 such sentences."""
    rng = random.Random(seed)
    pool = []
    for s in sorted(synsets.values(), key=lambda s: s.offset):
        hyper = [t for p, t in s.pointers if p == "@"]
        if not hyper or len(s.lemmas[0].split()) > 2 or not s.definition:
            continue
        if hyper[0] not in synsets:  # a hypernym left out by the blocklist
            continue
        name = synsets[hyper[0]].lemmas[0]
        if (
            len(name.split()) <= 3
            and name.lower() not in s.definition.lower()
            and name != s.lemmas[0]
        ):
            pool.append((s, name))
    # A paragraph is made of training synsets only or of held-out synsets only, so a held-out
    # question's paragraph was never read in training, neither its answer nor its other entries.
    pools = {
        "train": [p for p in pool if not held_out(p[0].offset)],
        "heldout": [p for p in pool if held_out(p[0].offset)],
    }
    rows = []
    for i in range(QA_PARAGRAPHS):
        split = "heldout" if i % QA_HELDOUT_EVERY == 0 else "train"
        picked = rng.sample(pools[split], 3)
        slot = rng.randrange(3)
        asked, answer = picked[slot]
        sentences = [kind_of_sentence(s, h) for s, h in picked]
        context = " ".join(sentences)
        start = context.index(sentences[slot]) + len(asked.lemmas[0]) + len(": a kind of ")
        assert context[start : start + len(answer)] == answer
        rows.append(
            {
                "id": asked.offset,
                "question": f"What is {asked.lemmas[0]} a kind of?",
                "context": context,
                "answer": answer,
                "answer_start": start,
                "split": split,
            }
        )
    # a long document (well over 512 tokens): 120 such sentences, and questions about some of them
    document = [kind_of_sentence(s, h) for s, h in rng.sample(pool, 120)]
    return rows, document


def write_jsonl(rows: list, path: Path) -> None:
    with gzip.GzipFile(path, "wb", mtime=0) as out:  # mtime=0: the same bytes on every rebuild
        out.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wordnet", type=Path, required=True, help="folder holding data.noun")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    synsets = read_nouns(args.wordnet)
    args.out.mkdir(parents=True, exist_ok=True)
    topics = gloss_topics(synsets)
    tags = name_tags(synsets)
    questions, document = kind_of_questions(synsets)
    write_jsonl(topics, args.out / "gloss_topics.jsonl.gz")
    write_jsonl(tags, args.out / "name_tags.jsonl.gz")
    write_jsonl(questions, args.out / "kind_of_questions.jsonl.gz")
    write_jsonl(document, args.out / "kind_of_document.jsonl.gz")
    for name, rows in (("topics", topics), ("tags", tags), ("questions", questions)):
        print(name, len(rows), Counter(r["split"] for r in rows))


if __name__ == "__main__":
    main()

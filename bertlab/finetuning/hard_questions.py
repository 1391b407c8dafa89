"""Chapter 5c's harder "a kind of" questions: the held-out paragraphs rewritten so that string
matching fails, and the no-learning readers the page scores beside the fine-tuned one.

On the shipped held-out set (:func:`bertlab.finetuning.datasets.kind_of_questions`) a rule that
takes the question's word and copies the hypernym of the first entry mentioning it is right
every time, so a perfect score there does not show that a reader learnt more than that rule.
Two rewrites of the same paragraphs, made by rule from the shipped rows (no new text is read
or labelled by a person), take the rule's shortcuts away, in the manner of the distractor
sentences of Jia & Liang (2017, "Adversarial examples for evaluating reading comprehension
systems"):

- **paraphrase**: the question is asked in one of :data:`PARAPHRASES`, forms never seen in
  training ("What kind of thing is trout?");
- **distractor**: another entry of the paragraph gets a clause naming the asked word
  (:data:`DISTRACTOR_CLAUSES`, "..., not to be confused with trout.") and is moved before
  the asked entry, so the first entry that mentions the word is the wrong one;
- **described**: the question names no entry; it quotes the asked entry's definition instead
  (:data:`DESCRIBED_QUESTION`, "What is the thing defined as found in cold streams a kind of?"),
  so a rule that looks for the asked *name* finds nothing, while a reader (or a rule) that
  matches the question's words against the entries' definitions can still answer;
- **short**: every definition is cut to its first :data:`SHORT_WORDS` words, the layout of
  Chapter 5c's hand-written probe ("trout: a kind of fish; found in cold streams."), so that
  what the reader does on the probe's three questions is measured on every held-out row.

The label does not change: the asked entry is untouched, so its hypernym is still the answer,
and the new clause says nothing about what the asked word is a kind of. ``answer_start`` is
recomputed and checked against the new context. Every choice (which paraphrase, which entry
becomes the distractor, its clause, the order) comes from a ``random.Random`` seeded with the
row's id, so the set is the same on every build.
"""

from __future__ import annotations

import random
import re

#: An entry of a paragraph, "<word>: a kind of <hypernym>; <definition>." (``wordnet.kind_of_sentence``).
ENTRY = re.compile(r"(?:^|(?<=\. ))([^.:;]+?): a kind of ([^;]+); ")
TRAINED_QUESTION = "What is {word} a kind of?"
PARAPHRASES = [
    "What kind of thing is {word}?",
    "{word} is a kind of what?",
    "Which broader class does {word} belong to?",
]
DESCRIBED_QUESTION = "What is the thing defined as {definition} a kind of?"
SHORT_WORDS = 3
DISTRACTOR_CLAUSES = [
    "not to be confused with {word}",
    "often compared with {word}",
    "unlike {word}",
]
_QUESTION_FORMS = [
    re.compile("^" + re.escape(form).replace(re.escape("{word}"), "(.+)") + "$")
    for form in [
        DESCRIBED_QUESTION.replace("{definition}", "{word}"),  # before the trained form
        TRAINED_QUESTION,
        *PARAPHRASES,
    ]
]


def entries(context: str) -> list[tuple[str, str, str]]:
    """The paragraph's entries as (word, hypernym, whole sentence), in order."""
    starts = [m.start() for m in ENTRY.finditer(context)]
    sentences = [context[a:b].strip() for a, b in zip(starts, [*starts[1:], len(context)])]
    return [(*ENTRY.match(s + " ").groups(), s) for s in sentences]


def asked_word(question: str) -> str:
    """The word a question asks about, for any of the question forms of this module (for a
    described question, the definition it quotes)."""
    for form in _QUESTION_FORMS:
        found = form.match(question)
        if found:
            return found.group(1)
    raise ValueError(
        f"not one of the question forms of bertlab.finetuning.hard_questions: {question!r}"
    )


def definition(sentence: str) -> str:
    """The definition of an entry's sentence: the words after its "; ", without the full stop."""
    return sentence.split("; ", 1)[1].rstrip(".")


def rewrite(
    row: dict, paraphrase: bool, distractor: bool, described: bool = False, short: bool = False
) -> dict:
    """One held-out row rewritten (see the module docstring); the same fields as the shipped rows,
    plus ``asked_position`` (0, 1 or 2: where the asked entry now stands)."""
    rng = random.Random(f"{row['id']}-{paraphrase}-{distractor}")
    word = asked_word(row["question"])
    found = entries(row["context"])
    if len(found) != 3 or sum(w == word for w, _, _ in found) != 1:
        raise ValueError(
            f"row {row['id']}: expected three entries, one named {word!r}: {row['context']!r}"
        )
    asked = next(i for i, (w, _, _) in enumerate(found) if w == word)
    sentences = [s for _, _, s in found]
    if short:
        sentences = [
            f"{w}: a kind of {kind}; {' '.join(definition(s).split()[:SHORT_WORDS])}."
            for w, kind, s in found
        ]
    order = [0, 1, 2]
    if distractor:
        other = rng.choice([i for i in range(3) if i != asked])
        clause = rng.choice(DISTRACTOR_CLAUSES).format(word=word)
        sentences[other] = sentences[other].rstrip(".") + f", {clause}."
        rest = [i for i in range(3) if i not in (asked, other)]
        position = rng.choice(
            [1, 2]
        )  # the asked entry is second or third, the distractor before it
        before = rng.randrange(position)  # where the distractor stands, before the asked entry
        order = [None] * 3
        order[position], order[before] = asked, other
        order[order.index(None)] = rest[0]
    context = " ".join(sentences[i] for i in order)
    question = rng.choice(PARAPHRASES).format(word=word) if paraphrase else row["question"]
    if described:
        question = DESCRIBED_QUESTION.format(definition=definition(sentences[asked]))
    start = context.index(sentences[asked]) + len(f"{word}: a kind of ")
    if context[start : start + len(row["answer"])] != row["answer"]:
        raise AssertionError(f"row {row['id']}: the answer moved: {context!r}")
    return {
        **row,
        "question": question,
        "context": context,
        "answer_start": start,
        "asked_position": order.index(asked),
    }


def hard_sets(rows: list[dict]) -> dict[str, list[dict]]:
    """The rows as trained and five rewrites: paraphrased, with a distractor, both, described
    by the definition instead of named, and with short definitions."""
    return {
        "as trained": [rewrite(r, False, False) for r in rows],
        "paraphrased": [rewrite(r, True, False) for r in rows],
        "distractor": [rewrite(r, False, True) for r in rows],
        "paraphrased + distractor": [rewrite(r, True, True) for r in rows],
        "described, not named": [rewrite(r, False, False, described=True) for r in rows],
        "short definitions": [rewrite(r, False, False, short=True) for r in rows],
    }


def question_blind(row: dict) -> list[str]:
    """A reader that ignores the question: each entry's hypernym, one of which it would pick at
    random (score it by the mean exact match over the list)."""
    return [kind for _, kind, _ in entries(row["context"])]


def first_mention_rule(row: dict) -> str:
    """String matching: the hypernym of the first entry whose text contains the question's
    subject (the asked word, or the definition a described question quotes)."""
    word = re.compile(rf"(?<!\w){re.escape(asked_word(row['question']))}(?!\w)")
    return next(
        (kind for _, kind, sentence in entries(row["context"]) if word.search(sentence)), ""
    )


def name_rule(row: dict) -> str:
    """Stricter string matching: the hypernym of the entry whose name is the asked word."""
    word = asked_word(row["question"])
    return next((kind for name, kind, _ in entries(row["context"]) if name == word), "")

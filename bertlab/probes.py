"""Cloze probes for the course checkpoint: everyday English, one ``[MASK]`` per sentence.

Written for this project (not taken from any benchmark), in the spirit of BERT's masked-LM
task (Devlin et al. 2019, section 3.1) and of the LAMA-style "fill in the blank" probes used to
ask what a masked language model knows. Each answer list holds single WordPiece tokens of the
bert-base-uncased vocabulary (checked by ``check_probes``). The corpus was NOT tuned to these
sentences; they are a small held-out sanity check, not a benchmark.

:func:`probe_eval` runs them through a model: the model card runs it on the page, and the
checkpoint recipe (``recipes/checkpoint/evaluate.py``) records it in ``evaluation.json``.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from bertlab.copying import word_token_mask


class Probe(NamedTuple):
    category: str
    text: str  # exactly one "[MASK]"
    answers: tuple[str, ...]  # acceptable single-token fillers, lower case


def _p(category: str, text: str, *answers: str) -> Probe:
    return Probe(category, text, answers)


PROBES: tuple[Probe, ...] = (
    # places
    _p("places", "The capital of France is [MASK].", "paris"),
    _p("places", "Tokyo is the largest city in [MASK].", "japan"),
    _p(
        "places",
        "We went swimming in the [MASK] last summer.",
        "sea",
        "ocean",
        "lake",
        "pool",
        "river",
    ),
    _p("places", "She borrowed three books from the [MASK].", "library", "school", "shop", "store"),
    _p("places", "The doctor works at the local [MASK].", "hospital", "clinic", "school"),
    _p(
        "places",
        "They bought bread and milk at the [MASK].",
        "store",
        "shop",
        "market",
        "supermarket",
        "bakery",
    ),
    # animals
    _p("animals", "The [MASK] barked at the postman all morning.", "dog", "dogs", "puppy"),
    _p("animals", "The [MASK] used its long trunk to pick up the food.", "elephant", "elephants"),
    _p(
        "animals",
        "The cat chased a [MASK] across the kitchen floor.",
        "mouse",
        "rat",
        "bird",
        "ball",
    ),
    _p("animals", "Cows give us [MASK].", "milk", "meat", "beef"),
    _p("animals", "Bees make [MASK] from the nectar of flowers.", "honey", "wax"),
    # food
    _p("food", "He poured [MASK] on his cereal.", "milk", "sugar", "honey", "cream"),
    _p("food", "She drinks a cup of [MASK] every morning.", "coffee", "tea", "milk", "water"),
    _p("food", "Apples and bananas are kinds of [MASK].", "fruit", "fruits", "food"),
    _p(
        "food",
        "You need flour, eggs and butter to bake a [MASK].",
        "cake",
        "pie",
        "bread",
        "cookie",
    ),
    _p("food", "The soup is too hot, so let it [MASK] down.", "cool", "settle"),
    # family
    _p("family", "My mother's sister is my [MASK].", "aunt"),
    _p("family", "His father's father is his [MASK].", "grandfather", "grandpa"),
    _p("family", "The baby was asleep in her mother's [MASK].", "arms", "lap", "bed", "room"),
    _p("family", "They have two children, a boy and a [MASK].", "girl", "daughter"),
    # work
    _p(
        "work",
        "He goes to the [MASK] at nine o'clock every weekday.",
        "office",
        "school",
        "work",
        "gym",
    ),
    _p("work", "The teacher wrote the answer on the [MASK].", "board", "wall", "paper"),
    _p(
        "work",
        "She was paid a good [MASK] for her work.",
        "salary",
        "wage",
        "price",
        "sum",
        "amount",
    ),
    _p(
        "work",
        "The company hired ten new [MASK] this year.",
        "employees",
        "workers",
        "people",
        "staff",
        "members",
    ),
    _p("work", "A [MASK] fixes cars in a garage.", "mechanic"),
    # weather
    _p("weather", "Take an umbrella because it is going to [MASK].", "rain", "snow"),
    _p(
        "weather",
        "In winter the lake freezes and the ground is covered with [MASK].",
        "snow",
        "ice",
    ),
    _p("weather", "The sun was shining and the sky was [MASK].", "blue", "clear", "bright"),
    _p(
        "weather",
        "A strong [MASK] blew the leaves off the trees.",
        "wind",
        "storm",
        "breeze",
        "gust",
    ),
    # verbs
    _p("verbs", "She opened the door with her [MASK].", "key", "hand", "keys", "foot"),
    _p("verbs", "He [MASK] a letter to his friend.", "wrote", "sent", "writes", "sends"),
    _p("verbs", "Please [MASK] the window, it is cold in here.", "close", "shut"),
    _p("verbs", "The children like to [MASK] football after school.", "play", "watch"),
    _p(
        "verbs",
        "I [MASK] my keys, so I could not get into the house.",
        "lost",
        "forgot",
        "left",
        "dropped",
    ),
    _p(
        "verbs",
        "They [MASK] to music while they cooked dinner.",
        "listened",
        "danced",
        "sang",
        "listen",
    ),
    # prepositions
    _p("prepositions", "The keys are [MASK] the table.", "on", "under", "by"),
    _p("prepositions", "She was born [MASK] 1990.", "in"),
    _p("prepositions", "The train arrives [MASK] six o'clock.", "at", "by", "before", "after"),
    _p(
        "prepositions",
        "He walked [MASK] the bridge to the other side of the river.",
        "across",
        "over",
        "along",
    ),
    _p("prepositions", "The cat is hiding [MASK] the bed.", "under", "behind", "in", "beneath"),
    # numbers
    _p("numbers", "A week has [MASK] days.", "seven", "7"),
    _p("numbers", "There are twelve months in a [MASK].", "year"),
    _p("numbers", "Two plus two equals [MASK].", "four", "4"),
    _p("numbers", "A spider has [MASK] legs.", "eight", "8"),
    # colours
    _p("colours", "The grass is [MASK].", "green"),
    _p("colours", "Snow is [MASK] and cold.", "white", "wet"),
    _p("colours", "When the light turns [MASK], the cars must stop.", "red", "green", "yellow"),
    _p("colours", "Ripe bananas are [MASK].", "yellow", "sweet", "green"),
    # time
    _p("time", "We eat breakfast in the [MASK].", "morning", "kitchen"),
    _p("time", "The day after Monday is [MASK].", "tuesday"),
    _p("time", "It was late at [MASK], so we went to bed.", "night"),
    _p("time", "There are sixty minutes in an [MASK].", "hour"),
    _p("time", "December is the last month of the [MASK].", "year"),
    # body
    _p("body", "He brushes his [MASK] twice a day.", "teeth", "hair"),
    _p("body", "We see with our [MASK].", "eyes", "eye"),
    _p(
        "body",
        "She broke her [MASK] when she fell off the bike.",
        "leg",
        "arm",
        "wrist",
        "ankle",
        "nose",
        "neck",
        "back",
    ),
    _p("body", "You hear music with your [MASK].", "ears", "ear"),
    # school
    _p(
        "school",
        "The students took a difficult [MASK] in mathematics.",
        "exam",
        "test",
        "course",
        "class",
        "examination",
    ),
    _p("school", "Children learn to read and [MASK] at school.", "write", "speak", "count"),
    _p(
        "school",
        "She passed the exam because she [MASK] hard.",
        "worked",
        "studied",
        "tried",
        "trained",
    ),
    _p("school", "The teacher gave us a lot of [MASK] for the weekend.", "homework", "work"),
    # transport
    _p(
        "transport",
        "He rides his [MASK] to work every day.",
        "bike",
        "bicycle",
        "horse",
        "car",
        "motorcycle",
    ),
    _p("transport", "The plane landed at the [MASK] an hour late.", "airport"),
    _p("transport", "We waited for the [MASK] at the bus stop.", "bus"),
    _p("transport", "She parked the [MASK] in front of the house.", "car", "truck", "van"),
    _p(
        "transport",
        "The ship sailed across the [MASK].",
        "ocean",
        "sea",
        "atlantic",
        "pacific",
        "river",
        "lake",
    ),
)


def check_probes(tokenizer) -> list[str]:
    """Problems with the probe set (empty list when every answer is one WordPiece token)."""
    problems = []
    vocab = tokenizer.get_vocab()
    for p in PROBES:
        if p.text.count("[MASK]") != 1:
            problems.append(f"{p.text!r}: needs exactly one [MASK]")
        problems += [
            f"{p.text!r}: {a!r} is not a single token" for a in p.answers if a not in vocab
        ]
    return problems


def copied_probe(tokenizer, text: str, answers, guess: str, is_word) -> bool:
    """A probe answered by copying (:mod:`bertlab.copying`): ``guess`` is a word of the sentence
    and no answer is."""
    context = [t for t in tokenizer.tokenize(text) if t != tokenizer.mask_token]
    return (
        bool(is_word[tokenizer.convert_tokens_to_ids(guess)])
        and guess in context
        and not set(answers) & set(context)
    )


@torch.no_grad()
def probe_eval(model, tokenizer, k: int = 5) -> dict:
    """:data:`PROBES` through a ``BertForMaskedLM``: top-1 / top-5 hit rates, the share answered
    by copying, per category and per probe (its top ``k`` words)."""
    model.eval()  # no dropout: the answers a reader gets from the model
    enc = tokenizer([p.text for p in PROBES], padding=True, return_tensors="pt")
    logits = model(**enc).logits  # [n_probes, L, vocab]
    rows, pos = (enc["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    top = logits[rows, pos].topk(k, dim=-1).indices  # [n_probes, k]
    per_probe, by_cat = [], {}
    is_word = word_token_mask(tokenizer)
    for p, ids in zip(PROBES, top.tolist()):
        words = tokenizer.convert_ids_to_tokens(ids)
        r = {
            "category": p.category,
            "text": p.text,
            "answers": list(p.answers),
            "top5": words,
            "top1_hit": words[0] in p.answers,
            "top5_hit": any(w in p.answers for w in words),
            "copied": copied_probe(tokenizer, p.text, p.answers, words[0], is_word),
        }
        per_probe.append(r)
        c = by_cat.setdefault(p.category, [0, 0, 0])
        c[0], c[1], c[2] = c[0] + r["top1_hit"], c[1] + r["top5_hit"], c[2] + 1
    n = len(per_probe)
    return {
        "n": n,
        "top1": sum(r["top1_hit"] for r in per_probe) / n,
        "top5": sum(r["top5_hit"] for r in per_probe) / n,
        "copy_rate": sum(r["copied"] for r in per_probe) / n,
        "per_category": {
            c: {"top1": v[0] / v[2], "top5": v[1] / v[2], "n": v[2]} for c, v in by_cat.items()
        },
        "per_probe": per_probe,
    }


def constant_guess_eval(words: list[str]) -> dict:
    """The probes answered with the same ``words``, best first, whatever the sentence: a
    baseline that reads no context, such as the most frequent words of a training text
    (:func:`bertlab.unigram.most_frequent`). Top-1 and top-``len(words)`` hit rates, as
    :func:`probe_eval` scores a model. Used by Chapter 3 and the model card."""
    n = len(PROBES)
    return {
        "n": n,
        "top1": sum(words[0] in p.answers for p in PROBES) / n,
        "top5": sum(any(w in p.answers for w in words) for p in PROBES) / n,
    }

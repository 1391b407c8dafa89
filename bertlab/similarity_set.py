"""A small sentence-similarity set written for the course, and the correlations that score it.

Used in the book's "What comes out of BERT" chapter to compare three ways of turning BERT's
token vectors into one sentence vector (the pooled [CLS], the raw [CLS], the mean over real
tokens), on the page's model and on the pip all-MiniLM-L6-v2 as a control. Each pair carries a
similarity score in [0, 1] that the course authors gave by hand, in the spirit of the STS
benchmark (Cer et al., 2017, "SemEval-2017 Task 1"):

- 1.0   the two sentences mean the same thing (paraphrases);
- ~0.75 the same event or claim with a detail changed or missing;
- ~0.5  the same topic, a different claim;
- ~0.25 a shared word or setting, otherwise unrelated;
- 0.0   unrelated.

Several pairs share words on purpose while differing in meaning (and the other way round), so
a sentence vector that only counts words does not score well. Twenty pairs are far too few for
a benchmark: the set shows the method, and its numbers come with that caveat.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

#: (sentence a, sentence b, human similarity in [0, 1]).
PAIRS: list[tuple[str, str, float]] = [
    ("The bank closes at five on weekdays.", "On weekdays the bank shuts at 5 pm.", 1.0),
    (
        "A man is playing the guitar on stage.",
        "Someone performs a guitar song in front of an audience.",
        0.9,
    ),
    (
        "The children built a sandcastle at the beach.",
        "Kids made a castle out of sand by the sea.",
        1.0,
    ),
    (
        "She forgot her umbrella and got soaked.",
        "She got wet in the rain because she left her umbrella at home.",
        0.9,
    ),
    (
        "The train to Leeds was cancelled this morning.",
        "This morning's train to Leeds did not run.",
        1.0,
    ),
    ("The cat is sleeping on the sofa.", "The cat is sleeping on the bed.", 0.75),
    ("He bought a used car last week.", "He bought a new bicycle last week.", 0.45),
    ("The museum opens at nine in the morning.", "The museum closes at nine in the evening.", 0.5),
    (
        "Prices rose sharply in the last quarter.",
        "Inflation climbed quickly over the past three months.",
        0.85,
    ),
    ("The team won the final in extra time.", "The team lost the final in extra time.", 0.4),
    (
        "We sat on the river bank and watched the boats.",
        "The bank approved our mortgage application.",
        0.05,
    ),
    ("A woman is slicing onions in the kitchen.", "A woman is cutting vegetables for dinner.", 0.7),
    (
        "The dog chased the ball across the park.",
        "The ball was chased across the park by the dog.",
        1.0,
    ),
    ("The dog chased the ball across the park.", "The stock market fell for the third day.", 0.0),
    (
        "Heavy snow closed the mountain pass.",
        "The road over the mountains was shut by snowfall.",
        0.95,
    ),
    ("I need to charge my phone.", "My phone battery is almost empty.", 0.6),
    (
        "The concert was sold out within minutes.",
        "Tickets for the show were gone almost immediately.",
        0.9,
    ),
    ("The professor explained the theorem slowly.", "The chef explained the recipe slowly.", 0.2),
    (
        "Astronomers found a new planet around a distant star.",
        "A recipe for lemon cake needs three eggs.",
        0.0,
    ),
    ("The printer is out of paper again.", "Someone has to refill the printer's paper tray.", 0.7),
]


def pearson(x, y) -> float:
    """Pearson's correlation coefficient of two equally long sequences of numbers."""
    return float(
        scipy.stats.pearsonr(np.asarray(x, dtype=float), np.asarray(y, dtype=float)).statistic
    )


def spearman(x, y) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks (ties averaged)."""
    return float(
        scipy.stats.spearmanr(np.asarray(x, dtype=float), np.asarray(y, dtype=float)).statistic
    )

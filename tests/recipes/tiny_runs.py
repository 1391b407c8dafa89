"""The tiny corpora and training arguments the recipe's tests train on (tests/recipes/conftest.py
builds the fixtures): a few hundred generated sentences, 3 steps, CPU, seconds."""

from __future__ import annotations

import random

SUBJECTS = [
    "the cat",
    "my sister",
    "the old man",
    "a small dog",
    "our teacher",
    "the farmer",
    "his friend",
]

VERBS = ["walked to", "looked at", "cleaned", "painted", "visited", "found", "liked"]

OBJECTS = [
    "the house",
    "a red car",
    "the garden",
    "the school",
    "a big tree",
    "the river",
    "the kitchen",
]


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"on {rng.choice(['monday', 'friday', 'sunday'])} morning."
        for _ in range(n)
    ]


TINY_ARGS = [
    "--batch-size",
    "4",
    "--seq-len",
    "32",
    "--eval-every",
    "2",
    "--eval-seqs",
    "4",
    "--save-every-minutes",
    "100",
]

"""The corpus mixes v1 to v5: each source's share of the characters, one mix per training stage.

The shipped checkpoint trained on v1, v2, v3 and v4 in turn (``make checkpoint``); v5 is stage
5c's (``RUNS.md``). ``manifest.json`` of a built corpus records its mix.
"""

from __future__ import annotations

import dataclasses

from recipes.checkpoint.corpus.sources import PACKAGES, Source


def mix(shares: dict[str, float]) -> tuple[Source, ...]:
    """The sources named in ``shares``, in that order, each with its target share."""
    return tuple(dataclasses.replace(PACKAGES[name], share=share) for name, share in shares.items())


# Stage 1 of the shipped checkpoint (2,378 steps) used this mix.
SOURCES_V1 = mix(
    {
        "wordnet": 0.36,
        "fortunes": 0.16,
        "fortunes-min": 0.04,
        "debian-handbook": 0.15,
        "python-docs": 0.12,
        "debian-reference": 0.05,
        "debian-faq": 0.02,
        "jargon": 0.10,
    }
)

# Stage 2: the same sources with less technical prose, plus the English side of
# the Ding German-English dictionary, whose ~20,000 example sentences and ~50,000 idioms are
# the most everyday English any Debian package ships ("He has a sharp tongue.").
SOURCES_V2 = mix(
    {
        "wordnet": 0.32,
        "fortunes": 0.16,
        "fortunes-min": 0.04,
        "ding": 0.17,
        "debian-handbook": 0.10,
        "python-docs": 0.08,
        "debian-reference": 0.03,
        "debian-faq": 0.02,
        "jargon": 0.08,
    }
)

# Stage 3: continuous modern prose. Everything above is glosses, quotations,
# phrases and manuals; the State of the Union addresses since 1900 (5.3M chars) are a century of
# plain spoken English about work, families, money, places and numbers, and Moby-Dick adds
# narrative (people, animals, weather, the sea). Technical text shrinks again.
SOURCES_V3 = mix(
    {
        "wordnet": 0.24,
        "fortunes": 0.14,
        "fortunes-min": 0.03,
        "ding": 0.15,
        "sotu": 0.20,
        "moby-dick": 0.04,
        "debian-handbook": 0.07,
        "python-docs": 0.05,
        "debian-reference": 0.02,
        "debian-faq": 0.01,
        "jargon": 0.05,
    }
)

# Stage 4 (the default): v3 plus Jane Austen's six novels (4.3M chars), everyday narrative about families,
# visits, money, houses and weather; wordnet and the manuals make room for them.
SOURCES_V4 = mix(
    {
        "wordnet": 0.21,
        "fortunes": 0.13,
        "fortunes-min": 0.03,
        "ding": 0.15,
        "sotu": 0.19,
        "austen": 0.12,
        "moby-dick": 0.04,
        "debian-handbook": 0.05,
        "python-docs": 0.03,
        "debian-reference": 0.02,
        "debian-faq": 0.01,
        "jargon": 0.02,
    }
)

# Stage 5c: v4 plus everyday objects, food, homes and talk: the descriptions, notes and dialogue
# of the game Cataclysm: DDA (1.6M chars, repeated twice). Stages 5a-5b showed that more passes
# over v4 no longer move the model; its probes miss everyday words ("She opened the door with her
# [MASK]."). WordNet, SOTU, Ding and the manuals make room.
SOURCES_V5 = mix(
    {
        "wordnet": 0.17,
        "fortunes": 0.13,
        "fortunes-min": 0.03,
        "ding": 0.14,
        "cataclysm": 0.12,
        "sotu": 0.16,
        "austen": 0.12,
        "moby-dick": 0.04,
        "debian-handbook": 0.04,
        "python-docs": 0.02,
        "debian-reference": 0.01,
        "debian-faq": 0.01,
        "jargon": 0.01,
    }
)

MIXES = {"v1": SOURCES_V1, "v2": SOURCES_V2, "v3": SOURCES_V3, "v4": SOURCES_V4, "v5": SOURCES_V5}
DEFAULT_MIX = "v4"
SOURCES = MIXES[DEFAULT_MIX]

"""How varied and how repetitive generated texts are (Chapter 6, "Measured side by side").

- :func:`distinct_n` (Li et al. 2016, "A Diversity-Promoting Objective Function for Neural
  Conversation Models", https://arxiv.org/abs/1510.03055): distinct word n-grams over all texts
  divided by all n-grams;
- :func:`repetition_rate`: the share of each text's word n-grams that repeat an earlier one of the
  same text, averaged over texts (Welleck et al. 2019's seq-rep-n).

Distinct-n is graded in ps06 (and the repetition rate of one text is 1 - its distinct-n), so
both live with the book, not in the installed package.
"""

from __future__ import annotations


def _ngrams(text: str, n: int) -> list[tuple[str, ...]]:
    words = text.lower().split()
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def distinct_n(texts: list[str], n: int) -> float:
    """Distinct word n-grams over all texts / number of n-grams (lower-cased, whitespace words;
    no n-gram spans two texts; 0.0 when there is none)."""
    grams = [g for text in texts for g in _ngrams(text, n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repetition_rate(texts: list[str], n: int = 1) -> float:
    """Mean over texts of 1 - distinct n-grams / n-grams within the text (texts with none are skipped)."""
    rates = []
    for text in texts:
        grams = _ngrams(text, n)
        if grams:
            rates.append(1 - len(set(grams)) / len(grams))
    return sum(rates) / len(rates) if rates else 0.0

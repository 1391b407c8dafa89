"""Retrieve, then generate: an encoder that finds what a decoder writes about (Chapter 8).

- :mod:`bertlab.retrieval.collection`: the passages (named places and people from WordNet 3.0)
  and the 48-question set with known answers and supporting passages;
- :mod:`bertlab.retrieval.answering`: the decoder's batched greedy answers, and whether an
  answer names an accepted one;
- :mod:`bertlab.retrieval.wordnet_passages`: how the passages were built (run once).

Embedding, top-k and the prompt that hands passages to the decoder are what ps08-retrieval
grades (with MRR@k, which the chapter does not compute), so the chapter's copies, recall@k's
too, live with the book (``book/reference/``).
"""

from bertlab.retrieval.collection import passages, questions
from bertlab.retrieval.answering import answer_matches, generate_answers

__all__ = ["answer_matches", "generate_answers", "passages", "questions"]

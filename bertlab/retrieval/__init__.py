"""Retrieve, then generate: an encoder that finds what a decoder writes about (Chapter 8).

- :mod:`bertlab.retrieval.collection`: the passages (named places and people from WordNet 3.0)
  and the 48-question set with known answers and supporting passages;
- :mod:`bertlab.retrieval.search`: mean-pooled sentence vectors, cosine top-k, recall@k and the
  chat prompt that puts retrieved passages before the question (the reference versions of
  ps08-retrieval's graded functions);
- :mod:`bertlab.retrieval.wordnet_passages`: how the passages were built (run once).
"""

from bertlab.retrieval.collection import passages, questions
from bertlab.retrieval.search import answer_matches, build_messages, embed_texts, recall_at_k, top_k

__all__ = ["answer_matches", "build_messages", "embed_texts", "passages", "questions", "recall_at_k", "top_k"]

"""Measuring what forced BERT and a decoder write (Chapter 6, "Forcing BERT to write").

- :mod:`bertlab.generation.forward_counter`: counts forward passes, the cost of each method;
- :mod:`bertlab.generation.metrics`: self-BLEU (sacrebleu) and perplexity under a causal
  language model;
- :mod:`bertlab.generation.prompts`: the chapter's prompt set;
- :mod:`bertlab.generation.trace`: a sampler's run as a step table (Chapters 6 and 6b).

The samplers themselves (left to right, Gibbs, Mask-Predict) and distinct-n (with the repetition
rate, its within-text twin) are what ps06 grades, so they are not in this package: the chapter
defines each sampler on the page, and its batched versions live with the book
(``book/reference/``).
"""

from bertlab.generation.forward_counter import ForwardCounter
from bertlab.generation.metrics import perplexities, self_bleu
from bertlab.generation.prompts import PROMPTS

__all__ = ["ForwardCounter", "PROMPTS", "perplexities", "self_bleu"]

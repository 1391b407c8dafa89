"""Forcing BERT to write, and measuring what comes out (Chapter 6, "Forcing BERT to write").

- :mod:`bertlab.generation.bert_sampling`: left-to-right filling (greedy or sampled, blanks laid
  out first or appended one at a time), Gibbs-style resampling (Wang & Cho 2019) and
  Mask-Predict (Ghazvininejad et al. 2019) on a masked language model;
- :mod:`bertlab.generation.metrics`: distinct-n, repetition rate, self-BLEU (sacrebleu) and
  perplexity under a causal language model;
- :mod:`bertlab.generation.prompts`: the chapter's prompt set.
"""

from bertlab.generation.bert_sampling import (
    ForwardCounter,
    append_masks_one_at_a_time,
    fill_left_to_right,
    gibbs_sample,
    mask_predict,
)
from bertlab.generation.metrics import distinct_n, perplexities, repetition_rate, self_bleu
from bertlab.generation.prompts import PROMPTS

__all__ = ["ForwardCounter", "PROMPTS", "append_masks_one_at_a_time", "distinct_n", "fill_left_to_right",
           "gibbs_sample", "mask_predict", "perplexities", "repetition_rate", "self_bleu"]

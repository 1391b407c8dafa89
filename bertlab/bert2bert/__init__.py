"""BERT2BERT (Rothe, Narayan and Severyn 2020): the course checkpoint given a decoder (Chapter 7).

- :mod:`bertlab.bert2bert.definitions`: the paired task, a word in a sentence -> its WordNet
  definition, built offline and shipped in ``data/``;
- :mod:`bertlab.bert2bert.model`: warm-starting transformers' ``EncoderDecoderModel`` from the
  course checkpoint, with BERT's special tokens as the decoder's start, pad and end;
- :mod:`bertlab.bert2bert.trainer`: fine-tuning with ``Seq2SeqTrainer`` (logged, seeded), as
  Chapter 7's live run and ``make bert2bert`` (``recipes/bert2bert/train.py``) both do;
- :mod:`bertlab.bert2bert.scores`: the greedy and beam settings, writing definitions and ROUGE
  on the held-out ones; ``make bert2bert`` records the scores with ``recipes/bert2bert/evaluate.py``.

The shipped fine-tuned model is :mod:`bertlab.models.bert2bert`.
"""

"""BERT2BERT (Rothe, Narayan and Severyn 2020): the course checkpoint given a decoder (Chapter 7).

- :mod:`bertlab.bert2bert.definitions`: the paired task, a word in a sentence -> its WordNet
  definition, built offline and shipped in ``data/``;
- :mod:`bertlab.bert2bert.model`: warm-starting transformers' ``EncoderDecoderModel`` from the
  course checkpoint, with BERT's special tokens as the decoder's start, pad and end;
- :mod:`bertlab.bert2bert.train`: ``make bert2bert``, fine-tuning with ``Seq2SeqTrainer``
  (resumable, logged, seeded), then exporting what was trained into ``weights/``;
- :mod:`bertlab.bert2bert.embedded`: the shipped fine-tuned model, assembled on first use.
"""

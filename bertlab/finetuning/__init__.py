"""Fine-tuning BERT on CPU: Chapter 5's data sets and the helpers its pages share.

- :mod:`bertlab.finetuning.datasets`: the three labelled sets (sentence topics, name tags,
  "a kind of" questions), built from WordNet 3.0 by :mod:`bertlab.finetuning.wordnet` and
  shipped in ``data/`` with WordNet's licence;
- :mod:`bertlab.finetuning.hard_questions`: Chapter 5c's rewrites of the held-out questions
  (paraphrases, distractor entries) that string matching fails, and the no-learning readers;
- :mod:`bertlab.finetuning.training`: seeding, evaluation loops, the window merging of long
  documents and the per-layer weight change that the pages show.
"""

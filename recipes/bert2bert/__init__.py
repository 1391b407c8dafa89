"""``make bert2bert``: Chapter 7's BERT2BERT fine-tuned on the definitions task, and BERTShare
(``train.py``), then both scored on the held-out pairs (``evaluate.py``)."""

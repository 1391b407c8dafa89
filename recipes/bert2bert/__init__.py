"""``make bert2bert``: Chapter 7's BERT2BERT fine-tuned on the definitions task, and BERTShare."""

"""``make checkpoint``: the course checkpoint, MiniLM given an MLM head and trained on an offline corpus."""

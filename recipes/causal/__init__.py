"""``make causal``: the course checkpoint under a causal mask, trained to write definitions left to right."""

"""Count a model's forward passes: the cost measure of Chapter 6 ("Forcing BERT to write").

A decoder with a cache, BERT filling blanks and Mask-Predict all spend one forward pass of the
encoder (or decoder) stack per step; counting the passes compares methods without a stopwatch.
"""

from __future__ import annotations

import torch


class ForwardCounter:
    """Counts the forward passes of a model's encoder (``model.base_model``) in a ``with`` block."""

    def __init__(self, model: torch.nn.Module):
        self.module, self.calls, self._handle = getattr(model, "base_model", model), 0, None

    def _hook(self, *_):
        self.calls += 1

    def __enter__(self):
        self._handle = self.module.register_forward_hook(self._hook)
        return self

    def __exit__(self, *exc):
        self._handle.remove()

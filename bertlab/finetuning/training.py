"""The training loop, evaluation and weight bookkeeping that Chapter 5's pages share.

Explained in Chapter 5, "Fine-tuning BERT for sentence labels" (book/05a-classification.md):
a plain PyTorch loop (AdamW, ``get_linear_schedule_with_warmup``, gradient clipping) that
reaches what ``transformers.Trainer`` reaches, and the per-layer measure of how far the
encoder's weights moved. The step is the one ps05-finetune asks for (``train_step``).
"""

from __future__ import annotations

import random
import re
import time
from collections import defaultdict

import numpy as np
import torch
from tqdm.auto import tqdm


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (transformers' ``set_seed`` does the same, plus CUDA)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def infinite(loader):
    """Cycle through a DataLoader for as many steps as asked (a new shuffle every epoch)."""
    while True:
        yield from loader


def train_loop(
    model,
    loader,
    optimizer,
    scheduler,
    steps: int,
    max_grad_norm: float = 1.0,
    desc: str = "fine-tuning",
) -> list[float]:
    """``steps`` optimisation steps over ``loader`` (cycled); returns the loss of every step.

    Each step: train mode, forward, backward, clip the gradients' global norm, optimizer step,
    scheduler step, gradients cleared (the order ps05's ``train_step`` asks for).
    """
    losses = []
    batches = infinite(loader)
    for _ in tqdm(range(steps), desc=desc):
        model.train()
        loss = model(**next(batches)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.inference_mode()
def predict(model, loader) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits' argmax and the labels, over a whole loader, in eval mode.

    Returns (predictions, labels), concatenated along the batch: [N] for sentence labels,
    [N, T] for token labels (padded with -100 in the labels).
    """
    model.eval()
    predictions, labels = [], []
    for batch in loader:
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
        predictions.append(logits.argmax(-1))  # [B] or [B, T]
        labels.append(batch["labels"])
    if predictions[0].dim() == 1:
        return torch.cat(predictions), torch.cat(labels)
    width = max(p.shape[1] for p in predictions)
    pad = lambda t, v: torch.nn.functional.pad(t, (0, width - t.shape[1]), value=v)  # noqa: E731
    return torch.cat([pad(p, 0) for p in predictions]), torch.cat(
        [pad(label, -100) for label in labels]
    )


def freeze_word_embeddings(model) -> int:
    """Keep the 30,522 x 384 word-embedding matrix fixed; returns how many parameters that is.

    It is half of the course checkpoint's parameters, and on a CPU its dense gradient and its
    AdamW update cost a large share of each step of a short-sequence run, while fine-tuning
    barely changes it (a batch touches a few hundred of its 30,522 rows).
    """
    weight = model.bert.embeddings.word_embeddings.weight
    weight.requires_grad_(False)
    return weight.numel()


def snapshot(model) -> dict[str, torch.Tensor]:
    """A copy of every trainable parameter of the encoder (``model.bert``), to compare after
    training."""
    return {
        name: p.detach().clone() for name, p in model.bert.named_parameters() if p.requires_grad
    }


def layer_of(name: str) -> str:
    """The part of the encoder a parameter belongs to: "embeddings", "layer 0", ..., "pooler"."""
    found = re.match(r"encoder\.layer\.(\d+)\.", name)
    return f"layer {found.group(1)}" if found else name.split(".")[0]


def weight_change(before: dict[str, torch.Tensor], model) -> dict[str, float]:
    """Relative change per part of the encoder: ||W_after - W_before|| / ||W_before||, with the
    norms taken over all of that part's parameters in ``before`` together."""
    moved, size = defaultdict(float), defaultdict(float)
    for name, p in model.bert.named_parameters():
        if name not in before:  # frozen
            continue
        part = layer_of(name)
        moved[part] += float((p.detach() - before[name]).pow(2).sum())
        size[part] += float(before[name].pow(2).sum())
    return {part: (moved[part] / size[part]) ** 0.5 for part in moved}


class Stopwatch:
    """``with Stopwatch() as clock: ...`` then ``clock.seconds``: the page says how long a run took."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start

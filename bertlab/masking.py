"""Measuring BERT's masking recipe on transformers' own ``DataCollatorForLanguageModeling``.

Explained in the chapter "Masked language modelling, and why it is not generation"
(book/04-masked-language-modelling.md). The recipe (Devlin et al. 2019, section 3.1 and
appendix C.2): select 15% of the non-special tokens for prediction; of those, replace 80% with
``[MASK]``, 10% with a random token, and leave 10% unchanged; the labels hold the original id at
selected positions and -100 (ignored by the loss) everywhere else.

Nothing here re-implements that recipe (students write ``mask_tokens`` in ps04-mlm): the course
draws masks from the library's collator and only *classifies and counts* what it did.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch

#: What happened to one position, in the order the chapter's figures use.
OUTCOMES = ("not selected", "[MASK]", "random", "unchanged")


def classify(original, inputs, labels, mask_token_id: int):
    """Name what a masking draw did at every position.

    Args:
        original: LongTensor [B, T], the ids before masking.
        inputs: LongTensor [B, T], the ids the model reads after masking.
        labels: LongTensor [B, T], original id where selected, -100 elsewhere.
        mask_token_id: the id of ``[MASK]``.

    Returns:
        LongTensor [B, T] of indices into :data:`OUTCOMES`. A selected position whose random
        replacement happened to draw its own id (chance 1/V) counts as "unchanged", and one that
        drew ``[MASK]`` (also 1/V) counts as "[MASK]": at V = 30,522 both are negligible.
    """
    selected = labels != -100  # [B, T]
    kind = torch.zeros_like(original)  # [B, T]: 0 = not selected
    kind[selected & (inputs == mask_token_id)] = 1
    kind[selected & (inputs != mask_token_id) & (inputs != original)] = 2
    kind[selected & (inputs == original)] = 3
    return kind


@dataclass
class MaskingCounts:
    """Counts over many draws: candidates are the non-special positions."""

    candidates: int
    selected: int
    masked: int
    random: int
    unchanged: int

    def proportions(self) -> dict[str, tuple[float, float, int]]:
        """Each measured proportion with its binomial standard error and sample size n.

        "selected" is a fraction of the candidates; the other three are fractions of the
        selected positions. Standard error: sqrt(p (1 - p) / n).
        """
        out = {}
        for name, k, n in (
            ("selected", self.selected, self.candidates),
            ("[MASK]", self.masked, self.selected),
            ("random", self.random, self.selected),
            ("unchanged", self.unchanged, self.selected),
        ):
            p = k / n
            out[name] = (p, math.sqrt(p * (1 - p) / n), n)
        return out


def count_outcomes(collator, examples: list[dict], draws: int) -> MaskingCounts:
    """Call ``collator(examples)`` ``draws`` times and count what happened to each position.

    ``examples`` are tokenizer outputs with ``input_ids`` and ``special_tokens_mask`` (so the
    collator does not have to guess which tokens are special). Padding added by the collator is
    special too, and is never a candidate.
    """
    totals = dict(candidates=0, selected=0, masked=0, random=0, unchanged=0)
    mask_id = collator.tokenizer.mask_token_id
    # The same padding the collator applies; padded positions are marked special (1).
    padded = collator.tokenizer.pad(
        [
            {"input_ids": e["input_ids"], "special_tokens_mask": e["special_tokens_mask"]}
            for e in examples
        ],
        return_tensors="pt",
    )
    original = padded["input_ids"]  # [B, T]
    candidate = padded["special_tokens_mask"] == 0  # [B, T]
    for _ in range(draws):
        batch = collator(examples)
        kind = classify(original, batch["input_ids"], batch["labels"], mask_id)  # [B, T]
        totals["candidates"] += int(candidate.sum())
        totals["selected"] += int((kind > 0).sum())
        totals["masked"] += int((kind == 1).sum())
        totals["random"] += int((kind == 2).sum())
        totals["unchanged"] += int((kind == 3).sum())
    return MaskingCounts(**totals)


def plot_proportions(counts: MaskingCounts, targets=(0.15, 0.8, 0.1, 0.1), ax=None):
    """Bar chart of the measured proportions, 2-sigma binomial error bars, targets as ticks."""
    found = counts.proportions()
    names = list(found)
    values = [found[n][0] for n in names]
    errors = [2 * found[n][1] for n in names]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    colours = ["#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c"]
    ax.bar(range(4), values, yerr=errors, capsize=6, color=colours, alpha=0.85)
    ax.scatter(range(4), targets, marker="_", s=900, color="black", zorder=3, label="recipe")
    labels = [f"{n}\n({'of non-special' if n == 'selected' else 'of selected'})" for n in names]
    ax.set_xticks(range(4), labels)
    ax.set_ylabel("measured fraction")
    ax.set_ylim(0, 1)
    for x, v in enumerate(values):
        ax.text(x + 0.08, v + 0.03, f"{v:.3f}", fontsize=9)
    ax.legend(loc="upper right")
    ax.set_title(
        f"What the collator did, over {counts.candidates:,} non-special tokens "
        "(error bars: 2 standard errors)",
        fontsize=10,
    )
    return ax


_STYLE = {  # outcome -> (background, text colour), each pair >= 4.5:1 (WCAG 2 AA; axe color-contrast)
    0: ("#f2f2f2", "#555"),
    1: ("#1f77b4", "white"),
    2: ("#a65200", "white"),
    3: ("#1a7f37", "white"),
}


def token_rows_html(tokens_in: list[str], labels: list[str | None], kinds: list[int]) -> str:
    """Two rows of boxes for one draw: what the model reads, and the label at each position.

    ``labels[t]`` is the original token at a selected position and None where the label is -100.
    Colours follow :data:`OUTCOMES` (grey: not selected, blue: [MASK], orange: random token,
    green: selected but unchanged).
    """

    def box(text, kind, faint=False):
        bg, fg = _STYLE[kind] if not faint else ("white", "#767676")
        return (
            f'<td style="background:{bg};color:{fg};padding:2px 5px;border:1px solid #ddd;'
            f'font-family:monospace;font-size:12px;text-align:center">{html.escape(text)}</td>'
        )

    top = "".join(box(tok, k) for tok, k in zip(tokens_in, kinds))
    bottom = "".join(
        box(lab if lab is not None else "-100", k if lab is not None else 0, lab is None)
        for lab, k in zip(labels, kinds)
    )
    head = '<td style="padding-right:6px;font-size:12px;color:#333">{}</td>'
    return (
        '<table style="border-collapse:collapse;margin:4px 0">'
        f"<tr>{head.format('input_ids')}{top}</tr>"
        f"<tr>{head.format('labels')}{bottom}</tr></table>"
    )


def legend_html() -> str:
    """The colour key for :func:`token_rows_html`."""
    items = "".join(
        f'<span style="background:{_STYLE[k][0]};color:{_STYLE[k][1]};padding:1px 6px;'
        f'margin-right:6px;font-size:12px">{html.escape(name)}</span>'
        for k, name in enumerate(OUTCOMES)
    )
    return f"<div>{items}</div>"

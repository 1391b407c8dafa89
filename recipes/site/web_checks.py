"""How :mod:`recipes.site.web_models` holds each exported live model to PyTorch, by kind.

The fill-mask models (``mlm``, ``diffusion``): the top-1 at the ``[MASK]`` of every probe sentence
(:mod:`bertlab.probes`). The left-to-right writer (``causal``): the next-token top-1 at every
position, also at lengths other than the export's (:data:`CAUSAL_LENGTHS`), and a prefix's logits
unchanged when tokens follow. The attention encoder (``attention``): every head's argmax key under
both masks, and no weight more than :data:`MAX_ATTENTION_DIFF` from PyTorch's. The ONNX steps are
:mod:`recipes.site.web_onnx`'s and :mod:`recipes.site.web_attention`'s.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from recipes.site.web_attention import attention_agreement, export_attention, torch_attentions
from recipes.site.web_onnx import (
    agreement,
    causal_lengths,
    export_onnx,
    length_probe,
    load_causal,
    load_encoder,
    load_torch,
    next_token_agreement,
    next_token_top1,
    torch_logits,
    torch_top1,
)

MIN_AGREEMENT = 0.95
#: The attention box's largest allowed |attention weight difference| from PyTorch.
MAX_ATTENTION_DIFF = 2e-3
#: The writer's largest allowed change of a prefix's logits when later tokens are added: 0 under
#: a causal mask; a traced mask fixed to the export's length would break it (and so does int8:
#: its activations' scales are taken over all the positions).
MAX_PREFIX_DIFF = 1e-3
CAUSAL_LENGTHS = (7, 30)  # the writer checked at lengths other than the export's 5
#: The new models' inputs and outputs (shapes: 1 the batch, T the length).
IO = {
    "causal": {
        "inputs": {
            "input_ids": ["int64", [1, "T"]],
            "attention_mask": ["int64", [1, "T"]],
            "token_type_ids": ["int64", [1, "T"]],
        },
        "outputs": {"logits": ["float32", [1, "T", "V"]]},
    },
    "attention": {
        "inputs": {
            "input_ids": ["int64", [1, "T"]],
            "token_type_ids": ["int64", [1, "T"]],
            "attention_bias": ["float32", [1, 1, "T", "T"]],
        },
        "outputs": {
            "attentions": ["float32", ["L", "H", "T", "T"]],
            "hidden": ["float32", ["T", "Hd"]],
        },
    },
}


class Kind(NamedTuple):
    """How one kind of model is loaded, exported and held to PyTorch (:mod:`recipes.site.web_onnx`)."""

    load: Callable  # path -> model in eval mode
    export: Callable  # (model, dest) -> None
    answers: Callable  # (model, tokenizer) -> PyTorch's answers, taken before exporting
    check: Callable  # (answers, session, tokenizer) -> figures, "agreement" among them
    measure: str  # what "agreement" counts, for the messages


def check_fill(want, sess, tokenizer) -> dict:
    return {"agreement": agreement(want, sess, tokenizer)}


def writer_answers(model, tokenizer) -> dict:
    ids = length_probe(tokenizer)
    lengths = {t: torch_logits(model, ids[:t]) for t in CAUSAL_LENGTHS}  # each [T, V]
    return {"top1": next_token_top1(model, tokenizer), "lengths": lengths, "ids": ids}


def check_writer(want, sess, tokenizer) -> dict:
    lengths = causal_lengths(want["lengths"], sess, want["ids"])
    return {"agreement": next_token_agreement(want["top1"], sess, tokenizer), **lengths}


def check_attention(want, sess, tokenizer) -> dict:
    return attention_agreement(want, sess, tokenizer, tie=MAX_ATTENTION_DIFF)


KINDS = {
    "mlm": Kind(load_torch, export_onnx, torch_top1, check_fill, "top-1 at the [MASK]"),
    "causal": Kind(
        load_causal, export_onnx, writer_answers, check_writer, "next-token top-1 of the positions"
    ),
    "attention": Kind(
        load_encoder,
        export_attention,
        torch_attentions,
        check_attention,
        f"every head's argmax key (ties within {MAX_ATTENTION_DIFF}) under both masks",
    ),
}


def failure(figures: dict) -> str | None:
    """Why an exported file would show other answers than the book, or None."""
    if figures["agreement"] < MIN_AGREEMENT:
        return f"agrees with PyTorch on {figures['agreement']:.1%} of the probes"
    if figures.get("max_attention_diff", 0.0) > MAX_ATTENTION_DIFF:
        return f"has attention weights {figures['max_attention_diff']:.1e} from PyTorch's"
    if figures.get("prefix_diff", 0.0) > MAX_PREFIX_DIFF:
        return f"changes a prefix's logits by {figures['prefix_diff']:.1e} when tokens follow"
    short = [t for t, a in figures.get("top1_agreement", {}).items() if a < MIN_AGREEMENT]
    if short:
        return f"agrees with PyTorch's next-token top-1 under {MIN_AGREEMENT:.0%} at T = {short}"
    return None

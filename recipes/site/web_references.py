"""The pages' examples and onnxruntime-Python's answers on them: ``reference.json``, which the
browser tests hold the "Try it" boxes to (:mod:`recipes.site.web_models` writes it; the numpy twins
of the boxes' JavaScript are the book's :mod:`reference.web_sampler` and
:mod:`reference.web_attention`).
"""

from __future__ import annotations

from functools import partial

from bertlab.probes import PROBES
from recipes.site.web_attention import run_attention
from recipes.site.web_onnx import run
from reference import web_attention, web_sampler
from reference.web_sampler import FILL_EXAMPLES

#: Chapter 6b's canvas: the chapter's river bank first (a held-out sense), then the money bank of
#: its "two banks" experiment (a trained sense, in a sentence of ours), then two held-out pairs;
#: N, K as the chapter's.
CANVAS_EXAMPLES = (
    ("bank", "they pulled the canoe up on the bank"),
    ("bank", "she paid the cheque into the bank"),
    ("unit", "the team is a unit"),
    ("performance", "they admired his performance under stress"),
)
CANVAS_N, CANVAS_K, CANVAS_SEED = 12, 6, 0
#: Chapter 6's "Who can write?": the canvas's first two pairs, and the box's defaults.
WRITER_EXAMPLES = CANVAS_EXAMPLES[:2]
WRITERS = {"n": 12, "k": 6, "iterations": 6, "gibbs_passes": 24, "seed": 0}
#: Chapter 1's pair: the same sentence but for its last word.
ATTENTION_EXAMPLES = ("The bank by the river was flooded.", "The bank by the river was robbed.")


def references(tokenizer, mlm, diffusion, causal, attention) -> dict:
    """onnxruntime-Python's answers on the pages' examples (what the browser must reproduce)."""
    special = {
        "cls": tokenizer.cls_token_id,
        "sep": tokenizer.sep_token_id,
        "pad": tokenizer.pad_token_id,
        "mask": tokenizer.mask_token_id,
    }
    fills = []
    for text in FILL_EXAMPLES:
        ids = tokenizer(text)["input_ids"]
        fills.append(
            {
                "text": text,
                "input_ids": ids,
                "fills": web_sampler.top_fills(run(mlm, ids), ids, tokenizer.mask_token_id),
            }
        )
    canvases = []
    for word, sentence in CANVAS_EXAMPLES:
        source = tokenizer(f"{word} : {sentence}", add_special_tokens=False)["input_ids"]
        for order in ("confidence", "random"):
            steps = web_sampler.fill_canvas(
                lambda i, t: run(diffusion, i, t),
                source,
                CANVAS_N,
                CANVAS_K,
                special,
                order,
                CANVAS_SEED,
            )
            canvases.append(
                {
                    "word": word,
                    "sentence": sentence,
                    "source_ids": source,
                    "n": CANVAS_N,
                    "k": CANVAS_K,
                    "order": order,
                    "seed": CANVAS_SEED,
                    "steps": steps,
                }
            )
    tokenized = {p.text: tokenizer(p.text)["input_ids"] for p in PROBES}
    draws = web_sampler.mulberry32(CANVAS_SEED)
    return {
        "fill_mask": fills,
        "canvas": canvases,
        "tokenized": tokenized,
        "mulberry32_seed0": [next(draws) for _ in range(8)],
        "special": special,
        "writers": writer_references(tokenizer, causal, diffusion, special),
        **attention_references(tokenizer, attention),
    }


def writer_references(tokenizer, causal, diffusion, special: dict) -> list[dict]:
    """Chapter 6's "Who can write?": every writer's steps on :data:`WRITER_EXAMPLES`."""
    n, seed, iterations = WRITERS["n"], WRITERS["seed"], WRITERS["iterations"]
    decoder, bert = partial(run, causal), partial(run, diffusion)  # (ids, types) -> [T, V]
    out = []
    for word, sentence in WRITER_EXAMPLES:
        source = tokenizer(f"{word} : {sentence}", add_special_tokens=False)["input_ids"][:40]
        out.append(
            {
                "word": word,
                "sentence": sentence,
                "source_ids": source,
                "n": n,
                "seed": seed,
                "decoder": web_sampler.write_left_to_right(decoder, source, n, special),
                "append": web_sampler.force_append(bert, source, n, special),
                "gibbs": web_sampler.force_gibbs(
                    bert, source, n, special, WRITERS["gibbs_passes"], seed
                ),
                "gibbs_passes": WRITERS["gibbs_passes"],
                "mask_predict": web_sampler.force_mask_predict(
                    bert, source, n, special, iterations
                ),
                "iterations": iterations,
                "canvas": web_sampler.fill_canvas(bert, source, n, WRITERS["k"], special),
                "k": WRITERS["k"],
            }
        )
    return out


def attention_references(tokenizer, attention) -> dict:
    """Chapter 1's attention box: each head under both masks, and which vectors an edit moves."""
    run_both = partial(run_attention, attention)  # (ids, causal) -> [L, H, T, T], [T, Hd]
    rows = [tokenizer(text)["input_ids"] for text in ATTENTION_EXAMPLES]
    return {
        "attention": [
            {"text": text, "input_ids": ids, **web_attention.attention_reference(run_both, ids)}
            for text, ids in zip(ATTENTION_EXAMPLES, rows)
        ],
        "edits": {
            "pair": list(ATTENTION_EXAMPLES),
            **web_attention.edit_reference(run_both, *rows),
        },
    }

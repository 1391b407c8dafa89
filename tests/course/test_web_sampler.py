"""book/reference/web_sampler.py, the numpy twin of the website's modules, against the chapters' PyTorch code.

The browser tests (tests/site/test_live_models.py) hold the JavaScript to the reference file this
module writes; these hold this module to Chapter 6b's ``fill_canvas`` and Chapter 4's softmax and
top k, on a seeded tiny ``BertForMaskedLM`` with the course's vocabulary.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from reference import web_sampler
from bertlab.models import minilm_path
from reference.diffusion import tokens_per_step
from reference.diffusion_sampler import fill_canvas


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(minilm_path())


@pytest.fixture(scope="module")
def tiny(tokenizer):
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    return BertForMaskedLM(config).eval()


def logits_of(model):
    def run(ids, types):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types]))
        return out.logits[0].numpy()  # [T, V]

    return run


def special(tokenizer) -> dict:
    return {
        "cls": tokenizer.cls_token_id,
        "sep": tokenizer.sep_token_id,
        "pad": tokenizer.pad_token_id,
        "mask": tokenizer.mask_token_id,
    }


@pytest.mark.parametrize(("n", "steps"), [(12, 6), (10, 4), (5, 5), (7, 1)])
def test_tokens_per_step_is_the_chapters(n, steps):
    assert web_sampler.tokens_per_step(n, steps) == tokens_per_step(n, steps)


@pytest.mark.parametrize(("n", "steps"), [(12, 6), (8, 3)])
def test_confidence_canvas_equals_the_chapters_sampler(tokenizer, tiny, n, steps):
    source = "bank : they pulled the canoe up on the bank"
    _, history = fill_canvas(tiny, tokenizer, [source], n, steps)  # [steps + 1, 1, T]
    ids = tokenizer(source, add_special_tokens=False)["input_ids"]
    ours = web_sampler.fill_canvas(logits_of(tiny), ids, n, steps, special(tokenizer))
    start = len(ids) + 2
    assert [s["canvas"] for s in ours] == history[:, 0, start : start + n].tolist()
    assert [len(s["committed"]) for s in ours[1:]] == tokens_per_step(n, steps)


def test_random_canvas_is_seeded_and_writes_every_position(tokenizer, tiny):
    ids = tokenizer("unit : the team is a unit", add_special_tokens=False)["input_ids"]
    run = [
        web_sampler.fill_canvas(logits_of(tiny), ids, 9, 3, special(tokenizer), "random", seed)
        for seed in (0, 0, 1)
    ]
    assert run[0] == run[1] and run[0] != run[2]
    assert sorted(p for s in run[0] for p in s["committed"]) == list(range(9))
    assert tokenizer.mask_token_id not in run[0][-1]["canvas"]


def test_mulberry32_is_uniform_and_exact_in_doubles():
    draws = web_sampler.mulberry32(7)
    xs = np.array([next(draws) for _ in range(20000)])
    assert ((xs >= 0) & (xs < 1)).all() and abs(xs.mean() - 0.5) < 0.01
    assert all((x * 2**32).is_integer() for x in xs[:100])


def test_top_fills_are_the_softmax_top_k(tokenizer, tiny):
    ids = tokenizer("The capital of France is [MASK].")["input_ids"]
    logits = logits_of(tiny)(ids, [0] * len(ids))
    (fill,) = web_sampler.top_fills(logits, ids, tokenizer.mask_token_id)
    top = torch.tensor(logits[fill["position"]]).softmax(-1).topk(5)
    assert fill["ids"] == top.indices.tolist()
    np.testing.assert_allclose(fill["probs"], top.values.numpy(), rtol=1e-5)

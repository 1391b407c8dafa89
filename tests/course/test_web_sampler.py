"""book/reference/web_sampler.py, the numpy twin of the website's modules, against the chapters' PyTorch code.

The browser tests (tests/site/test_live_models.py, test_live_writers.py) hold the JavaScript to the
reference file this module writes; these hold this module to Chapter 6b's ``fill_canvas`` and
Chapter 4's softmax and top k, on a seeded tiny ``BertForMaskedLM`` with the course's vocabulary;
Chapter 6's writers to fake models whose answers are known by hand and to ``bert_sampling``'s
``mask_predict`` and ``append_masks_one_at_a_time``; Chapter 1's attention box to a tiny encoder.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertModel

from reference import web_attention, web_sampler
from bertlab.models import minilm_path
from reference.bert_sampling import append_masks_one_at_a_time, mask_predict
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


# Chapter 6's "Who can write?": the writers on fake models whose answers are known by hand.

SPECIAL = {"pad": 0, "cls": 1, "sep": 2, "mask": 3}
VOCAB = 20


def fake_logits(row_of):
    """``logits_of`` whose row t is ``row_of(ids, types, t)`` -> [V]; it records each call."""
    calls = []

    def run(ids, types):
        calls.append((list(ids), list(types)))
        return np.stack([row_of(ids, types, t) for t in range(len(ids))])  # [T, V]

    run.calls = calls
    return run


def one_hot(token: int, strength: float = 5.0) -> np.ndarray:
    row = np.zeros(VOCAB, dtype=np.float32)  # [V]
    row[token] = strength
    row[SPECIAL["cls"]] = 2 * strength  # banned by every writer: never written
    return row


def test_the_decoder_writes_until_it_writes_sep():
    source = [7, 8, 9]
    start = len(source) + 2

    def row(ids, types, t):  # after 10, 11, 12 comes [SEP]
        written = len(ids) - start
        return one_hot(10 + written if written < 3 else SPECIAL["sep"])

    logits_of = fake_logits(row)
    steps = web_sampler.write_left_to_right(logits_of, source, 12, SPECIAL)
    assert [s["ids"] for s in steps] == [[], [10], [10, 11], [10, 11, 12], [10, 11, 12, 2]]
    assert [s["committed"] for s in steps] == [[], [0], [1], [2], [3]]
    assert len(logits_of.calls) == 4  # passes = tokens written, the stop included
    ids, types = logits_of.calls[-1]
    assert ids == [1, 7, 8, 9, 2, 10, 11, 12] and types == [0] * 5 + [1] * 3
    p = np.exp(5.0) / (np.exp(5.0) + VOCAB - 4)  # [CLS], [PAD], [MASK] banned, [SEP] not
    np.testing.assert_allclose(steps[1]["probs"], [p])


def test_the_decoder_stops_after_n_tokens_without_a_sep():
    steps = web_sampler.write_left_to_right(
        fake_logits(lambda ids, types, t: one_hot(15)), [7, 8], 5, SPECIAL
    )
    assert len(steps) == 6 and steps[-1]["ids"] == [15] * 5


def test_append_writes_exactly_n_at_the_mask_and_never_a_sep():
    source = [7, 8, 9]
    start = len(source) + 2

    def row(ids, types, t):  # [SEP] is first everywhere, then 10 + the blank's index
        r = one_hot(10 + t - start if ids[t] == SPECIAL["mask"] else 4)
        r[SPECIAL["sep"]] = 9.0
        return r

    logits_of = fake_logits(row)
    steps = web_sampler.force_append(logits_of, source, 4, SPECIAL)
    assert steps[-1]["ids"] == [10, 11, 12, 13] and len(logits_of.calls) == 4
    ids, types = logits_of.calls[2]  # the third pass: two written, then the blank
    assert ids == [1, 7, 8, 9, 2, 10, 11, 3, 2] and types == [0] * 5 + [1] * 4


def hand_shuffle(n: int, seed: int) -> list[int]:
    draws, order = web_sampler.mulberry32(seed), list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(next(draws) * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def test_gibbs_visits_every_position_first_in_a_seeded_order():
    def row(ids, types, t):  # probabilities 0.5, 0.3, 0.2 on ids 10, 11, 12 (the rest ~0)
        r = np.full(VOCAB, -1e4, dtype=np.float32)
        r[[10, 11, 12]] = np.log([0.5, 0.3, 0.2])
        return r

    source, n = [7, 8, 9], 6
    runs = [
        web_sampler.force_gibbs(fake_logits(row), source, n, SPECIAL, seed=seed)
        for seed in (0, 0, 5)
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert len(runs[0]) == 2 * n + 1  # default passes: 2N
    visits = [s["committed"][0] for s in runs[0][1:]]
    assert visits[:n] == hand_shuffle(n, 0)
    assert runs[0][n]["ids"].count(SPECIAL["mask"]) == 0
    assert all(p in (0.5, 0.3, 0.2) for s in runs[0][1:] for p in np.round(s["probs"], 6))


def test_top_k_sampling_walks_the_cumulative_probabilities():
    probs = np.array([0.1, 0.4, 0.1, 0.4])  # ties: the smaller id first
    assert [web_sampler.sample_top_k(probs, 3, u) for u in (0.0, 0.44, 0.45, 0.9)] == [1, 1, 3, 0]
    assert web_sampler.sample_top_k(probs, 1, 0.99) == 1


@pytest.mark.parametrize(
    ("n", "iterations", "counts"), [(10, 4, [10, 7, 5, 2]), (2, 6, [2, 1, 1, 1])]
)
def test_mask_predict_remasks_the_least_confident(n, iterations, counts):
    source = [7, 8, 9]
    start = len(source) + 2

    def row(ids, types, t):  # position p writes 4 + p, more sure the further right
        r = np.zeros(VOCAB, dtype=np.float32)
        r[4 + t - start] = 1.0 + 0.5 * (t - start)
        return r

    steps = web_sampler.force_mask_predict(fake_logits(row), source, n, SPECIAL, iterations)
    assert [
        len(s["committed"]) for s in steps[1:]
    ] == counts  # (2, 6) stops at floor(2 * 2 / 6) = 0
    assert all(s["committed"] == list(range(len(s["committed"]))) for s in steps[1:])
    assert steps[-1]["ids"] == [4 + p for p in range(n)]


# The forced writers against Chapter 6's own, on a seeded tiny BertForMaskedLM.


class IdsTokenizer:
    """Just what Chapter 6's ``layout`` reads: a prompt of space-separated ids."""

    cls_token_id, sep_token_id, pad_token_id, mask_token_id = 1, 2, 0, 3

    def __call__(self, text):
        return {"input_ids": [1, *map(int, text.split()), 2]}


@pytest.fixture(scope="module")
def tiny_vocab_mlm():
    """40 ids; segments made equal and the specials' bias pushed to -1e4, so that Chapter 6's
    segment-0 layout without bans and the box's with them must write the same ids."""
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=40,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        initializer_range=0.5,
    )
    model = BertForMaskedLM(config).eval()
    with torch.no_grad():
        model.bert.embeddings.token_type_embeddings.weight[1] = (
            model.bert.embeddings.token_type_embeddings.weight[0]
        )
        model.cls.predictions.bias[list(SPECIAL.values())] = -1e4
    return model


SOURCE = [12, 7, 30, 21, 9, 16]
CHAPTER_PROMPT = " ".join(map(str, [*SOURCE, 2]))  # the chapter writes right after the prompt


def test_force_mask_predict_is_the_chapters(tiny_vocab_mlm):
    (want,) = mask_predict(tiny_vocab_mlm, IdsTokenizer(), [CHAPTER_PROMPT], 12, 6)
    steps = web_sampler.force_mask_predict(logits_of(tiny_vocab_mlm), SOURCE, 12, SPECIAL, 6)
    assert steps[-1]["ids"] == want
    assert len(set(want)) > 3  # a real answer, not one id repeated


def test_force_append_is_the_chapters(tiny_vocab_mlm):
    (want,) = append_masks_one_at_a_time(tiny_vocab_mlm, IdsTokenizer(), [CHAPTER_PROMPT], 8)
    steps = web_sampler.force_append(logits_of(tiny_vocab_mlm), SOURCE, 8, SPECIAL)
    assert steps[-1]["ids"] == want


# Chapter 1's attention box.


def test_the_causal_bias_hides_later_keys():
    bias = web_attention.attention_bias(4, causal=True)  # [1, 1, 4, 4]
    assert bias.shape == (1, 1, 4, 4) and bias.dtype == np.float32
    assert (bias[0, 0] == np.triu(np.full((4, 4), -1e9, dtype=np.float32), 1)).all()
    assert not web_attention.attention_bias(4, causal=False).any()


def test_an_edit_moves_only_later_vectors_under_the_causal_mask():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=40,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        attn_implementation="eager",
    )
    encoder = BertModel(config, add_pooling_layer=False).eval()

    def run_attention(ids, causal):
        with torch.no_grad():
            out = encoder(
                input_ids=torch.tensor([ids]),
                attention_mask=torch.from_numpy(web_attention.attention_bias(len(ids), causal)),
                output_attentions=True,
            )
        return torch.stack(out.attentions)[:, 0].numpy(), out.last_hidden_state[0].numpy()

    a, b = [1, 5, 6, 7, 8, 2], [1, 5, 6, 7, 9, 2]
    edit = web_attention.edit_reference(run_attention, a, b)
    assert edit["changed_from"] == 4
    assert edit["moved"]["causal"][:4] == [0.0] * 4 and min(edit["moved"]["causal"][4:]) > 0
    assert min(edit["moved"]["bidirectional"]) > 0
    maps = web_attention.attention_reference(run_attention, a)
    causal = np.array(maps["causal"])  # [L, H, T, T]
    assert causal.shape == (2, 2, 6, 6) and (np.triu(causal, 1) == 0).all()
    np.testing.assert_allclose(causal.sum(-1), 1, atol=1e-5)
    hidden = run_attention(a, False)[1], run_attention(b, False)[1]
    np.testing.assert_allclose(
        edit["moved"]["bidirectional"],
        (torch.tensor(hidden[0] - hidden[1]).norm(dim=-1) / torch.tensor(hidden[0]).norm(dim=-1)),
        rtol=1e-5,
    )

"""What Chapters 6 and 6b teach on the page is what the book runs.

Chapter 6 defines its three samplers (left to right, Gibbs, Mask-Predict) and Chapter 6b its
noise, loss, schedule, sampler step and canvas sampler in code cells beside the maths, for one
prompt at a time; the measurements run batched twins kept with the book (``book/reference/``).
This test reads the functions out of the pages' code cells, exactly as the page shows them, and
holds each to its twin on seeded tiny ``BertForMaskedLM`` s with the course's vocabulary (2
layers, H = 32): the same outputs, draw for draw where a sampler draws. So a page cannot teach
one algorithm while the book measures another.
"""

from __future__ import annotations

import ast

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from bertlab.models import minilm_path
from reference import bert_sampling, diffusion, diffusion_sampler
from test_page_verdicts import BOOK, code_cells

PROMPTS = ["The weather today is", "A", "She opened the door and"]


def page_functions(stem: str, names: list[str]) -> dict:
    """The functions (and constants) ``names`` of ``book/<stem>.md``, defined from the page's own
    code cells (each def or assignment of such a name is run, in page order, so the page's last
    word counts), in one namespace holding ``torch`` and ``F``, so that they can call one another
    and read the constants as on the page."""
    namespace = {"torch": torch, "F": F}
    found = set()
    for source in code_cells(BOOK / f"{stem}.md"):
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                defined = {node.name}
            elif isinstance(node, ast.Assign):
                defined = {t.id for t in node.targets if isinstance(t, ast.Name)}
            else:
                continue
            if defined & set(names):
                exec(compile(ast.Module([node], []), f"book/{stem}.md", "exec"), namespace)
                found |= defined & set(names)
    missing = sorted(set(names) - found)
    assert not missing, f"book/{stem}.md defines no {missing} in its code cells"
    return {name: namespace[name] for name in names}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(minilm_path())


def tiny_bert(tokenizer, seed: int) -> BertForMaskedLM:
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=128,
    )
    return BertForMaskedLM(config).eval()


# Chapter 6 ------------------------------------------------------------------------------------

CH6 = "06-forcing-bert-to-write"


@pytest.fixture(scope="module")
def ch6():
    return page_functions(
        CH6, ["lay_out", "fill_left_to_right", "gibbs_step", "gibbs_sample", "mask_predict"]
    )


@pytest.mark.parametrize("seed,n", [(1, 1), (2, 5), (3, 8)])
def test_ch6_left_to_right_is_the_books(ch6, tokenizer, seed, n):
    model = tiny_bert(tokenizer, seed)
    want = bert_sampling.fill_left_to_right(model, tokenizer, PROMPTS, n)
    for prompt, batched in zip(PROMPTS, want):
        written, history = ch6["fill_left_to_right"](model, tokenizer, prompt, n)
        assert written == batched, prompt
        assert len(history) == n + 1  # the canvas before the first pass, then after each


@pytest.mark.parametrize("seed,n,steps,burn_in,top_k", [(4, 4, 10, 4, 3), (5, 6, 18, 6, 10)])
def test_ch6_gibbs_is_the_books_draw_for_draw(ch6, tokenizer, seed, n, steps, burn_in, top_k):
    model = tiny_bert(tokenizer, seed)
    for prompt in PROMPTS:
        want = bert_sampling.gibbs_sample(
            model,
            tokenizer,
            [prompt],
            n,
            n_steps=steps,
            burn_in=burn_in,
            temperature=1.0,
            top_k=top_k,
            generator=torch.Generator().manual_seed(seed),
        )[0]
        written, history, visited = ch6["gibbs_sample"](
            model, tokenizer, prompt, n, steps, burn_in, top_k, torch.Generator().manual_seed(seed)
        )
        assert written == want, prompt
        assert len(history) == steps + 1 and sorted(visited[:n]) == list(range(n))


def test_ch6_gibbs_step_never_draws_a_special_token(ch6, tokenizer):
    model = tiny_bert(tokenizer, 6)
    with torch.no_grad():  # the special tokens the likeliest: the step must still avoid them
        model.cls.predictions.bias[tokenizer.all_special_ids] = 20.0
    ids, start = ch6["lay_out"](tokenizer, PROMPTS[0], 3)
    generator = torch.Generator().manual_seed(0)
    for top_k in (None, 5):
        for _ in range(20):
            drawn = ch6["gibbs_step"](model, tokenizer, ids, start, 1.0, top_k, generator)
            assert int(drawn[0, start]) not in tokenizer.all_special_ids
    assert int(ids[0, start]) == tokenizer.mask_token_id, "the step must not write into its input"


@pytest.mark.parametrize("seed,n,iterations", [(7, 6, 3), (8, 8, 4), (9, 3, 5)])
def test_ch6_mask_predict_is_the_books(ch6, tokenizer, seed, n, iterations):
    model = tiny_bert(tokenizer, seed)
    want = bert_sampling.mask_predict(model, tokenizer, PROMPTS, n, iterations)
    for prompt, batched in zip(PROMPTS, want):
        written, history, passes = ch6["mask_predict"](model, tokenizer, prompt, n, iterations)
        assert written == batched, prompt
        counts = [n * (iterations - t) // iterations for t in range(1, iterations)]
        assert [len(p) for p in passes[1:]] == [n] + [c for c in counts if c]


# Chapter 6b -----------------------------------------------------------------------------------

CH6B = "06b-masked-diffusion"


@pytest.fixture(scope="module")
def ch6b():
    return page_functions(
        CH6B,
        [
            "MIN_RATIO",
            "diffusion_mask",
            "diffusion_loss",
            "tokens_per_step",
            "unmask_step",
            "fill_canvas",
        ],
    )


def test_ch6b_the_noise_is_the_books_draw_for_draw(ch6b):
    assert ch6b["MIN_RATIO"] == diffusion.MIN_RATIO
    ids = torch.randint(5, 100, (6, 20), generator=torch.Generator().manual_seed(0))
    maskable = torch.rand(6, 20, generator=torch.Generator().manual_seed(1)) < 0.7
    for seed in range(3):
        got = ch6b["diffusion_mask"](ids, maskable, 103, torch.Generator().manual_seed(seed))
        want = diffusion.diffusion_mask(ids, maskable, 103, torch.Generator().manual_seed(seed))
        for g, w in zip(got, want):
            assert torch.equal(g, w)
        assert not got[1][~maskable].any()
    assert int(ids.eq(103).sum()) == 0, "the noise must not write into its input"


def test_ch6b_the_loss_is_the_books():
    ch6b = page_functions(CH6B, ["MIN_RATIO", "diffusion_mask", "diffusion_loss"])
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(4, 9, 30, generator=generator)
    targets = torch.randint(0, 30, (4, 9), generator=generator)
    maskable = torch.ones(4, 9, dtype=torch.bool)
    maskable[:, :3] = False  # a prompt, never masked
    maskable[3, 6:] = False  # padding
    _, masked, t = ch6b["diffusion_mask"](targets, maskable, 0, generator)
    got = ch6b["diffusion_loss"](logits, targets, masked, t, maskable)
    torch.testing.assert_close(got, diffusion.diffusion_loss(logits, targets, masked, t, maskable))


@pytest.mark.parametrize(("n", "steps"), [(12, 6), (10, 4), (5, 5), (7, 1), (3, 8)])
def test_ch6b_the_schedule_is_the_books(ch6b, n, steps):
    assert ch6b["tokens_per_step"](n, steps) == diffusion.tokens_per_step(n, steps)


def test_ch6b_the_sampler_step_is_the_books(ch6b):
    generator = torch.Generator().manual_seed(3)
    canvas = torch.randint(5, 50, (3, 10), generator=generator)
    canvas[torch.rand(3, 10, generator=generator) < 0.6] = 1  # 1 is [MASK] here
    logits = torch.randn(3, 10, 50, generator=generator)
    logits[1, :, 7] = 9.0  # every position equally sure of one token: ties to the earlier
    for n in (0, 1, 2, 4, 10):
        want = diffusion.unmask_step(canvas, logits, n, 1)  # batched: [3, 10]
        for row in range(canvas.shape[0]):  # the page's step takes one canvas
            got = ch6b["unmask_step"](canvas[row], logits[row], n, 1)
            assert torch.equal(got, want[row]), (n, row)


@pytest.mark.parametrize("seed,n,steps", [(10, 12, 6), (11, 5, 5), (12, 7, 1), (13, 9, 4)])
def test_ch6b_the_canvas_is_the_books_pass_for_pass(ch6b, tokenizer, seed, n, steps):
    model = tiny_bert(tokenizer, seed)
    for source in ("bank : they pulled the canoe up on the bank", "unit : the team is a unit"):
        written, history, committed = ch6b["fill_canvas"](model, tokenizer, source, n, steps)
        want, want_history = diffusion_sampler.fill_canvas(model, tokenizer, [source], n, steps)
        assert written == want[0], source
        assert torch.equal(torch.stack(history), want_history[:, 0])
        assert [len(c) for c in committed[1:]] == diffusion.tokens_per_step(n, steps)

"""Chapter 6: the book's batched samplers (book/reference/bert_sampling.py) against plain
one-sequence loops on tiny seeded BERTs, and the metrics (bertlab.generation, and the book's
distinct-n) against hand counts, sacrebleu and the causal LM's own loss."""

import math

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, LlamaConfig, LlamaForCausalLM

import bertlab
from bertlab import generation
from reference import bert_sampling
from reference.diversity import distinct_n, repetition_rate

PROMPTS = ["The weather today is", "A", "She opened the door and", "My favourite food is"]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(bertlab.model_path())


def tiny_bert(tokenizer, seed):
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
    )
    return BertForMaskedLM(config).eval()


def plain_layout(tokenizer, prompt, n):
    ids = tokenizer(prompt)["input_ids"]
    return ids[:-1] + [tokenizer.mask_token_id] * n + ids[-1:], len(ids) - 1


@torch.no_grad()
def plain_logits(model, ids):
    return model(input_ids=torch.tensor([ids])).logits[0]  # [T, V]


def test_prompt_set_has_at_least_20_distinct_prompts():
    assert len(set(generation.PROMPTS)) == len(generation.PROMPTS) >= 20


def test_logits_at_matches_the_full_model(tokenizer):
    model = tiny_bert(tokenizer, 0)
    ids, attention, starts = bert_sampling.layout(tokenizer, PROMPTS, 3)
    full = model(input_ids=ids, attention_mask=attention).logits  # [B, T, V]
    got = bert_sampling.logits_at(model, ids, attention, starts + 1)
    torch.testing.assert_close(got, full[torch.arange(len(PROMPTS)), starts + 1])


@pytest.mark.parametrize("seed,n", [(1, 1), (2, 5)])
def test_fill_left_to_right_matches_a_plain_loop(tokenizer, seed, n):
    model = tiny_bert(tokenizer, seed)
    with generation.ForwardCounter(model) as counter:
        batched = bert_sampling.fill_left_to_right(model, tokenizer, PROMPTS, n)
    assert counter.calls == n
    for prompt, got in zip(PROMPTS, batched):
        ids, start = plain_layout(tokenizer, prompt, n)
        for j in range(n):
            ids[start + j] = int(plain_logits(model, ids)[start + j].argmax())
        assert got == ids[start : start + n]


def test_append_one_mask_fills_the_token_before_sep(tokenizer):
    model = tiny_bert(tokenizer, 3)
    got = bert_sampling.append_masks_one_at_a_time(model, tokenizer, PROMPTS[:2], 3)
    for prompt, tokens in zip(PROMPTS[:2], got):
        ids = tokenizer(prompt)["input_ids"]
        for _ in range(3):
            ids = ids[:-1] + [tokenizer.mask_token_id] + ids[-1:]
            ids[-2] = int(plain_logits(model, ids)[-2].argmax())
        assert tokens == ids[len(tokenizer(prompt)["input_ids"]) - 1 : -1]


def test_mask_predict_matches_a_plain_loop(tokenizer):
    model = tiny_bert(tokenizer, 4)
    n, iterations = 6, 3
    got = bert_sampling.mask_predict(model, tokenizer, PROMPTS, n, iterations)
    for prompt, tokens in zip(PROMPTS, got):
        ids, start = plain_layout(tokenizer, prompt, n)
        confidence, redo = [0.0] * n, list(range(n))
        for t in range(iterations):
            if t > 0:
                redo = sorted(range(n), key=lambda i: confidence[i])[
                    : n * (iterations - t) // iterations
                ]
                for i in redo:
                    ids[start + i] = tokenizer.mask_token_id
            probs = plain_logits(model, ids).softmax(-1)
            for i in redo:
                confidence[i], ids[start + i] = (
                    float(probs[start + i].max()),
                    int(probs[start + i].argmax()),
                )
        assert tokens == ids[start : start + n]


def test_gibbs_never_samples_special_tokens_and_is_seeded(tokenizer):
    model = tiny_bert(tokenizer, 5)
    with (
        torch.no_grad()
    ):  # make the special tokens the most likely: the sampler must still avoid them
        model.cls.predictions.bias[tokenizer.all_special_ids] = 20.0
    runs = [
        bert_sampling.gibbs_sample(
            model,
            tokenizer,
            PROMPTS,
            4,
            n_steps=10,
            burn_in=5,
            top_k=3,
            generator=torch.Generator().manual_seed(0),
        )
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert not set(sum(runs[0], [])) & set(tokenizer.all_special_ids)


def test_choose_samples_the_tempered_top_k_distribution():
    scores = torch.tensor([[3.0, 2.0, 1.0, 0.0, -5.0]])
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([bert_sampling.choose(scores, 0.5, 3, generator) for _ in range(4000)])[
        :, 0
    ]
    expected = (scores[0, :3] / 0.5).softmax(-1)
    observed = torch.bincount(draws, minlength=5).float() / len(draws)
    assert observed[3:].sum() == 0
    torch.testing.assert_close(observed[:3], expected, atol=0.03, rtol=0)
    assert int(bert_sampling.choose(scores)[0]) == 0  # temperature 0: the argmax


def test_distinct_n_and_repetition():
    texts = ["the cat sat", "The cat ran"]
    assert distinct_n(texts, 1) == 4 / 6
    assert distinct_n(texts, 2) == 3 / 4
    assert distinct_n(["a b", "a b"], 2) == 0.5  # no n-gram spans two texts
    assert distinct_n([], 1) == 0.0 and distinct_n(["a"], 2) == 0.0
    assert repetition_rate(["a a a b", "x y"], 1) == pytest.approx((0.5 + 0.0) / 2)


def test_self_bleu_is_sacrebleu_against_the_other_texts():
    import sacrebleu

    texts = ["the cat sat on the mat", "the cat sat on a mat", "a dog ran in the park today"]
    want = (
        sum(
            sacrebleu.sentence_bleu(t, texts[:i] + texts[i + 1 :]).score
            for i, t in enumerate(texts)
        )
        / 3
    )
    assert generation.self_bleu(texts) == pytest.approx(want, abs=1e-6)
    assert generation.self_bleu(["same words here", "same words here"]) == pytest.approx(100.0)


def test_perplexity_matches_the_models_own_loss():
    tokenizer = AutoTokenizer.from_pretrained(bertlab.decoder_path())
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        )
    ).eval()
    prompts, texts = (
        ["The weather today is", "A"],
        ["sunny and warm.", "small dog barked at the moon"],
    )
    got = generation.perplexities(model, tokenizer, prompts, texts)  # one padded batch
    for prompt, text, ppl in zip(prompts, texts, got):
        context = len(tokenizer(prompt)["input_ids"])
        ids = torch.tensor([tokenizer(prompt + " " + text)["input_ids"]])
        labels = ids.clone()
        labels[0, :context] = -100
        with torch.no_grad():
            loss = model(input_ids=ids, labels=labels).loss
        assert ppl == pytest.approx(math.exp(loss.item()), rel=1e-4)

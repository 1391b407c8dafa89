"""Chapter 5: the shipped data sets, the rules that made them, QA decoding and metrics (the book's
book/reference/qa.py),
the training loop and the weight bookkeeping (held against transformers where it has one)."""

from __future__ import annotations

import itertools
import types

import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup

from bertlab.finetuning import datasets, training, wordnet
from reference import qa


# -- data --------------------------------------------------------------------------------------


def test_gloss_topics_are_balanced_and_split_by_hash():
    topics = datasets.gloss_topics()
    rows = topics["train"] + topics["heldout"]
    assert len(rows) == len(wordnet.TOPICS) * wordnet.TOPICS_PER_CLASS
    assert {r["label"] for r in rows} == set(range(len(datasets.TOPICS)))
    assert all(r["split"] == ("heldout" if wordnet.held_out(r["id"]) else "train") for r in rows)
    assert 0.15 < len(topics["heldout"]) / len(rows) < 0.25
    assert not {r["id"] for r in topics["train"]} & {r["id"] for r in topics["heldout"]}
    assert all(len(r["text"].split()) <= wordnet.MAX_WORDS for r in rows)


def test_name_tags_are_valid_bio():
    tagged = datasets.name_tags()
    rows = tagged["train"] + tagged["heldout"]
    assert len(rows) == wordnet.TAG_SENTENCES
    for r in rows:
        assert len(r["words"]) == len(r["tags"]) and any(r["tags"])
        names = [datasets.TAGS[t] for t in r["tags"]]
        for previous, tag in zip(["O"] + names, names):
            if tag.startswith("I-"):
                assert previous[2:] == tag[2:], r  # I-X only continues an X


def test_name_tags_hold_out_names_never_trained_on():
    tagged = datasets.name_tags()

    def names(row):
        return wordnet.tagged_names(row["words"], [datasets.TAGS[t] for t in row["tags"]])

    trained = {n for r in tagged["train"] for n in names(r)}
    assert not any(wordnet.held_out(n) for n in trained)
    assert all(any(map(wordnet.held_out, names(r))) for r in tagged["heldout"])
    unseen = [n for r in tagged["heldout"] for n in names(r) if n not in trained]
    assert 0.15 < len(tagged["heldout"]) / wordnet.TAG_SENTENCES < 0.25 and len(unseen) > 500
    assert wordnet.tagged_names(
        "Mozart left New York".split(), ["B-PER", "O", "B-LOC", "I-LOC"]
    ) == [
        "Mozart",
        "New York",
    ]


def test_kind_of_answers_sit_at_their_offsets():
    questions = datasets.kind_of_questions()
    rows = questions["train"] + questions["heldout"]
    assert len(rows) == wordnet.QA_PARAGRAPHS
    for r in rows:
        assert r["context"][r["answer_start"] : r["answer_start"] + len(r["answer"])] == r["answer"]
        word = r["question"][len("What is ") : -len(" a kind of?")]
        assert f"{word}: a kind of {r['answer']};" in r["context"]
    assert len(datasets.kind_of_document()) == 120
    # the split: a held-out paragraph asks about a held-out synset, a training one never does
    assert not any(wordnet.held_out(r["id"]) for r in questions["train"])
    assert all(wordnet.held_out(r["id"]) for r in questions["heldout"])
    assert len(questions["heldout"]) == wordnet.QA_PARAGRAPHS // wordnet.QA_HELDOUT_EVERY


def test_name_rule_longest_match_and_ambiguity():
    lexicon = {("New", "York"): "LOC", ("York",): "LOC", ("Mozart",): "PER"}
    assert wordnet.tag_words("Mozart left New York".split(), lexicon, set(), 2) == [
        "B-PER",
        "O",
        "B-LOC",
        "I-LOC",
    ]
    assert wordnet.tag_words("near York".split(), lexicon, set(), 2) == ["O", "B-LOC"]
    assert wordnet.tag_words("in Washington".split(), lexicon, {("Washington",)}, 2) is None


def test_held_out_is_stable():
    assert [wordnet.held_out(k) for k in ("02084071", "07630909", "04188643")] == [
        wordnet.held_out(k) for k in ("02084071", "07630909", "04188643")
    ]
    share = sum(wordnet.held_out(f"{i:08d}") for i in range(5000)) / 5000
    assert 0.17 < share < 0.24


# -- QA ----------------------------------------------------------------------------------------


def test_best_span_is_the_best_permitted_pair():
    g = torch.Generator().manual_seed(0)
    for T, longest in ((7, 3), (12, 5), (5, 1)):
        start, end = torch.randn(T, generator=g), torch.randn(T, generator=g)
        allowed = torch.rand(T, generator=g) > 0.3
        allowed[2] = True
        pairs = [
            (s, e)
            for s, e in itertools.product(range(T), repeat=2)
            if s <= e < s + longest and allowed[s] and allowed[e]
        ]
        expected = max(pairs, key=lambda p: float(start[p[0]] + end[p[1]]))
        (s, e), score = qa.best_span(start, end, allowed, longest)
        assert (s, e) == expected
        assert score == pytest.approx(float(start[s] + end[e]))


def test_squad_metrics():
    assert qa.exact_match("The Fish.", "fish") == 1.0
    assert qa.exact_match("a fish", "fishes") == 0.0
    assert qa.f1("bowed stringed instrument", "stringed instrument") == pytest.approx(0.8)
    assert qa.f1("tree", "fish") == 0.0


@pytest.fixture(scope="module")
def tokenizer():
    import bertlab
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(bertlab.model_path())


class PointsAtToken(torch.nn.Module):
    """A stand-in QA model: start and end logits are 10 at one token id, 0 elsewhere."""

    def __init__(self, target: int):
        super().__init__()
        self.target = target

    def forward(self, input_ids, **_):
        logits = (input_ids == self.target).float() * 10  # [W, T]
        return types.SimpleNamespace(start_logits=logits, end_logits=logits)


def test_answer_merges_windows_of_a_long_document(tokenizer):
    """The best span over all windows wins, and comes back as the document's own characters."""
    document = " ".join(["the cat sat on the mat"] * 150) + " Zebra " + " ".join(["a dog ran"] * 20)
    model = PointsAtToken(tokenizer.convert_tokens_to_ids("zebra"))
    result = qa.answer(
        model, tokenizer, "which animal?", document, max_length=128, stride=32, max_answer_len=3
    )
    n_tokens = len(tokenizer(document, add_special_tokens=False)["input_ids"])
    assert n_tokens > 512 and result["windows"] > 5
    assert result["text"] == "Zebra" and result["window"] > 0
    assert document[slice(*result["char_span"])] == "Zebra"


# -- training ----------------------------------------------------------------------------------


def tiny_classifier(seed=0):
    torch.manual_seed(seed)
    return BertForSequenceClassification(
        BertConfig(
            vocab_size=50,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=37,
            num_labels=3,
        )
    )


def test_train_loop_is_the_reference_step_and_weight_change_measures_it():
    batches = [
        {
            "input_ids": torch.randint(5, 50, (4, 6), generator=torch.Generator().manual_seed(i)),
            "labels": torch.tensor([0, 1, 2, 1]),
        }
        for i in range(3)
    ]
    runs = []
    for use_loop in (True, False):
        model = tiny_classifier()
        before = training.snapshot(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        scheduler = get_linear_schedule_with_warmup(optimizer, 1, 3)
        torch.manual_seed(7)
        if use_loop:
            losses = training.train_loop(model, batches, optimizer, scheduler, 3, max_grad_norm=0.5)
        else:
            losses = []
            for batch in batches:
                model.train()
                loss = model(**batch).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                losses.append(loss.item())
        runs.append(
            (
                losses,
                [p.detach().clone() for p in model.parameters()],
                training.weight_change(before, model),
            )
        )
    assert runs[0][0] == pytest.approx(runs[1][0])
    assert all(torch.allclose(a, b) for a, b in zip(runs[0][1], runs[1][1]))
    moved = runs[0][2]
    assert set(moved) == {"embeddings", "layer 0", "layer 1", "pooler"}
    assert all(v > 0 for v in moved.values())


def test_predict_pads_token_labels():
    model = tiny_classifier().eval()
    loader = [{"input_ids": torch.randint(5, 50, (2, 4)), "labels": torch.tensor([0, 2])}] * 2
    predictions, labels = training.predict(model, loader)
    assert predictions.shape == labels.shape == (4,)


def test_frozen_word_embeddings_stay_put_and_are_not_measured():
    model = tiny_classifier()
    n = training.freeze_word_embeddings(model)
    assert n == 50 * 32
    before = training.snapshot(model)
    assert "embeddings.word_embeddings.weight" not in before
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, 2)
    words = model.bert.embeddings.word_embeddings.weight.detach().clone()
    batch = {"input_ids": torch.randint(5, 50, (4, 6)), "labels": torch.tensor([0, 1, 2, 1])}
    training.train_loop(model, [batch], optimizer, scheduler, 2)
    assert torch.equal(words, model.bert.embeddings.word_embeddings.weight)
    assert training.weight_change(before, model)["embeddings"] > 0  # position embeddings, LayerNorm

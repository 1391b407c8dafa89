"""Chapter 8's retrieval: the shipped passages and questions, the book's retrieval helpers
(book/reference/retrieval.py)
(held against plain torch and transformers' BertModel on a seeded tiny config), the prompt and
batched answering (held against one-at-a-time generation on a tiny seeded Llama)."""

from __future__ import annotations

import gzip
import json

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoTokenizer, BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

import bertlab
from bertlab.retrieval import answer_matches, collection, passages, questions, wordnet_passages
from bertlab.retrieval.answering import generate_answers
from reference.retrieval import build_messages, embed_texts, recall_at_k, top_k


# -- data --------------------------------------------------------------------------------------


def test_passages_are_unique_instances_with_names():
    docs = passages()
    assert 900 < len(docs) < 1100
    assert len({d["id"] for d in docs}) == len(docs)
    assert {d["kind"] for d in docs} == {"location", "person"}
    assert all(d["text"].endswith(".") and '"' not in d["text"] for d in docs)  # examples removed
    assert all(d["text"].split(":")[0] in d["names"] for d in docs)


def test_questions_have_answers_in_their_passages():
    qs, docs = questions(), passages()
    assert len(qs) >= 40
    assert len({q["question"] for q in qs}) == len(qs)
    for q in qs:
        passage = docs[q["relevant"]]
        assert passage["id"] == q["passage"]
        assert answer_matches(passage["text"], q["answers"]), q


def test_sample_rule_is_the_shipped_collection():
    """The shipped rows are exactly the cited passages plus the md5 sample (the builder's rule)."""
    import hashlib

    cited = {q["passage"] for q in questions()}
    for d in passages():
        assert (
            d["id"] in cited
            or hashlib.md5(d["id"].encode()).digest()[0] < wordnet_passages.SAMPLE_BYTE
        )


def test_builder_parses_a_wordnet_line(tmp_path):
    line = (
        "08700133 15 n 01 Windhoek 0 003 @i 08691669 n 0000 #p 08698379 n 0000 + 02984104 a 0101 "
        '| capital of Namibia in the center of the country; "a busy town"\n'
        "10842213 18 n 03 Bell 0 Alexander_Bell 0 Alexander_Graham_Bell 0 001 @i 10221956 n 0000 "
        "| United States inventor (born in Scotland) of the telephone (1847-1922)\n"
        "02084071 05 n 02 dog 0 domestic_dog 0 001 @ 02083346 n 0000 | a domestic animal\n"
    )
    (tmp_path / "data.noun").write_text("  1 This software and database is being provided\n" + line)
    rows = wordnet_passages.passages(tmp_path / "data.noun")
    assert [r["text"] for r in rows] == [
        "Windhoek: capital of Namibia in the center of the country.",
        "Alexander Graham Bell: United States inventor (born in Scotland) "
        "of the telephone (1847-1922).",
    ]
    assert [r["kind"] for r in rows] == ["location", "person"]


def test_data_files_are_gzip_jsonl():
    with gzip.open(collection.DATA / "passages.jsonl.gz", "rt") as lines:
        assert all(json.loads(line)["id"] for line in lines)


# -- retrieval ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    tokenizer = AutoTokenizer.from_pretrained(bertlab.model_path())
    torch.manual_seed(0)
    model = BertModel(
        BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
        )
    ).eval()
    return model, tokenizer


TEXTS = [
    "the capital of Namibia",
    "a",
    "Edmund Cartwright invented the power loom in England",
    "two words",
    "which river flows through the city of Rome?",
]


def test_embed_texts_is_the_mean_over_real_tokens(tiny):
    model, tokenizer = tiny
    with torch.no_grad():
        want = torch.stack(
            [
                F.normalize(
                    model(**tokenizer([t], return_tensors="pt")).last_hidden_state[0].mean(0), dim=0
                )
                for t in TEXTS
            ]
        )
    for batch_size in (1, 2, 32):
        got = embed_texts(model, tokenizer, TEXTS, batch_size=batch_size)
        assert got.shape == (len(TEXTS), 32)
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_top_k_is_a_stable_cosine_sort():
    g = torch.Generator().manual_seed(1)
    q, d = torch.randn(4, 8, generator=g) * 3, torch.randn(30, 8, generator=g) * 7
    scores, idx = top_k(q, d, 30)
    cos = F.cosine_similarity(q[:, None], d[None], dim=-1)
    assert torch.equal(idx, torch.sort(cos, descending=True, stable=True).indices)
    torch.testing.assert_close(scores, cos.gather(1, idx), atol=1e-5, rtol=1e-5)
    base = torch.randn(3, 8, generator=g)
    _, tied = top_k(base, torch.cat([base, 2 * base, base]), 3)
    assert tied.tolist() == [[j, j + 3, j + 6] for j in range(3)]
    with pytest.raises(ValueError):
        top_k(q, d, 31)


def test_recall_at_k():
    assert recall_at_k([[3, 1, 2], [0, 5, 6], [7, 8, 2]], [{1, 4}, {0}, {2}], 2) == pytest.approx(
        0.5
    )
    assert recall_at_k([[0, 1], [2, 3]], [{0}, set()], 1) == 1.0  # the empty query is left out
    assert recall_at_k([[0]], [set()], 1) == 0.0
    assert recall_at_k([[5, 6, 7]], [{5, 6, 7, 8}], 3) == pytest.approx(0.75)


def test_build_messages_puts_numbered_passages_before_the_question():
    messages = build_messages("Who invented the telephone?", ["First.", "Second."])
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert (
        user.index("[1] First.")
        < user.index("[2] Second.")
        < user.index("Who invented the telephone?")
    )
    assert "[1]" not in build_messages("Q?", [])[1]["content"]


def test_answer_matches_whole_words_any_case():
    assert answer_matches("It is windhoek.", ["Windhoek"])
    assert answer_matches("N'Djamena, on the Shari", ["N'Djamena"])
    assert not answer_matches("Bellevue", ["Bell"])
    assert not answer_matches("", ["Quito"])


# -- answering ---------------------------------------------------------------------------------


def test_generate_answers_batched_equals_one_at_a_time():
    """Left padding: a batch of prompts of different lengths gives each prompt's own greedy reply."""
    tokenizer = AutoTokenizer.from_pretrained(bertlab.decoder_path())
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            pad_token_id=tokenizer.pad_token_id,
        )
    ).eval()
    conversations = [
        build_messages("Short?", []),
        build_messages(
            "A much longer question about the capital of Namibia?", ["Windhoek: a city."]
        ),
    ]
    side = tokenizer.padding_side
    batched = generate_answers(model, tokenizer, conversations, max_new_tokens=5, batch_size=2)
    alone = [generate_answers(model, tokenizer, [c], max_new_tokens=5)[0] for c in conversations]
    assert batched == alone
    assert tokenizer.padding_side == side  # restored


def test_copied_passage_is_the_one_holding_most_of_the_answer():
    from bertlab.retrieval.answering import copied_passage

    passages = [
        "Cartwright: English inventor of the power loom.",
        "Hargreaves: English inventor of the spinning jenny.",
    ]
    assert copied_passage("James Hargreaves, the inventor", passages) == 1
    assert copied_passage("English inventor", passages) is None  # a tie: either passage
    assert copied_passage("Alexander Graham Bell", passages) is None
    assert copied_passage("", passages) is None

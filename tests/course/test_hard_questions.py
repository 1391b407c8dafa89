"""Chapter 5c's hard set: rewrites of the held-out "a kind of" rows that string matching fails."""

from __future__ import annotations

import pytest

from bertlab.finetuning import datasets, hard_questions

ROW = {
    "id": "1",
    "question": "What is trout a kind of?",
    "answer": "fish",
    "split": "heldout",
    "context": "oak: a kind of tree; it grows acorns. trout: a kind of fish; found in cold streams. "
    "violin: a kind of bowed stringed instrument; played with a bow.",
    "answer_start": 52,
}


def test_entries_and_question_forms():
    assert [w for w, _, _ in hard_questions.entries(ROW["context"])] == ["oak", "trout", "violin"]
    assert hard_questions.entries(ROW["context"])[2][1] == "bowed stringed instrument"
    for form in [hard_questions.TRAINED_QUESTION, *hard_questions.PARAPHRASES]:
        assert hard_questions.asked_word(form.format(word="sea bass")) == "sea bass"
    with pytest.raises(ValueError, match="question forms"):
        hard_questions.asked_word("Where did we sit?")


def test_a_distractor_stands_before_the_asked_entry_and_the_label_stays():
    row = hard_questions.rewrite(ROW, paraphrase=True, distractor=True)
    names = [w for w, _, _ in hard_questions.entries(row["context"])]
    assert row["context"][row["answer_start"] : row["answer_start"] + 4] == "fish"
    assert names[row["asked_position"]] == "trout" and row["asked_position"] in (1, 2)
    first_mention = next(
        i for i, (_, _, s) in enumerate(hard_questions.entries(row["context"])) if "trout" in s
    )
    assert first_mention < row["asked_position"]
    assert (
        row["question"] != ROW["question"] and hard_questions.asked_word(row["question"]) == "trout"
    )
    assert (
        hard_questions.first_mention_rule(row) != "fish" and hard_questions.name_rule(row) == "fish"
    )
    assert hard_questions.rewrite(ROW, True, True) == row, (
        "seeded by the row: the same on every build"
    )


def test_a_described_question_names_no_entry_and_short_definitions_keep_the_label():
    row = hard_questions.rewrite(ROW, False, False, described=True)
    assert row["question"] == "What is the thing defined as found in cold streams a kind of?"
    assert hard_questions.asked_word(row["question"]) == "found in cold streams"
    assert hard_questions.name_rule(row) == "" and hard_questions.first_mention_rule(row) == "fish"
    short = hard_questions.rewrite(ROW, False, False, short=True)
    assert (
        short["context"].split(". ")[2]
        == "violin: a kind of bowed stringed instrument; played with a."
    )
    assert short["context"][short["answer_start"] : short["answer_start"] + 4] == "fish"
    assert hard_questions.name_rule(short) == "fish"


def test_on_the_shipped_held_out_rows_the_rule_solves_the_plain_set_and_fails_the_distractors():
    rows = datasets.kind_of_questions()["heldout"][:200]
    sets = hard_questions.hard_sets(rows)
    score = {
        name: sum(hard_questions.first_mention_rule(r) == r["answer"] for r in rs) / len(rs)
        for name, rs in sets.items()
    }
    assert score["as trained"] > 0.95 and score["paraphrased"] > 0.95
    assert score["distractor"] < 0.05 and score["paraphrased + distractor"] < 0.05
    named = [name for name in sets if name != "described, not named"]
    assert all(hard_questions.name_rule(r) == r["answer"] for n in named for r in sets[n])
    assert not any(hard_questions.name_rule(r) for r in sets["described, not named"])
    assert score["described, not named"] > 0.95 and score["short definitions"] > 0.95
    assert [r["answer"] for r in sets["distractor"]] == [r["answer"] for r in rows]

"""bertlab.generation.trace: the step tables Chapters 6 and 6b print for a sampler's run."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from bertlab.generation.trace import canvas_row, step_table, trace_table
from bertlab.models import minilm_path


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(minilm_path())


def test_a_row_shows_masks_as_dots_and_new_tokens_in_bold_with_their_probability():
    row = canvas_row(["the", "[MASK]", "a|b", "*"], {0: 0.614, 3: None}, "[MASK]")
    assert row == ["**the** 0.61", "·", "a\\|b", "**\\***"]


def test_a_table_needs_one_cell_per_column():
    assert step_table(["a", "b"], [["1", "2"]]) == "| a | b |\n|---|---|\n| 1 | 2 |"
    with pytest.raises(ValueError, match="2 cells"):
        step_table(["a", "b"], [["1"]])


def test_a_trace_marks_what_changed_or_what_it_is_told(tokenizer):
    mask, the, cat = tokenizer.mask_token_id, *tokenizer.convert_tokens_to_ids(["the", "cat"])
    history = [[101, mask, mask, 102], [101, the, mask, 102], [101, the, cat, 102]]
    lines = trace_table(tokenizer, history, 1, 2).splitlines()
    assert lines[0] == "| when | 0 | 1 |"
    assert lines[2:] == [
        "| start | · | · |",
        "| pass 1 | **the** | · |",
        "| pass 2 | the | **cat** |",
    ]
    told = trace_table(
        tokenizer,
        history,
        1,
        2,
        written=[{}, {0: 0.5}, {0: 0.25, 1: 0.75}],
        notes=["all masked", "one", "two"],
        step="step",
    ).splitlines()
    assert told[0] == "| when | what the pass did | 0 | 1 |"
    assert told[-1] == "| step 2 | two | **the** 0.25 | **cat** 0.75 |"

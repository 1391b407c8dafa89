"""The fill-in-the-blank baselines of the checkpoint recipe (recipes/checkpoint/baselines.py): the
neighbour lookup on a stream small enough to count by hand, and the three baselines scored on a
tiny corpus."""

from __future__ import annotations

import numpy as np
import pytest

from recipes.checkpoint import baselines

MASK, SEP = 9, 0
#: a stream of ids: between 1 and 2 sits 5 twice and 6 once; after 3 comes 7 twice, 8 once
STREAM = np.array([1, 5, 2, SEP, 1, 5, 2, SEP, 1, 6, 2, SEP, 3, 7, SEP, 3, 7, SEP, 3, 8], np.int32)


def lookup(queries):
    allowed = np.ones(10, dtype=bool)
    allowed[[SEP, MASK]] = False
    return baselines.NeighbourLookup(STREAM, queries, 10, allowed, fallback=[4, 1, 2])


def test_both_neighbours_first_then_the_left_one_then_the_most_frequent():
    found = lookup([(1, 2), (3, 4), (MASK, 2)])
    assert found.guesses(1, 2, MASK, k=2) == [5, 6]  # 5 twice, 6 once between 1 and 2
    assert found.guesses(3, 4, MASK) == [7]  # never seen between 3 and 4: after 3, 7 most often
    assert found.guesses(MASK, 2, MASK, k=2) == [4, 1]  # an unknown left neighbour: the fallback
    assert found.guesses(3, 4, MASK, k=3) == [7, 8, 4]


def test_a_special_token_is_never_a_guess():
    found = lookup([(7, 3)])  # between 7 and 3 the stream has only SEP
    assert found.guesses(7, 3, MASK) == [4]


def test_the_baselines_score_the_positions_the_model_is_scored_on(tmp_path):
    from recipes.checkpoint.data import load_tokenizer

    text = "the cat sat on the mat and the dog sat on the rug ."
    (tmp_path / "train.txt").write_text("\n".join([text] * 50) + "\n")
    (tmp_path / "heldout.txt").write_text("\n".join([text] * 20) + "\n")
    tokenizer = load_tokenizer()
    stream = baselines.token_stream(tmp_path, tokenizer)
    assert stream[-1] == tokenizer.sep_token_id and len(stream) == 50 * (len(text.split()) + 1)
    found = baselines.heldout_baselines(tmp_path, tokenizer, stream, seq_len=32)
    acc = found["accuracy"]
    assert found["most_frequent_token"] == "the"
    assert acc["most frequent"] == pytest.approx(4 / 14, abs=0.15)
    # the held-out text is the training text: the lookup gets most blanks right
    assert acc["neighbour lookup"] > 0.7 > acc["most frequent"]
    assert acc["neighbour lookup, shown token kept"] > 0.7
    assert found["unigram_loss"] > 0
    probes = baselines.probe_baselines(tokenizer, stream)
    assert probes["most frequent"]["per_probe"][0]["top5"][0] == "the"

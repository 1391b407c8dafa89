"""The chapters' shared figures (bertlab.plots), read back from matplotlib: every cell holds its
token, dark cells write in white, the rows and axes are labelled, and a heatmap's colours are
centred on zero."""

from __future__ import annotations

import matplotlib.pyplot as plt  # the Agg backend: tests/conftest.py sets MPLBACKEND
import numpy as np
import pytest

from bertlab.plots import token_grid, vectors_heatmap


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


MASK = [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]  # [R, T]: an attention mask with one pad
TOKENS = [
    ["[CLS]", "hi", "there", "[SEP]", "[PAD]"],
    ["[CLS]", "unbelievable", "day", "!", "[SEP]"],
]


def test_token_grid_writes_every_token_in_its_cell():
    ax = token_grid(MASK, ["sentence 1", "sentence 2"], TOKENS, title="attention_mask")
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert len(ax.texts) == 10 and len(cells) == 10
    for r, row in enumerate(TOKENS):
        for t, token in enumerate(row):
            assert cells[r, t].get_text() == token
    np.testing.assert_array_equal(ax.images[0].get_array(), np.asarray(MASK, dtype=float))
    assert [label.get_text() for label in ax.get_yticklabels()] == ["sentence 1", "sentence 2"]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["0", "1", "2", "3", "4"]
    assert ax.get_xlabel() == "position t" and ax.get_title() == "attention_mask"


def test_token_grid_writes_white_on_dark_cells_and_turns_long_tokens():
    ax = token_grid(MASK, ["a", "b"], TOKENS)
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert cells[0, 0].get_color() == "white", "a cell above 0.6 of the maximum is dark"
    assert cells[0, 4].get_color() == "black", "the pad cell (0) is light"
    assert cells[1, 1].get_rotation() == 90 and cells[1, 2].get_rotation() == 0  # over 6 characters


def test_token_grid_draws_on_the_axes_it_is_given_and_keeps_the_colour_range():
    _, given = plt.subplots()
    ax = token_grid(
        [[0, 1, 2]], ["type ids"], [["a", "b", "c"]], cmap="Greens", vmin=0, vmax=4, ax=given
    )
    assert ax is given
    assert ax.images[0].get_clim() == (0, 4) and ax.images[0].get_cmap().name == "Greens"
    assert all(t.get_color() == "black" for t in ax.texts), "nothing reaches 0.6 of vmax=4"


def test_vectors_heatmap_shows_the_first_dims_centred_on_zero():
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(4, 384))  # [T, H]
    ax = vectors_heatmap(matrix, ["[CLS]", "the", "bank", "[SEP]"], dims=48, title="hidden states")
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array(), matrix[:, :48])
    low, high = image.get_clim()
    assert low == -high == -np.abs(matrix[:, :48]).max()
    assert [label.get_text() for label in ax.get_yticklabels()] == ["[CLS]", "the", "bank", "[SEP]"]
    assert ax.get_xlabel() == "hidden dimension (first 48)" and ax.get_title() == "hidden states"
    assert len(ax.figure.axes) == 2, "with its colour bar"
    narrow = vectors_heatmap(matrix[:, :10], ["a", "b", "c", "d"], dims=48)
    assert narrow.get_xlabel() == "hidden dimension (first 10)", "the label says what is shown"

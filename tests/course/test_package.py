"""Unit tests of the package helpers the chapters use (figures and widgets are smoke-tested)."""

import numpy as np
import torch
from transformers import BertConfig, BertModel

from bertlab import attention_masks, masking, similarity_set, widgets


def test_similarity_set_is_well_formed():
    assert len(similarity_set.PAIRS) >= 12
    for a, b, score in similarity_set.PAIRS:
        assert a and b and 0.0 <= score <= 1.0
    assert abs(similarity_set.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1.0) < 1e-12
    assert abs(similarity_set.pearson([1, 2, 3], [3, 2, 1]) + 1.0) < 1e-12


def test_attention_explorer_holds_every_head_and_links_the_dropdowns():
    layers, heads, T = 2, 3, 4
    attentions = [np.full((heads, T, T), 1.0 / T) for _ in range(layers)]
    box = widgets.attention_explorer(attentions, ["[CLS]", "a", "b", "[SEP]"])
    controls, outer = box.children
    assert len(outer.children) == layers
    assert all(len(inner.children) == heads for inner in outer.children)
    assert [c.description for c in controls.children] == ["Layer", "Head"]


def test_masking_classify_names_each_outcome():
    original = torch.tensor([[101, 5, 6, 7, 8, 102]])
    inputs = torch.tensor([[101, 103, 9, 7, 8, 102]])
    labels = torch.tensor([[-100, 5, 6, 7, -100, -100]])
    kinds = masking.classify(original, inputs, labels, mask_token_id=103)
    assert [masking.OUTCOMES[k] for k in kinds[0].tolist()] == [
        "not selected",
        "[MASK]",
        "random",
        "unchanged",
        "not selected",
        "not selected",
    ]


def test_parameter_counts_add_up():
    config = BertConfig(
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
    )
    model = BertModel(config)
    per_block = attention_masks.parameters_per_block(model)
    assert sum(per_block.values()) == attention_masks.count_parameters(model)
    assert attention_masks.find_modules(model, "crossattention", "encoder_attn") == []

"""recipes/site/web_onnx.py's new exports on tiny seeded models: the writer's traced causal mask
holds at lengths other than the export's, and the attention box's encoder returns PyTorch's
attention weights under an additive 4-D mask. Needs the book's lock (onnx, onnxruntime)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from transformers import BertConfig, BertLMHeadModel, BertModel  # noqa: E402

from recipes.site import web_attention, web_onnx  # noqa: E402

TINY = dict(
    vocab_size=3000,  # the exports' example ids go up to 2924
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=64,
    attn_implementation="eager",
)
IDS = [101, *range(1000, 1028), 102]  # 30 ids


def test_the_writers_causal_mask_is_traced_for_any_length(tmp_path):
    torch.manual_seed(0)
    model = BertLMHeadModel(BertConfig(is_decoder=True, **TINY)).eval()
    want = {t: web_onnx.torch_logits(model, IDS[:t]) for t in (7, 30)}  # each [T, V]
    web_onnx.export_onnx(model, tmp_path / "causal.onnx")
    checks = web_onnx.causal_lengths(want, web_onnx.session(tmp_path / "causal.onnx"), IDS)
    assert max(checks["max_logit_diff"].values()) < 1e-4
    assert checks["prefix_diff"] < 1e-5  # later tokens never reach earlier rows


def test_the_attention_export_returns_every_heads_weights(tmp_path):
    torch.manual_seed(0)
    model = BertModel(BertConfig(**TINY), add_pooling_layer=False).eval()
    want = {c: web_attention.torch_attention(model, IDS[:9], c) for c in (False, True)}
    web_attention.export_attention(model, tmp_path / "attention.onnx")
    sess = web_onnx.session(tmp_path / "attention.onnx")
    for causal, (attentions, hidden) in want.items():
        got_attentions, got_hidden = web_attention.run_attention(sess, IDS[:9], causal)
        assert got_attentions.shape == (2, 2, 9, 9) and got_hidden.shape == (9, 32)
        np.testing.assert_allclose(got_attentions, attentions, atol=1e-5)
        np.testing.assert_allclose(got_hidden, hidden, atol=1e-4)
    causal_attentions = web_attention.run_attention(sess, IDS[:9], True)[0]  # [L, H, T, T]
    assert (np.triu(causal_attentions, 1) == 0).all()

"""The course checkpoint's encoder as ONNX for Chapter 1's attention box, in steps
(:mod:`recipes.site.web_models` runs them for ``make book``): the export, with an additive
``attention_bias`` [1, 1, T, T] in and every head's ``attentions`` and the last ``hidden`` states
out; an onnxruntime run under either mask; PyTorch's weights; and how far the two agree. Needs the
book's lock (onnx, onnxruntime).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bertlab.probes import PROBES
from recipes.site.web_onnx import OPSET
from reference.web_attention import attention_bias


def export_attention(model, dest: Path) -> None:
    """The encoder with inputs ``input_ids``, ``token_type_ids`` [1, T] and ``attention_bias``
    [1, 1, T, T]; outputs ``attentions`` [L, H, T, T] and ``hidden`` [T, Hd] (batch 1 squeezed)."""
    import torch

    class Attention(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, token_type_ids, attention_bias):
            out = self.inner(
                input_ids=input_ids,
                token_type_ids=token_type_ids,
                attention_mask=attention_bias,  # 4-D: added to the scores as given
                output_attentions=True,
            )
            attentions = torch.stack(out.attentions)[:, 0]  # L x [1, H, T, T] -> [L, H, T, T]
            return attentions, out.last_hidden_state[0]  # [L, H, T, T], [T, Hd]

    ids = torch.tensor([[101, 1996, 2924, 2003, 102]])  # [1, 5]
    bias = torch.from_numpy(attention_bias(5, causal=True))  # [1, 1, 5, 5]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's DeprecationWarning
        torch.onnx.export(
            Attention(model),
            (ids, torch.zeros_like(ids), bias),
            str(dest),
            input_names=["input_ids", "token_type_ids", "attention_bias"],
            output_names=["attentions", "hidden"],
            dynamic_axes={
                "input_ids": {1: "sequence"},
                "token_type_ids": {1: "sequence"},
                "attention_bias": {2: "sequence", 3: "sequence"},
                "attentions": {2: "sequence", 3: "sequence"},
                "hidden": {0: "sequence"},
            },
            opset_version=OPSET,
            dynamo=False,
        )


def run_attention(sess, ids: list[int], causal: bool, types: list[int] | None = None):
    """One sentence through the exported encoder: attentions [L, H, T, T], hidden [T, Hd]."""
    a = np.array([ids], dtype=np.int64)
    t = np.array([types if types is not None else [0] * len(ids)], dtype=np.int64)
    feeds = {
        "input_ids": a,
        "token_type_ids": t,
        "attention_bias": attention_bias(len(ids), causal),
    }
    attentions, hidden = sess.run(["attentions", "hidden"], feeds)
    return attentions, hidden


def torch_attention(model, ids: list[int], causal: bool):
    """PyTorch's attentions [L, H, T, T] and hidden [T, Hd] under the same additive mask."""
    import torch

    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([ids]),
            attention_mask=torch.from_numpy(attention_bias(len(ids), causal)),
            output_attentions=True,
        )
    return torch.stack(out.attentions)[:, 0].numpy(), out.last_hidden_state[0].numpy()


def torch_attentions(model, tokenizer) -> list[dict[bool, np.ndarray]]:
    """Each probe's attentions [L, H, T, T] under both masks (``causal`` False, True), taken
    before exporting as :func:`torch_top1`."""
    return [
        {c: torch_attention(model, tokenizer(p.text)["input_ids"], c)[0] for c in (False, True)}
        for p in PROBES
    ]


def attention_agreement(want: list[dict], sess, tokenizer, tie: float) -> dict:
    """How the exported encoder's attention weights compare with PyTorch's ``want`` on the probes.

    ``agreement``: the share of probes whose every layer's, head's and query's argmax key is
    PyTorch's under both masks, or a key PyTorch weighs within ``tie`` of its largest (rows whose
    top two keys are 3e-5 apart flip under fp16 weights, and look the same in a heat map);
    ``strict_agreement``: the same without ties; ``max_attention_diff``: the largest |weight
    difference| over them all."""
    same = strict = 0
    worst = 0.0
    for probe, masks in zip(PROBES, want):
        ids = tokenizer(probe.text)["input_ids"]
        agree = exact = True
        for causal, attentions in masks.items():
            got = run_attention(sess, ids, causal)[0]  # [L, H, T, T]
            worst = max(worst, float(np.abs(got - attentions).max()))
            chosen = got.argmax(-1)[..., None]  # [L, H, T, 1]
            weight = np.take_along_axis(attentions, chosen, -1)[..., 0]  # [L, H, T]
            agree &= bool((weight >= attentions.max(-1) - tie).all())
            exact &= bool((chosen[..., 0] == attentions.argmax(-1)).all())
        same += agree
        strict += exact
    return {
        "agreement": same / len(PROBES),
        "strict_agreement": strict / len(PROBES),
        "max_attention_diff": worst,
    }

"""One shipped model as ONNX for the website, in steps (:mod:`recipes.site.web_models` runs them
for ``make book``): ``torch.onnx.export`` with dynamic batch and length, onnxruntime's int8
quantisation, or fp16 storage computed in fp32; an onnxruntime session, one sequence's logits,
and the share of the probe sentences (:mod:`bertlab.probes`) whose top-1 agrees with PyTorch's.

Three kinds of model: a ``BertForMaskedLM`` (its top-1 at each probe's ``[MASK]``), the
left-to-right writer, a ``BertLMHeadModel`` (its next-token top-1 at every position), and the
course checkpoint's encoder with an additive 4-D mask as input and every layer's attention as
output (Chapter 1, "Watching it happen in the live model"). Needs the book's lock (onnx,
onnxruntime).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bertlab.probes import PROBES

OPSET = 17


def load_torch(path: str):
    """The ``BertForMaskedLM`` in eval mode with eager attention (it traces to plain ONNX ops)."""
    from transformers import AutoModelForMaskedLM

    return AutoModelForMaskedLM.from_pretrained(path, attn_implementation="eager").eval()


def load_causal(path: str):
    """The writer (``BertLMHeadModel``, ``is_decoder=True``) in eval mode with eager attention."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()


def load_encoder(path: str):
    """The checkpoint's ``BertModel`` (no pooler: the MLM checkpoint has none), eager attention:
    the one that adds a 4-D mask to the scores and returns the attention weights."""
    from transformers import BertModel
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()  # the MLM head's weights are left out on purpose
    try:
        return BertModel.from_pretrained(
            path, attn_implementation="eager", add_pooling_layer=False
        ).eval()
    finally:
        logging.set_verbosity(level)


def export_onnx(model, dest: Path) -> None:
    """``torch.onnx.export`` (TorchScript path: no onnxscript needed) with dynamic batch and length."""
    import torch

    class Logits(torch.nn.Module):  # one output, named as transformers.js and our modules read it
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits  # [B, T, V]

    ids = torch.tensor([[101, 1996, 103, 2003, 102]])  # [1, 5]
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"logits": {0: "batch", 1: "sequence"}}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's DeprecationWarning
        torch.onnx.export(
            Logits(model),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(dest),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def embedding_copies(path: Path, vocab_size: int, hidden: int) -> int:
    """How many times the graph stores the tied word-embedding matrix. The TorchScript exporter
    folds the decoder's transpose into a second copy (optimum#1326)."""
    import onnx

    graph = onnx.load(str(path)).graph
    return sum(1 for t in graph.initializer if int(np.prod(t.dims)) == vocab_size * hidden)


def quantize_int8(src: Path, dest: Path) -> None:
    """int8 weights, dynamic uint8 activations (onnxruntime's ``quantize_dynamic``; per channel and
    reduce_range, the best of its options on the probes)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src),
        str(dest),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        extra_options={"MatMulConstBOnly": True},
    )


def store_fp16(src: Path, dest: Path, min_size: int = 65536) -> None:
    """Every large weight matrix stored in fp16 and cast back to fp32 in the graph, so the browser
    computes in fp32 (fp16 kernels are slow on wasm: onnxruntime#14601). The decoder's transposed
    copy of the tied word embeddings becomes a ``Transpose`` of the one table (optimum#1326)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    big = {
        t.name: numpy_helper.to_array(t)
        for t in graph.initializer
        if t.data_type == onnx.TensorProto.FLOAT
        and len(t.dims) == 2
        and np.prod(t.dims) >= min_size
    }
    gathered = {n.input[0] for n in graph.node if n.op_type == "Gather"}
    table = next(name for name in big if name in gathered)  # [V, H] word embeddings
    copies = [
        k
        for k, a in big.items()
        if k != table and a.shape == big[table].T.shape and np.array_equal(a, big[table].T)
    ]  # [H, V] decoder weight
    nodes, stored = [], []
    for name, weight in big.items():
        if name in copies:
            continue
        stored.append(numpy_helper.from_array(weight.astype(np.float16), f"{name}_fp16"))
        nodes.append(helper.make_node("Cast", [f"{name}_fp16"], [name], to=onnx.TensorProto.FLOAT))
    nodes += [helper.make_node("Transpose", [table], [name], perm=[1, 0]) for name in copies]
    kept = [t for t in graph.initializer if t.name not in big]
    del graph.initializer[:]
    graph.initializer.extend(kept + stored)
    old = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + old)
    onnx.save(model, str(dest))


def session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run(sess, ids: list[int], types: list[int] | None = None) -> np.ndarray:
    """Logits [T, V] for one sequence."""
    a = np.array([ids], dtype=np.int64)
    t = np.array([types if types is not None else [0] * len(ids)], dtype=np.int64)
    return sess.run(
        ["logits"], {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": t}
    )[0][0]


def torch_top1(model, tokenizer) -> list[int]:
    """PyTorch's top-1 id at the [MASK] of each probe sentence. Taken before exporting: the model
    answers differently once ``torch.onnx.export`` has traced it (seen with torch 2.13)."""
    import torch

    out = []
    for probe in PROBES:
        ids = tokenizer(probe.text)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0]  # [T, V]
        out.append(int(logits[ids.index(tokenizer.mask_token_id)].argmax()))
    return out


def agreement(want: list[int], sess, tokenizer) -> float:
    """Share of the probe sentences whose top-1 at the [MASK] is ``want``'s (PyTorch's)."""
    same = 0
    for probe, top1 in zip(PROBES, want):
        ids = tokenizer(probe.text)["input_ids"]
        same += int(run(sess, ids)[ids.index(tokenizer.mask_token_id)].argmax()) == top1
    return same / len(PROBES)


def next_token_top1(model, tokenizer) -> list[np.ndarray]:
    """The writer's top-1 next token at every position of each probe sentence ([T] each; the
    [MASK] kept as a token), from PyTorch, taken before exporting as :func:`torch_top1`."""
    import torch

    out = []
    for probe in PROBES:
        ids = tokenizer(probe.text)["input_ids"]
        with torch.no_grad():
            out.append(model(input_ids=torch.tensor([ids])).logits[0].argmax(-1).numpy())  # [T]
    return out


def next_token_agreement(want: list[np.ndarray], sess, tokenizer) -> float:
    """Share of all the probes' positions whose next-token top-1 is ``want``'s (PyTorch's)."""
    same = total = 0
    for probe, top1 in zip(PROBES, want):
        ids = tokenizer(probe.text)["input_ids"]
        same += int((run(sess, ids).argmax(-1) == top1).sum())
        total += len(ids)
    return same / total


def length_probe(tokenizer) -> list[int]:
    """30 ids ([CLS] first) to run the writer at lengths other than the export's 5."""
    text = " ".join(p.text for p in PROBES[:6])
    return tokenizer(text)["input_ids"][:30]


def torch_logits(model, ids: list[int]) -> np.ndarray:
    """PyTorch's logits [T, V] for one sequence, all segment 0."""
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0].numpy()


def causal_lengths(want: dict[int, np.ndarray], sess, ids: list[int]) -> dict:
    """ONNX against PyTorch's logits ``want`` at each length T (``ids[:T]``), and the causal
    mask's own test: the first 7 rows at T = 30 equal the rows at T = 7 (later tokens unseen)."""
    got = {t: run(sess, ids[:t]) for t in want}
    first = min(want)
    return {
        "max_logit_diff": {t: float(np.abs(got[t] - want[t]).max()) for t in want},
        "top1_agreement": {
            t: float((got[t].argmax(-1) == want[t].argmax(-1)).mean()) for t in want
        },
        "prefix_diff": float(np.abs(got[max(want)][:first] - got[first]).max()),
    }

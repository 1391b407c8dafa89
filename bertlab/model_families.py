"""The three Transformer families, told apart by measuring live models, not by reading labels.

Which input positions can an output position see? Replace one input token at a time and record
which outputs move: that is the attention pattern the model really uses, whatever code builds
its mask (bidirectional in BERT, causal in a decoder such as Llama, causal plus cross-attention
over the whole input in an encoder-decoder). Vaswani et al. (2017), section 3.2.3, describe the
three uses of attention; transformers builds the masks in ``masking_utils``.

Used by Chapter 1 ("Three families") and Chapter 8.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

#: Module-name endings of self-attention and cross-attention blocks in transformers' models.
SELF_ATTENTION = ("attention.self", "self_attn", "attn.c_attn", "SelfAttention")
CROSS_ATTENTION = ("crossattention.self", "encoder_attn", "EncDecAttention", "cross_attn")


def attention_blocks(model: nn.Module) -> dict[str, int]:
    """How many self-attention and cross-attention blocks ``model`` has, by module name."""
    names = [name for name, _ in model.named_modules()]
    cross = [n for n in names if n.endswith(CROSS_ATTENTION)]
    self_ = [
        n
        for n in names
        if n.endswith(SELF_ATTENTION)
        and not n.endswith(CROSS_ATTENTION)
        and "crossattention" not in n
    ]
    return {"self-attention": len(self_), "cross-attention": len(cross)}


def who_sees_whom(
    outputs_of: Callable[[torch.Tensor], torch.Tensor],
    input_ids: torch.Tensor,
    replacement_id: int,
    tolerance: float = 1e-4,
) -> torch.Tensor:
    """Which input positions each output position depends on, measured.

    Args:
        outputs_of: maps input ids ``[1, T_in]`` to one output vector per position ``[T_out, D]``
            (hidden states or logits of the model under test, in eval mode).
        input_ids: LongTensor ``[1, T_in]``.
        replacement_id: the token put in place of each input token in turn; it must not occur
            in ``input_ids`` (replacing a token by itself would change nothing).
        tolerance: an output moved if its change is above this fraction of its length.

    Returns:
        BoolTensor ``[T_out, T_in]``: True at (i, j) when replacing input token j changes output i.
    """
    if bool((input_ids == replacement_id).any()):
        raise ValueError(
            f"replacement_id {replacement_id} occurs in input_ids: pick a token that does not"
        )
    with torch.inference_mode():
        base = outputs_of(input_ids)  # [T_out, D]
        columns = []
        for j in range(input_ids.shape[-1]):
            changed = input_ids.clone()
            changed[0, j] = replacement_id
            moved = (outputs_of(changed) - base).norm(dim=-1)  # [T_out]
            columns.append(moved > tolerance * base.norm(dim=-1))
    return torch.stack(columns, dim=1)  # [T_out, T_in]


def first_layer(model: nn.Module) -> nn.Module:
    """The first block of a model's stack of identical blocks: BERT's ``encoder.layer[0]``,
    Llama's ``model.layers[0]``, GPT-2's ``transformer.h[0]``, found by shape rather than by name
    (the longest ``ModuleList`` whose entries are all of one class). Used by Chapter 1 to print a
    BERT layer beside a decoder's."""
    stacks = [
        m
        for m in model.modules()
        if isinstance(m, nn.ModuleList) and len(m) and len({type(b) for b in m}) == 1
    ]
    if not stacks:
        raise ValueError(f"{type(model).__name__} has no stack of identical blocks")
    return max(stacks, key=len)[0]


def layer_parts(layer: nn.Module) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every module of ``layer`` that holds weights of its own or is an activation, in the order
    they were registered: ``(name, class name, weight shape or ())``."""
    found = []
    for name, module in layer.named_modules():
        weight = getattr(module, "weight", None)
        own = isinstance(weight, torch.Tensor) and not any(True for _ in module.children())
        activation = not any(True for _ in module.children()) and "act" in name.split(".")[-1]
        if name and (own or activation):
            found.append((name, type(module).__name__, tuple(weight.shape) if own else ()))
    return found

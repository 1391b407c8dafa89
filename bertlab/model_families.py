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

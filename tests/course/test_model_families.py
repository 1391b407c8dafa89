"""The three Transformer families of Chapter 1 (bertlab.model_families), measured on tiny seeded
models of transformers' own classes: attention blocks counted by module name across BERT, GPT-2,
Llama, BART and T5, and who sees whom read off a bidirectional encoder (everything), a causal
decoder (the past only) and an encoder-decoder's decoder (the whole input)."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertLMHeadModel,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
)

from bertlab.model_families import attention_blocks, who_sees_whom

LAYERS, VOCAB, T = 2, 50, 6
SMALL = {"hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 37}


def seeded(build, seed=0):
    torch.manual_seed(seed)
    return build().eval()


def bert(**extra):
    return seeded(
        lambda: BertModel(BertConfig(vocab_size=VOCAB, num_hidden_layers=LAYERS, **SMALL, **extra))
    )


def llama():
    config = LlamaConfig(vocab_size=VOCAB, num_hidden_layers=LAYERS, num_key_value_heads=4, **SMALL)
    return seeded(lambda: LlamaForCausalLM(config))


def bart():
    config = BartConfig(
        vocab_size=VOCAB,
        d_model=32,
        encoder_layers=LAYERS,
        decoder_layers=LAYERS,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=37,
        decoder_ffn_dim=37,
        max_position_embeddings=32,
    )
    return seeded(lambda: BartForConditionalGeneration(config))


#: family -> (a tiny model of it, its (self-attention, cross-attention) block counts)
FAMILIES = {
    "BERT": (bert, (LAYERS, 0)),
    "BERT as a decoder": (
        lambda: seeded(
            lambda: BertLMHeadModel(
                BertConfig(
                    vocab_size=VOCAB,
                    num_hidden_layers=LAYERS,
                    is_decoder=True,
                    add_cross_attention=True,
                    **SMALL,
                )
            )
        ),
        (LAYERS, LAYERS),
    ),
    "GPT-2": (
        lambda: seeded(
            lambda: GPT2LMHeadModel(
                GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=LAYERS, n_head=4, n_positions=32)
            )
        ),
        (LAYERS, 0),
    ),
    "Llama": (llama, (LAYERS, 0)),
    "BART": (bart, (2 * LAYERS, LAYERS)),  # encoder and decoder self-attention; decoder cross
    "T5": (
        lambda: seeded(
            lambda: T5ForConditionalGeneration(
                T5Config(
                    vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=37, num_layers=LAYERS, num_heads=4
                )
            )
        ),
        (2 * LAYERS, LAYERS),
    ),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_attention_blocks_are_counted_in_every_family(family):
    build, expected = FAMILIES[family]
    counts = attention_blocks(build())
    assert (counts["self-attention"], counts["cross-attention"]) == expected, family


INPUT = torch.tensor([[5, 11, 17, 23, 29, 31]])  # [1, T]
FRESH = 7  # a token id that is not in INPUT


def test_an_encoder_output_sees_every_input():
    model = bert()
    seen = who_sees_whom(lambda ids: model(input_ids=ids).last_hidden_state[0], INPUT, FRESH)
    assert seen.shape == (T, T) and seen.all()


def test_a_decoder_output_sees_only_its_past():
    model = llama()
    seen = who_sees_whom(lambda ids: model(input_ids=ids).logits[0], INPUT, FRESH)
    assert torch.equal(seen, torch.ones(T, T, dtype=torch.bool).tril())


def test_an_encoder_decoder_output_sees_the_whole_input():
    model = bart()
    decoder_ids = torch.tensor([[2, 8, 9]])  # [1, 3]: the decoder's own prefix stays the same
    seen = who_sees_whom(
        lambda ids: model(input_ids=ids, decoder_input_ids=decoder_ids).logits[0], INPUT, FRESH
    )
    assert seen.shape == (3, T) and seen.all(), "cross-attention reads every input position"


def test_a_replacement_that_is_in_the_input_is_refused():
    with pytest.raises(ValueError, match="pick a token that does not"):
        who_sees_whom(lambda ids: ids.float().T, INPUT, replacement_id=17)


@pytest.mark.parametrize("family", ["BERT", "GPT-2", "Llama"])
def test_first_layer_is_the_first_block_of_the_stack(family):
    from bertlab.model_families import first_layer, layer_parts

    model = FAMILIES[family][0]()
    layer = first_layer(model)
    stack = {"BERT": "encoder.layer.0", "GPT-2": "transformer.h.0", "Llama": "model.layers.0"}
    assert layer is model.get_submodule(stack[family])
    parts = layer_parts(layer)
    names = [name for name, _, _ in parts]
    assert all(shape or "act" in name for name, _, shape in parts)
    assert any("act" in name for name in names)  # the feed-forward's activation is listed
    if family == "Llama":
        assert {"self_attn.k_proj", "mlp.gate_proj", "input_layernorm"} <= set(names)

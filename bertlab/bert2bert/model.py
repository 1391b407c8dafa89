"""Warm-start a BERT2BERT from the course checkpoint (Rothe et al. 2020, "Leveraging Pre-trained
Checkpoints for Sequence Generation Tasks", TACL; transformers' ``EncoderDecoderModel``).

``EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)`` loads the encoder as a
``BertModel`` and a second copy as a ``BertLMHeadModel`` with ``is_decoder=True`` (causal
self-attention) and ``add_cross_attention=True`` (new, randomly initialised blocks that read the
encoder's output). BERT has no start or end of output, so its ``[CLS]``, ``[SEP]`` and ``[PAD]``
serve, set where the loss (``model.config``) and ``generate`` (``model.generation_config``)
read them. ``tie=True`` gives BERTShare: one set of weights for both halves, the cross-attention
aside. transformers 5 still accepts ``tie_encoder_decoder=True`` and stores it in the config,
but ties nothing (Chapter 7 counts the parameters), so :func:`share_halves` ties them by hand.
Used by Chapter 7 and ``make bert2bert``.
"""

from __future__ import annotations

import torch

from bertlab.heads import captured_transformers_log


def special_ids(tokenizer) -> dict[str, int]:
    """The decoder's start ([CLS]), end ([SEP]) and padding ([PAD]) ids, plus the vocabulary size."""
    return {
        "decoder_start_token_id": tokenizer.cls_token_id,
        "eos_token_id": tokenizer.sep_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "vocab_size": len(tokenizer),
    }


def warm_start(path: str, tokenizer, tie: bool = False, seed: int = 0):
    """An ``EncoderDecoderModel`` whose halves both start from the BERT folder ``path``.

    The new cross-attention weights are drawn with ``torch.manual_seed(seed)``: the same model on
    every call. transformers' loading report (cross-attention MISSING) is captured, not printed.
    """
    from transformers import EncoderDecoderModel

    torch.manual_seed(seed)
    with captured_transformers_log():
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
    if tie:
        share_halves(model)
    ids = special_ids(tokenizer)
    model.config.update(ids)
    model.generation_config.update(**{k: v for k, v in ids.items() if k != "vocab_size"})
    return model


def share_halves(model) -> int:
    """BERTShare (Rothe et al. 2020, section 3): the decoder's embeddings, self-attention and
    feed-forward weights become the encoder's own ``Parameter`` objects, so one tensor serves
    both halves and trains for both; only the cross-attention and the decoder's head stay the
    decoder's. Parameters are shared, not modules: a decoder layer keeps its causal mask and its
    cache index. The ties are declared in the model's ``_tied_weights_keys`` (decoder name ->
    encoder name), so ``save_pretrained`` and the Trainer's checkpoints store each shared tensor
    once instead of refusing to save. Returns the number of parameters now shared."""
    encoder, decoder = model.encoder, model.decoder.bert
    shared = 0
    tied = dict(getattr(model, "_tied_weights_keys", None) or {})
    for name, parameter in encoder.named_parameters():
        module_name, _, attribute = name.rpartition(".")
        try:
            target = decoder.get_submodule(module_name)
        except AttributeError:  # the encoder's pooler: the decoder has none
            continue
        if isinstance(getattr(target, attribute, None), torch.nn.Parameter):
            setattr(target, attribute, parameter)
            tied[f"decoder.bert.{name}"] = f"encoder.{name}"
            shared += parameter.numel()
    model._tied_weights_keys = tied
    # the output projection is tied to the (now shared) word embeddings
    model.decoder.cls.predictions.decoder.weight = encoder.embeddings.word_embeddings.weight
    return shared


def freeze_word_embeddings(model) -> int:
    """BERTShare's training: every weight trains but the word embeddings, which both halves read
    and the decoder's output projection is tied to (as :func:`freeze_encoder` keeps them). Returns
    the number of parameters left to train, a shared tensor counted once."""
    model.decoder.get_input_embeddings().weight.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def trainable_names(model) -> list[str]:
    """Names of the parameters that train, a shared tensor under its first (the encoder's) name:
    what BERTShare's export holds."""
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad]


def freeze_encoder(model) -> int:
    """Train only what BERT lacks: freeze the encoder and the word embeddings (the decoder's output
    projection is tied to them). Returns the number of parameters left to train."""
    for parameter in model.encoder.parameters():
        parameter.requires_grad_(False)
    model.decoder.get_input_embeddings().weight.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def trained_names(model) -> list[str]:
    """State-dict keys of the decoder that can change in training (all but the word embeddings and
    the output projection tied to them): what the shipped weights hold."""
    frozen = {
        "decoder.bert.embeddings.word_embeddings.weight",
        "decoder.cls.predictions.decoder.weight",
        "decoder.cls.predictions.decoder.bias",
    }  # the last is tied to cls.predictions.bias
    return [k for k in model.state_dict() if k.startswith("decoder.") and k not in frozen]

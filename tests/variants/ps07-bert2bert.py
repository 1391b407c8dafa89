"""Known-wrong and alternative-correct implementations of ps07-bert2bert: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # Shifts the wrong way: decoder input t holds label t + 1, the answer it should predict later.
    "shift_goes_left": {
        "impl_shift_tokens_right": """
def shift_tokens_right(labels, pad_token_id, decoder_start_token_id):
    start = torch.full_like(labels[:, :1], decoder_start_token_id)
    shifted = torch.cat([labels[:, 1:], start], dim=1)
    return shifted.masked_fill(shifted == -100, pad_token_id)
""",
    },
    # Leaves -100 in the decoder's inputs.
    "minus_100_left_in": {
        "impl_shift_tokens_right": """
def shift_tokens_right(labels, pad_token_id, decoder_start_token_id):
    start = torch.full_like(labels[:, :1], decoder_start_token_id)
    return torch.cat([start, labels[:, :-1]], dim=1)
""",
    },
    # Replaces -100 by 0 whatever the pad id is (right for BERT's [PAD] = 0 only).
    "pads_with_zero": {
        "impl_shift_tokens_right": """
def shift_tokens_right(labels, pad_token_id, decoder_start_token_id):
    start = torch.full_like(labels[:, :1], decoder_start_token_id)
    shifted = torch.cat([start, labels[:, :-1]], dim=1)
    return shifted.masked_fill(shifted == -100, 0)
""",
    },
    # Replaces -100 in the caller's labels (which the loss still needs).
    "modifies_labels_in_place": {
        "impl_shift_tokens_right": """
def shift_tokens_right(labels, pad_token_id, decoder_start_token_id):
    labels.masked_fill_(labels == -100, pad_token_id)
    start = torch.full_like(labels[:, :1], decoder_start_token_id)
    return torch.cat([start, labels[:, :-1]], dim=1)
""",
    },
    # Counts every attention block of the decoder, self-attention included.
    "counts_self_attention_too": {
        "impl_cross_attention_parameter_count": """
def cross_attention_parameter_count(model):
    return sum(p.numel() for name, p in model.decoder.named_parameters() if "attention" in name)
""",
    },
    # Sums the parameters of every module whose name says crossattention: nested ones again.
    "counts_nested_modules_twice": {
        "impl_cross_attention_parameter_count": """
def cross_attention_parameter_count(model):
    return sum(p.numel() for name, module in model.decoder.named_modules() if "crossattention" in name
               for p in module.parameters())
""",
    },
    # A formula with the ENCODER's number of layers.
    "formula_with_encoder_layers": {
        "impl_cross_attention_parameter_count": """
def cross_attention_parameter_count(model):
    H = model.config.decoder.hidden_size
    return model.config.encoder.num_hidden_layers * (4 * H * H + 6 * H)
""",
    },
    # Counts only the parameters that require gradients.
    "trainable_only": {
        "impl_cross_attention_parameter_count": """
def cross_attention_parameter_count(model):
    return sum(p.numel() for name, p in model.decoder.named_parameters()
               if "crossattention" in name and p.requires_grad)
""",
    },
    # Sets the ids for the loss only: generate never sees them.
    "config_only": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer):
    model.config.decoder_start_token_id = tokenizer.cls_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.eos_token_id = tokenizer.sep_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
""",
    },
    # bert-base-uncased's ids written in: another vocabulary breaks it.
    "hard_coded_bert_ids": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer):
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id, config.pad_token_id, config.eos_token_id = 101, 0, 102
    model.config.vocab_size = model.config.decoder.vocab_size
""",
    },
    # Forgets the vocabulary size.
    "forgets_vocab_size": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer):
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.sep_token_id
""",
    },
    # A BERT tokenizer has no eos token: eos_token_id is None, and generate never stops.
    "eos_from_tokenizer_eos": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer):
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.eos_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
""",
    },
    # Stops the whole batch as soon as one row has produced eos.
    "rows_stop_together": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        for _ in range(max_new_tokens):
            logits = model.decoder(input_ids=out, encoder_hidden_states=encoded,
                                   encoder_attention_mask=attention_mask).logits
            next_token = logits[:, -1].argmax(dim=-1)
            out = torch.cat([out, next_token[:, None]], dim=1)
            if (next_token == config.eos_token_id).any():
                break
    return out
""",
    },
    # Finished rows go on writing instead of padding.
    "no_pad_after_eos": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        for _ in range(max_new_tokens):
            logits = model.decoder(input_ids=out, encoder_hidden_states=encoded,
                                   encoder_attention_mask=attention_mask).logits
            next_token = logits[:, -1].argmax(dim=-1)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == config.eos_token_id
            if finished.all():
                break
    return out
""",
    },
    # The encoder reads the padding: no attention mask anywhere.
    "ignores_attention_mask": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        for _ in range(max_new_tokens):
            logits = model.decoder(input_ids=out, encoder_hidden_states=encoded).logits
            next_token = logits[:, -1].argmax(dim=-1).masked_fill(finished, config.pad_token_id)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == config.eos_token_id
            if finished.all():
                break
    return out
""",
    },
    # The encoder masks its padding, but the decoder's cross-attention still reads it.
    "cross_attention_reads_padding": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        for _ in range(max_new_tokens):
            logits = model.decoder(input_ids=out, encoder_hidden_states=encoded).logits
            next_token = logits[:, -1].argmax(dim=-1).masked_fill(finished, config.pad_token_id)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == config.eos_token_id
            if finished.all():
                break
    return out
""",
    },
    # Config vocab_size from the tokenizer, not from the decoder.
    "vocab_size_from_tokenizer": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer) -> None:
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.sep_token_id
    model.config.vocab_size = tokenizer.vocab_size
""",
    },
    # Config vocab_size from the encoder's config, not from the decoder's.
    "vocab_size_from_encoder": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer) -> None:
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.sep_token_id
    model.config.vocab_size = model.config.encoder.vocab_size
""",
    },
    # Never stops early: runs all max_new_tokens steps even when every row has produced eos.
    "greedy_never_stops_early": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens: int):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        for _ in range(max_new_tokens):
            logits = model.decoder(input_ids=out, encoder_hidden_states=encoded,
                                   encoder_attention_mask=attention_mask).logits
            next_token = logits[:, -1].argmax(dim=-1).masked_fill(finished, config.pad_token_id)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == config.eos_token_id
    return out
""",
    },
    # The prediction, a wrong letter (12H^2, a whole layer's): right in form, wrong in answer.
    "predict_wrong_letter": {
        "impl_predict_cross_attention": """
PREDICT_CROSS_ATTENTION = "c"
""",
    },
}

CORE = {
    "shift_goes_left": "shift right",
    "counts_self_attention_too": "cross-attention only",
    "config_only": "generation_config",
    "rows_stop_together": "its own eos",
}

CORRECT = {
    # torch.where instead of masked_fill; a roll of the labels.
    "shift_by_roll": {
        "impl_shift_tokens_right": """
def shift_tokens_right(labels, pad_token_id, decoder_start_token_id):
    shifted = torch.roll(labels, shifts=1, dims=1)
    shifted[:, 0] = decoder_start_token_id
    return torch.where(shifted == -100, torch.full_like(shifted, pad_token_id), shifted)
""",
    },
    # The blocks themselves, layer by layer.
    "count_by_layer": {
        "impl_cross_attention_parameter_count": """
def cross_attention_parameter_count(model):
    total = 0
    for layer in model.decoder.bert.encoder.layer:
        total += sum(p.numel() for p in layer.crossattention.parameters())
    return int(total)
""",
    },
    # Ids looked up by token string.
    "configure_by_token_strings": {
        "impl_configure_bert2bert": """
def configure_bert2bert(model, tokenizer):
    ids = {"decoder_start_token_id": tokenizer.convert_tokens_to_ids(tokenizer.cls_token),
           "pad_token_id": tokenizer.convert_tokens_to_ids(tokenizer.pad_token),
           "eos_token_id": tokenizer.convert_tokens_to_ids(tokenizer.sep_token)}
    for key, value in ids.items():
        setattr(model.config, key, value)
        setattr(model.generation_config, key, value)
    model.config.vocab_size = model.config.decoder.vocab_size
""",
    },
    # The whole model every step (the encoder re-run too: slower, same tokens), row by row stop flags.
    "greedy_whole_model_each_step": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    rows = input_ids.shape[0]
    out = torch.full((rows, 1), config.decoder_start_token_id, dtype=torch.long)
    done = [False] * rows
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=out).logits
            step = []
            for b in range(rows):
                token = config.pad_token_id if done[b] else int(logits[b, -1].argmax())
                done[b] = done[b] or token == config.eos_token_id
                step.append(token)
            out = torch.cat([out, torch.tensor(step)[:, None]], dim=1)
            if all(done):
                break
    return out
""",
    },
    # With the decoder's key/value cache: one new token per step.
    "greedy_with_cache": {
        "impl_greedy_decode": """
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    config = model.config
    with torch.no_grad():
        encoded = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        out = torch.full((input_ids.shape[0], 1), config.decoder_start_token_id, dtype=torch.long)
        finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
        past, step_input = None, out
        for _ in range(max_new_tokens):
            result = model.decoder(input_ids=step_input, encoder_hidden_states=encoded,
                                   encoder_attention_mask=attention_mask, past_key_values=past, use_cache=True)
            past = result.past_key_values
            next_token = result.logits[:, -1].argmax(dim=-1).masked_fill(finished, config.pad_token_id)
            out = torch.cat([out, next_token[:, None]], dim=1)
            step_input = next_token[:, None]
            finished |= next_token == config.eos_token_id
            if finished.all():
                break
    return out
""",
    },
    # The right letter, in capitals and with spaces around it.
    "predict_capital_spaced": {
        "impl_predict_cross_attention": """
PREDICT_CROSS_ATTENTION = " B "
""",
    },
}

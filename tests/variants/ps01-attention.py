"""Known-wrong and alternative-correct implementations of ps01-attention: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # CORE: masks padded queries (rows) instead of padded keys (columns): [B, 1, T, 1].
    "padding_masks_queries": {
        "impl_padding_mask": """
def padding_mask(attention_mask):
    return attention_mask.bool()[:, None, :, None]
""",
    },
    # Builds the mask from the row lengths: right only for right padding (a hole in the
    # middle, or left padding, is masked in the wrong place).
    "padding_from_lengths": {
        "impl_padding_mask": """
def padding_mask(attention_mask):
    lengths = attention_mask.long().sum(dim=-1)
    T = attention_mask.shape[-1]
    return (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
""",
    },
    # CORE: the triangle points the wrong way: query i sees the future (j >= i).
    "causal_sees_the_future": {
        "impl_causal_mask": """
def causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool).triu()
""",
    },
    # CORE: forgets the 1/sqrt(d) scale.
    "attention_without_scale": {
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""",
    },
    # CORE: softmax over the queries (axis -2) instead of the keys.
    "softmax_over_queries": {
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights
""",
    },
    # Scales the caller's queries in place (q /= sqrt(d)): the output is right, q is changed.
    "sdpa_scales_q_in_place": {
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""",
    },
    # Indexes the scores with the mask as if it were always [T, T]: a [B, 1, 1, T] padding
    # mask or a [B, h, T, T] mask breaks it.
    "sdpa_mask_only_T_by_T": {
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores[:, :, ~mask] = float("-inf")
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""",
    },
    # CORE: never applies the attention mask: padding gets attended to.
    "bert_forgets_the_mask": {
        "impl_bert_self_attention": """
def bert_self_attention(hidden_states, attention, attention_mask):
    B, T, H = hidden_states.shape
    h, d = attention.num_attention_heads, attention.attention_head_size
    q = attention.query(hidden_states).view(B, T, h, d).transpose(1, 2)
    k = attention.key(hidden_states).view(B, T, h, d).transpose(1, 2)
    v = attention.value(hidden_states).view(B, T, h, d).transpose(1, 2)
    out, _ = scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(B, T, H)
""",
    },
    # Merges the heads as [B, T, d, h]: the right numbers in the wrong feature order.
    "bert_merges_heads_in_wrong_order": {
        "impl_bert_self_attention": """
def bert_self_attention(hidden_states, attention, attention_mask):
    B, T, H = hidden_states.shape
    h, d = attention.num_attention_heads, attention.attention_head_size
    q = attention.query(hidden_states).view(B, T, h, d).transpose(1, 2)
    k = attention.key(hidden_states).view(B, T, h, d).transpose(1, 2)
    v = attention.value(hidden_states).view(B, T, h, d).transpose(1, 2)
    out, _ = scaled_dot_product_attention(q, k, v, padding_mask(attention_mask))
    return out.permute(0, 2, 3, 1).reshape(B, T, H)
""",
    },
    # Keeps key 0 whatever the mask says ('[CLS] is always real'): wrong under left padding
    # (found by review).
    "padding_keeps_first_key": {
        "impl_padding_mask": """
def padding_mask(attention_mask):
    m = attention_mask.bool()
    m[:, 0] = True        # [CLS] is always real
    return m[:, None, None, :]
""",
    },
    # Predicts 'a': both masks let a later edit reach an early word.
    # The visible test (a letter) passes; the hidden one fails.
    "prediction_tempting_wrong": {"impl_predict_edit_last_word": 'PREDICT_EDIT_LAST_WORD = "a"\n'},
    # Writes the measured number instead of a letter: the visible test names the form.
    "prediction_not_a_letter": {
        "impl_predict_edit_last_word": 'PREDICT_EDIT_LAST_WORD = "the measured number"\n'
    },
}

CORE = {
    "padding_masks_queries": "on the keys",
    "causal_sees_the_future": "causal mask",
    "attention_without_scale": "sqrt(d)",
    "softmax_over_queries": "softmax axis",
    "bert_forgets_the_mask": "padding mask",
    "prediction_not_a_letter": "one letter",
}

CORRECT = {
    # Loops everywhere; the most negative float instead of -inf; reuses the notebook's functions.
    "loops_and_finfo_min": {
        "impl_padding_mask": """
def padding_mask(attention_mask):
    B, T = attention_mask.shape
    keep = torch.zeros(B, 1, 1, T, dtype=torch.bool)
    for b in range(B):
        for j in range(T):
            keep[b, 0, 0, j] = bool(attention_mask[b, j] == 1)
    return keep
""",
        "impl_causal_mask": """
def causal_mask(T):
    return torch.tensor([[j <= i for j in range(T)] for i in range(T)], dtype=torch.bool)
""",
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    B, h, T, d = q.shape
    if mask is None:
        mask = torch.ones(T, T, dtype=torch.bool)
    mask = mask.expand(B, h, T, T)
    weights = torch.empty(B, h, T, T, dtype=q.dtype)
    for b in range(B):
        for head in range(h):
            s = q[b, head] @ k[b, head].T / d ** 0.5
            s = torch.where(mask[b, head], s, torch.finfo(s.dtype).min)
            e = torch.exp(s - s.max(dim=1, keepdim=True).values)
            weights[b, head] = e / e.sum(dim=1, keepdim=True)
    return weights @ v, weights
""",
        "impl_bert_self_attention": """
def bert_self_attention(hidden_states, attention, attention_mask):
    h, d = attention.num_attention_heads, attention.attention_head_size
    q, k, v = attention.query(hidden_states), attention.key(hidden_states), attention.value(hidden_states)
    keep = padding_mask(attention_mask)
    heads = []
    for i in range(h):
        cols = slice(i * d, (i + 1) * d)
        out, _ = scaled_dot_product_attention(q[:, None, :, cols], k[:, None, :, cols], v[:, None, :, cols], keep)
        heads.append(out[:, 0])
    return torch.cat(heads, dim=-1)
""",
    },
    # PyTorch's fused attention for the output, einsum, an additive mask.
    "torch_sdpa_and_einsum": {
        "impl_padding_mask": """
def padding_mask(attention_mask):
    B, T = attention_mask.shape
    return attention_mask.to(torch.bool).reshape(B, 1, 1, T)
""",
        "impl_causal_mask": """
def causal_mask(T):
    return torch.tril(torch.ones(T, T)).bool()
""",
        "impl_scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    scores = torch.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
    return output, scores.softmax(-1)
""",
        "impl_bert_self_attention": """
def bert_self_attention(hidden_states, attention, attention_mask):
    B, T, H = hidden_states.shape
    h, d = attention.num_attention_heads, attention.attention_head_size
    q, k, v = (layer(hidden_states).reshape(B, T, h, d) for layer in (attention.query, attention.key, attention.value))
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(d)
    additive = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(scores.dtype).min
    weights = torch.softmax(scores + additive, dim=-1)
    return torch.einsum("bhij,bjhd->bihd", weights, v).reshape(B, T, H)
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_edit_last_word": 'PREDICT_EDIT_LAST_WORD = "b"  # measured, and it holds\n'
    },
}

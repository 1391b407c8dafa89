"""Known-wrong and alternative-correct implementations of ps02-outputs: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # CORE: averages over every position, padding included.
    "mean_over_padding": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    return last_hidden_state.mean(dim=1)
""",
    },
    # Leaves padding out of the sum but still divides by T.
    "mean_divides_by_T": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    summed = (last_hidden_state * attention_mask.unsqueeze(-1)).sum(dim=1)
    return summed / last_hidden_state.shape[1]
""",
    },
    # Takes the first sum(mask) positions of each row: right only when the padding is on the right.
    "mean_right_padding_only": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    lengths = attention_mask.long().sum(dim=1).tolist()
    return torch.stack([last_hidden_state[b, :n].mean(dim=0) for b, n in enumerate(lengths)])
""",
    },
    # Normalises the rows of a but forgets those of b.
    "cosine_forgets_b": {
        "impl_cosine_similarity_matrix": """
def cosine_similarity_matrix(a, b):
    return (a / a.norm(dim=-1, keepdim=True)) @ b.T
""",
    },
    # CORE: normalises each column (over the N vectors) instead of each row.
    "cosine_normalises_columns": {
        "impl_cosine_similarity_matrix": """
import torch.nn.functional as F

def cosine_similarity_matrix(a, b):
    return F.normalize(a, dim=0) @ F.normalize(b, dim=0).T
""",
    },
    # Right values, but divides the caller's tensors in place.
    "cosine_normalises_in_place": {
        "impl_cosine_similarity_matrix": """
def cosine_similarity_matrix(a, b):
    a /= a.norm(dim=1, keepdim=True)
    b /= b.norm(dim=1, keepdim=True)
    return a @ b.T
""",
    },
    # CORE: uses only the first WordPiece piece of the word.
    "word_first_piece_only": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    encoding = tokenizer(sentence, return_offsets_mapping=True, return_tensors="pt")
    offsets = encoding.pop("offset_mapping")[0].tolist()
    word_ids = encoding.word_ids(0)
    for index in dict.fromkeys(w for w in word_ids if w is not None):
        positions = [t for t, w in enumerate(word_ids) if w == index]
        start, end = offsets[positions[0]][0], offsets[positions[-1]][1]
        if sentence[start:end].lower() == word.lower():
            with torch.no_grad():
                hidden = model(**encoding).last_hidden_state[0]
            return hidden[positions[0]]
    raise ValueError(word)
""",
    },
    # Finds the positions in the tokens WITHOUT [CLS], then reads the hidden states WITH it:
    # every position is off by one (the vector of the token before the word).
    "word_forgets_cls_shift": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    plain = tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)
    word_ids = plain.word_ids()
    for index in dict.fromkeys(word_ids):
        positions = [t for t, w in enumerate(word_ids) if w == index]
        start, end = plain["offset_mapping"][positions[0]][0], plain["offset_mapping"][positions[-1]][1]
        if sentence[start:end].lower() == word.lower():
            with torch.no_grad():
                hidden = model(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0]
            return hidden[positions].mean(dim=0)
    raise ValueError(word)
""",
    },
    # Keeps looking after a match: returns the LAST occurrence.
    "word_last_occurrence": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    encoding = tokenizer(sentence, return_offsets_mapping=True, return_tensors="pt")
    offsets = encoding.pop("offset_mapping")[0].tolist()
    word_ids = encoding.word_ids(0)
    found = None
    for index in dict.fromkeys(w for w in word_ids if w is not None):
        positions = [t for t, w in enumerate(word_ids) if w == index]
        start, end = offsets[positions[0]][0], offsets[positions[-1]][1]
        if sentence[start:end].lower() == word.lower():
            found = positions
    if found is None:
        raise ValueError(word)
    with torch.no_grad():
        hidden = model(**encoding).last_hidden_state[0]
    return hidden[found].mean(dim=0)
""",
    },
    # Counts words by splitting at whitespace, but the tokenizer makes every punctuation mark a
    # word of its own: after a comma or a bracket the word index points at the wrong word.
    "word_index_from_whitespace_split": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    words = [w.strip(".,;:!?()'\\"").lower() for w in sentence.split()]
    if word.lower() not in words:
        raise ValueError(word)
    index = words.index(word.lower())
    encoding = tokenizer(sentence, return_tensors="pt")
    positions = [t for t, w in enumerate(encoding.word_ids()) if w == index]
    with torch.no_grad():
        hidden = model(**encoding).last_hidden_state[0]
    return hidden[positions].mean(dim=0)
""",
    },
    # Right means, but zeroes the padding vectors inside the caller's last_hidden_state (found by review).
    "mean_zeroes_padding_in_place": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    last_hidden_state[attention_mask == 0] = 0.0
    return last_hidden_state.sum(dim=1) / attention_mask.sum(dim=1, keepdim=True)
""",
    },
    # Finds the word's pieces at the start of a word without checking that the word ends there:
    # 'hippopotamus' matches inside 'hippopotamuses' (found by review).
    "word_matches_prefix_of_longer_word": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    target = tokenizer(word, add_special_tokens=False)["input_ids"]
    encoding = tokenizer(sentence, return_tensors="pt")
    ids = encoding["input_ids"][0].tolist()
    tokens = encoding.tokens()
    k = len(target)
    for t in range(len(ids) - k + 1):
        if ids[t:t + k] == target and not tokens[t].startswith("##"):
            with torch.no_grad():
                hidden = model(**encoding).last_hidden_state[0]
            return hidden[t:t + k].mean(dim=0)
    raise ValueError(f"{word!r} not in {sentence!r}")
""",
    },
    # Matches a word by its first piece only: 'photos' matches 'photosynthesis' (found by review).
    "word_matched_by_first_piece": {
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    first_piece = tokenizer.tokenize(word)[0]
    encoding = tokenizer(sentence, return_tensors="pt")
    tokens, word_ids = encoding.tokens(), encoding.word_ids()
    for t, w in enumerate(word_ids):
        if w is not None and (t == 0 or word_ids[t - 1] != w) and tokens[t] == first_piece:
            positions = [u for u, x in enumerate(word_ids) if x == w]
            with torch.no_grad():
                hidden = model(**encoding).last_hidden_state[0]
            return hidden[positions].mean(dim=0)
    raise ValueError(word)
""",
    },
    # Predicts 'a': one vector per real token, as if padding got none.
    # The visible test (a letter) passes; the hidden one fails.
    "prediction_tempting_wrong": {"impl_predict_padded_vectors": 'PREDICT_PADDED_VECTORS = "a"\n'},
    # Writes the measured number instead of a letter: the visible test names the form.
    "prediction_not_a_letter": {
        "impl_predict_padded_vectors": 'PREDICT_PADDED_VECTORS = "the measured number"\n'
    },
}

CORE = {
    "mean_over_padding": "padding",
    "cosine_normalises_columns": "its own length",
    "word_first_piece_only": "pieces",
    "prediction_not_a_letter": "one letter",
}

CORRECT = {
    "loops_and_token_matching": {
        # Loops over rows, and masked_fill instead of multiplying by the mask.
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    rows = []
    for b in range(last_hidden_state.shape[0]):
        keep = attention_mask[b].bool()
        rows.append(last_hidden_state[b].masked_fill(~keep[:, None], 0.0).sum(dim=0) / keep.sum())
    return torch.stack(rows)
""",
        # Pair by pair with the library function, broadcasting [N, 1, H] against [1, M, H].
        "impl_cosine_similarity_matrix": """
import torch.nn.functional as F

def cosine_similarity_matrix(a, b):
    return F.cosine_similarity(a.unsqueeze(1), b.unsqueeze(0), dim=-1)
""",
        # Matches the word's own pieces against the sentence's tokens, as whole words: the
        # match may not start or end inside a word (no ## piece right before its end).
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    target = tokenizer(word, add_special_tokens=False)["input_ids"]
    encoding = tokenizer(sentence, return_tensors="pt")
    ids = encoding["input_ids"][0].tolist()
    tokens = encoding.tokens()
    k = len(target)
    for t in range(len(ids) - k + 1):
        whole = not tokens[t].startswith("##") and not (t + k < len(ids) and tokens[t + k].startswith("##"))
        if ids[t:t + k] == target and whole:
            with torch.no_grad():
                hidden = model(**encoding).last_hidden_state[0]
            return hidden[t:t + k].mean(dim=0)
    raise ValueError(f"{word!r} not in {sentence!r}")
""",
    },
    "vectorised_einsum": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    m = attention_mask.float()
    return torch.einsum("bth,bt->bh", last_hidden_state, m) / m.sum(dim=1, keepdim=True)
""",
        "impl_cosine_similarity_matrix": """
def cosine_similarity_matrix(a, b):
    dots = a @ b.T
    return dots / (a.norm(dim=1)[:, None] * b.norm(dim=1)[None, :] + 1e-12)
""",
        # word_ids only, comparing against the tokenizer's own split of the word.
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    encoding = tokenizer(sentence, return_tensors="pt")
    tokens = encoding.tokens()
    word_ids = encoding.word_ids()
    wanted = "".join(p[2:] if p.startswith("##") else p for p in tokenizer.tokenize(word))
    groups = {}
    for t, w in enumerate(word_ids):
        if w is not None:
            groups.setdefault(w, []).append(t)
    for w in sorted(groups):
        text = "".join(tokens[t][2:] if tokens[t].startswith("##") else tokens[t] for t in groups[w])
        if text == wanted:
            with torch.no_grad():
                out = model(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"])
                states = out.last_hidden_state
            return states[0, groups[w]].mean(0)
    raise ValueError(word)
""",
    },
    # Rows picked with index_select; cosines computed and returned in float64 (the docstring asks
    # only for a float tensor); words matched by their token ids (found by review).
    "float64_cosines_and_token_ids": {
        "impl_mean_pool": """
def mean_pool(last_hidden_state, attention_mask):
    rows = []
    for b in range(last_hidden_state.shape[0]):
        idx = torch.nonzero(attention_mask[b]).flatten()
        rows.append(last_hidden_state[b].index_select(0, idx).mean(dim=0))
    return torch.stack(rows)
""",
        "impl_cosine_similarity_matrix": """
def cosine_similarity_matrix(a, b):
    a64, b64 = a.double(), b.double()
    return (a64 @ b64.T) / (a64.norm(dim=1, keepdim=True) * b64.norm(dim=1, keepdim=True).T)
""",
        "impl_word_vector": """
def word_vector(model, tokenizer, sentence, word):
    enc = tokenizer(sentence, return_tensors="pt")
    target = tokenizer(word, add_special_tokens=False)["input_ids"]
    ids = enc["input_ids"][0].tolist()
    groups = {}
    for t, w in enumerate(enc.word_ids()):
        if w is not None:
            groups.setdefault(w, []).append(t)
    for w, positions in groups.items():
        if [ids[t] for t in positions] == target:
            return model(**enc).last_hidden_state[0, positions].mean(dim=0)
    raise ValueError(word)
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_padded_vectors": 'PREDICT_PADDED_VECTORS = "b"  # measured, and it holds\n'
    },
}

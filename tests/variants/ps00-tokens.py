"""Known-wrong and alternative-correct implementations of ps00-tokens: what each entry holds and what
the tests prove with it is in tests/assignments/test_variants.py."""

WRONG = {
    # CORE: the attention mask upside down, 1 on the padding and 0 on the real tokens.
    "pad_mask_marks_padding": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    if not sequences:
        raise ValueError("empty batch")
    T = max(len(s) for s in sequences) if max_length is None else max_length
    ids = torch.full((len(sequences), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), T), dtype=torch.long)
    for b, s in enumerate(sequences):
        if len(s) > T:
            raise ValueError("too long")
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[b, len(s):] = 1
    return ids, mask
""",
    },
    # Pads to the longest row even when max_length asks for more.
    "pad_ignores_max_length": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    T = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), T), dtype=torch.long)
    for b, s in enumerate(sequences):
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[b, :len(s)] = 1
    return ids, mask
""",
    },
    # Pads the caller's lists in place (list.extend) before building the tensor.
    "pad_modifies_input": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    if not sequences:
        raise ValueError("empty batch")
    T = max(len(s) for s in sequences) if max_length is None else max_length
    masks = []
    for s in sequences:
        if len(s) > T:
            raise ValueError("too long")
        masks.append([1] * len(s) + [0] * (T - len(s)))
        s.extend([pad_id] * (T - len(s)))
    return torch.tensor(sequences, dtype=torch.long), torch.tensor(masks, dtype=torch.long)
""",
    },
    # CORE: counts runs of equal word ids, so the special tokens (None) count as words too.
    "pieces_counts_specials": {
        "impl_pieces_per_word": """
import itertools

def pieces_per_word(word_ids):
    return [len(list(run)) for _, run in itertools.groupby(word_ids)]
""",
    },
    # Assumes word indices run 0, 1, 2, ...: wrong for a window cut from a long text.
    "pieces_count_from_zero": {
        "impl_pieces_per_word": """
def pieces_per_word(word_ids):
    words = [w for w in word_ids if w is not None]
    return [words.count(w) for w in range(max(words) + 1)] if words else []
""",
    },
    # CORE: everything after the first [SEP] is segment 1, padding included.
    "segment_after_first_sep": {
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    is_sep = (input_ids == sep_token_id).long()
    return ((torch.cumsum(is_sep, dim=1) - is_sep) >= 1).long()
""",
    },
    # Handles pairs right but assumes every row is one: the padding after a single text's
    # only [SEP] becomes segment 1.
    "segment_assumes_pairs": {
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    is_sep = (input_ids == sep_token_id).long()
    before = torch.cumsum(is_sep, dim=1) - is_sep
    return ((before == 1) & (before + is_sep <= 2)).long()
""",
    },
    # The attention mask from the ids (ids != pad_id), not from the lengths: a real token whose
    # id equals pad_id is masked (found by review).
    "pad_mask_from_ids": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    if not sequences:
        raise ValueError("empty batch")
    longest = max(len(s) for s in sequences)
    T = longest if max_length is None else max_length
    if longest > T:
        raise ValueError("too long")
    ids = torch.tensor([list(s) + [pad_id] * (T - len(s)) for s in sequences], dtype=torch.long)
    ids = ids.reshape(len(sequences), T)
    mask = (ids != pad_id).long()
    return ids, mask
""",
    },
    # `max_length or longest`: max_length=0 is taken as 'no max_length', so a longer sequence
    # raises no ValueError (found by review).
    "pad_max_length_zero_ignored": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    if not sequences:
        raise ValueError("empty batch")
    T = max_length or max(len(s) for s in sequences)
    ids = torch.full((len(sequences), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), T), dtype=torch.long)
    for b, s in enumerate(sequences):
        if len(s) > T:
            raise ValueError("too long")
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[b, :len(s)] = 1
    return ids, mask
""",
    },
    # Decides 'pair or single text' once for the whole batch: next to a pair row, a shorter
    # single text's padding becomes segment 1 (found by review).
    "segment_pairs_per_batch": {
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    is_sep = (input_ids == sep_token_id).long()
    before = torch.cumsum(is_sep, dim=1) - is_sep
    if int(is_sep.sum(dim=1).max()) < 2:
        return torch.zeros_like(input_ids)
    return ((before == 1) & (before + is_sep <= 2)).long()
""",
    },
    # Ignores sep_token_id and looks for 102, BERT's usual [SEP] (found by review).
    "segment_hard_coded_sep": {
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    is_sep = (input_ids == 102).long()
    before = torch.cumsum(is_sep, dim=1) - is_sep
    pair = is_sep.sum(dim=1, keepdim=True) >= 2
    return ((before == 1) & (before + is_sep <= 2) & pair).long()
""",
    },
    # Overwrites the first [SEP] in the caller's input_ids to find the second one (found by review).
    "segment_modifies_input": {
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    out = torch.zeros_like(input_ids)
    for b in range(input_ids.shape[0]):
        row = input_ids[b]
        seps = (row == sep_token_id).nonzero().flatten()
        if len(seps) < 2:
            continue
        first = int(seps[0])
        row[first] = 0          # hide the first [SEP] to find the second one
        second = int((row == sep_token_id).nonzero()[0])
        out[b, first + 1: second + 1] = 1
    return out
""",
    },
    # Predicts 'b': the longest-looking word, not the rarest.
    # The visible test (a letter) passes; the hidden one fails.
    "prediction_tempting_wrong": {"impl_predict_most_pieces": 'PREDICT_MOST_PIECES = "b"\n'},
    # Writes the measured number instead of a letter: the visible test names the form.
    "prediction_not_a_letter": {
        "impl_predict_most_pieces": 'PREDICT_MOST_PIECES = "the measured number"\n'
    },
}

CORE = {
    "pad_mask_marks_padding": "attention mask",
    "pieces_counts_specials": "special tokens",
    "segment_after_first_sep": "0 again for padding",
    "prediction_not_a_letter": "one letter",
}

CORRECT = {
    "library_and_loops": {
        "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    if not sequences:
        raise ValueError("empty batch")
    T = max_length if max_length is not None else max(map(len, sequences))
    rows, masks = [], []
    for s in sequences:
        if len(s) > T:
            raise ValueError("too long")
        rows.append(list(s) + [pad_id] * (T - len(s)))
        masks.append([1] * len(s) + [0] * (T - len(s)))
    ids = torch.tensor(rows, dtype=torch.long).reshape(len(sequences), T)
    return ids, torch.tensor(masks).long().reshape(len(sequences), T)
""",
        "impl_pieces_per_word": """
import itertools

def pieces_per_word(word_ids):
    return [len(list(run)) for w, run in itertools.groupby(word_ids) if w is not None]
""",
        "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    out = torch.zeros_like(input_ids)
    for b in range(input_ids.shape[0]):
        seps = (input_ids[b] == sep_token_id).nonzero().flatten().tolist()
        if len(seps) >= 2:
            out[b, seps[0] + 1 : seps[1] + 1] = 1
    return out
""",
    },
    # The right letter, with a comment of the student's own: full marks.
    "prediction_right": {
        "impl_predict_most_pieces": 'PREDICT_MOST_PIECES = "d"  # measured, and it holds\n'
    },
}

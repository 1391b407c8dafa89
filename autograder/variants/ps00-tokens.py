"""Known-wrong and alternative-correct implementations for ps00-tokens.

Each entry maps a solution cell's grade id to the source a student might hand in. The
assignment tests (tests/test_assignments.py) prove that every WRONG entry passes the visible
tests and loses hidden-test points, and that every CORRECT entry scores full marks.
"""

WRONG = {
    # Pads to the longest row even when max_length asks for more.
    "pad_ignores_max_length": {
        "impl_pad_batch": '''
def pad_batch(sequences, pad_id, max_length=None):
    T = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), T), dtype=torch.long)
    for b, s in enumerate(sequences):
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[b, :len(s)] = 1
    return ids, mask
''',
    },
    # Assumes word indices run 0, 1, 2, ...: wrong for a window cut from a long text.
    "pieces_count_from_zero": {
        "impl_pieces_per_word": '''
def pieces_per_word(word_ids):
    words = [w for w in word_ids if w is not None]
    return [words.count(w) for w in range(max(words) + 1)] if words else []
''',
    },
    # Everything after the first [SEP] is segment 1, padding included.
    "segment_after_first_sep": {
        "impl_segment_ids": '''
def segment_ids(input_ids, sep_token_id):
    is_sep = (input_ids == sep_token_id).long()
    return ((torch.cumsum(is_sep, dim=1) - is_sep) >= 1).long()
''',
    },
}

CORRECT = {
    "library_and_loops": {
        "impl_pad_batch": '''
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
    return torch.tensor(rows, dtype=torch.long).reshape(len(sequences), T), torch.tensor(masks).long().reshape(len(sequences), T)
''',
        "impl_pieces_per_word": '''
import itertools

def pieces_per_word(word_ids):
    return [len(list(run)) for w, run in itertools.groupby(word_ids) if w is not None]
''',
        "impl_segment_ids": '''
def segment_ids(input_ids, sep_token_id):
    out = torch.zeros_like(input_ids)
    for b in range(input_ids.shape[0]):
        seps = (input_ids[b] == sep_token_id).nonzero().flatten().tolist()
        if len(seps) >= 2:
            out[b, seps[0] + 1 : seps[1] + 1] = 1
    return out
''',
    },
}

"""What a failing test cell says: a message that nbgrader's Validate shows whole.

nbgrader 0.9.6 shows a failing test cell's error line by line. ``nbgrader validate`` indents each
line by 4 spaces and cuts it at 87 characters (``Validator.width`` = 90, less "..."); the
JupyterLab Validate dialog shows the cell's source and then the error in a ``<pre>`` that does not
wrap, so a long line runs out of sight at the dialog's edge. Under the course's minimal
tracebacks (``autograder/nbgrader_config.py``) the error is ``AssertionError: <first line>``
followed by the message's other lines. So a test's message names the mistake in a short first
line (at most :data:`FIRST_LINE` characters), and puts what was expected and what came out on
lines of their own (at most :data:`LINE` characters each): :func:`mistake` builds one, and
:func:`show_tokens` writes token ids as tokens (``[CLS] 7 [MASK]``).

Used by the test cells of every assignment (``solutions/``, released into ``exercises/``);
``tests/assignments/test_validate_messages.py`` reads the messages as Validate shows them. It grades nothing.
"""

from __future__ import annotations

import textwrap

#: "AssertionError: " (16) and the 4-space indent leave 67 of nbgrader validate's 87 characters.
FIRST_LINE = 64
LINE = 80

#: The ids bert-base-uncased's WordPiece vocabulary gives its special tokens.
BERT_SPECIAL_TOKENS = {0: "[PAD]", 100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]"}

_UNSET = object()


def _plain(value):
    """A tensor or array as nested lists, so that it prints like Python's own values."""
    return (
        value.tolist()
        if hasattr(value, "tolist") and not isinstance(value, (str, bytes))
        else value
    )


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def mistake(concept: str, expected=_UNSET, got=_UNSET, *, hint: str | None = None) -> str:
    """The message of a failing assert: the mistake first, then what to look at, then
    ``expected: ...`` and ``got: ...`` on lines of their own, each cut to fit (values that are
    not strings, and strings of several lines, are shown as Python shows them, tensors as lists).

    >>> print(mistake("padding is marked 1 in the attention mask", [1, 1, 0], [0, 0, 1]))
    padding is marked 1 in the attention mask
      expected: [1, 1, 0]
      got:      [0, 0, 1]
    """
    lines = textwrap.wrap(concept, FIRST_LINE) or [""]
    if hint:
        lines += textwrap.wrap(hint, LINE, initial_indent="  ", subsequent_indent="  ")
    for label, value in (("expected", expected), ("got", got)):
        if value is not _UNSET:
            value = _plain(value)
            shown = value if isinstance(value, str) and "\n" not in value else repr(value)
            lines.append(_cut(f"  {label + ':':<9} {shown}", LINE))
    return "\n".join(lines)


def show_tokens(ids, vocabulary=None) -> str:
    """Token ids as tokens: ``[101, 7, 103]`` -> ``"[CLS] 7 [MASK]"``; a batch's rows joined by
    ``" | "``. ``vocabulary`` is a tokenizer (its ``convert_ids_to_tokens``) or a dict
    {id: token}; ids it does not name are shown as numbers. Default: BERT's special tokens."""
    ids = _plain(ids)
    if isinstance(ids, int):
        ids = [ids]
    if ids and isinstance(ids[0], list):
        return " | ".join(show_tokens(row, vocabulary) for row in ids)
    if hasattr(vocabulary, "convert_ids_to_tokens"):
        return " ".join(vocabulary.convert_ids_to_tokens([int(i) for i in ids]))
    names = BERT_SPECIAL_TOKENS if vocabulary is None else vocabulary
    return " ".join(names.get(int(i), str(int(i))) for i in ids)

"""A sampler's run as a step table: one row per forward pass, one column per blank.

Chapters 6 ("Forcing BERT to write") and 6b ("Masked diffusion") fill a row of blanks over
several forward passes. A reader follows a sampler by reading its canvas after each pass, so
the pages print each traced run as a Markdown table (shown with ``IPython.display.Markdown``):
a blank still masked is ``·``, the tokens written at that pass are bold, with the probability
the model gave them where the page passes it.
"""

from __future__ import annotations

from collections.abc import Sequence

#: What a blank still masked looks like in a table (Chapter 6b's canvas box shows the same).
MASKED = "·"


def cell_text(token: str) -> str:
    """A token as Markdown table text: the characters that would start emphasis, code or a new
    cell escaped (``|``, ``*``, ``_``, backquote, backslash)."""
    for ch in "\\|*_`":
        token = token.replace(ch, "\\" + ch)
    return token


def canvas_row(tokens: list[str], new: dict[int, float | None], mask_token: str) -> list[str]:
    """The cells of one row: each blank's token, ``·`` where still masked; the blanks in ``new``
    (written at this pass) in bold, followed by their probability when it is not None."""
    cells = []
    for i, token in enumerate(tokens):
        text = MASKED if token == mask_token else cell_text(token)
        if i in new:
            probability = new[i]
            text = f"**{text}**"
            if probability is not None:
                text += f" {probability:.2f}"
        cells.append(text)
    return cells


def trace_table(
    tokenizer,
    history: Sequence[Sequence[int]],
    first: int,
    n_tokens: int,
    *,
    written: Sequence[dict[int, float | None]] | None = None,
    notes: Sequence[str] | None = None,
    step: str = "pass",
) -> str:
    """A Markdown step table of a sampler's run.

    history: the canvas (ids [T], a tensor or a list) before the first pass and after each
    pass; the blanks are ``first`` to ``first + n_tokens``. ``written[k]`` maps the blanks
    written at row k (0-based within the blanks) to their probability or None; without it, a
    row marks the blanks that changed since the row before. ``notes[k]``, when given, fills a
    column saying what pass k did. ``step`` names a row (``pass 1``, or ``step 1`` as in Chapter
    6b's canvas box).
    """
    rows = []
    for k, canvas in enumerate(history):
        blanks = [int(i) for i in canvas[first : first + n_tokens]]
        if written is not None:
            new = written[k]
        else:
            before = [int(i) for i in history[max(k - 1, 0)][first : first + n_tokens]]
            new = {i: None for i in range(n_tokens) if blanks[i] != before[i]}
        label = f"{step} {k}" if k else "start"
        note = [notes[k]] if notes is not None else []
        tokens = tokenizer.convert_ids_to_tokens(blanks)
        rows.append([label, *note, *canvas_row(tokens, new, tokenizer.mask_token)])
    header = ["when", *(["what the pass did"] if notes is not None else [])]
    header += [str(i) for i in range(n_tokens)]
    return step_table(header, rows)


def step_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: ``header`` names the columns, each row gives one cell per column."""
    if any(len(row) != len(header) for row in rows):
        raise ValueError(f"every row needs {len(header)} cells, one per column of {header}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)

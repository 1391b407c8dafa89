"""Format the code cells of the book's pages (book/*.md) to the width of their column.

The theme (sphinx-book-theme 1.3.0) gives a code cell 684 px at a 1280-pixel window, and a
folded (hide-input) cell 666 px once opened; less 32 px of padding, at 14 px monospace (8.43 px
a character in DejaVu Sans Mono, the widest of the theme's fonts) that is 77 and 75 characters.
So code is formatted by `ruff format` at 75 columns (the project's ruff settings otherwise), and
no code line may be longer, except the lines named in tools/long_code_lines.yml with a reason
(a URL, a printed table). tests/site/test_browser.py checks the same in Chromium.

Only the code of each ```{code-cell}``` changes: the pages are edited as text (the cells' options,
MyST directives and prose stay byte for byte), and jupytext, which executes these pages in the
build, must read back the same notebook apart from code sources, or nothing is written.

    python tools/format_book_code.py            # reformat every page in place
    python tools/format_book_code.py --check    # fail, naming each cell, if any would change
    python tools/format_book_code.py book/04-masked-language-modelling.md   # some pages only
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

import jupytext
import yaml

REPO = Path(__file__).resolve().parent.parent
PAGES = "book/*.md"
LINE_LENGTH = 75
ALLOWED = REPO / "tools" / "long_code_lines.yml"
FENCE = re.compile(r"^(`{3,})\{code-cell\}")


@dataclass
class Cell:
    """One code cell of a page: its source lines are text[start:end] (line numbers, 0-based)."""

    start: int
    end: int
    source: str


def code_cells(lines: list[str]) -> list[Cell]:
    """The code cells of a MyST page, read as MyST does: options are a leading `---` YAML block
    or leading `:key: value` lines; the source runs to the closing fence."""
    cells, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        close = next(
            (
                j
                for j in range(i + 1, len(lines))
                if lines[j].rstrip("\n").strip() == fence.group(1)
            ),
            None,
        )
        if close is None:
            raise SystemExit(f"a code cell opened at line {i + 1} is never closed")
        start = i + 1
        if start < close and lines[start].rstrip("\n") == "---":
            start = next(j for j in range(start + 1, close) if lines[j].rstrip("\n") == "---") + 1
        else:
            while start < close and re.match(r"^:[\w-]+:", lines[start]):
                start += 1
        cells.append(Cell(start, close, "".join(lines[start:close])))
        i = close + 1
    return cells


def wrap_comments(source: str, in_brackets: bool) -> str:
    """Comments that make a line wider than LINE_LENGTH, wrapped (ruff leaves comments alone):
    a comment after code moves onto its own lines above that line; a comment on its own line is
    reflowed with the comment lines around it, up to a line that is only `#`. A comment after code
    inside brackets moves only if in_brackets (ruff, which splits such code first, keeps the
    comment after its piece)."""
    lines = source.split("\n")
    comments, depth, bracketed = [], 0, set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif token.type == tokenize.COMMENT:
                comments.append(token)
                if depth:
                    bracketed.add(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source  # ruff reports what it cannot parse
    own_line = {
        t.start[0] - 1: t.start[1]
        for t in comments
        if not lines[t.start[0] - 1][: t.start[1]].strip()
    }
    after_code = {t.start[0] - 1: t.start[1] for t in comments if t.start[0] - 1 not in own_line}

    def wrapped(text: str, indent: str) -> list[str]:
        return textwrap.wrap(
            text,
            LINE_LENGTH,
            initial_indent=indent + "# ",
            subsequent_indent=indent + "# ",
            break_long_words=False,
            break_on_hyphens=False,
        )

    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if len(line) <= LINE_LENGTH or (i not in own_line and i not in after_code):
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if i in after_code:
            col = after_code[i]
            if len(line[:col].rstrip()) > LINE_LENGTH or (i in bracketed and not in_brackets):
                out.append(line)  # ruff splits the code first; the comment follows its piece
                i += 1
                continue
            out += wrapped(line[col:].lstrip("#").strip(), indent)
            out.append(line[:col].rstrip())
            i += 1
            continue
        # the paragraph of own-line comments at this indentation around line i
        first = i
        while (
            first - 1 >= 0
            and own_line.get(first - 1) == len(indent)
            and lines[first - 1].strip() != "#"
        ):
            first -= 1
        last = i
        while own_line.get(last + 1) == len(indent) and lines[last + 1].strip() != "#":
            last += 1
        del out[len(out) - (i - first) :]
        words = " ".join(lines[j].strip().removeprefix("#").strip() for j in range(first, last + 1))
        out += wrapped(words, indent)
        i = last + 1
    return "\n".join(out)


def ruff_format(sources: list[str], page: str) -> list[str]:
    """Every source formatted by ruff in one call, as the cells of a notebook (so IPython magics
    such as %matplotlib are understood), with the project's settings at LINE_LENGTH columns."""
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": s,
                "outputs": [],
                "execution_count": None,
            }
            for s in sources
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.ipynb"
        path.write_text(json.dumps(notebook))
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "format",
                "--quiet",
                "--config",
                str(REPO / "pyproject.toml"),
                "--line-length",
                str(LINE_LENGTH),
                str(path),
            ],
            capture_output=True,
            text=True,
        )
        if run.returncode:
            raise SystemExit(f"{page}: ruff cannot format its code cells:\n{run.stderr.strip()}")
        return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def same_notebook_but_code(before: str, after: str) -> str | None:
    """What jupytext reads differently in the two texts, other than code sources (None if nothing)."""
    old, new = (jupytext.reads(text, fmt="md:myst") for text in (before, after))
    if old.metadata != new.metadata or len(old.cells) != len(new.cells):
        return "the notebook's metadata or its number of cells"
    for n, (a, b) in enumerate(zip(old.cells, new.cells)):
        if a.cell_type != b.cell_type or a.metadata != b.metadata:
            return f"cell {n + 1}'s type or metadata (tags, options)"
        if a.cell_type != "code" and a.source != b.source:
            return f"cell {n + 1}, a {a.cell_type} cell"
    return None


def allowed_lines() -> dict[str, list[str]]:
    """The long code lines that may stay, by page: each entry starts such a line (stripped)."""
    entries = yaml.safe_load(ALLOWED.read_text()) or []
    for entry in entries:
        if not entry.get("why"):
            raise SystemExit(f"{ALLOWED.name}: give each long line a reason (why:): {entry}")
    allowed: dict[str, list[str]] = {}
    for entry in entries:
        allowed.setdefault(entry["page"], []).append(entry["line"].strip())
    return allowed


def too_long(source: str, allowed: list[str]) -> list[str]:
    return [
        line
        for line in source.splitlines()
        if len(line) > LINE_LENGTH and not any(line.strip().startswith(a) for a in allowed)
    ]


def format_page(page: Path, check: bool, allowed: list[str]) -> list[str]:
    """Format one page (or, with check, only say what would change); returns the problems."""
    text = page.read_text()
    lines = text.splitlines(keepends=True)
    cells = code_cells(lines)
    expected = [
        c.source for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "code"
    ]
    if [c.source.rstrip("\n") for c in cells] != expected:
        return [
            f"{page.name}: its code cells read differently here and in jupytext; fix the page's "
            "fences by hand"
        ]
    # long comments wrapped, then ruff; again, for the comments that ruff's line breaks moved
    formatted = [c.source for c in cells]
    for in_brackets in (False, True):
        formatted = ruff_format([wrap_comments(s, in_brackets) for s in formatted], page.name)
    name = page.relative_to(REPO).as_posix()
    problems = []
    for cell, new in zip(cells, formatted):
        where = f"{name}:{cell.start + 1}"
        if new.rstrip("\n") != cell.source.rstrip("\n") and check:
            problems.append(f"{where}: not formatted (run `python tools/format_book_code.py`)")
        for line in too_long(new, allowed):
            problems.append(
                f"{where}: a code line of {len(line)} characters, wider than the column "
                f"({LINE_LENGTH}): wrap it (strings as implicit concatenation in "
                f"parentheses), or name it in {ALLOWED.relative_to(REPO)} with a reason\n"
                f"    {line.strip()[:90]}"
            )
    if check:
        return problems
    for cell, new in reversed(list(zip(cells, formatted))):
        lines[cell.start : cell.end] = [new.rstrip("\n") + "\n"] if new.strip() else []
    after = "".join(lines)
    if after != text:
        changed = same_notebook_but_code(text, after)
        if changed:
            return problems + [f"{name}: not written: jupytext would read {changed} differently"]
        if page.read_text() != text:  # edited by someone else while we formatted: try again
            return problems + [f"{name}: changed while being formatted; run again"]
        page.write_text(after)
        print(f"formatted {name}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help=f"pages to format (default: {PAGES})")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; fail if a page would change"
    )
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or sorted(REPO.glob(PAGES))
    allowed = allowed_lines()
    problems = [
        p
        for page in pages
        for p in format_page(page, args.check, allowed.get(page.relative_to(REPO).as_posix(), []))
    ]
    print("\n".join(problems), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

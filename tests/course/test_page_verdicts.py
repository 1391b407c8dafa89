"""No page chooses its conclusion by the outcome of its own run.

A page may glue numbers into its prose (myst-nb's ``glue``), but not words picked by an ``if``:
a sentence assembled from pre-written branches reads as a lesson whichever branch fired, so a
demo that fails still "teaches". A page that makes a claim asserts it instead, so a rebuild that
breaks the claim fails the build. This test reads every code cell of the pages below and fails on
a ``glue`` whose value is a conditional expression, falls back on words (``x or "none"``), uses a
name assigned in an ``if`` branch or from a conditional expression, or calls a helper (defined on
the page or imported from ``bertlab``) whose ``return`` picks words the same ways.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOOK = REPO / "book"
# Every page of the book: the introduction, Chapters 0 to 8 (with 6b and its survey, 6c), the FAQ
# and the model card.
PAGES = [
    "intro",
    "00-first-look",
    "01-encoder-not-decoder",
    "02-what-comes-out",
    "03-task-heads",
    "04-masked-language-modelling",
    "05a-classification",
    "05b-tagging",
    "05c-question-answering",
    "06-forcing-bert-to-write",
    "06b-masked-diffusion",
    "06c-diffusion-language-models",
    "07-bert2bert",
    "08-choosing-a-model",
    "faq",
    "model-card",
]


def code_cells(page: Path | str) -> list[str]:
    """The Python source of every code cell of a MyST page, given its path or its text (cell
    options and magics left out)."""
    text = page.read_text() if isinstance(page, Path) else page
    found = []
    for body in re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        lines = body.split("\n")
        if lines[0].strip() == "---":  # a YAML block of cell options
            lines = lines[lines.index("---", 1) + 1 :]
        found.append("\n".join(line for line in lines if not line.startswith((":", "%", "!"))))
    return found


def is_words(node: ast.AST) -> bool:
    """Whether ``node`` is a string literal (the words of a fallback such as ``x or "none"``)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def picks_words(node: ast.AST) -> bool:
    """Whether an expression chooses between words: ``"a" if c else "b"`` or ``x or "none"``."""

    def words(n):
        return is_words(n) or isinstance(n, ast.JoinedStr)

    return any(
        isinstance(n, ast.IfExp)
        and (words(n.body) or words(n.orelse))
        or isinstance(n, ast.BoolOp)
        and any(words(v) for v in n.values)
        for n in ast.walk(node)
    )


def word_picking_functions(trees: list[ast.AST]) -> set[str]:
    """Names of the functions, defined in ``trees`` or imported there from ``bertlab``, whose
    ``return`` picks words (:func:`picks_words`)."""

    def pickers(tree):
        return {
            f.name
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(
                isinstance(r, ast.Return) and r.value is not None and picks_words(r.value)
                for r in ast.walk(f)
            )
        }

    found = set().union(*(pickers(tree) for tree in trees))
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "bertlab":
                module = REPO / Path(*node.module.split("."))
                path = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
                if path.is_file():
                    defined = pickers(ast.parse(path.read_text()))
                    found |= {a.asname or a.name for a in node.names if a.name in defined}
    return found


def conditional_glue(sources: list[str]) -> list[str]:
    """Every ``glue(name, value)`` whose value is chosen by a condition, as ``name: value``."""
    trees = [ast.parse(source) for source in sources]
    helpers = word_picking_functions(trees)
    chosen = set()
    for tree in trees:
        for node in ast.walk(tree):
            branches = node.body + node.orelse if isinstance(node, ast.If) else []
            for assign in (n for branch in branches for n in ast.walk(branch)):
                if isinstance(assign, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
                    chosen |= {
                        n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
                    }
            if isinstance(node, ast.Assign) and any(
                isinstance(n, ast.IfExp) for n in ast.walk(node.value)
            ):
                chosen |= {
                    n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                }
    found = []
    for tree in trees:
        for call in ast.walk(tree):
            if (
                isinstance(call, ast.Call)
                and getattr(call.func, "id", None) == "glue"
                and len(call.args) >= 2
            ):
                value = call.args[1]
                used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
                fallback = any(
                    isinstance(n, ast.BoolOp) and any(is_words(v) for v in n.values)
                    for n in ast.walk(value)
                )
                calls = {
                    getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                    for n in ast.walk(value)
                    if isinstance(n, ast.Call)
                }
                if (
                    any(isinstance(n, ast.IfExp) for n in ast.walk(value))
                    or used & chosen
                    or fallback
                    or calls & helpers
                ):
                    found.append(f"{ast.unparse(call.args[0])}: {ast.unparse(value)[:120]}")
    return found


@pytest.mark.parametrize("name", PAGES)
def test_no_verdict_is_chosen_by_the_outcome(name):
    found = conditional_glue(code_cells(BOOK / f"{name}.md"))
    assert not found, (
        f"book/{name}.md glues words chosen by an if: pin the demo, assert the claim, "
        "and write the sentence once:\n" + "\n".join(found)
    )


def test_every_page_is_checked():
    assert sorted(PAGES) == sorted(page.stem for page in BOOK.glob("*.md"))


def test_the_check_sees_both_kinds_of_choice():
    sources = [
        "x = 1\nif x > 0:\n    verdict = 'works'\nelse:\n    verdict = 'fails'\nglue('v', verdict)",
        "glue('w', 'more' if x > 1 else 'less')\nglue('n', f'{x:.1f}')",
        "glue('f', ', '.join(names) or 'none')\nglue('m', x or 0)",
    ]
    assert [f.split(":")[0] for f in conditional_glue(sources)] == ["'v'", "'w'", "'f'"]


def test_the_check_sees_words_picked_inside_a_helper():
    sources = [
        'def key_list(keys):\n    return ", ".join(keys) if keys else "none"\n'
        "def verdict(x):\n    return x > 0 and 'works' or 'fails'\n"
        "def fmt(x):\n    return f'{x:.1f}' if x else 0\n"
        "def size(x):\n    return x if x > 0 else 0\n",
        "glue('k', key_list(ks))\nglue('v', verdict(x))\nglue('f', fmt(x))\nglue('s', size(x))",
    ]
    assert [f.split(":")[0] for f in conditional_glue(sources)] == ["'k'", "'v'", "'f'"]

"""The repository's three parts and the one way their imports run.

- ``bertlab/``, the course package (models, chapter helpers): what a reader's or a student's code
  imports. It imports neither the grader nor the recipes, nor the book's code.
- ``bertlab_grader/``, the instructor's grader: it knows no course. What it must know about one
  (the models to prepare, the library functions tests take their answers from) comes from the
  course's ``autograder/nbgrader_config.py``.
- ``recipes/``, what trains the models that ship (not installed): it imports the course package,
  and the book's code, never the grader.
- ``hub/``, the class's JupyterHub on one machine (not installed; run from the course folder as
  the package ``hub``): it imports no other part. It assembles the models in a subprocess of the
  course's environment, and JupyterHub reads the course's grader config as a file.

Beside them, the book's own code for what the assignments grade, ``book/reference``, is not
installed (``tests/assignments/test_answer_key.py``) and is imported under the package name ``reference``:
from ``book/`` by the pages (Jupyter Book runs them there), on pytest's ``pythonpath`` and with
``PYTHONPATH=book`` by ``make diffusion``. Its modules are checked here under that name: it
imports the course package only, and the course imports it nowhere (a graded function in
``bertlab`` would ship the answer key).

Inside each part no two modules import each other, directly or round a loop, at module level or
inside a function (a lazy import is still a dependency), and no two subpackages do either. The graph
is read from the source with :mod:`ast`, then the two installed packages are imported in fresh
interpreters to check that the running code agrees. docs/contributing.md ("Layout") describes the
parts.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: part (its import name) -> its folder. ``reference`` is the book's code (book/reference).
FOLDERS = {
    "bertlab": ROOT / "bertlab",
    "bertlab_grader": ROOT / "bertlab_grader",
    "recipes": ROOT / "recipes",
    "reference": ROOT / "book" / "reference",
    "hub": ROOT / "hub",
}
PARTS = tuple(FOLDERS)

#: part -> the parts it may import (itself included).
ALLOWED = {
    "bertlab": {"bertlab"},
    "bertlab_grader": {"bertlab_grader"},
    "recipes": {"recipes", "bertlab", "reference"},
    "reference": {"reference", "bertlab"},
    "hub": {"hub"},
}


def module_name(path: Path) -> str:
    """The dotted name a file is imported by: its path below the folder that holds its part."""
    folder = next(folder for folder in FOLDERS.values() if path.is_relative_to(folder))
    parts = list(path.relative_to(folder.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """{dotted name: file} of every module of the parts."""
    return {
        module_name(p): p
        for folder in FOLDERS.values()
        for p in sorted(folder.rglob("*.py"))
        if "node_modules" not in p.parts  # the hub's proxy (npm ci), not ours
    }


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules (of ``known``, or outside it by their dotted name) that ``name`` imports anywhere
    in its source. ``from package import module`` counts as importing the module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x, from ..y import z
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                child = f"{source}.{alias.name}"
                found.add(child if child in known else source)
    # A module's own package (and its parents) run first whatever it imports: not a dependency.
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return found - ancestors - {name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def part_of(name: str) -> str | None:
    top = name.split(".")[0]
    return top if top in PARTS else None


def test_the_parts_exist():
    for part, folder in FOLDERS.items():
        assert (folder / "__init__.py").is_file(), (
            f"{folder.relative_to(ROOT)}/ is the package {part}"
        )


def test_imports_run_one_way():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            theirs = part_of(target)
            if theirs and theirs not in ALLOWED[part_of(name)]:
                wrong.append(f"{name} imports {target}")
    assert not wrong, (
        "the course imports neither the grader nor the recipes; the grader imports no course:\n"
        + "\n".join(sorted(wrong))
    )


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert cycles(graph()) == []


def subpackage_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph seen from the subpackages: ``bertlab.models`` -> ``bertlab.bert2bert`` if any
    module of the one imports any of the other. A package and the ones above it are not edges (a
    subpackage may use its parent's modules)."""
    known = modules()

    def package(name: str) -> str:
        return name if known[name].name == "__init__.py" else name.rpartition(".")[0] or name

    found: dict[str, set[str]] = {}
    for name, targets in edges.items():
        mine = package(name)
        found.setdefault(mine, set())
        for target in targets & known.keys():
            theirs = package(target)
            if not (mine + ".").startswith(theirs + ".") and not (theirs + ".").startswith(
                mine + "."
            ):
                found[mine].add(theirs)
    return found


#: Subpackages that import each other today, and why that is left: a new pair fails the test.
KNOWN_SUBPACKAGE_LOOPS: list[list[str]] = []  # (the warm kernels live inside the sandbox now)


def test_no_two_subpackages_import_each_other():
    loops = [
        loop for loop in cycles(subpackage_graph(graph())) if loop not in KNOWN_SUBPACKAGE_LOOPS
    ]
    assert not loops, (
        f"these subpackages import each other (move the shared code to one side): {loops}"
    )


def test_the_cycle_finder_finds_a_lazy_cycle(tmp_path):
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


@pytest.mark.slow
def test_importing_the_course_loads_no_grader_or_recipe():
    loaded = _loaded_after("import bertlab, bertlab.models")
    assert not {m for m in loaded if part_of(m) in {"bertlab_grader", "recipes"}}


@pytest.mark.slow
def test_the_books_code_is_the_package_reference_and_loads_no_grader_or_recipe():
    loaded = _loaded_after(
        "import os, sys; sys.path.insert(0, 'book'); import reference, reference.diffusion_training;"
        " assert os.path.samefile(os.path.dirname(reference.__file__), 'book/reference')"
    )
    assert {"reference", "reference.diffusion", "reference.diffusion_training"} <= loaded
    assert not {m for m in loaded if part_of(m) in {"bertlab_grader", "recipes"}}


@pytest.mark.slow
def test_importing_the_grader_loads_no_course():
    grader = sorted(
        n for n in modules() if part_of(n) == "bertlab_grader" and not n.endswith("__main__")
    )
    loaded = _loaded_after("; ".join(f"import {n}" for n in grader))
    assert not {m for m in loaded if part_of(m) == "bertlab"}, (
        "the grader learns about the course from its configuration"
    )


#: Lines a module of the three parts may have; a longer one almost always holds two ideas.
MOST_LINES = 320


def test_modules_are_small():
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert not long, f"split these by idea (at most {MOST_LINES} lines each): {long}"

"""A graded function handed in as the course's own code, found by reading the submitted cells.

The course package ships every chapter's code, installed in the student's kernel; a submission
could hand in ``from bertlab.retrieval import top_k`` (or a wrapper around it) as its own
``top_k``. A check inside the student's kernel could be fooled by the kernel it runs in, so the
grader reads the submitted cells' source instead (:func:`borrowed`), in its own process: every
top-level statement of a cell that is neither a read-only set-up cell nor a test cell, in order.
A statement *uses the answer key* when it imports from one of the course's packages
(``GuardedExecute.answer_key_packages``), reads an attribute of one that the set-up cells do not
use themselves (``bertlab.model_path`` and the message helpers they import are the notebook's),
names one in a string (``importlib.import_module("bertlab...")``), or reads a name an earlier such
statement bound. A graded function that such a statement binds (``def``, assignment, import,
decorator) is borrowed until a later statement binds it again without the answer key; every test
cell that reads it then scores 0, saying why.

What a static read cannot see (code built from strings at run time, objects found by walking the
interpreter's memory) is left to the similarity report and the instructor.
"""

from __future__ import annotations

import ast
import re

from nbgrader.utils import is_grade, is_solution


def source_of(cell) -> str:
    """A code cell's Python source, its IPython magics and shell lines left out."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines()
    )


def parse(cell) -> ast.Module | None:
    try:
        return ast.parse(source_of(cell))
    except SyntaxError:
        return None


def is_setup_cell(cell) -> bool:
    """A read-only code cell that is neither graded nor a solution: the notebook's set-up."""
    meta = cell.metadata.get("nbgrader", {})
    return (
        cell.cell_type == "code"
        and bool(meta.get("locked"))
        and not is_grade(cell)
        and not is_solution(cell)
    )


def is_test_cell(cell) -> bool:
    """An autograded test cell: graded, code, not a solution."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def bound_names(node: ast.AST) -> set[str]:
    """The names a top-level statement binds."""
    found = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found.add(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        found |= {(a.asname or a.name).split(".")[0] for a in node.names}
    else:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                found.add(sub.id)
    return found


def _dotted(node: ast.AST) -> tuple[str, ...] | None:
    """``("bertlab", "retrieval", "top_k")`` for ``bertlab.retrieval.top_k``; None for other expressions."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(parts))
    return None


class _Reader:
    """The aliases of the course's packages in a notebook, and what its set-up cells use of them."""

    def __init__(self, packages: list[str]):
        self.packages = set(packages)
        self.aliases: dict[str, str] = {}  # a name -> the dotted name of a package module it is
        self.modules: set[str] = set()  # the aliases an `import` statement bound: package modules
        self.allowed: set[str] = set()  # dotted names the set-up cells use
        names = "|".join(map(re.escape, sorted(packages)))
        self.module_path = re.compile(rf"^({names})(\.[A-Za-z_]\w*)+$") if packages else None

    def of_package(self, dotted: str) -> bool:
        return dotted.split(".")[0] in self.packages

    def imports(self, node: ast.AST) -> list[tuple[str, str]]:
        """(bound name, dotted name) for the package imports of a statement."""
        found = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if self.of_package(alias.name):
                    found.append(
                        (
                            alias.asname or alias.name.split(".")[0],
                            alias.name if alias.asname else alias.name.split(".")[0],
                        )
                    )
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and not node.level
            and self.of_package(node.module)
        ):
            found += [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names]
        return found

    def chains(self, node: ast.AST) -> list[tuple[str, ...]]:
        """Every attribute chain rooted at a package alias in ``node``, longest first per root."""
        found, inner = [], set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and id(sub) not in inner:
                dotted = _dotted(sub)
                if dotted and dotted[0] in self.aliases:
                    found.append(dotted)
                    value = sub.value
                    while isinstance(value, ast.Attribute):
                        inner.add(id(value))
                        value = value.value
                    inner.add(id(value))
        for sub in ast.walk(node):  # an alias used bare: passed, or read with getattr
            if isinstance(sub, ast.Name) and sub.id in self.aliases and id(sub) not in inner:
                found.append((sub.id,))
        return found

    def resolve(self, chain: tuple[str, ...]) -> str:
        return ".".join((self.aliases[chain[0]], *chain[1:]))

    def learn(self, node: ast.AST) -> None:
        """The aliases a statement binds by importing from the course's packages."""
        for sub in ast.walk(node):
            for name, dotted in self.imports(sub):
                self.aliases[name] = dotted
                if isinstance(sub, ast.Import):
                    self.modules.add(name)
                else:
                    self.modules.discard(name)

    def learn_setup(self, tree: ast.Module) -> None:
        for node in tree.body:
            self.learn(node)
            for sub in ast.walk(node):
                for _, dotted in self.imports(sub):
                    self.allowed.add(dotted)
        for node in tree.body:
            for chain in self.chains(node):
                self.allowed.add(self.resolve(chain))

    def answer_key_use(self, node: ast.AST, tainted: set[str]) -> str | None:
        """How a student's statement uses the answer key, in words; None if it does not."""
        for sub in ast.walk(node):
            for name, dotted in self.imports(sub):
                if dotted not in self.allowed:
                    return f"imports {dotted}"
            if isinstance(
                sub, ast.Call
            ):  # importlib.import_module("bertlab"), __import__("reference.x")
                for arg in sub.args:
                    if (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and arg.value in self.packages
                    ):
                        return f"names the course package in a string ({arg.value!r})"
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and self.module_path:
                if self.module_path.match(sub.value.strip()):
                    return f"names a module of the course package in a string ({sub.value[:60]!r})"
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in tainted:
                return f"uses {sub.id}, which came from the course package"
        for chain in self.chains(node):
            dotted = self.resolve(chain)
            if len(chain) == 1 and chain[0] in self.modules:
                return f"uses the course package's module {dotted} itself"
            if dotted not in self.allowed:
                return f"uses {dotted}"
        return None


def borrowed(nb, graded: list[str], packages: list[str]) -> dict[str, str]:
    """The graded functions (``graded``) a notebook binds to the course's own code: name -> why,
    in words (see the module)."""
    if not packages or not graded:
        return {}
    reader = _Reader(packages)
    tainted: set[str] = set()
    found: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or is_test_cell(cell):
            continue
        tree = parse(cell)
        if tree is None:
            continue
        if is_setup_cell(cell):
            reader.learn_setup(tree)
            continue
        for node in tree.body:
            why = reader.answer_key_use(node, tainted)
            names = bound_names(node)
            reader.learn(node)
            if why:
                tainted |= names
            else:
                tainted -= names
            for name in names & set(graded):
                if why:
                    found[name] = (
                        f"{name} is the course package's code: the cell that defines it {why}"
                    )
                else:
                    found.pop(name, None)
    return found

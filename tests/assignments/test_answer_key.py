"""Nothing a student is graded on ships in the package a student installs.

Students install ``bertlab`` (``pip install "bertlab @ git+..."``, the README): its wheel must not
hand in an assignment. Every graded function of ``solutions/`` (the functions its solution cells
define) is looked for in the wheel built from this checkout, the way pip builds it for a student:
under its own name (defined, assigned or re-exported anywhere in the package), or doing its job
under another name with the same parameters. The book's own copies live in ``book/reference/``,
which the wheel leaves out.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import variant_runner

import course_fixture

REPO = course_fixture.REPO


def graded_functions() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (assignment, positional parameter names) of every function a solution cell defines."""
    found = {}
    for assignment in course_fixture.assignments():
        for cell in variant_runner.cells(assignment):
            if cell["kind"] == "solution":
                for node in ast.parse(cell["source"]).body:
                    if isinstance(node, ast.FunctionDef):
                        found[node.name] = (assignment, tuple(a.arg for a in node.args.args))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from this checkout (no dependencies, no build isolation: offline),
    built from a copy of the tracked files, so that setuptools' build/ lands there, not here."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout
    for name in tracked.decode().split("\0"):
        if name and (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (found,) = out.glob("bertlab-*.whl")
    return found


def names_and_signatures(source: str) -> tuple[set[str], list[tuple[str, tuple[str, ...]]]]:
    """Every name a module binds (functions and classes at any depth, module-level assignments,
    imports), and every function's positional parameters (``self`` and ``cls`` left out)."""
    tree = ast.parse(source)
    names, signatures = set(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = tuple(
                a.arg
                for a in node.args.posonlyargs + node.args.args
                if a.arg not in ("self", "cls")
            )
            signatures.append((node.name, params))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        names.update(
            t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)
        )
    return names, signatures


def test_solutions_have_graded_functions():
    graded = graded_functions()
    assert len(graded) >= 30, sorted(graded)
    assert {
        "embed_texts",
        "top_k",
        "mrr_at_k",
        "build_messages",
        "distinct_n",
        "qa_best_span",
    } <= set(graded)


def test_the_wheel_holds_the_packages_only(wheel):
    tops = {Path(n).parts[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert tops == {
        "bertlab",
        "bertlab_grader",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }, tops


def offenders(member: str, source: str, graded: dict) -> list[str]:
    """What ``source`` (the file ``member`` of the wheel) exposes of the graded functions: their
    names, or a function with a graded function's parameters (two or more, in any order)."""
    names, signatures = names_and_signatures(source)
    found = [
        f"{member}: {name} (graded in {graded[name][0]})" for name in sorted(names & set(graded))
    ]
    for name, params in signatures:
        same = [
            (g, a)
            for g, (a, p) in graded.items()
            if len(p) >= 2 and len(p) == len(params) and set(p) == set(params)
        ]
        found += [f"{member}: {name}{params} does the job of {g} (graded in {a})" for g, a in same]
    return found


def test_no_graded_function_is_importable_from_the_installed_package(wheel):
    graded = graded_functions()
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(".py"):
                found += offenders(member, archive.read(member).decode(), graded)
    assert not found, (
        "the package students install hands in graded work; move it to book/reference/ "
        "(or use a library's own function in the page):\n" + "\n".join(found)
    )


def test_the_check_finds_a_graded_function_under_its_name_or_its_parameters():
    graded = {
        "top_k": ("ps08", ("query_vecs", "doc_vecs", "k")),
        "qa_best_span": ("ps03", ("start_logits", "end_logits", "max_answer_len", "allowed")),
    }
    source = (
        "from x import top_k\n"
        "def nearest(query_vecs, doc_vecs, k):\n    pass\n"
        "class A:\n    def span(self, end_logits, start_logits, allowed, max_answer_len):\n        pass\n"
        "def unrelated(query_vecs, k):\n    pass\n"
    )
    found = offenders("m.py", source, graded)
    assert len(found) == 3 and all(("top_k" in f) or ("qa_best_span" in f) for f in found), found

"""Grade every variant of one assignment in one process: the fast half of the round trip.

    python tests/variant_runner.py ps03-heads results.json

What nbgrader's autograde does for a submission is: run the notebook's cells in order in one
kernel, and score each test cell by whether it raised. A variant (``tests/variants/<id>.py``)
differs from the reference solution only in some solution cells, so grading it again from a fresh
kernel (imports, model loads, every cell) repeats work that does not depend on it. Here one
IPython shell runs the reference solution cell by cell, as autograde would; just before a
solution cell runs, every variant whose first changed cell it is gets a fork of the process. The
fork runs the variant's sources in place of the reference's and then the rest of the notebook in
order, except the test cells that mention no changed function (they would pass as they do for
the reference), and reports each test cell it ran: passed or not, its points, and what it
said (the error's name and message, and what it printed), as nbgrader's feedback would show it.

The same test cells run, on the same state, as in the round trip; what is left out is nbgrader
itself (restoring test cells, the gradebook, the sandbox), which the full round trip in
``tests/assignments/test_assignments.py`` still covers for the stub, the solution and the hostile
submissions.
"""

from __future__ import annotations

import ast
import json
import os
import re
import runpy
import signal
import sys
import tempfile
from pathlib import Path

import course_fixture

REPO = course_fixture.REPO
CELL_TIMEOUT = 120  # seconds, as c.Execute.timeout in autograder/nbgrader_config.py


def variants(assignment: str) -> dict:
    """``WRONG`` and ``CORRECT`` (name -> {grade id: source}) and ``CORE`` (name of a wrong
    variant -> the words its visible-test failure message must contain)."""
    path = REPO / "tests" / "variants" / f"{assignment}.py"
    if not path.exists():
        return {"WRONG": {}, "CORRECT": {}, "CORE": {}}
    found = runpy.run_path(str(path))
    return {kind: found.get(kind, {}) for kind in ("WRONG", "CORRECT", "CORE")}


def cells(assignment: str) -> list[dict]:
    """The solution notebook's code cells: source, grade id, kind (solution, test, other), points."""
    found = []
    for cell in course_fixture.solution_notebook(assignment).cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        kind = "solution" if meta.get("solution") else "test" if meta.get("grade") else "other"
        found.append(
            {
                "source": cell.source,
                "grade_id": meta.get("grade_id"),
                "kind": kind,
                "points": float(meta.get("points", 0) or 0),
            }
        )
    return found


def defined_names(source: str) -> set[str]:
    """The functions and classes a solution cell defines (top level), and the names it assigns
    there (a "predict, then measure" answer: ``PREDICT_WARMUP = "b"``)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set()
    names = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def mentions(source: str, names: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", source) for n in names)


class _CellTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise _CellTimeout(f"the cell ran past {CELL_TIMEOUT} s (the grader would interrupt it)")


def run(shell, source: str) -> dict:
    """Run one cell as a kernel would; what it raised and printed."""
    from IPython.utils.capture import capture_output

    signal.alarm(CELL_TIMEOUT)
    try:
        with capture_output() as captured:
            result = shell.run_cell(source, store_history=True)
    finally:
        signal.alarm(0)
    error = result.error_before_exec or result.error_in_exec
    said = captured.stdout + captured.stderr
    if error is not None:
        said += f"\n{type(error).__name__}\n{error}"
    return {"passed": error is None, "said": said[-20_000:]}


def changed_names(notebook: list[dict], sources: dict[str, str]) -> set[str]:
    """The functions a variant changes: those its swapped cells define, and every function of a
    solution cell that calls one of them, directly or through another (ps01's
    ``bert_self_attention`` calls ``scaled_dot_product_attention``: a wrong attention score makes
    both wrong, and nbgrader runs both functions' tests)."""
    changed = set()
    for cell in notebook:
        if cell["grade_id"] in sources:
            changed |= defined_names(cell["source"]) | defined_names(sources[cell["grade_id"]])
    callers = {}  # function -> the source of the solution cell that defines it
    for cell in notebook:
        if cell["kind"] == "solution":
            for name in defined_names(sources.get(cell["grade_id"], cell["source"])):
                callers[name] = sources.get(cell["grade_id"], cell["source"])
    grew = True
    while grew:
        more = {
            name
            for name, source in callers.items()
            if name not in changed and mentions(source, changed)
        }
        changed |= more
        grew = bool(more)
    return changed


def grade_variant(shell, notebook: list[dict], start: int, sources: dict[str, str]) -> dict:
    """In a fork: the notebook from cell ``start`` on, with ``sources`` swapped in; each test cell
    that mentions a changed function (:func:`changed_names`), graded."""
    changed = changed_names(notebook, sources)
    tests = {}
    for cell in notebook[start:]:
        if cell["kind"] == "solution":
            run(shell, sources.get(cell["grade_id"], cell["source"]))
        elif cell["kind"] == "test" and mentions(cell["source"], changed):
            tests[cell["grade_id"]] = {**run(shell, cell["source"]), "points": cell["points"]}
        elif cell["kind"] == "other":
            run(shell, cell["source"])
    return tests


def in_fork(work, *args) -> dict:
    """``work(*args)`` in a child process (a copy of this one, shell state and all); its JSON result."""
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:
            try:
                result = {"tests": work(*args)}
            except BaseException as exc:  # noqa: BLE001 - reported, not raised, in the child
                result = {"crashed": f"{type(exc).__name__}: {exc}"}
            out.write(json.dumps(result).encode())
            out.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        data = out.read()
    if not data:
        return {"crashed": f"the process died (wait status {status})"}
    return json.loads(data)


def grade_all(assignment: str) -> dict:
    """The reference solution's test cells, and every variant's, graded in one process."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    os.chdir(REPO / "solutions" / assignment)  # where nbgrader runs the notebook
    os.environ.setdefault("NBGRADER_EXECUTION", "autograde")
    config = Config()
    config.HistoryManager.hist_file = (
        ":memory:"  # as the grader's kernels (autograder/nbgrader_config.py)
    )
    config.InteractiveShell.xmode = "Minimal"
    shell = InteractiveShell.instance(config=config)
    notebook = cells(assignment)
    found = variants(assignment)
    index = {c["grade_id"]: i for i, c in enumerate(notebook) if c["grade_id"]}
    starts = {}
    for kind in ("WRONG", "CORRECT"):
        for name, sources in found[kind].items():
            missing = set(sources) - set(index)
            if missing:
                raise KeyError(
                    f"{assignment}: variant {name} changes cells that do not exist: {sorted(missing)}"
                )
            starts.setdefault(min(index[g] for g in sources), []).append((kind, name, sources))
    report = {"solution": {}, "WRONG": {}, "CORRECT": {}, "CORE": found["CORE"]}
    for i, cell in enumerate(notebook):
        for kind, name, sources in starts.get(i, []):
            report[kind][name] = in_fork(grade_variant, shell, notebook, i, sources)
        outcome = run(shell, cell["source"])
        if cell["kind"] == "test":
            report["solution"][cell["grade_id"]] = {**outcome, "points": cell["points"]}
        elif not outcome["passed"]:
            raise RuntimeError(
                f"{assignment}: the reference's cell {cell['grade_id'] or i} failed:\n{outcome['said']}"
            )
    return report


if __name__ == "__main__":
    report = grade_all(sys.argv[1])
    Path(sys.argv[2]).write_text(json.dumps(report))

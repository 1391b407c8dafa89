"""Every known-wrong and alternative-correct implementation of every assignment, graded against
the assignment's own test cells, visible and hidden (``make check``).

For each assignment, ``tests/variant_runner.py`` runs the reference solution once in one process
and grades every variant of ``tests/variants/<id>.py`` in a fork of it, with the variant's code
swapped in (see its docstring). This proves what the assignment's tests must prove about them:

- every WRONG variant loses points;
- each CORE variant (the core conceptual mistake of a function) fails a visible test with a
  message that names the concept;
- at least a third of the WRONG variants pass every visible test and lose hidden points only;
- every CORRECT variant (another implementation that honours the docstring) scores full marks.

The full nbgrader round trip (release, the stub, the solution, the hostile submissions,
feedback, export) is ``tests/assignments/test_assignments.py``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from variant_runner import REPO, variants

import course_fixture

ASSIGNMENTS = course_fixture.assignments()


def _cases(kinds: tuple[str, ...]) -> list:
    return [
        pytest.param(a, name, id=f"{a}-{name}", marks=pytest.mark.xdist_group(a))
        for a in ASSIGNMENTS
        for kind in kinds
        for name in variants(a)[kind]
    ]


def _per_assignment() -> list:
    return [pytest.param(a, id=a, marks=pytest.mark.xdist_group(a)) for a in ASSIGNMENTS]


@functools.cache
def graded(assignment: str) -> dict:
    """tests/variant_runner.py's report for one assignment (one process, run once per pytest worker)."""
    out = (
        Path(os.environ.get("TMPDIR", "/tmp")) / f"bertlab-variants-{os.getpid()}-{assignment}.json"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "variant_runner.py"), assignment, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode:
        raise RuntimeError(
            f"{assignment}: the variant runner failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    report = json.loads(out.read_text())
    out.unlink()
    return report


def outcomes(assignment: str, kind: str, name: str) -> dict:
    result = graded(assignment)[kind][name]
    assert "crashed" not in result, f"{assignment}: {kind} {name}: {result['crashed']}"
    assert result["tests"], (
        f"{assignment}: {kind} {name} changes no function that a test cell calls"
    )
    return result["tests"]


def failed(tests: dict, hidden: bool | None = None) -> list[str]:
    return [
        k
        for k, t in tests.items()
        if not t["passed"]
        and t["points"] > 0
        and (hidden is None or k.endswith("_hidden") == hidden)
    ]


@pytest.mark.parametrize("assignment", _per_assignment())
def test_the_reference_passes_every_test_cell(assignment):
    tests = graded(assignment)["solution"]
    assert tests and not failed(tests), {
        k: t["said"][-500:] for k, t in tests.items() if not t["passed"]
    }


@pytest.mark.parametrize("assignment", _per_assignment())
def test_there_are_wrong_implementations_and_core_mistakes(assignment):
    found = variants(assignment)
    assert len(found["WRONG"]) >= 3, (
        f"{assignment}: write at least three known-wrong implementations"
    )
    assert found["CORE"], f"{assignment}: name the core mistake of each graded function in CORE"
    assert set(found["CORE"]) <= set(found["WRONG"]), "every CORE entry is a WRONG variant"


@pytest.mark.parametrize("assignment, name", _cases(("WRONG",)))
def test_a_wrong_implementation_loses_points(assignment, name):
    tests = outcomes(assignment, "WRONG", name)
    assert failed(tests), (
        f"{assignment}: wrong implementation {name} scores full marks in {sorted(tests)}"
    )


@pytest.mark.parametrize(
    "assignment, name",
    [c for c in _cases(("WRONG",)) if c.values[1] in variants(c.values[0])["CORE"]],
)
def test_a_visible_test_catches_the_core_mistake_and_names_it(assignment, name):
    tests = outcomes(assignment, "WRONG", name)
    concept = variants(assignment)["CORE"][name]
    lost = failed(tests, hidden=False)
    assert lost, f"{assignment}: the visible tests do not catch the core mistake {name}"
    said = "\n".join(tests[k]["said"] for k in lost)
    assert concept.lower() in said.lower(), (
        f"{assignment}: {name} fails {lost}, but no message names {concept!r}:\n{said[-2000:]}"
    )


@pytest.mark.parametrize("assignment", _per_assignment())
def test_hidden_tests_alone_catch_a_third_of_the_wrong_implementations(assignment):
    wrong = variants(assignment)["WRONG"]
    only_hidden = [
        name
        for name in wrong
        if not failed(outcomes(assignment, "WRONG", name), hidden=False)
        and failed(outcomes(assignment, "WRONG", name), hidden=True)
    ]
    assert 3 * len(only_hidden) >= len(wrong), (
        f"{assignment}: only {only_hidden} of {len(wrong)} wrong implementations are caught by hidden tests alone"
    )


@pytest.mark.parametrize("assignment, name", _cases(("CORRECT",)))
def test_a_correct_alternative_scores_full_marks(assignment, name):
    tests = outcomes(assignment, "CORRECT", name)
    lost = failed(tests)
    assert not lost, (
        f"{assignment}: correct alternative {name} lost points in {lost}:\n"
        + "\n".join(tests[k]["said"][-800:] for k in lost)
    )


def test_a_function_that_calls_a_changed_one_counts_as_changed():
    """ps01's shape: bert_self_attention calls scaled_dot_product_attention, so a variant of the
    latter is graded on the former's tests too, as nbgrader grades it."""
    from variant_runner import changed_names

    notebook = [
        {"kind": "solution", "grade_id": "impl_sdpa", "source": "def sdpa(q, k, v):\n    return q"},
        {
            "kind": "solution",
            "grade_id": "impl_attn",
            "source": "def attention(x):\n    return sdpa(x, x, x)",
        },
        {
            "kind": "solution",
            "grade_id": "impl_layer",
            "source": "def layer(x):\n    return attention(x) + x",
        },
        {
            "kind": "solution",
            "grade_id": "impl_other",
            "source": "def tokens(text):\n    return text.split()",
        },
    ]
    assert changed_names(notebook, {"impl_sdpa": "def sdpa(q, k, v):\n    return k"}) == {
        "sdpa",
        "attention",
        "layer",
    }
    assert changed_names(notebook, {"impl_other": "def tokens(text):\n    return [text]"}) == {
        "tokens"
    }

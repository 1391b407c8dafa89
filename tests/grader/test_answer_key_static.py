"""A graded function handed in as the course's own code, found by reading the submitted cells
(bertlab_grader.answer_key), and the small parts of the two-kernel executor that read a notebook
(bertlab_grader.guarded_execute): no kernel here."""

import nbformat
import pytest

from bertlab_grader.answer_key import borrowed
from bertlab_grader.guarded_execute import GuardedExecute, call
from bertlab_grader.tests_kernel import free_names

SETUP = """
try:
    from bertlab.messages import mistake, show_tokens
except ImportError:
    pass
import bertlab
MODEL = bertlab.model_path()
"""


def notebook(*student_cells: str):
    """A notebook: the course's kind of set-up cell, then ``student_cells`` (solution cells)."""
    setup = nbformat.v4.new_code_cell(
        SETUP,
        metadata={
            "nbgrader": {"locked": True, "grade": False, "solution": False, "grade_id": "setup"}
        },
    )
    cells = [
        nbformat.v4.new_code_cell(
            source,
            metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": f"impl_{i}"}},
        )
        for i, source in enumerate(student_cells)
    ]
    test = nbformat.v4.new_code_cell(
        "assert top_k(1) == 2\nfrom bertlab import nothing",
        metadata={
            "nbgrader": {"grade": True, "solution": False, "grade_id": "test_top_k", "points": 1}
        },
    )
    return nbformat.v4.new_notebook(cells=[setup, *cells, test])


@pytest.mark.parametrize(
    "cells",
    [
        ["from bertlab.retrieval import top_k"],
        ["from bertlab.retrieval import search as top_k"],
        ["import bertlab.retrieval\ntop_k = bertlab.retrieval.top_k"],
        ["top_k = bertlab.retrieval.top_k"],  # through the set-up's own `import bertlab`
        ["import functools\ntop_k = functools.partial(bertlab.retrieval.search, k=3)"],
        ["def top_k(*args):\n    return bertlab.retrieval.search(*args)"],  # a wrapper
        [
            "_found = bertlab.retrieval.search",
            "def top_k(*args):\n    return _found(*args)",
        ],  # a name in between
        ["import importlib\ntop_k = importlib.import_module('bertlab.retrieval').search"],
        ["top_k = getattr(__import__('bertlab'), 'retrieval').search"],
        [
            "m = getattr(bertlab, 'retr' + 'ieval')\ntop_k = m.search"
        ],  # the package itself, passed on
        ["from reference.retrieval import top_k"],
    ],
)
def test_a_graded_function_built_from_the_course_package_is_named(cells):
    found = borrowed(notebook(*cells), ["top_k", "recall_at_k"], ["bertlab", "reference"])
    assert list(found) == ["top_k"] and "course package" in found["top_k"], found


@pytest.mark.parametrize(
    "cells",
    [
        ["def top_k(x):\n    return x + 1"],
        [
            "def top_k(x):\n    print(show_tokens([x]), MODEL)\n    return x + 1"
        ],  # the notebook's own helpers
        [
            "def top_k(x):\n    '''Like the reference solution, and bertlab's retrieval chapter.'''\n    return x"
        ],
        [
            "from bertlab.retrieval import top_k",
            "def top_k(x):\n    return x + 1",
        ],  # defined again, honestly
        [
            "def top_k(x):\n    return x",
            "from bertlab.retrieval import passages\ndocs = passages()",
        ],  # data, later
    ],
)
def test_honest_work_is_not_named(cells):
    assert borrowed(notebook(*cells), ["top_k"], ["bertlab", "reference"]) == {}


def test_the_test_cells_read_what_they_do_not_define():
    cell = nbformat.v4.new_code_cell(
        "import math as _m\n"
        "%time x = 1\n"
        "def _check(_a, b=2):\n    return top_k(_a, b) + _m.pi + len(CONSTANT)\n"
        "for _i in range(3):\n    _check(_i)\n"
        "try:\n    pass\nexcept ValueError as _e:\n    print(_e, tokenizer)\n"
        "_xs = [y for y in range(2)]\n"
    )
    assert free_names(cell) == ["CONSTANT", "tokenizer", "top_k"]


def test_the_graded_functions_follow_the_courses_naming():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "from bertlab.models import describe as top_k",
                metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "impl_top_k"}},
            ),
            nbformat.v4.new_code_cell(
                "def helper():\n    pass\ndef recall_at_k():\n    pass",
                metadata={
                    "nbgrader": {"solution": True, "grade": False, "grade_id": "impl_recall"}
                },
            ),
            nbformat.v4.new_code_cell("def not_graded():\n    pass"),
        ]
    )
    course_convention = GuardedExecute(graded_function_id=r"^impl_(?P<name>\w+)$")
    assert course_convention.graded_names(nb) == ["helper", "recall", "recall_at_k", "top_k"]
    assert GuardedExecute().graded_names(nb) == ["helper", "recall_at_k"]  # by default, `def` alone


def test_prepare_calls_module_functions_by_name(monkeypatch):
    called = []
    monkeypatch.setattr("os.sync", lambda: called.append("sync"))
    call("os:sync")
    assert called == ["sync"]
    with pytest.raises(ValueError, match="module:function"):
        call("os.sync")


def test_the_report_flags_only_the_graders_own_errors(tmp_path):
    from bertlab_grader import grade_report
    from bertlab_grader.guarded_execute import error_output

    cell = nbformat.v4.new_code_cell("assert f()")
    cell.outputs = [
        nbformat.v4.new_output(
            "error", ename="KernelDied", evalue="forged by the submission", traceback=[]
        )
    ]
    other = nbformat.v4.new_code_cell("assert g()")
    other.outputs = [error_output("GradingIntegrityError", "this test does not count: ...", other)]
    path = tmp_path / "graded.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell, other]), path)
    assert grade_report.notebook_flags(path) == [grade_report.FLAGS["GradingIntegrityError"]]

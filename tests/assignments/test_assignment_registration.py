"""Every assignment is wired into every place a new ``psNN`` must reach (docs/contributing.md,
"Adding an assignment"), checked from files alone, so a missing piece fails here, naming itself,
instead of a round trip or the book build failing far away:

1. ``solutions/<id>/<id>.ipynb``, whose cells follow the naming the grader and the variant tests
   rely on: a solution cell ``impl_<function>``; for each, a visible test cell
   ``test_<function>`` (one line calling ``check_<function>``, defined by the read-only cell of that
   name above it) and a hidden one ``test_<function>_hidden`` whose body sits between
   ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``;
   Written answers graded by hand are markdown cells ``written_<topic>`` after their question
   ``written_<topic>_md``, with the model answer and the rubric between the SOLUTION markers;
2. ``exercises/<id>/<id>.ipynb``, released (``make exercises``);
3. ``tests/variants/<id>.py`` with ``WRONG``, ``CORE`` and ``CORRECT``;
4. a chapter in ``_toc.yml`` whose Exercise section downloads the notebook and calls
   ``bertlab.exercise_links("<id>")``.
"""

from __future__ import annotations

import re

import pytest
from variant_runner import cells, variants

import course_fixture

REPO = course_fixture.REPO
ASSIGNMENTS = course_fixture.assignments()
GUIDE = 'docs/contributing.md, "Adding an assignment"'


def toc_pages() -> set[str]:
    """The files ``_toc.yml`` builds (without their suffix)."""
    return set(course_fixture.toc_files(REPO))


def test_assignments_are_found():
    assert ASSIGNMENTS, "no solutions/psNN-slug folder"
    for assignment in ASSIGNMENTS:
        assert re.fullmatch(r"ps\d\d[a-z]?-[a-z0-9-]+", assignment), (
            f"solutions/{assignment}: name assignment folders psNN-slug ({GUIDE})"
        )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_cells_are_named_as_the_grader_and_the_variant_tests_expect(assignment):
    notebook = cells(assignment)
    graded = [c for c in notebook if c["kind"] != "other"]
    solutions = {c["grade_id"] for c in graded if c["kind"] == "solution"}
    tests = {c["grade_id"]: c for c in graded if c["kind"] == "test"}
    assert solutions, f"solutions/{assignment}: no solution cell (nbgrader: 'Autograded answer')"
    for grade_id in solutions:
        assert grade_id.startswith("impl_"), (
            f"{assignment}: solution cell {grade_id!r} must be impl_<function>"
        )
        function = grade_id.removeprefix("impl_")
        for test_id in (f"test_{function}", f"test_{function}_hidden"):
            assert test_id in tests, (
                f"{assignment}: {grade_id} has no test cell {test_id!r} ({GUIDE})"
            )
    for test_id, cell in tests.items():
        hidden = "### BEGIN HIDDEN TESTS" in cell["source"]
        assert test_id.endswith("_hidden") == hidden, (
            f"{assignment}: test cell {test_id!r}: a cell holding hidden tests, and only such a cell, "
            f"ends in _hidden (tests/assignments/test_variants.py counts hidden-only catches by it)"
        )
        assert cell["points"] > 0, f"{assignment}: test cell {test_id!r} is worth no points"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_visible_test_cell_is_one_call_of_the_read_only_check_above_it(assignment):
    """Validate's dialog shows a failing cell's source before its error: a visible test cell is
    ``check_<function>(<function>)``, the tests in the read-only cell ``check_<function>`` just above."""
    notebook = cells(assignment)
    for above, cell in zip(notebook, notebook[1:]):
        test_id = cell["grade_id"] or ""
        if cell["kind"] != "test" or test_id.endswith("_hidden"):
            continue
        function = test_id.removeprefix("test_")
        assert re.fullmatch(rf"check_{function}\(\w+(, \w+)*\)", cell["source"].strip()), (
            f"{assignment}: {test_id} should be one line, check_{function}({function}), not "
            f"{len(cell['source'].splitlines())} lines of tests ({GUIDE})"
        )
        assert above["kind"] == "other" and above["grade_id"] == f"check_{function}", (
            f"{assignment}: {test_id} needs the read-only cell check_{function} just above it"
        )
        assert f"def check_{function}(" in above["source"], (
            f"{assignment}: check_{function} does not define check_{function}"
        )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_written_answers_are_named_and_carry_their_rubric(assignment):
    """A written answer graded by hand (nbgrader's "Manually graded answer") is a markdown cell
    ``written_<topic>`` with points, after its question in the read-only ``written_<topic>_md``; its
    model answer and rubric sit between the SOLUTION markers, which the release replaces."""
    notebook = course_fixture.solution_notebook(assignment).cells
    for i, cell in enumerate(notebook):
        meta = cell.metadata.get("nbgrader", {})
        if not (meta.get("solution") and meta.get("grade")):
            continue
        grade_id = meta["grade_id"]
        where = f"{assignment}: answer graded by hand {grade_id!r}"
        assert cell.cell_type == "markdown" and grade_id.startswith("written_"), (
            f"{where}: a markdown cell named written_<topic> ({GUIDE})"
        )
        assert meta.get("points"), f"{where} has no points"
        question = notebook[i - 1].metadata.get("nbgrader", {})
        assert question.get("grade_id") == f"{grade_id}_md" and question.get("locked"), (
            f"{where}: its question comes first, in the read-only cell {grade_id}_md"
        )
        source = cell.source
        assert source.startswith("### BEGIN SOLUTION") and source.endswith("### END SOLUTION"), (
            f"{where}: the model answer and the rubric between the SOLUTION markers"
        )
        assert "*Rubric (" in source, f"{where}: no rubric (points and what earns them)"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_release_exists(assignment):
    name = course_fixture.notebook_name(assignment)
    assert name == assignment, f"solutions/{assignment}: the notebook must be {assignment}.ipynb"
    assert (REPO / "exercises" / assignment / f"{name}.ipynb").is_file(), (
        f"exercises/{assignment}/{name}.ipynb is missing: run `make exercises` and commit it"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_variants_exist(assignment):
    path = REPO / "tests" / "variants" / f"{assignment}.py"
    assert path.is_file(), (
        f"{path.relative_to(REPO)} is missing: known-wrong and correct variants ({GUIDE})"
    )
    found = variants(assignment)
    for kind in ("WRONG", "CORE", "CORRECT"):
        assert found[kind], f"{path.relative_to(REPO)} defines no {kind} ({GUIDE})"
    assert set(found["CORE"]) <= set(found["WRONG"]), (
        f"{path.relative_to(REPO)}: every CORE name is a WRONG one"
    )
    grade_ids = {c["grade_id"] for c in cells(assignment) if c["kind"] == "solution"}
    for kind in ("WRONG", "CORRECT"):
        for name, sources in found[kind].items():
            unknown = set(sources) - grade_ids
            assert not unknown, (
                f"{path.relative_to(REPO)}: {kind} {name} swaps cells {unknown} the notebook lacks"
            )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_chapter_in_the_toc_links_the_exercise(assignment):
    calls = f'exercise_links("{assignment}")'
    download = f"../exercises/{assignment}/{assignment}.ipynb"
    pages = [p for p in sorted((REPO / "book").glob("*.md")) if calls in p.read_text()]
    assert pages, f"no page of book/ calls bertlab.{calls} in its Exercise section ({GUIDE})"
    built = toc_pages()
    for page in pages:
        assert f"book/{page.stem}" in built, (
            f"{page.relative_to(REPO)} links {assignment} but is not in _toc.yml"
        )
        assert download in page.read_text(), (
            f"{page.relative_to(REPO)}: no {{download}} link to {download}"
        )

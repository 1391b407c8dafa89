"""The round trip is the test: for every assignment in solutions/, in a scratch course,

- the released stub scores zero (on every assignment), and ``nbgrader validate --invert`` passes
  on it (on the first assignment, :data:`BOMBED`: a student's Validate of a stub is the same
  command on every notebook, and costs a kernel and torch's import each);
- the reference solution scores full marks (``make validate`` passing a reference in a
  student's plain kernel is ``tests/assignments/test_validate_messages.py``'s, on ps00);
- five hostile submissions score what their honest content deserves, with the hostile
  suite's tricks packed into them so that every assignment meets them at almost no extra
  grading time (``tests/grader/test_hostile.py`` runs its whole list, one trick per submission, on the
  tiny test course ``tests/grader_course``, and the torch and answer-key tricks on ps00):
  a kernel rigged to blank every later cell (the grader's request to serve the tests too) scores
  0; honest work that tries the network (off),
  prints 20 MB on one line (cut to the 1 MB cap; ``tests/grader/test_hostile_resources.py``
  prints 200 MB once), runs an endless loop (interrupted), then kills its own kernel after the
  first test keeps exactly the tests before; every graded function returning an object that
  claims to equal anything (a plain object's ``==``, a tensor answering ``torch.equal`` / ``allclose`` /
  ``==`` itself) scores 0 (what crosses back from the student's kernel is plain data, and any
  other object is a handle whose comparisons are its own; the lying tensor's kernel also turns
  each visible test's ``check_<function>`` into a no-op, which the test cell, run in the tests'
  kernel with the read-only cells, never sees), even with every test cell edited to
  ``pass`` at 100 points (a graded cell of the student's own makes nbgrader refuse the notebook:
  ps00's suite shows it scores 0); functions that try to print the test cell calling them score 0,
  and print none of it (a hidden test's source never enters the student's kernel); and, in the
  first assignment's round trip (:data:`BOMBED`), a memory bomb, a process bomb and a 10-minute
  sleep that ignores the interrupt after the last cell (of the liars) are stopped. The caps that
  stop them are the kernel's, the same for every notebook, and cost 20 s of grading per
  assignment; ``tests/grader/test_hostile_resources.py`` meets each at full size. The two
  time-limit cells get a 3 s limit and 5 s of grace after the interrupt
  (``hostile_tricks.short_time_limits``; every other cell keeps the course's 120 s): the course's
  own limits would cost four minutes per assignment;
- the feedback HTML (of the stub, the solution and the hostile submissions) shows no
  hidden-test source line;
- graded as the instructor grades (``make autograde``, ``make feedback``, ``make grades``: the
  parallel grader, its report and ``export.py``), the report and the per-question export agree with
  the gradebook: one row per submission, the expected score, each question's score, and the
  hostile submissions named for a look;
- exercises/ is exactly what nbgrader generated from solutions/ in that round trip (that it
  holds no marker, solution line or hidden-test line is a file scan, in
  ``tests/assignments/test_released_exercises.py``, in ``make check``).

The known-wrong and alternative-correct implementations (``tests/variants/<id>.py``) are graded
against the same test cells in ``tests/assignments/test_variants.py`` (``make check``), one process per
assignment instead of one nbgrader run per variant.
"""

from __future__ import annotations

import ast
import csv
import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import hostile_tricks as tricks
import nbformat
import pytest

import course_fixture

REPO = course_fixture.REPO
ASSIGNMENTS = course_fixture.assignments()

pytestmark = pytest.mark.slow
#: The assignment whose hostile submissions also carry the bombs (memory, processes, an ignored
#: interrupt) after their last cell.
BOMBED = ASSIGNMENTS[0]


is_test_cell = tricks.is_test


# What every graded function returns in the liars' submissions; {name} is the function's name.
LIARS = {
    "hostile-always-equal": """
class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def {name}(*args, **kwargs):
    return AlwaysEqual()
""",
    "hostile-lying-tensor": """
import torch


class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.equal, torch.Tensor.equal, torch.allclose, torch.Tensor.allclose):
            return True
        if func in (torch.Tensor.__eq__, torch.eq, torch.isclose, torch.Tensor.eq):
            return torch.ones((), dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {{}})


def {name}(*args, **kwargs):
    return torch.zeros(1).as_subclass(Agreeable)


# and the visible tests' check function made a no-op in this kernel after every cell (so after
# the read-only cell that defines it): a test cell runs the course's own, in the tests' kernel
get_ipython().events.register(
    "post_run_cell", lambda result: globals().update(check_{name}=lambda *args, **kwargs: None)
)
""",
}


# Every graded function tries to print the cell that called it (it prints its own notebook's last
# cell: a test cell runs in another kernel).
PRINTS_CALLER = """
def {name}(*args, **kwargs):
    print(get_ipython().user_ns["In"][-1])
    raise NotImplementedError
"""


def graded_functions(notebook) -> dict[str, list[str]]:
    """grade id of each solution cell -> the names of the functions it defines."""
    found = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            found[meta["grade_id"]] = [
                n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)
            ]
    return found


RIG = "get_ipython().input_transformers_cleanup.append(lambda lines: [])"


def hostile_submissions(solution, bombs: bool = True) -> tuple[dict, set]:
    """The reference solution rigged two ways, and the liars (student -> notebook), each liar with
    a bomb after its last cell if ``bombs``; and the grade ids the dying one keeps: every test cell
    up to the first one, where its kernel dies."""
    first = next(i for i, c in enumerate(solution.cells) if is_test_cell(c))
    kept = {
        c.metadata["nbgrader"]["grade_id"] for c in solution.cells[: first + 1] if is_test_cell(c)
    }
    rigged = tricks.insert_after(solution, 0, RIG)  # it blanks every later cell, a bomb's too
    # just before the first test: the network (its output must stay visible), the flood, and an
    # endless loop (interrupted: the notebook goes on, and the first test still counts)
    dies = tricks.insert_after(
        solution, first - 1, tricks.NETWORK, tricks.flood(20_000_000), tricks.ENDLESS_LOOP
    )
    dies = tricks.insert_after(dies, first + 3, tricks.SELF_KILL)
    every_function = {**LIARS, "hostile-prints-calling-cell": PRINTS_CALLER}
    liars = {
        student: course_fixture.replace_solutions(
            solution,
            {
                grade_id: "\n".join(template.format(name=name) for name in names)
                for grade_id, names in graded_functions(solution).items()
            },
        )
        for student, template in every_function.items()
    }
    liars["hostile-always-equal"] = tricks.edit_tests(liars["hostile-always-equal"])
    # bombs after the last cell: the caps stop them, at no cost in cells
    for student, bomb in (
        {
            "hostile-always-equal": tricks.MEMORY_BOMB,
            "hostile-prints-calling-cell": tricks.PROCESS_BOMB,
            "hostile-lying-tensor": tricks.IGNORES_INTERRUPT,
        }.items()
        if bombs
        else ()
    ):
        liars[student] = tricks.insert_after(liars[student], len(liars[student].cells) - 1, bomb)
    return {"hostile-rigged-kernel": rigged, "hostile-dies-after-first-test": dies, **liars}, kept


def autograded_outputs(course: Path, assignment: str, student: str) -> str:
    """Every error (its name and message) and printed line of a student's autograded notebook."""
    path = (
        course
        / "autograder"
        / "autograded"
        / student
        / assignment
        / f"{course_fixture.notebook_name(assignment)}.ipynb"
    )
    texts = []
    for cell in nbformat.read(path, as_version=4).cells:
        for out in cell.get("outputs", []):
            texts += [out.get("ename", ""), out.get("evalue", ""), out.get("text", "")]
    return "\n".join(texts)


def validate(course: Path, assignment: str) -> dict[str, str]:
    """``nbgrader validate --invert`` as a student runs it: its report on the released stub."""
    name = course_fixture.notebook_name(assignment)
    stub = course / "exercises" / assignment / f"{name}.ipynb"
    return {"stub": course_fixture.nbgrader(course, "validate", str(stub), "--invert").stdout}


VALIDATED: dict[Path, Future] = {}  # course -> validate()'s reports, run beside the autograde


# One assignment's round trip runs on one pytest-xdist worker (make test: --dist loadgroup; the
# grouping by this fixture's value is in tests/conftest.py).
@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, tmp_path_factory):
    """Release, submit the stub, the solution and the hostile submissions, autograde once,
    feedback, export; and validate the stub meanwhile (a plain kernel; the autograde's kernels
    often wait, and the two cores have time to spare)."""
    assignment = request.param
    course = course_fixture.make_course(tmp_path_factory.mktemp(assignment))
    tricks.short_time_limits(course, seconds=3)  # the time-limit cases' cells only
    released = nbformat.read(course_fixture.release(course, assignment), as_version=4)
    with ThreadPoolExecutor(1) as beside:
        if assignment == BOMBED:
            VALIDATED[course] = beside.submit(validate, course, assignment)
        hostile = _grade_everyone(course, assignment, released)
    return assignment, course, released, hostile


def _grade_everyone(course: Path, assignment: str, released) -> dict:
    """Submit the stub, the solution and the hostile submissions; grade them as the instructor
    does (:func:`course_fixture.grade_as_instructor`: autograde, feedback, export). Returns the
    hostile ones and the grader's report, by student."""
    course_fixture.submit(course, assignment, "stub", released)
    solution = course_fixture.solution_notebook(assignment)
    course_fixture.submit(course, assignment, "solution", solution)
    hostile, kept = hostile_submissions(solution, bombs=assignment == BOMBED)
    for student, notebook in hostile.items():
        course_fixture.submit(course, assignment, student, notebook)
    report = course_fixture.grade_as_instructor(course, assignment)
    return {"students": set(hostile), "kept": kept, "report": {r["student"]: r for r in report}}


def total(cells: dict) -> tuple[float, float]:
    return sum(c.score for c in cells.values()), sum(c.max_score for c in cells.values())


def test_stub_scores_zero(graded):
    assignment, course, _, _ = graded
    score, max_score = total(course_fixture.scores(course, assignment, "stub"))
    assert max_score > 0
    assert score == 0, f"{assignment}: the released stub scores {score}/{max_score}"


def test_stub_fails_validate(graded):
    assignment, course, _, _ = graded
    if assignment != BOMBED:
        pytest.skip(f"the stub's validate runs on {BOMBED}'s round trip")
    out = VALIDATED[course].result()["stub"]
    assert "Success! The notebook does not pass any tests." in out, out


def written(assignment: str) -> set[str]:
    """The grade ids of the answers graded by hand (nbgrader's "Manually graded answer")."""
    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in course_fixture.solution_notebook(assignment).cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.metadata["nbgrader"].get("grade")
    }


def test_solution_scores_full_marks(graded):
    """Full marks in every autograded cell; its written answers wait for a human (the report says
    how many), since no test can grade them."""
    assignment, course, _, hostile = graded
    cells = course_fixture.scores(course, assignment, "solution")
    failed = {
        k: c.score
        for k, c in cells.items()
        if c.score != c.max_score and k not in written(assignment)
    }
    assert not failed, f"{assignment}: reference solution lost points in {failed}"
    assert hostile["report"]["solution"]["to_grade_by_hand"] == len(written(assignment))


def test_hostile_submissions_score_what_their_honest_content_deserves(graded):
    assignment, course, _, hostile = graded
    rigged = course_fixture.scores(course, assignment, "hostile-rigged-kernel")
    assert total(rigged)[0] == 0, f"{assignment}: a rigged kernel earned {total(rigged)}"
    assert "does not serve the tests" in autograded_outputs(
        course, assignment, "hostile-rigged-kernel"
    )
    kept = hostile["kept"]
    dies = course_fixture.scores(course, assignment, "hostile-dies-after-first-test")
    scored = {k for k, c in dies.items() if c.score}
    assert scored == kept and all(dies[k].score == dies[k].max_score for k in kept), (
        f"{assignment}: a kernel that died after the first test kept {scored}, not {kept}"
    )
    said = autograded_outputs(course, assignment, "hostile-dies-after-first-test")
    assert tricks.OUTPUT_CUT_SAID in said and len(said) < 1_500_000, len(said)
    assert "CellTimeoutError" in said or "KeyboardInterrupt" in said, (
        "the endless loop was not interrupted"
    )
    if tricks.sandboxed():
        assert said.count("no network:") == 3 and "reached" not in said, said[:1500]
    for liar in LIARS:
        cells = course_fixture.scores(course, assignment, liar)
        fooled = {k: c.score for k, c in cells.items() if c.score}
        assert not fooled, (
            f"{assignment}: {liar} (every function returns an object that claims to equal "
            f"anything; the lying tensor's kernel also makes each check_<function> a no-op) "
            f"earned points in {fooled}: compare plain values in those tests, and let a test "
            "cell call only what read-only cells define"
        )
        assert set(cells) == set(course_fixture.scores(course, assignment, "solution")), (
            f"{liar}: {set(cells)}"
        )
    points = {
        k: c.max_score
        for k, c in course_fixture.scores(course, assignment, "hostile-always-equal").items()
    }
    assert points == {
        k: c.max_score for k, c in course_fixture.scores(course, assignment, "solution").items()
    }, "edited tests' points reached the gradebook"
    printer = "hostile-prints-calling-cell"
    assert total(course_fixture.scores(course, assignment, printer))[0] == 0
    if assignment == BOMBED:
        said = {s: autograded_outputs(course, assignment, s) for s in (*LIARS, printer)}
        assert tricks.MEMORY_CAP_SAID in said["hostile-always-equal"]
        assert tricks.IGNORED_INTERRUPT_SAID in said["hostile-lying-tensor"]
        assert tricks.PROCESS_CAP_SAID in said[printer]
    hidden = course_fixture.marked_pairs(
        course_fixture.solution_notebook(assignment), "HIDDEN TESTS"
    )
    printed = "\n".join(
        line.strip() for line in autograded_outputs(course, assignment, printer).splitlines()
    )
    assert not any(pair in printed for pair in hidden), (
        f"{assignment}: {printer} printed a hidden test: its source reached the student's kernel"
    )
    # test_feedback_hides_hidden_tests reads its feedback too


def test_feedback_hides_hidden_tests(graded):
    assignment, course, _, _ = graded
    hidden = course_fixture.marked_pairs(
        course_fixture.solution_notebook(assignment), "HIDDEN TESTS"
    )
    pages = list((course / "autograder" / "feedback").glob(f"*/{assignment}/*.html"))
    assert pages, "no feedback was generated"
    for page in pages:
        text = course_fixture.readable(page)
        leaked = [pair for pair in hidden if pair in text]
        assert not leaked, f"{page.parent.parent.name}'s feedback shows hidden tests: {leaked[:3]}"
        assert "BEGIN HIDDEN TESTS" not in text


def test_grades_export(graded):
    """The report (``autograder/reports/<assignment>.json``) and the per-question export
    (``autograder/grades/<assignment>.csv``) say what the gradebook says, one row per submission."""
    assignment, course, _, hostile = graded
    report = hostile["report"]
    with (course / "autograder" / "grades" / f"{assignment}.csv").open(newline="") as f:
        export = {r["student"]: r for r in csv.DictReader(f)}
    everyone = {"stub", "solution", *hostile["students"]}
    assert set(report) == set(export) == everyone
    for student in sorted(everyone):
        cells = course_fixture.scores(course, assignment, student)
        score, max_score = total(cells)
        assert report[student]["score"] == float(export[student]["score"]) == score, student
        assert report[student]["max_score"] == float(export[student]["max_score"]) == max_score, (
            student
        )
        waiting = {g for g in cells if export[student][g] == ""}
        assert waiting <= written(assignment), (student, waiting)  # an answer nobody graded yet
        assert {g: float(export[student][g]) for g in cells if g not in waiting} == {
            g: c.score for g, c in cells.items() if g not in waiting
        }, student
    by_hand = sum(  # the solution's written answers wait for a human: no points yet
        c.max_score
        for g, c in course_fixture.scores(course, assignment, "solution").items()
        if g in written(assignment)
    )
    assert report["solution"]["score"] == report["solution"]["max_score"] - by_hand > 0
    assert report["stub"]["score"] == 0
    assert not report["solution"]["flags"], report["solution"]
    assert "did not serve the tests" in report["hostile-rigged-kernel"]["flags"], report[
        "hostile-rigged-kernel"
    ]


def test_exercises_are_generated_from_solutions(graded):
    """`make exercises` would change nothing: the committed release is what nbgrader generated
    from solutions/ for this round trip."""
    assignment, course, _, _ = graded
    fresh = course / "exercises" / assignment / f"{course_fixture.notebook_name(assignment)}.ipynb"
    committed = REPO / "exercises" / assignment / fresh.name
    assert committed.exists(), f"exercises/{assignment} is missing: run `make exercises`"
    assert json.loads(committed.read_text()) == json.loads(fresh.read_text()), (
        f"exercises/{assignment} is out of date with solutions/{assignment}: run `make exercises`"
    )

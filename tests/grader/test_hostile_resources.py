"""The resource cases of hostile grading: an endless cell, a cell that ignores the interrupt,
slow cells past the notebook's wall clock, 200 MB of output and the network, each beside honest
work, on the grader's test course graded by the parallel grader three at a time with short time
limits. Honest work keeps its marks; a kernel that will not stop costs only the cells after.
A module of its own, so a pytest-xdist worker of its own: it waits on the clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_checks import (
    ASSIGNMENT,
    COURSE,
    FIRST_TESTS,
    LAST_OF_FIRST_FUNCTION,
    graded_output_text,
)
from hostile_tricks import ENDLESS_LOOP, IGNORES_INTERRUPT, NETWORK, flood, sandboxed, with_cell

import course_fixture

pytestmark = pytest.mark.slow

# seconds; the course's own are 120, 600 and 30 (cut here to keep CI short: the test course's
# honest notebook runs in a second, so the wall clock need leave room only for 200 MB of output)
CELL_TIMEOUT, WALL_CLOCK, INTERRUPT_GRACE = 20, 45, 5


def slow_cells(solution, n: int):
    """``n`` cells of ``time.sleep``, each 5 s under the cell's limit, after the first function's tests."""
    notebook = solution
    for _ in range(n):
        notebook = with_cell(
            notebook, f"import time\ntime.sleep({CELL_TIMEOUT - 5})", after=LAST_OF_FIRST_FUNCTION
        )
    return notebook


def resource_submissions(solution) -> dict:
    """Honest work with one resource trick each, and the plain honest notebook beside them."""
    return {
        # interrupted at the cell's timeout; the notebook goes on, and every test still passes
        "honest-then-infinite-loop": with_cell(solution, ENDLESS_LOOP),
        # ignores the interrupt and sleeps 10 minutes: the kernel is stopped
        "honest-then-sleeps-10-minutes": with_cell(
            solution, IGNORES_INTERRUPT, after=LAST_OF_FIRST_FUNCTION
        ),
        # cells each under the cell's limit, together past the notebook's wall clock
        "honest-then-slow-cells": slow_cells(solution, WALL_CLOCK // (CELL_TIMEOUT - 5) + 1),
        "honest-prints-200-MB": with_cell(solution, flood(200_000_000)),
        "honest-tries-the-network": with_cell(solution, NETWORK),
        "honest": solution,
    }


@pytest.fixture(scope="module")
def resources(tmp_path_factory):
    """The resource cases graded by the course grader, three at a time (most of them wait), with
    short time limits."""
    from bertlab_grader import parallel

    course = course_fixture.make_course(tmp_path_factory.mktemp("resources"), repo=COURSE)
    with (course / "autograder" / "nbgrader_config.py").open("a") as config:
        config.write(
            f"\nc.Execute.timeout = {CELL_TIMEOUT}\nc.GuardedExecute.notebook_timeout = {WALL_CLOCK}\n"
            f"c.GuardedExecute.interrupt_grace = {INTERRUPT_GRACE}\n"
        )
    course_fixture.release(course, ASSIGNMENT)
    for student, notebook in resource_submissions(
        course_fixture.solution_notebook(ASSIGNMENT, COURSE)
    ).items():
        course_fixture.submit(course, ASSIGNMENT, student, notebook)
    outcomes = {
        o.student: o for o in parallel.autograde(course, ASSIGNMENT, workers=3, progress=False)
    }
    return course, outcomes


def graded_outputs(course: Path, student: str) -> str:
    return graded_output_text(course, ASSIGNMENT, student)


def full_marks(course: Path, student: str) -> bool:
    cells = course_fixture.scores(course, ASSIGNMENT, student)
    return sum(c.score for c in cells.values()) == sum(c.max_score for c in cells.values()) > 0


def test_every_resource_case_is_graded_and_honest_work_keeps_its_marks(resources):
    course, outcomes = resources
    assert all(o.success for o in outcomes.values()), {
        s: o.error[-300:] for s, o in outcomes.items() if not o.success
    }
    for student in (
        "honest",
        "honest-then-infinite-loop",
        "honest-prints-200-MB",
        "honest-tries-the-network",
    ):
        assert full_marks(course, student), (
            student,
            course_fixture.scores(course, ASSIGNMENT, student),
        )


def test_an_endless_cell_is_interrupted_at_its_timeout(resources):
    course, outcomes = resources
    assert "CellTimeoutError" in graded_outputs(
        course, "honest-then-infinite-loop"
    ) or "KeyboardInterrupt" in graded_outputs(course, "honest-then-infinite-loop")
    assert outcomes["honest-then-infinite-loop"].seconds < WALL_CLOCK + 30


@pytest.mark.parametrize(
    "student, why",
    [
        (
            "honest-then-sleeps-10-minutes",
            f"ran past its {CELL_TIMEOUT} s limit and ignored the interrupt",
        ),
        ("honest-then-slow-cells", f"ran past its wall clock of {WALL_CLOCK} s"),
    ],
)
def test_a_kernel_that_will_not_stop_costs_only_the_cells_after(resources, student, why):
    """Plain nbgrader discards a submission whose cell ignores the interrupt; a notebook of slow
    cells would run for as long as it likes. Here the kernel is stopped, and the cells before keep
    their scores."""
    from bertlab_grader import grade_report

    course, outcomes = resources
    kept = {k for k, c in course_fixture.scores(course, ASSIGNMENT, student).items() if c.score}
    assert kept == FIRST_TESTS, "the cells before keep their scores"
    assert why in graded_outputs(course, student)
    assert outcomes[student].seconds < WALL_CLOCK + 60, "not ten minutes"
    rows = {r["student"]: r for r in grade_report.report(course, ASSIGNMENT)}
    assert "kernel died" in rows[student]["flags"] and rows["honest"]["flags"] == ""


def test_200_mb_of_output_is_cut_to_the_cap(resources):
    course, _ = resources
    path = (
        course
        / "autograder"
        / "autograded"
        / "honest-prints-200-MB"
        / ASSIGNMENT
        / f"{ASSIGNMENT}.ipynb"
    )
    assert path.stat().st_size < 1_500_000 and "the grader cut the output here" in path.read_text()


def test_the_network_is_off(resources):
    if not sandboxed():
        pytest.skip("no bwrap (apt install bubblewrap): the autograder runs kernels unsandboxed")
    course, _ = resources
    text = graded_outputs(course, "honest-tries-the-network")
    assert text.count("no network:") == 3 and "reached" not in text, text

"""Hostile submissions: the grader gives no points for rigging it, and leaks no hidden test.

The grader's behaviour is tested on the grader's test course (``tests/grader_course``: one tiny
assignment, ``fx00-tiny``, two functions in plain Python that load no model, as nbgrader tests
itself on small fixture notebooks): one scratch copy, one ``nbgrader autograde`` over every
submission below, one trick per submission; the resource cases (time, output, network) in a
second copy, graded in parallel (``test_hostile_resources.py``). Only the tricks aimed at the
course's own tests are graded on the course (ps00, the quickest to grade, in a third scratch
course: ``test_hostile_course_tests.py``): torch and the functions tests compare with rigged
(``torch.equal``, ``Tensor.__eq__``, ``pad_sequence``), the course package's own function handed
in, and a function that tries to print the hidden test cell calling it. The three share
``hostile_checks.py``; the tricks aimed at the boundary between the student's kernel and the tests'
kernel are ``test_grading_secrecy.py``'s. (Every assignment's round trip in
``tests/assignments/test_assignments.py`` meets most of them too, packed into its five hostile
submissions: a rigged kernel, a memory bomb, a process bomb, a kernel that kills itself, the
network, 200 MB of output, an endless loop, a 10-minute sleep that ignores the interrupt,
edited tests, answers that equal anything, a function that prints its calling test cell; the
tricks' code is shared, in ``hostile_tricks.py``.) Each hostile
submission pairs a known trick with implementations that fail every test, so any point it
earns is a point the trick stole. The honest submissions (the reference solution; with harmless
extra cells that plot, seed and silence warnings; with 5 MB of output; with a test cell copied
and pasted, its grade id and all) must keep full marks: the grader must not punish normal work.

The tricks, and what stops them:
- rig the kernel (blank or rewrite cells, drop asserts, swallow or hide errors, replace
  torch.equal / Tensor.__eq__ / isinstance, set a trace function): the test cells run in a kernel
  of their own, which the submission's code never reaches (``bertlab_grader.guarded_execute``);
  a rig that stops its kernel from serving the tests' calls fails them (``test_grading_secrecy.py``
  grades the tricks aimed at that boundary itself: the grader's modules replaced, forged answers);
- edit, re-weight or delete test cells, add a graded cell of your own: nbgrader restores test
  cells and their points from the gradebook (``OverwriteCells``, ``CheckCellMetadata``); a
  graded cell whose grade id the gradebook does not know makes nbgrader refuse the notebook
  (it scores 0), while a pasted copy of a known cell is harmless (``bertlab_grader.pasted_cells``
  keeps the last copy's metadata and makes the others ordinary cells);
- kill the kernel: the cells from that point score zero, those before keep their scores;
- hand in something that is not a notebook: nbgrader records zero and goes on
  with the other students;
- print the hidden tests (read the solution notebook, or the calling cell's source from
  IPython's history): the sandbox keeps the course out of sight, and a hidden test's source never
  enters the student's kernel;
- hand in the course package's own function (``from bertlab... import``): the grader reads the
  submitted cells (``bertlab_grader.answer_key``; the package ships none, but the grader does not
  rely on that);
- return an object whose ``==`` always says yes: what crosses back is plain data, and any other
  object is a handle whose comparisons are its own (on every assignment, in its round trip).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from hostile_checks import (
    ASSIGNMENT,
    COURSE,
    FIRST_TESTS,
    LAST_OF_FIRST_FUNCTION,
    POINTS,
    graded_output_text,
    hidden_tests_not_in_feedback,
    no_points_stolen,
)
from hostile_tricks import (
    MEMORY_BOMB,
    PROCESS_BOMB,
    SELF_KILL,
    copy_test_cell,
    edit_tests,
    flood,
    is_test,
    own_graded_cell,
    sandboxed,
    with_cell,
)

import course_fixture

pytestmark = pytest.mark.slow


# Implementations that fail every visible and hidden test of fx00.
WRONG = {
    "impl_word_lengths": "def word_lengths(words):\n    return [0]\n",
    "impl_count_vowels": "def count_vowels(word):\n    return -1\n",
}

# A cell inserted after the setup cell, before the student's functions. (The Python and IPython
# hooks, patched builtins and the grader's own modules replaced are test_grading_secrecy.py's.)
RIG = {
    "blank-cells": "get_ipython().input_transformers_cleanup.append(lambda lines: [])",
    "kill-kernel": "import os\nos._exit(0)",
    "print-solution-file": """
from pathlib import Path
for folder in [Path.cwd(), *Path.cwd().parents]:
    for path in sorted(folder.glob("solutions/*/*.ipynb")):
        print(path.read_text())
""",
}

# Need the sandbox (bubblewrap): an unsandboxed kernel really does write these files and kill
# the grader (and only the grader: this list runs only where the sandbox is on).
SANDBOXED_RIG = {
    "kill-the-grader": """
import os
import signal
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"nbgrader" in f.read():
                os.kill(int(pid), signal.SIGKILL)
    except OSError:
        pass
""",
    # A grader that forks each kernel from one warm process (bertlab_grader.sandbox.warm) must let
    # nothing of one kernel meet the next: this one leaves a daemon that keeps writing an IPython
    # startup file that blanks every cell (it would run before the kernel serves the tests), and
    # asks the zygote for a kernel of its own; the next student ("...-victim", wrong work) must score 0.
    "rig-the-next-kernel": """
import glob, json, os, socket, time
RIG = "get_ipython().input_transformers_cleanup.append(lambda lines: [])\\n"
def plant():
    for base in {os.environ.get("IPYTHONDIR", "/tmp/ipython"), "/tmp/ipython", os.path.expanduser("~/.ipython")}:
        try:
            os.makedirs(f"{base}/profile_default/startup", exist_ok=True)
            with open(f"{base}/profile_default/startup/00-rig.py", "w") as f:
                f.write(RIG)
        except OSError:
            pass
    for control in glob.glob("/tmp/bertlab-warm-*/control"):
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(control)
            argv = ["-m", "ipykernel_launcher", "-f", "x", "--IPKernelApp.exec_lines=" + json.dumps([RIG])]
            socket.send_fds(conn, [json.dumps({"argv": argv, "connection": {}, "env": {}, "cwd": "/tmp",
                                               "slot": "/tmp"}).encode() + b"\\n"], [0, 1, 2])
        except OSError:
            pass
plant()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(6000):
            plant()
            time.sleep(0.05)
    os._exit(0)
""",
    "write-course-files": """
import sqlite3
from pathlib import Path
for folder in [Path.cwd(), *Path.cwd().parents]:
    for db in folder.glob("autograder/gradebook.db"):
        with sqlite3.connect(db) as con:  # full marks and extra credit for everyone
            con.execute("UPDATE grade SET manual_score = 100, extra_credit = 100")
    for path in folder.glob("solutions/*/*.ipynb"):  # hidden tests that pass, for a regrade
        path.write_text(path.read_text().replace("assert ", "pass  # "))
""",
}

# Harmless extra cells an honest student might add.
HARMLESS = """
%matplotlib inline
import random
import warnings
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

warnings.filterwarnings("ignore")
np.random.seed(0)
random.seed(0)
plt.plot([1, 2, 3])
plt.show()
display({"note": "trying things"})
"""


def submissions(released, solution) -> dict:
    wrong = course_fixture.replace_solutions(released, WRONG)
    rigs = {**RIG, **(SANDBOXED_RIG if sandboxed() else {})}
    found = {f"rig-{name}": with_cell(wrong, code) for name, code in rigs.items()}
    if (
        "rig-the-next-kernel" in found
    ):  # graded right after it (nbgrader goes in order of student id)
        found["rig-the-next-kernel-victim"] = wrong

    # The student function itself prints the hidden test cell that calls it (on ps00 too).
    found["print-calling-cell"] = course_fixture.replace_solutions(
        released,
        {
            **WRONG,
            "impl_count_vowels": "def count_vowels(word):\n    print(get_ipython().user_ns['In'][-1])\n    return -1\n",
        },
    )

    # (Answers that equal anything, a plain object or a tensor: every assignment's round trip.)
    found["edit-tests"] = edit_tests(wrong)
    assert wrong.cells[1].metadata.nbgrader["grade_id"] == "setup"
    found["own-graded-cell"] = own_graded_cell(wrong, at=2)  # right after the setup cell

    deleted = nbformat.from_dict(wrong)
    deleted.cells = [c for c in deleted.cells if not is_test(c)]
    found["delete-tests"] = deleted

    # Honest work on the first function, then a kernel that dies: only the later cells are lost.
    found["honest-then-dies"] = with_cell(solution, SELF_KILL, after=LAST_OF_FIRST_FUNCTION)
    # Honest work on the first function, then a bomb: the grader stops the kernel at its cap
    # (bertlab_grader.sandbox.limits: 3 GB, 64 processes), and only the later cells are lost.
    found["honest-then-memory-bomb"] = with_cell(
        solution, MEMORY_BOMB, after=LAST_OF_FIRST_FUNCTION
    )
    found["honest-then-process-bomb"] = with_cell(
        solution, PROCESS_BOMB, after=LAST_OF_FIRST_FUNCTION
    )
    # Honest work that prints 5 MB on one line (nbgrader's LimitOutput counts lines): kept to the cap.
    found["honest-floods-output"] = with_cell(solution, flood(5_000_000))
    found["honest"] = solution
    found["honest-extras"] = with_cell(solution, HARMLESS)
    # An honest slip: a test cell copied and pasted (its grade id with it) costs nothing.
    found["honest-copied-a-test-cell"] = copy_test_cell(solution, "test_word_lengths")
    return found


def course_files(course: Path) -> dict[str, str]:
    """Every file of the course's source (solutions with hidden tests) and release, by content."""
    return {
        str(p.relative_to(course)): p.read_text()
        for folder in ("solutions", "exercises")
        for p in sorted((course / folder).rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = course_fixture.make_course(tmp_path_factory.mktemp("hostile"), repo=COURSE)
    released = nbformat.read(course_fixture.release(course, ASSIGNMENT), as_version=4)
    names = []
    for student, notebook in submissions(
        released, course_fixture.solution_notebook(ASSIGNMENT, COURSE)
    ).items():
        course_fixture.submit(course, ASSIGNMENT, student, notebook)
        names.append(student)
    broken = course / "autograder" / "submitted" / "not-a-notebook" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text("print('this is not a notebook')")
    names.append("not-a-notebook")

    # nbgrader grades everyone it can and exits 1 naming the submissions it could not run.
    files = course_files(course)
    with pytest.raises(RuntimeError) as failed:
        course_fixture.autograde(course, ASSIGNMENT)
    unrunnable = set(re.findall(r"for student '([^']+)'", str(failed.value)))
    changed = course_files(course) != files
    course_fixture.feedback(course, ASSIGNMENT)
    return course, names, unrunnable, changed


def test_course_files_stay_as_they_were(course):
    if not sandboxed():
        pytest.skip("no bwrap (apt install bubblewrap): the autograder runs kernels unsandboxed")
    _, names, _, changed = course
    assert "rig-write-course-files" in names
    assert not changed, "a submission changed the course's solutions or release"


def test_only_broken_notebooks_stop_the_grader(course):
    _, _, unrunnable, _ = course
    assert "not-a-notebook" in unrunnable, unrunnable
    assert "own-graded-cell" in unrunnable, (
        unrunnable
    )  # nbgrader refuses a graded cell it does not know
    assert not {"rig-kill-kernel", "honest-then-dies"} & unrunnable, (
        unrunnable
    )  # a dead kernel costs cells only
    assert not {s for s in unrunnable if s.startswith("honest")}, unrunnable


def test_a_kernel_that_dies_costs_only_the_cells_after(course):
    path, _, _, _ = course
    cells = course_fixture.scores(path, ASSIGNMENT, "honest-then-dies")
    kept = {k: c.score for k, c in cells.items() if c.score}
    assert kept == {k: cells[k].max_score for k in FIRST_TESTS}, cells
    html = (
        path / "autograder" / "feedback" / "honest-then-dies" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text()
    assert (
        "kernel died while running this cell" in html
        and "not run: the submission's kernel died" in html
    )


@pytest.mark.parametrize(
    "student, cap",
    [
        ("honest-then-memory-bomb", "over the memory cap"),
        ("honest-then-process-bomb", "processes, more than the cap"),
    ],
)
def test_a_kernel_over_its_cap_is_stopped_and_costs_only_the_cells_after(course, student, cap):
    path, _, unrunnable, _ = course
    assert student not in unrunnable
    cells = course_fixture.scores(path, ASSIGNMENT, student)
    kept = {k for k, c in cells.items() if c.score}
    assert kept == FIRST_TESTS, cells
    html = (
        path / "autograder" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text()
    assert "the grader stopped it" in html and cap in html


def test_the_report_names_who_needs_a_look(course, tmp_path):
    from bertlab_grader import grade_report

    path, names, _, _ = course
    rows = {r["student"]: r for r in grade_report.report(path, ASSIGNMENT)}
    assert set(rows) == set(names), set(names) ^ set(rows)
    assert rows["honest"]["flags"] == "" and rows["honest"]["score"] == rows["honest"]["max_score"]
    # a kernel that blanks every cell it runs blanks the grader's request to serve the tests too
    assert "did not serve the tests" in rows["rig-blank-cells"]["flags"]
    assert "kernel died" in rows["honest-then-dies"]["flags"]
    assert "output cut" in rows["honest-floods-output"]["flags"]
    assert "not graded" in rows["not-a-notebook"]["flags"]
    csv_path, json_path = grade_report.write(list(rows.values()), tmp_path, ASSIGNMENT)
    assert len(csv_path.read_text().splitlines()) == len(rows) + 1 and json_path.exists()


def test_output_is_capped_in_bytes(course):
    path, _, _, _ = course
    autograded = (
        path
        / "autograder"
        / "autograded"
        / "honest-floods-output"
        / ASSIGNMENT
        / f"{ASSIGNMENT}.ipynb"
    )
    assert autograded.stat().st_size < 1_500_000, (
        autograded.stat().st_size
    )  # the cap is 1 MB of output
    assert "the grader cut the output here" in autograded.read_text()


@pytest.mark.parametrize(
    "student", ["honest", "honest-extras", "honest-floods-output", "honest-copied-a-test-cell"]
)
def test_honest_work_keeps_full_marks(course, student):
    path, _, _, _ = course
    cells = course_fixture.scores(path, ASSIGNMENT, student)
    assert sum(c.score for c in cells.values()) == sum(c.max_score for c in cells.values()) > 0, (
        cells
    )


def test_hostile_submissions_score_zero(course):
    path, names, _, _ = course
    no_points_stolen(path, ASSIGNMENT, names, FIRST_TESTS, POINTS)


def test_no_extra_credit_or_manual_scores_appear(course):
    from nbgrader.api import Grade, Gradebook

    if not sandboxed():
        pytest.skip("no bwrap (apt install bubblewrap): the autograder runs kernels unsandboxed")
    path, _, _, _ = course
    with Gradebook("sqlite:///" + str(path / "autograder" / "gradebook.db")) as gradebook:
        grades = gradebook.db.query(Grade).all()
        rigged = [
            (g.student.id, g.name, g.manual_score, g.extra_credit)
            for g in grades
            if g.manual_score is not None or g.extra_credit
        ]
    assert grades and not rigged, f"the gradebook was written by a submission: {rigged[:3]}"


def test_a_kernel_that_does_not_serve_the_tests_is_named_in_the_feedback(course):
    path, _, _, _ = course
    html = (
        path / "autograder" / "feedback" / "rig-blank-cells" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text()
    assert "SubmissionError" in html and "does not serve the tests" in html


def test_feedback_quotes_no_hidden_test(course):
    path, _, _, _ = course
    hidden_tests_not_in_feedback(
        path,
        ASSIGNMENT,
        course_fixture.solution_notebook(ASSIGNMENT, COURSE),
        ("rig-print-solution-file", "print-calling-cell", "honest"),
    )
    # The hidden tests' source never entered the student's kernel: the function printed its own
    # notebook's last cell, and even the instructor's graded copy holds no hidden test.
    for student in ("rig-print-solution-file", "print-calling-cell"):
        assert "BEGIN HIDDEN TESTS" not in graded_output_text(path, ASSIGNMENT, student), student

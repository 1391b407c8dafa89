"""Grading secrecy on the instructor's own path: a submission sees its own folder and nothing else.

The course lies where an instructor keeps it, in a home folder (not under ``/tmp``, which the
sandbox replaces, so a course there would hide itself), with its ``.venv`` inside it as
``make install`` makes it, and a backup of the answer key elsewhere in that home folder. It is
graded through the instructor's own commands (``make release``, ``make autograde``, ``make
feedback``: the course's Makefile, run in the course with its ``.venv``), in parallel. Each
hostile submission pairs one way to the answer key, the gradebook, the kernel the tests call into
(``hostile_tricks.BOUNDARY``: the grader's own modules replaced, wrapped or reloaded, every Python
and IPython hook, a thread that meddles while the tests run, forged answers, no answer) or a
resource with work that fails every test, so any point it earns is a point it stole; honest
students graded beside them keep full marks, and no feedback holds a hidden test or a hidden input
in any encoding.

The course is the grader's test course (``tests/grader_course``: two functions in plain Python),
so the batch grades in about a minute; the same sandbox grades every assignment
(``tests/assignments/test_assignments.py``).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

import course_fixture
from hostile_checks import graded_output_text
from hostile_tricks import BOUNDARY, PYTHON_HOOKS, sandboxed, short_calls, with_cell

# In make check's tier as well as make test's (about a minute, beside the other tests' workers).
pytestmark = [pytest.mark.xdist_group("grading-secrecy")]

ASSIGNMENT = "fx00-tiny"
COURSE = course_fixture.GRADER_COURSE
FIRST_TESTS = {"test_word_lengths", "test_word_lengths_hidden"}
AFTER_FIRST = "test_word_lengths_hidden"  # the first function's last test cell
WRONG = {
    "impl_word_lengths": "def word_lengths(words):\n    return [0]\n",
    "impl_count_vowels": "def count_vowels(word):\n    return -1\n",
}

# Finds reference solutions under the given places (three folders deep) and runs their function
# definitions, which then replace the wrong ones: full marks, if a key is in sight.
USE_THE_KEY = """
import json, os, sys
from pathlib import Path

def _keys(places):
    for place in map(Path, places):
        for pattern in ("solutions/*/*.ipynb", "*/solutions/*/*.ipynb", "*/*/solutions/*/*.ipynb"):
            try:
                yield from sorted(place.glob(pattern))
            except OSError:
                pass

for _path in _keys(PLACES):
    try:
        _cells = json.loads(_path.read_text())["cells"]
    except (OSError, ValueError):
        continue
    for _cell in _cells:
        if _cell["cell_type"] == "code" and "".join(_cell["source"]).lstrip().startswith("def "):
            exec("".join(_cell["source"]), globals())
    print("found the key:", _path)
    break
"""

PLACES = {
    # the .venv lies in the course: its parent is the repository
    "key-via-sys-prefix": "[Path(sys.prefix).parent, *Path(sys.prefix).parents]",
    "key-via-home-folders": "[Path.home(), os.environ.get('HOME', '/'), '/root', *Path('/home').glob('*')]",
    "key-via-srv-opt": "['/srv', '/opt', '/mnt', '/var', '/data', '/work', '/']",
    "key-via-mountinfo": (
        "[q for line in open('/proc/self/mountinfo') for p in line.split()[3:5] "
        "for q in [Path(p), *Path(p).parents]]"
    ),
    "key-via-environment": (
        "[q for v in os.environ.values() for p in v.split(os.pathsep) if p.startswith('/') "
        "for q in [Path(p), *Path(p).parents]]"
    ),
    "key-via-the-graders-proc": "[p for p in Path('/proc').glob('*/cwd')] + [p for p in Path('/proc').glob('*/root')]",
}

# The attack measured on the instructor's path: read the key through sys.prefix, then re-run it
# from an IPython callback after every cell, so it replaces whatever the notebook defines.
RERUN_THE_KEY = """
import json, sys
from pathlib import Path
_key = [c for p in sorted(Path(sys.prefix).parent.glob("solutions/*/*.ipynb"))
        for c in json.loads(p.read_text())["cells"] if c["cell_type"] == "code"
        and "".join(c["source"]).lstrip().startswith("def ")]
def _rerun(result=None):
    for c in _key:
        exec("".join(c["source"]), get_ipython().user_ns)
get_ipython().events.register("post_run_cell", _rerun)
"""

WRITE_THE_GRADEBOOK = """
import sqlite3, sys
from pathlib import Path
for _db in [Path(sys.prefix).parent / "autograder" / "gradebook.db", *Path.home().glob("*/autograder/gradebook.db")]:
    try:
        with sqlite3.connect(_db) as _con:
            print(_con.execute("SELECT count(*) FROM grade").fetchone())
            _con.execute("UPDATE grade SET manual_score = 100, extra_credit = 100")
    except Exception as exc:
        print("no gradebook:", type(exc).__name__)
"""

# The functions keep what the hidden tests pass them, and give it back: printed then, raised as an
# error's message, printed again by a later cell, reversed and base64-encoded; and they try to
# print the calling test cell's source (IPython's In), which never reaches this kernel.
LEAKY = """
import base64
_seen = []
def count_vowels(word):  # right: it deserves its points
    _seen.append(word)
    print("count_vowels got", word, get_ipython().user_ns["In"][-1])
    return sum(letter in "aeiou" for letter in word)

def word_lengths(words):  # wrong on the hidden words (they hold x, y or z): its message holds them
    if any(letter in "xyz" for word in words for letter in word):
        raise ValueError(f"my inputs: {words} {get_ipython().user_ns['In'][-1]}")
    return [len(word) for word in words]
"""
LEAK_LATER = (
    "print(_seen, [base64.b64encode(s.encode()).decode()[::-1] for s in _seen])\n"
    "print(base64.b64encode(str(_seen).encode()).decode())"
)
#: count_vowels's hidden inputs (tests/grader_course/make_notebook.py) that no message of its tests
#: shows, as a string holds them ("education" alone is also a CSS class of the feedback's page).
HIDDEN_INPUTS = ("strengths", "'education'")

MEMORY_6_GB = "_blocks = bytearray(6 * 2**30)  # 6 GB, touched"
FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
FILE_2_GB = """
with open("big.bin", "wb") as _f:
    for _ in range(2048):  # 2 GB, 1 MB at a time
        _f.write(b"x" * 2**20)
"""

HARMLESS = """
%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display
np.random.seed(0)
plt.plot([1, 2, 3])
plt.show()
display({"note": "trying things"})
"""


def submissions(released, solution) -> dict:
    wrong = course_fixture.replace_solutions(released, WRONG)
    found = {
        name: course_fixture.replace_solutions(
            released,
            {
                **WRONG,
                "impl_count_vowels": WRONG["impl_count_vowels"]
                + f"PLACES = {places}\n"
                + USE_THE_KEY,
            },
        )
        for name, places in PLACES.items()
    }
    found["key-rerun-from-a-callback"] = with_cell(wrong, RERUN_THE_KEY)
    found["write-the-gradebook"] = with_cell(wrong, WRITE_THE_GRADEBOOK)
    found.update({name: with_cell(wrong, code) for name, code in BOUNDARY.items()})
    leaky = course_fixture.replace_solutions(
        released, {"impl_word_lengths": LEAKY, "impl_count_vowels": ""}
    )
    found["leaks-hidden-inputs"] = with_cell(leaky, LEAK_LATER, after="test_count_vowels_hidden")
    found["honest-with-python-hooks"] = with_cell(solution, PYTHON_HOOKS)
    found["honest-then-6-gb"] = with_cell(solution, MEMORY_6_GB, after=AFTER_FIRST)
    found["honest-then-fork-bomb"] = with_cell(solution, FORK_BOMB, after=AFTER_FIRST)
    found["honest-writes-2-gb"] = with_cell(solution, FILE_2_GB, after=AFTER_FIRST)
    found["honest"] = solution
    found["honest-plots"] = with_cell(solution, HARMLESS)
    return found


def make(course: Path, env: dict, *targets: str) -> subprocess.CompletedProcess:
    """The instructor's make target in the course, its .venv taken as installed (``-o install``)."""
    return subprocess.run(
        ["make", "-o", "install", *targets, f"ASSIGNMENT={ASSIGNMENT}"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def graded():
    if not sandboxed():
        pytest.skip(
            "no working bwrap (apt install bubblewrap): the grader runs kernels unsandboxed here"
        )
    base = Path(tempfile.mkdtemp(prefix=".bertlab-home-", dir=Path.home()))
    try:
        home = base / "instructor"
        course = course_fixture.make_course(home / "course", repo=COURSE)
        short_calls(course)  # the tricks that never answer, graded in seconds
        shutil.copy(course_fixture.REPO / "Makefile", course / "Makefile")
        shutil.copytree(
            course / "solutions", home / "backup" / "solutions"
        )  # the key, elsewhere in the home
        # the course's .venv, inside it as `make install` makes it (this environment's packages seen through it)
        assert course_fixture.venv_over_this_one(sys.executable, course / ".venv")
        for script in (
            Path(sys.prefix) / "bin"
        ).iterdir():  # its commands (nbgrader runs alembic by name)
            if not (course / ".venv" / "bin" / script.name).exists():
                (course / ".venv" / "bin" / script.name).symlink_to(script)
        (course / ".venv" / "share").symlink_to(
            Path(sys.prefix) / "share"
        )  # jupyter's data: nbconvert's templates
        # the install stamp, which names the locks installed (this environment's)
        shutil.copy(Path(sys.prefix) / ".installed", course / ".venv" / ".installed")
        env = {**os.environ, "HOME": str(home)}
        env.pop("BERTLAB_GRADEBOOK_URL", None)
        released = make(course, env, "release")
        assert released.returncode == 0, released.stdout + released.stderr
        notebook = nbformat.read(
            course / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4
        )
        found = submissions(notebook, course_fixture.solution_notebook(ASSIGNMENT, COURSE))
        for student, submission in found.items():
            course_fixture.submit(course, ASSIGNMENT, student, submission)
        graded = make(course, env, "autograde", "WORKERS=2")
        look = re.findall(r"to look at: (.*)", graded.stderr)
        assert look, graded.stdout + graded.stderr  # make fails, naming the hostile students
        honest = {"honest", "honest-plots", "honest-writes-2-gb", "honest-with-python-hooks"}
        assert not honest & set(look[0].split(", ")), graded.stdout
        done = make(course, env, "feedback")
        assert done.returncode == 0, done.stdout + done.stderr
        yield course, sorted(found), graded
    finally:
        if not os.environ.get("BERTLAB_KEEP_TEST_COURSE"):
            shutil.rmtree(base, ignore_errors=True)


def total(course: Path, student: str) -> tuple[float, float]:
    cells = course_fixture.scores(course, ASSIGNMENT, student)
    return sum(c.score for c in cells.values()), sum(c.max_score for c in cells.values())


def outputs(course: Path, student: str) -> str:
    """Everything the graded notebook (the instructor's copy) shows of a student's cells."""
    return graded_output_text(course, ASSIGNMENT, student)


def feedback_html(course: Path, student: str) -> str:
    return (
        course / "autograder" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    ).read_text()


@pytest.mark.parametrize("student", [*PLACES, "key-rerun-from-a-callback", "write-the-gradebook"])
def test_the_answer_key_and_the_gradebook_are_out_of_sight(graded, student):
    course, _, _ = graded
    assert total(course, student)[0] == 0, (
        student,
        course_fixture.scores(course, ASSIGNMENT, student),
    )
    assert "found the key" not in outputs(course, student), outputs(course, student)[-2000:]


def test_the_gradebook_was_neither_read_nor_written(graded):
    from nbgrader.api import Grade, Gradebook

    course, _, _ = graded
    assert "no gradebook" in outputs(course, "write-the-gradebook")
    with Gradebook("sqlite:///" + str(course / "autograder" / "gradebook.db")) as gradebook:
        rigged = [
            g.student.id
            for g in gradebook.db.query(Grade).all()
            if g.manual_score is not None or g.extra_credit
        ]
    assert not rigged, rigged


@pytest.mark.parametrize("student", sorted(BOUNDARY))
def test_nothing_the_students_kernel_does_earns_a_point(graded, student):
    """Its test cells run in a kernel the submission never touches: what its own kernel does to the
    grader's modules, to the builtins, to its hooks, or to the answers it sends steals nothing."""
    course, _, _ = graded
    assert total(course, student)[0] == 0, course_fixture.scores(course, ASSIGNMENT, student)


def test_a_hook_no_longer_costs_an_honest_student_a_point(graded):
    course, _, _ = graded
    score, points = total(course, "honest-with-python-hooks")
    assert score == points > 0, course_fixture.scores(
        course, ASSIGNMENT, "honest-with-python-hooks"
    )


def test_feedback_holds_no_hidden_test_and_no_hidden_input_in_any_encoding(graded):
    """The leaky submission scores what its work deserves (count_vowels right, word_lengths wrong
    on the hidden words); what it printed while the hidden tests called it is kept for the
    instructor, and neither that nor its error's message reaches the feedback. No submission ever
    saw a hidden test's source: not even the instructor's graded copy holds it."""
    from bertlab_grader.feedback_redaction import PRINTED_KEY

    course, students, _ = graded
    solution = course_fixture.solution_notebook(ASSIGNMENT, COURSE)
    hidden = [
        line for line in course_fixture.marked_lines(solution, "HIDDEN TESTS") if len(line) >= 20
    ]
    assert hidden
    secret = list(HIDDEN_INPUTS)  # (word_lengths's hidden words are in its own test's message)
    assert total(course, "leaks-hidden-inputs") == (4, 6), course_fixture.scores(
        course, ASSIGNMENT, "leaks-hidden-inputs"
    )
    path = (
        course
        / "autograder"
        / "autograded"
        / "leaks-hidden-inputs"
        / ASSIGNMENT
        / f"{ASSIGNMENT}.ipynb"
    )
    kept = [c.metadata.get(PRINTED_KEY, "") for c in nbformat.read(path, as_version=4).cells]
    assert any("strengths" in text for text in kept), (
        "the instructor's copy keeps what the function printed"
    )
    for student in students:
        assert not [line for line in hidden if line in outputs(course, student)], (
            f"{student}: a hidden test's source"
        )
        text = course_fixture.readable(
            course / "autograder" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        )
        decoded = [text]
        for token in re.findall(r"[A-Za-z0-9+/=]{16,}", text + text[::-1]):
            for candidate in (token, token[::-1]):
                try:
                    decoded.append(
                        base64.b64decode(candidate + "=" * (-len(candidate) % 4)).decode(
                            errors="ignore"
                        )
                    )
                except ValueError:
                    pass
        leaked = [item for item in [*hidden, *secret] if any(item in d for d in decoded)]
        assert not leaked, f"{student}: the feedback shows hidden tests or inputs {leaked[:2]}"


@pytest.mark.parametrize(
    "student, said",
    [
        ("honest-then-6-gb", "over the memory cap"),
        ("honest-then-fork-bomb", "processes, more than the cap"),
    ],
)
def test_a_bomb_is_stopped_in_its_own_cell(graded, student, said):
    course, _, _ = graded
    kept = {k for k, c in course_fixture.scores(course, ASSIGNMENT, student).items() if c.score}
    assert kept == FIRST_TESTS, "the cells before keep their scores, those after score 0"
    assert said in feedback_html(course, student)


def test_a_2_gb_file_fails_in_its_own_cell_and_costs_nothing_else(graded):
    course, _, _ = graded
    score, points = total(course, "honest-writes-2-gb")
    assert score == points > 0
    assert re.search(r"OSError: \[Errno (27|28)\]", outputs(course, "honest-writes-2-gb"))


@pytest.mark.parametrize("student", ["honest", "honest-plots"])
def test_honest_students_beside_them_keep_full_marks(graded, student):
    course, _, _ = graded
    score, points = total(course, student)
    assert score == points > 0, course_fixture.scores(course, ASSIGNMENT, student)


def test_the_report_says_which_caps_are_hard(graded):
    _, _, done = graded
    assert "caps:" in done.stdout and ("hard" in done.stdout or "polled" in done.stdout), (
        done.stdout[:2000]
    )

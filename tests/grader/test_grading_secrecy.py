"""Grading secrecy on the instructor's own path: a submission sees its own folder and nothing else.

The course lies where an instructor keeps it, in a home folder (not under ``/tmp``, which the
sandbox replaces, so a course there would hide itself), with its ``.venv`` inside it as
``make install`` makes it, and a backup of the answer key elsewhere in that home folder. It is
graded through the instructor's own commands (``make release``, ``make autograde``, ``make
feedback``: the course's Makefile, run in the course with its ``.venv``), in parallel. Each
hostile submission pairs one way to the answer key, the gradebook, a hook or a resource with
work that fails every test, so any point it earns is a point it stole; honest students graded
beside them keep full marks, and no feedback holds a hidden test in any encoding.

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
from hostile_tricks import sandboxed, with_cell

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

# Each registers a hook through which code runs between cells; with honest work otherwise, every
# test cell after it scores 0 (the hook is the rigging) and the feedback says why.
HOOKS = {
    "hook-post-run-cell": "get_ipython().events.register('post_run_cell', lambda result: None)",
    "hook-pre-run-cell": "get_ipython().events.register('pre_run_cell', lambda info: None)",
    "hook-pre-execute": "get_ipython().events.register('pre_execute', lambda: None)",
    "hook-post-execute": "get_ipython().events.register('post_execute', lambda: None)",
    "hook-display-formatter": (
        "get_ipython().display_formatter.formatters['text/plain']"
        ".for_type(int, lambda obj, p, cycle: p.text('1'))"
    ),
    "hook-import": (
        "import sys\nclass _Finder:\n    def find_spec(self, *args):\n        return None\n"
        "sys.meta_path.insert(0, _Finder())"
    ),
    "hook-audit": "import sys\nsys.addaudithook(lambda event, args: None)",
    "hook-signal-timer": (
        "import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)\n"
        "signal.setitimer(signal.ITIMER_REAL, 600)"
    ),
    "hook-shell-initialized": "get_ipython().events.register('shell_initialized', lambda ip: None)",
    "hook-path-hooks": "import sys\nsys.path_hooks.insert(0, lambda path: None)",
    # disguised as a library's: code compiled under an installed file's name, an installed
    # method bound to source, a builtin bound to source by hand
    "hook-under-an-installed-name": (
        "import os, sys\n_site = [p for p in sys.path if p.endswith('site-packages')][0]\n_ns = {}\n"
        "exec(compile('def _again(*a): pass', os.path.join(_site, 'IPython', 'x.py'), 'exec'), _ns)\n"
        "get_ipython().events.register('post_run_cell', _ns['_again'])"
    ),
    "hook-installed-method-bound-to-source": (
        "import functools\nget_ipython().events.register('pre_execute', functools.partial(get_ipython().ex, '_x = 1'))"
    ),
    "hook-exec-bound-by-hand": (
        "import types\nget_ipython().events.register('pre_execute', types.MethodType(exec, '_x = 1'))"
    ),
}

# The function a hidden test calls prints that test's source base64-encoded, and keeps it for a
# later cell, which prints it again, reversed.
LEAK_BASE64 = """
import base64
_leaked = []
def count_vowels(word):
    source = get_ipython().user_ns["In"][-1]
    _leaked.append(source)
    print(base64.b64encode(source.encode()).decode())
    return -1
"""
# ... or raises it as an error's message, which the feedback would show.
RAISE_BASE64 = """
import base64
def count_vowels(word):
    raise {error}(base64.b64encode(get_ipython().user_ns["In"][-1].encode()).decode())
"""
LEAK_LATER = (
    "print([base64.b64encode(s.encode()).decode()[::-1] for s in _leaked])\n"
    "print(base64.b64encode(str(_leaked).encode()).decode())"
)

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
    found.update({name: with_cell(solution, code) for name, code in HOOKS.items()})
    leak = course_fixture.replace_solutions(released, {**WRONG, "impl_count_vowels": LEAK_BASE64})
    found["print-tests-base64"] = with_cell(leak, LEAK_LATER, after="test_count_vowels_hidden")
    for error in ("ValueError", "AssertionError"):
        found[f"raise-tests-base64-{error}"] = course_fixture.replace_solutions(
            released, {**WRONG, "impl_count_vowels": RAISE_BASE64.format(error=error)}
        )
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
        assert not {"honest", "honest-plots", "honest-writes-2-gb"} & set(look[0].split(", ")), (
            graded.stdout
        )
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
    path = course / "autograder" / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    return "\n".join(
        str(o.get("text", "")) + str(o.get("ename", "")) + ": " + str(o.get("evalue", ""))
        for c in nbformat.read(path, as_version=4).cells
        for o in c.get("outputs", [])
    )


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


@pytest.mark.parametrize("student", sorted(HOOKS))
def test_a_hook_counts_as_rigging(graded, student):
    course, _, _ = graded
    assert total(course, student)[0] == 0, course_fixture.scores(course, ASSIGNMENT, student)
    assert "GradingIntegrityError" in feedback_html(course, student)


def test_feedback_holds_no_hidden_test_in_any_encoding(graded):
    course, students, _ = graded
    solution = course_fixture.solution_notebook(ASSIGNMENT, COURSE)
    hidden = [
        line for line in course_fixture.marked_lines(solution, "HIDDEN TESTS") if len(line) >= 20
    ]
    assert hidden
    for trick in (
        "print-tests-base64",
        "raise-tests-base64-ValueError",
        "raise-tests-base64-AssertionError",
    ):
        assert base64.b64encode(b"# The grader runs hidden").decode()[:20] in outputs(
            course, trick
        ), f"{trick}: the trick carried the tests out (in the instructor's graded copy)"
    for student in students:
        text = course_fixture.readable(
            course / "autograder" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        )
        decoded = [text]
        for token in re.findall(r"[A-Za-z0-9+/=]{24,}", text + text[::-1]):
            for candidate in (token, token[::-1]):
                try:
                    decoded.append(
                        base64.b64decode(candidate + "=" * (-len(candidate) % 4)).decode(
                            errors="ignore"
                        )
                    )
                except ValueError:
                    pass
        leaked = [line for line in hidden if any(line in d for d in decoded)]
        assert not leaked, f"{student}: the feedback shows hidden-test lines {leaked[:2]}"


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

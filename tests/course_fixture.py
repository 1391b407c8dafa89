"""The course checkout as the tests see it, and the nbgrader round trip in a scratch copy of it.

Mirrors nbgrader's own app tests (``nbgrader/tests/apps/test_nbgrader_autograde.py``): generate
an assignment, put notebooks in ``autograder/submitted/<student>/<assignment>/``, autograde
them, and read each test cell's score from the gradebook. Used by the assignment tests
(``tests/assignments/test_assignments.py``), the hostile and parallel grader tests and ``make bench``
(seconds per submission); the site and browser tests read the solutions' hidden tests from here.
The grader's own tests grade ``GRADER_COURSE`` instead (``tests/grader_course``: one tiny
assignment that loads no model, as nbgrader's tests use ``nbgrader/tests/apps/files/*.ipynb``);
only the round trips, and the hostile cases that need the course's own tests, grade the course.

Everything runs with the course's own config (``autograder/nbgrader_config.py``): the round trips
through the commands ``make autograde``, ``make feedback`` and ``make grades`` run
(:func:`grade_as_instructor`: the parallel grader, its report and ``export.py``'s CSV), the other
tests through nbgrader's own command line. The grader's package (``bertlab_grader``) assumes no
checkout: this harness is the tests' own.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from bertlab_grader import layout
from bertlab_grader.nbgrader_course import nbgrader, nbgrader_env, scratch_copy

REPO = Path(__file__).resolve().parents[1]  # tests/course_fixture.py -> the repository
#: The grader's test course: one tiny assignment in plain Python (``fx00-tiny``) that loads no
#: model, laid out as the course is; pass it as ``repo`` to grade it instead of the course.
GRADER_COURSE = REPO / "tests" / "grader_course"


def toc_files(repo: Path = REPO) -> list[str]:
    """The files of the book's pages, in ``_toc.yml``'s reading order (``book/intro``, ...): the
    root, then each part's chapters."""
    import yaml

    toc = yaml.safe_load((repo / "_toc.yml").read_text())
    chapters = [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])]
    return [toc["root"], *chapters]


def assignments(repo: Path = REPO) -> list[str]:
    """Ids of every assignment: the folders ``solutions/psNN-slug`` (``fxNN-slug`` in the
    grader's test course)."""
    prefix = "fx" if Path(repo) == GRADER_COURSE else "ps"
    return sorted(p.name for p in (repo / "solutions").glob(f"{prefix}*") if p.is_dir())


def notebook_name(assignment: str, repo: Path = REPO) -> str:
    """The one notebook of an assignment (``solutions/<id>/<id>.ipynb``)."""
    notebooks = sorted((repo / "solutions" / assignment).glob("*.ipynb"))
    if len(notebooks) != 1:
        raise ValueError(
            f"{assignment}: expected one notebook, found {[p.name for p in notebooks]}"
        )
    return notebooks[0].stem


def solution_notebook(assignment: str, repo: Path = REPO) -> nbformat.NotebookNode:
    """The reference solution of an assignment, hidden tests included (never publish it)."""
    name = notebook_name(assignment, repo)
    return nbformat.read(repo / "solutions" / assignment / f"{name}.ipynb", as_version=4)


def make_course(dest: Path, repo: Path = REPO) -> Path:
    """A scratch course: the repo's nbgrader config and solutions, nothing graded yet
    (``repo=GRADER_COURSE``: the grader's test course's)."""
    return scratch_copy(repo, dest)


def venv_over_this_one(python: str, dest: Path) -> Path | None:
    """A venv at ``dest`` made by ``python`` (no pip) whose ``.pth`` adds this environment's
    site-packages, so it imports everything installed here without installing anything: a course's
    ``.venv`` inside a home folder (tests/grader/test_grading_secrecy.py), or one a student user can run
    (tests/grader/test_hub_exchange.py). Returns its site-packages, or None if ``python`` made no venv."""
    made = subprocess.run(
        [python, "-m", "venv", "--without-pip", str(dest)], capture_output=True, text=True
    )
    if made.returncode:
        return None
    site = next((Path(dest) / "lib").glob("python3*/site-packages"))
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "_bertlab_parent.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in ours)
    )
    return site


def release(course: Path, assignment: str) -> Path:
    """``nbgrader generate_assignment``; returns the released (student) notebook."""
    nbgrader(course, "generate_assignment", assignment, "--force")
    return course / "exercises" / assignment / f"{notebook_name(assignment, course)}.ipynb"


def replace_solutions(
    notebook: nbformat.NotebookNode, sources: dict[str, str]
) -> nbformat.NotebookNode:
    """A copy of ``notebook`` whose cells with these grade ids hold the given sources."""
    notebook = nbformat.from_dict(notebook)
    found = set()
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sources:
            cell.source = sources[grade_id]
            found.add(grade_id)
    missing = set(sources) - found
    if missing:
        raise KeyError(f"no cells with grade ids {sorted(missing)}")
    return notebook


def submit(course: Path, assignment: str, student: str, notebook: nbformat.NotebookNode) -> Path:
    """Place a student's notebook where ``nbgrader autograde`` looks for it."""
    folder = layout.submission(course, student, assignment)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{notebook_name(assignment, course)}.ipynb"
    nbformat.write(notebook, path)
    return path


def autograde(course: Path, assignment: str) -> None:
    """Grade every submission of ``assignment`` (nbgrader runs them one after another)."""
    nbgrader(course, "autograde", assignment, "--create", "--force")


def grader(
    course: Path, *args: str, allowed: tuple[int, ...] = (0,), env: dict | None = None
) -> subprocess.CompletedProcess:
    """``python -m bertlab_grader <args>`` from the course root, as the Makefile's targets run it
    (``env``: variables to set besides nbgrader's, such as ``BERTLAB_EXCHANGE``); raise with its
    output if it exits with a status not in ``allowed``."""
    cmd = [sys.executable, "-m", "bertlab_grader", *args]
    env = {**nbgrader_env(), **(env or {})}
    proc = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
    if proc.returncode not in allowed:
        raise RuntimeError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def grade_as_instructor(course: Path, assignment: str, workers: int = 1) -> list[dict]:
    """What ``make autograde``, ``make feedback`` and ``make grades`` run: the parallel grader
    (``workers`` at a time; 1 in the round trips, which already run one per core), its report,
    the feedback, and ``export.py``'s CSV files. Returns the report's rows
    (``autograder/reports/<assignment>.json``). The autograde exits 1 when a submission needs a
    look, as hostile ones do: the report says which."""
    grader(course, "autograde", assignment, "--workers", str(workers), allowed=(0, 1))
    grader(course, "feedback", assignment)
    grader(course, "export", assignment)
    return json.loads((course / layout.REPORTS / f"{assignment}.json").read_text())


@dataclass
class CellScore:
    grade_id: str
    score: float
    max_score: float


def scores(course: Path, assignment: str, student: str) -> dict[str, CellScore]:
    """Each graded cell's score for one student's autograded submission, by grade id."""
    from nbgrader.api import Gradebook

    with Gradebook(layout.gradebook_url(course)) as gradebook:
        submission = gradebook.find_submission_notebook(
            notebook_name(assignment, course), assignment, student
        )
        return {
            g.name: CellScore(g.name, float(g.score), float(g.max_score)) for g in submission.grades
        }


def feedback(course: Path, assignment: str, students: str = "*") -> Path:
    """``nbgrader generate_feedback`` for the students whose ids match the glob ``students``;
    returns the feedback folder of the assignment."""
    nbgrader(course, "generate_feedback", assignment, "--force", f"--student={students}")
    return course / layout.FEEDBACK


def export_grades(course: Path) -> Path:
    """``nbgrader export`` (its own CSV, every assignment) to ``autograder/grades/nbgrader.csv``."""
    out = Path(course) / layout.GRADES / "nbgrader.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbgrader(course, "export", f"--to={out}")
    return out


def marked_lines(solution: nbformat.NotebookNode, marker: str) -> list[str]:
    """Non-blank lines between ``### BEGIN <marker>`` and ``### END <marker>``.

    ``marker`` is ``"HIDDEN TESTS"`` or ``"SOLUTION"``: what must never reach a student.
    """
    begin, end, lines = f"### BEGIN {marker}", f"### END {marker}", []
    for cell in solution.cells:
        inside = False
        for line in cell.source.splitlines():
            if begin in line:
                inside = True
            elif end in line:
                inside = False
            elif inside and line.strip():
                lines.append(line.strip())
    return lines


def marked_pairs(solution: nbformat.NotebookNode, marker: str) -> list[str]:
    """Every two consecutive marked lines, joined by a newline: what a leak check looks for.

    One common line (``with torch.no_grad():``) may appear anywhere; two consecutive lines of
    a hidden test or a reference solution appearing together are a leak. Pairs of short lines
    (``pass`` then ``else:``) say nothing and are skipped: each line must have 12+ characters.
    """
    lines = marked_lines(solution, marker)
    return [f"{a}\n{b}" for a, b in zip(lines, lines[1:]) if min(len(a), len(b)) >= 12]


def readable(path: Path) -> str:
    """A published file as a reader sees it: HTML without its tags (syntax highlighting splits
    code into spans), every line stripped, so code can be matched line by line."""
    text = Path(path).read_text(errors="replace")
    if Path(path).suffix == ".html":
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return "\n".join(line.strip() for line in text.splitlines())

"""The nbgrader round trip in a scratch copy of the course: release, submit, autograde, feedback.

Mirrors nbgrader's own app tests (``nbgrader/tests/apps/test_nbgrader_autograde.py``): generate
an assignment, put notebooks in ``autograder/submitted/<student>/<assignment>/``, autograde
them, and read each test cell's score from the gradebook. Used by the assignment tests
(``tests/test_assignments.py``) and by ``make bench`` (seconds per submission).

Everything runs through nbgrader's own command line with the course's own config
(``autograder/nbgrader_config.py``), so the tests grade exactly as an instructor does.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from bertlab_grader import feedback_redaction, layout

REPO = Path(__file__).resolve().parents[1]  # bertlab_grader/grading.py -> the repository


def assignments(repo: Path = REPO) -> list[str]:
    """Ids of every assignment: the folders ``solutions/psNN-slug``."""
    return sorted(p.name for p in (repo / "solutions").glob("ps*") if p.is_dir())


def notebook_name(assignment: str, repo: Path = REPO) -> str:
    """The one notebook of an assignment (``solutions/<id>/<id>.ipynb``)."""
    notebooks = sorted((repo / "solutions" / assignment).glob("*.ipynb"))
    if len(notebooks) != 1:
        raise ValueError(f"{assignment}: expected one notebook, found {[p.name for p in notebooks]}")
    return notebooks[0].stem


def _env() -> dict:
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)  # nbgrader calls `alembic` by name
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    # One thread per kernel: nbgrader runs notebooks one after another, and two torch threads
    # fighting over a busy machine made small test cells many times slower.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def solution_notebook(assignment: str, repo: Path = REPO) -> nbformat.NotebookNode:
    """The reference solution of an assignment, hidden tests included (never publish it)."""
    name = notebook_name(assignment, repo)
    return nbformat.read(repo / "solutions" / assignment / f"{name}.ipynb", as_version=4)


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` from the course root; raise with its log if it fails."""
    cmd = [str(Path(sys.executable).parent / "nbgrader"), *args]
    proc = subprocess.run(cmd, cwd=course, env=_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def make_course(dest: Path, repo: Path = REPO) -> Path:
    """A scratch course: the repo's nbgrader config and solutions, nothing graded yet."""
    dest = Path(dest)
    (dest / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(repo / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copy(repo / "autograder" / "nbgrader_config.py", dest / "autograder" / "nbgrader_config.py")
    shutil.copytree(repo / "solutions", dest / "solutions", dirs_exist_ok=True)
    return dest


def nbgrader_api(course: Path):
    """nbgrader's own ``NbGraderAPI`` for the course at ``course``, with the course's config
    (what the grader's commands and workers grade with, in process)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(course) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{course} is not the course root (no nbgrader_config.py): run from the "
                                f"repository root, or pass --course")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def gradebook_snapshot(course: Path, assignment: str, scratch: Path) -> Path:
    """A SQLite gradebook that knows ``assignment``'s cells and hidden tests, for graders that
    work in scratch courses: the course's own file (after the release), or, for a gradebook on
    a server, a release made once into ``scratch``. Returns the file."""
    own = layout.sqlite_file(layout.gradebook_url(course))
    if own is not None:
        return own
    copy = make_course(Path(scratch) / "release", repo=Path(course))
    with layout.using_gradebook("sqlite:///" + str(copy / layout.GRADEBOOK)):
        result = nbgrader_api(copy).generate_assignment(assignment, force=True)
    if not result["success"]:
        raise RuntimeError(f"could not release {assignment} for the graders: {result.get('log')}")
    return copy / layout.GRADEBOOK


def release(course: Path, assignment: str) -> Path:
    """``nbgrader generate_assignment``; returns the released (student) notebook."""
    nbgrader(course, "generate_assignment", assignment, "--force")
    return course / "exercises" / assignment / f"{notebook_name(assignment, course)}.ipynb"


def replace_solutions(notebook: nbformat.NotebookNode, sources: dict[str, str]) -> nbformat.NotebookNode:
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
            g.name: CellScore(g.name, float(g.score), float(g.max_score))
            for g in submission.grades
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
    return feedback_redaction.lines_between(solution.cells, f"### BEGIN {marker}", f"### END {marker}")


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

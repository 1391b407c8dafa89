"""nbgrader on one course folder, as the grader's commands and worker processes run it.

- :func:`nbgrader_api`: nbgrader's own ``NbGraderAPI`` with the course's config
  (``nbgrader_config.py`` at its root), in process: what ``release`` and ``feedback`` call, and
  what every worker grades with;
- :func:`nbgrader`: nbgrader's command line, run from the course root (``collect`` hands an LMS
  zip to ``nbgrader zip_collect``);
- :func:`scratch_copy` and :func:`gradebook_snapshot`: a scratch course (the config and the
  sources, nothing graded) and a gradebook that knows an assignment's cells, for graders that
  grade apart from the course (:mod:`bertlab_grader.parallel`, :mod:`bertlab_grader.distributed`).

The course is any folder laid out as :mod:`bertlab_grader.layout` says; nothing here assumes it
is the checkout the grader came from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from bertlab_grader import layout


def nbgrader_env() -> dict:
    """The environment nbgrader and its kernels run in: this one, with the interpreter's bin folder
    first on PATH (nbgrader calls ``alembic`` by name) and one thread per kernel."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    # One thread per kernel: nbgrader runs notebooks one after another, and two torch threads
    # fighting over a busy machine made small test cells many times slower.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` from the course root; raise with its log if it fails."""
    cmd = [str(Path(sys.executable).parent / "nbgrader"), *args]
    proc = subprocess.run(cmd, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def nbgrader_api(course: Path):
    """nbgrader's own ``NbGraderAPI`` for the course at ``course``, with the course's config
    (what the grader's commands and workers grade with, in process)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(course) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(
            f"{course} is not the course root (no nbgrader_config.py): run from the "
            f"repository root, or pass --course"
        )
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def scratch_copy(course: Path, dest: Path) -> Path:
    """A scratch course at ``dest``: ``course``'s nbgrader config and sources, nothing graded yet."""
    course, dest = Path(course), Path(dest)
    (dest / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(course / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copy(
        course / "autograder" / "nbgrader_config.py", dest / "autograder" / "nbgrader_config.py"
    )
    shutil.copytree(course / layout.SOURCE, dest / layout.SOURCE, dirs_exist_ok=True)
    return dest


def gradebook_snapshot(course: Path, assignment: str, scratch: Path) -> Path:
    """A SQLite gradebook that knows ``assignment``'s cells and hidden tests, for graders that
    work in scratch courses: the course's own file (after the release), or, for a gradebook on
    a server, a release made once into ``scratch``. Returns the file."""
    own = layout.sqlite_file(layout.gradebook_url(course))
    if own is not None:
        return own
    copy = scratch_copy(course, Path(scratch) / "release")
    with layout.using_gradebook("sqlite:///" + str(copy / layout.GRADEBOOK)):
        result = nbgrader_api(copy).generate_assignment(assignment, force=True)
    if not result["success"]:
        raise RuntimeError(f"could not release {assignment} for the graders: {result.get('log')}")
    return copy / layout.GRADEBOOK

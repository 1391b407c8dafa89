"""A class's machine for the hub's tests and bench: temporary system users, a course folder laid
out as the hub's, with an environment they can run, and commands run as one of them
(tests/grader/test_hub_exchange.py, and the hub of tests/class_hub.py).

Creating users needs root and the shadow tools (:func:`why_not_here`); every user made here is
removed by :func:`remove_users`. What is missing is a skip's reason that CI fails (:mod:`required`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import course_fixture
import required
from hub import prepare


def why_not_here() -> str | None:
    """None where this machine can make the students' system users, else why not."""
    if os.geteuid() != 0:
        return required.reason("users", "creating the students' system users needs root")
    missing = [
        tool for tool in ("useradd", "userdel", "runuser", "chpasswd") if not shutil.which(tool)
    ]
    return required.reason("users", f"no {', '.join(missing)} on this machine") if missing else None


#: The Python the students run: the class course's (:func:`class_course`), once it is made.
PYTHON = [sys.executable]
#: The instructor's grader runs this checkout's environment from the class course (as root), not
#: the course's own: a Python students may run can be older than the locks allow (Debian 12's
#: 3.11.2; soupsieve, which feedback's HTML needs, wants 3.11.5). So the course folder's copy of
#: the course package must not shadow this checkout's, which the grader's kernels import: no
#: current folder first on the grader's path.
INSTRUCTOR = {"PYTHONSAFEPATH": "1"}


def students_python() -> str | None:
    """A Python every user may run, of this one's version: the one this environment was made
    from, unless it lies where others cannot go (pyenv's under /root, say), else the system's."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    if prepare.why_students_cannot_run(base) is None:
        return base
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    return system if os.path.exists(system) else None


def linked_copy(source: Path, dest: Path) -> None:
    """``source``'s tree at ``dest``, its files hard links where both lie on one file system (a
    2.5 GB venv in 2 s), else copies. Never change a file of it in place: it is the original."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    linked = subprocess.run(["cp", "-a", "--link", str(source), str(dest)], capture_output=True)
    if linked.returncode:
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run(["cp", "-a", str(source), str(dest)], check=True)


def course_environment(venv: Path, course: Path) -> Path | None:
    """The course's ``.venv`` at ``venv``, as a hub's course folder holds it, whatever made this
    environment and wherever it lies (a clone in a home folder others cannot enter, a venv from
    pyenv's Python under /root): a venv of :func:`students_python` holding this environment's
    packages (hard links), its scripts pointed at the new interpreter, and its editable install of
    the course package pointed at ``course`` (the grader's stays this checkout's: only the
    instructor's processes, and the hub's as root, import it). Returns its Python, or None where
    no Python of this version is one every user may run (``.ci/run`` installs the system's)."""
    python = students_python()
    if python is None:
        return None
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = Path(
        next(p for p in sys.path if p.startswith(sys.prefix) and p.endswith("site-packages"))
    )
    site.rmdir()
    linked_copy(ours, site)
    for shared in ("etc", "share"):  # Jupyter's config (server extensions) and data (JupyterLab's)
        if (Path(sys.prefix) / shared).is_dir():
            linked_copy(Path(sys.prefix) / shared, venv / shared)
    mine, theirs = repr(str(course_fixture.REPO / "bertlab")), repr(str(course / "bertlab"))
    for finder in site.glob("__editable__*finder.py"):  # MAPPING: package -> its source folder
        text = finder.read_text().replace(mine, theirs)
        finder.unlink()  # a hard link: write a new file, not the original
        finder.write_text(text)
    ours_bin, new = Path(sys.executable).parent, venv / "bin" / "python"
    shebang = re.compile(rf"^#!{re.escape(str(ours_bin))}/python[0-9.]*\n")
    for script in ours_bin.iterdir():
        if (
            script.is_file()
            and not script.is_symlink()
            and not (venv / "bin" / script.name).exists()
        ):
            head = script.read_bytes()[:200].decode(errors="replace")
            if shebang.match(head):
                (venv / "bin" / script.name).write_text(
                    f"#!{new}\n" + script.read_text().split("\n", 1)[1]
                )
                (venv / "bin" / script.name).chmod(0o755)
    return new


def class_course(dest: Path, repo: Path = course_fixture.REPO) -> Path | None:
    """A scratch course at ``dest`` laid out as a hub's course folder: ``repo``'s nbgrader config
    and solutions (:func:`course_fixture.make_course`), the course's environment
    (:func:`course_environment`) with the course package it imports from the course folder, the
    student's Jupyter settings, the hub's own folder, and entries the hub must close to students:
    the tests' variants, the book's reference code, and a git history. Returns it, with :data:`PYTHON` the
    course's Python, or None where no Python students may run is here."""
    course = course_fixture.make_course(dest, repo)
    source = course_fixture.REPO
    linked_copy(source / "bertlab", course / "bertlab")
    linked_copy(source / "hub", course / "hub")  # its proxy too (node_modules)
    for folder in ("student-lab", "tests/variants", "book/reference"):
        shutil.copytree(
            source / folder, course / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    subprocess.run(["git", "init", "-q", str(course)], check=True)
    python = course_environment(course / ".venv", course)
    if python is None:
        return None
    PYTHON[0] = str(python)
    return course


def as_user(
    user: str, *cmd: str, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    home = Path("~" + user).expanduser()
    base = {"HOME": str(home), "PATH": f"{Path(PYTHON[0]).parent}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    proc = subprocess.run(
        [
            "runuser",
            "-u",
            user,
            "--",
            "env",
            "-i",
            "-C",
            str(home),
            *(f"{k}={v}" for k, v in {**base, **(env or {})}.items()),
            *cmd,
        ],
        capture_output=True,
        text=True,
    )
    if check and proc.returncode:
        raise AssertionError(
            f"{user}: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def remove_users(names) -> None:
    """Remove the system users ``names`` made (with their homes and groups)."""
    for name in names:
        subprocess.run(["userdel", "--remove", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)

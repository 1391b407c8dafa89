"""A class's machine for the hub's tests and bench: temporary system users, a Python they can
run, and commands run as one of them (tests/grader/test_hub_exchange.py, and the hub of
tests/class_hub.py).

Creating users needs root and the shadow tools (:func:`why_not_here`); every user made here is
removed by :func:`remove_users`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import course_fixture


def why_not_here() -> str | None:
    """None where this machine can make the students' system users, else why not."""
    if os.geteuid() != 0:
        return "creating the students' system users needs root"
    missing = [
        tool for tool in ("useradd", "userdel", "runuser", "chpasswd") if not shutil.which(tool)
    ]
    return f"no {', '.join(missing)} on this machine" if missing else None


#: The Python the students run: the course's, unless a student cannot (see :func:`student_python`).
PYTHON = [sys.executable]


def student_python(user: str, folder: Path) -> str | None:
    """A Python a student can run that imports the course's environment: the course's own, else
    (the course's venv was made from a Python in a closed home, pyenv's under /root, say) a venv in
    ``folder`` made from the system's Python of the same version, whose ``.pth`` adds the course
    environment's site-packages. None if neither works."""
    if not as_user(user, sys.executable, "-c", "pass", check=False).returncode:
        return sys.executable
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.exists():
        return None
    venv = folder / "student-venv"
    if course_fixture.venv_over_this_one(str(system), venv) is None:
        return None
    for shared in ("etc", "share"):  # Jupyter's config (server extensions) and data (JupyterLab's)
        if (Path(sys.prefix) / shared).is_dir():
            (venv / shared).symlink_to(Path(sys.prefix) / shared)
    for script in ("nbgrader", "jupyter"):  # the commands nbgrader runs by name
        if (Path(sys.executable).parent / script).exists():
            (venv / "bin" / script).write_text(
                f"#!{venv / 'bin' / 'python'}\n"
                + (Path(sys.executable).parent / script).read_text().split("\n", 1)[1]
            )
            (venv / "bin" / script).chmod(0o755)
    python = str(venv / "bin" / "python")
    return (
        None if as_user(user, python, "-c", "import nbgrader", check=False).returncode else python
    )


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

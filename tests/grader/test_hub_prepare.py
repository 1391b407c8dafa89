"""``make hub``'s preparation (``hub/prepare.py``) refuses a course whose Python students cannot
run, and closes the course folder to students but for its environment; no user is created here
(tests/grader/test_hub_exchange.py tries the closed folder as students)."""

import os
import shutil
import tempfile
from pathlib import Path

from hub import prepare


def test_a_python_in_a_closed_folder_is_named():
    base = Path(tempfile.mkdtemp(dir="/var/tmp"))  # pytest's own folder is closed to others
    try:
        closed = base / "home" / "instructor"
        (closed / "venv" / "bin").mkdir(parents=True)
        python = closed / "venv" / "bin" / "python"
        python.symlink_to("/usr/bin/env")
        for folder in (base, base / "home", closed / "venv", closed / "venv" / "bin"):
            os.chmod(folder, 0o755)
        os.chmod(closed, 0o700)
        assert (
            prepare.why_students_cannot_run(str(python))
            == f"{closed} is closed to other users (mode 700)"
        )
        os.chmod(closed, 0o755)
        assert prepare.why_students_cannot_run(str(python)) is None
    finally:
        shutil.rmtree(base)


def test_everything_but_the_environment_is_closed(tmp_path):
    course = tmp_path / "course"
    for folder in (
        "hub",
        "solutions",
        "tests/variants",
        "book/reference",
        ".git",
        *prepare.STUDENT_READS,
    ):
        (course / folder).mkdir(parents=True, mode=0o755)
    (course / "hub" / "roster.csv").write_text("username,role\nada,student\n")
    (course / "README.md").write_text("a new file of the course\n")
    (tmp_path / "elsewhere").mkdir(mode=0o755)
    (course / "runs").symlink_to(tmp_path / "elsewhere")  # a folder kept outside, linked in
    os.chmod(course, 0o755)
    closed = prepare.close_course(course, {"root": "instructor"})
    assert sorted(closed) == [
        ".git", "README.md", "book", "hub", f"runs (a link: {tmp_path / 'elsewhere'} closed)",
        "solutions", "tests",
    ]  # fmt: skip
    for name in closed:
        assert os.stat(course / name.split()[0]).st_mode & 0o007 == 0, name
    for name in prepare.STUDENT_READS:
        assert os.stat(course / name).st_mode & 0o005 == 0o005, name
    assert os.stat(course).st_mode & 0o007 == 0o001  # entered, never listed
    assert os.stat(course / "hub" / "roster.csv").st_mode & 0o077 == 0

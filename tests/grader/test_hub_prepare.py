"""``make hub``'s preparation (``hub/prepare.py``) refuses a course whose Python students cannot
run, and closes the class list; no user is created here."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "hub"))

import prepare  # noqa: E402


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


def test_the_roster_and_the_private_folders_are_closed(tmp_path):
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "roster.csv").write_text("username,role\nada,student\n")
    (tmp_path / "solutions").mkdir(mode=0o755)
    closed = prepare.close_private_folders(tmp_path, {"root": "instructor"})
    assert "hub/roster.csv" in closed and "solutions" in closed
    assert os.stat(tmp_path / "hub" / "roster.csv").st_mode & 0o077 == 0
    assert os.stat(tmp_path / "solutions").st_mode & 0o007 == 0

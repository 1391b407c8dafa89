"""Get one machine ready for the class's hub: run as root by ``make hub`` before JupyterHub starts.

Idempotent; each step says what it did:

1. an account for everyone on the roster (:mod:`roster`) that has none: a system user with a home
   only they can open (0700), and a random first password, written to
   ``<state>/new-passwords.csv`` (root's only) for the instructor to hand out;
2. nbgrader's exchange (``$BERTLAB_EXCHANGE``, else ``/srv/nbgrader/exchange``): root's, writable by
   all, as nbgrader's docs ask; nbgrader then sets each course folder's own permissions;
3. the course's models, assembled once into a shared cache (``$BERTLAB_HUB_CACHE``, else
   ``/srv/bertlab/models``) that every student's server reads and none can write;
4. the course folder closed to students but for what their servers run (:data:`STUDENT_READS`:
   the course's environment and the student's Jupyter settings): an allow-list, as the grader's
   sandbox keeps (bertlab_grader/sandbox/bwrap.py), so that a folder added to the course later
   (answers, variants, history) is closed without a word here. Students may enter the course
   folder to reach those, but not list it.

    sudo .venv/bin/python -m hub.prepare --roster hub/roster.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import pwd
import secrets
import subprocess
import sys
from pathlib import Path

from hub import roster as roster_csv

HUB = Path(__file__).resolve().parent
#: What of the course folder a student's server reads: the course's environment (its venv, and
#: the course package, which the venv's editable install imports from the course folder) and the
#: student's Jupyter settings (JUPYTER_CONFIG_PATH; the same as ``make lab``'s). Nothing else.
STUDENT_READS = (".venv", "bertlab", "student-lab")

DEFAULTS = {
    "BERTLAB_EXCHANGE": "/srv/nbgrader/exchange",
    "BERTLAB_HUB_CACHE": "/srv/bertlab/models",
    "BERTLAB_HUB_STATE": "/srv/bertlab/hub",
}


def setting(name: str) -> Path:
    return Path(os.environ.get(name, "").strip() or DEFAULTS[name])


def create_accounts(roster: dict[str, str], state: Path) -> list[str]:
    """System users for the roster's new names; their first passwords into state/new-passwords.csv."""
    created = []
    for name in roster:
        try:
            pwd.getpwnam(name)
            continue
        except KeyError:
            pass
        subprocess.run(
            ["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name], check=True
        )
        password = secrets.token_urlsafe(9)
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
        passwords = state / "new-passwords.csv"
        fresh = not passwords.exists()
        with os.fdopen(os.open(passwords, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as f:
            writer = csv.writer(f)
            if fresh:
                writer.writerow(["username", "password"])
            writer.writerow([name, password])
        created.append(name)
    return created


def make_exchange(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    os.chown(root, 0, 0)
    os.chmod(root, 0o777)


def shared_models(cache: Path) -> None:
    """The course's models assembled into ``cache``, then readable by all and writable by root only."""
    env = {
        **os.environ,
        "BERTLAB_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    subprocess.run(
        [sys.executable, "-c", "from bertlab.models import prepare_all; prepare_all()"],
        env=env,
        check=True,
    )
    subprocess.run(["chmod", "-R", "u+rwX,go+rX,go-w", str(cache)], check=True)
    shut = [str(f) for f in cache.parents if not os.stat(f).st_mode & 0o001]
    if shut:
        raise SystemExit(
            f"prepare: students cannot reach {cache} through {', '.join(shut)}: "
            f"set BERTLAB_HUB_CACHE to a folder under /srv"
        )


def why_students_cannot_run(python: str) -> str | None:
    """Why a user who owns none of it cannot run ``python`` (every folder on the way to the
    interpreter, and to the venv that names it, must be open to others: o+x), or None."""
    for target in (Path(python), Path(os.path.realpath(python))):
        for folder in [*reversed(target.parents)]:
            if not os.stat(folder).st_mode & 0o001:
                return (
                    f"{folder} is closed to other users (mode {os.stat(folder).st_mode & 0o777:o})"
                )
    if not os.stat(os.path.realpath(python)).st_mode & 0o001:
        return f"{os.path.realpath(python)} cannot be run by other users"
    return None


def close_course(course: Path, roster: dict[str, str]) -> list[str]:
    """Close every entry of ``course`` to other users but :data:`STUDENT_READS`, and the folder
    itself to listing (students may still enter it, to reach those); the class list to its
    group too. Returns the entries closed."""
    os.chmod(course, (course.stat().st_mode & ~0o007) | 0o001)
    closed = []
    for entry in sorted(course.iterdir()):
        if entry.name in STUDENT_READS or not entry.exists():  # a dangling link leads nowhere
            continue
        os.chmod(entry, entry.stat().st_mode & ~0o007)  # a link's target: a link has no mode
        closed.append(
            entry.name + (f" (a link: {entry.resolve()} closed)" if entry.is_symlink() else "")
        )
    if (course / "hub" / "roster.csv").exists():
        os.chmod(course / "hub" / "roster.csv", 0o600)
    owner = pwd.getpwuid(course.stat().st_uid).pw_name
    if roster.get(owner) != "instructor":
        print(
            f"prepare: the course folder {course} belongs to {owner}, not to an instructor of the "
            f"roster: the instructor's server cannot grade in it (chown -R it to the instructor)"
        )
    return closed


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    top.add_argument("--roster", type=Path, default=HUB / "roster.csv")
    top.add_argument("--course", type=Path, default=HUB.parent)
    args = top.parse_args(argv)
    if os.geteuid() != 0:
        print(
            "prepare: run as root (sudo make hub): it creates system users and the exchange",
            file=sys.stderr,
        )
        return 2
    try:
        roster = roster_csv.read(args.roster)
    except (OSError, ValueError) as exc:
        print(f"prepare: {exc}", file=sys.stderr)
        return 2
    why = why_students_cannot_run(sys.executable)
    if why:
        print(
            f"prepare: students' servers run this course's Python, {sys.executable}, and they cannot: "
            f"{why}. Put the course where students can enter it (a folder under /srv owned by the "
            "instructor, not a home folder) and make its venv from a Python every user may run, "
            "3.11.5 or newer (under /opt, say): make install LOCK=hub PYTHON=/opt/.../python3",
            file=sys.stderr,
        )
        return 2
    state = setting("BERTLAB_HUB_STATE")
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)
    created = create_accounts(roster, state)
    print(
        f"prepare: {len(roster)} on the roster; new accounts: {', '.join(created) or 'none'}"
        + (f" (first passwords in {state / 'new-passwords.csv'})" if created else "")
    )
    make_exchange(setting("BERTLAB_EXCHANGE"))
    print(f"prepare: exchange at {setting('BERTLAB_EXCHANGE')}")
    shared_models(setting("BERTLAB_HUB_CACHE"))
    print(f"prepare: models in {setting('BERTLAB_HUB_CACHE')}, read-only to students")
    closed = close_course(args.course.resolve(), roster)
    print(
        f"prepare: students read {', '.join(STUDENT_READS)} of the course folder; closed to them: "
        + ", ".join(closed)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

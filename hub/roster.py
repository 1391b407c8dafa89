"""The class's roster: a CSV the instructor writes, one row per hub user (docs/instructors.md).

    username,role
    ada,instructor
    alan,student

``username`` is the student's login on this machine (a system user: letters, digits, ``-``, ``_``,
starting with a letter) and their id in nbgrader's gradebook; ``role`` is ``student`` or
``instructor``. Read by ``hub/prepare.py`` (which creates the accounts) and by
``hub/jupyterhub_config.py`` (who may log in, who is an admin).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROLES = ("student", "instructor")
USERNAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def read(path: Path | str) -> dict[str, str]:
    """``{username: role}``; raises ValueError naming the bad row and what to write instead."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no roster at {path}: copy hub/roster.example.csv there and list the "
            f"class, one 'username,role' row per person"
        )
    roster = {}
    with path.open(newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            name, role = (row.get("username") or "").strip(), (row.get("role") or "").strip()
            if not USERNAME.match(name):
                raise ValueError(
                    f"{path}, line {line}: {name!r} is not a login name (lower-case letters, "
                    f"digits, - and _, starting with a letter)"
                )
            if role not in ROLES:
                raise ValueError(
                    f"{path}, line {line}: role {role!r}, expected one of {', '.join(ROLES)}"
                )
            roster[name] = role
    if "instructor" not in roster.values():
        raise ValueError(f"{path}: nobody has the role 'instructor'; the course folder needs one")
    return roster

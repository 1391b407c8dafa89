"""The course's own hub on loopback, with temporary students and ps00 published: the hub that the
end-to-end test in Chromium (tests/grader/test_hub_lab.py) and ``make bench``'s figures for a
class (tests/hub_bench.py) both start.

:func:`class_hub` runs ``hub/jupyterhub_config.py`` as ``make hub`` does (PAM logins, JupyterLab
as each student's own system user, nbgrader's exchange, the shared model cache, the course folder
closed but for its environment) on free loopback ports, in a scratch course under /var/tmp laid
out as a hub's (:func:`class_machine.class_course`; bubblewrap hides /tmp from the grader's
kernels). The students are system users (:mod:`class_machine`), removed afterwards with every
file. Needs root and Node.js's ``npm`` for the hub's proxy (:func:`why_not_here`; CI fails where
either is missing: :mod:`required`).
"""

from __future__ import annotations

import csv
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import class_machine
import course_fixture
import required
from bertlab_grader.nbgrader_course import nbgrader_env
from hub import prepare
from loopback import free_port

HUB = course_fixture.REPO / "hub"
ASSIGNMENT = "ps00-tokens"


class HubUnavailable(RuntimeError):
    """This machine cannot run the class hub; the message says why (a skip's reason that CI
    fails: :mod:`required`)."""


@dataclass
class ClassHub:
    """A running class hub, as :func:`class_hub` yields it."""

    url: str  # the hub's address, ending in '/'
    students: dict[str, str]  # each student's name -> password
    python: str  # the Python the hub and the students' servers run
    models: str  # the shared model cache the students' kernels read
    course: Path  # the instructor's scratch course, ps00 released and published
    env: dict[str, str]  # the hub's settings: BERTLAB_EXCHANGE, its state, cache and roster

    def grader(self, *args: str, allowed: tuple[int, ...] = (0,)) -> str:
        """``python -m bertlab_grader <args>`` run by the instructor on this hub's exchange; its
        output (raises if it exits with a status not in ``allowed``)."""
        return course_fixture.grader(self.course, *args, allowed=allowed, env=self.env).stdout


def why_not_here() -> str | None:
    """None where this machine can run the class hub (installing its proxy with ``npm ci`` if
    need be), else why not."""
    why = class_machine.why_not_here()
    if why:
        return why
    if not (HUB / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        if not shutil.which("npm"):
            return required.reason("node", "no npm for the hub's proxy (apt install nodejs npm)")
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=HUB, capture_output=True, text=True
        )
        if done.returncode:
            said = " ".join(done.stderr.split())[:300]
            return required.reason(
                "node", f"npm ci in hub/ failed, so the hub has no proxy: {said}"
            )
    return None


@contextmanager
def class_hub(n_students: int, prefix: str = "blbench"):
    """The course's hub on loopback with ``n_students`` new students (``<prefix>-<random>-sNN``)
    and an instructor, ps00 published; yields a :class:`ClassHub`. Stops the hub and removes the
    users and every file afterwards; raises :class:`HubUnavailable` where no Python students may
    run is here."""
    base = Path(tempfile.mkdtemp(prefix=f"{prefix}-hub-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    tag = secrets.token_hex(2)
    students = [f"{prefix}-{tag}-s{i:02d}" for i in range(1, n_students + 1)]
    roster = {f"{prefix}-{tag}-instructor": "instructor", **dict.fromkeys(students, "student")}
    state, exchange = base / "state", base / "exchange"
    state.mkdir(mode=0o700)
    hub = None
    made: list[str] = []
    try:
        with (base / "roster.csv").open("w", newline="") as f:
            csv.writer(f).writerows([("username", "role"), *roster.items()])
        made += prepare.create_accounts(roster, state)
        with (state / "new-passwords.csv").open(newline="") as f:
            passwords = {row["username"]: row["password"] for row in csv.DictReader(f)}
        course = class_machine.class_course(base / "course")
        if course is None:
            raise HubUnavailable(no_students_python())
        python = class_machine.PYTHON[0]
        prepare.make_exchange(exchange)
        seed_models(base / "models")
        prepare.shared_models(base / "models")  # as make hub does: the students' kernels read it
        env = {
            **class_machine.INSTRUCTOR,
            "BERTLAB_EXCHANGE": str(exchange),
            "BERTLAB_HUB_STATE": str(state),
            "BERTLAB_HUB_CACHE": str(base / "models"),
            "BERTLAB_HUB_ROSTER": str(base / "roster.csv"),
        }
        course_fixture.grader(course, "release", ASSIGNMENT, env=env)
        prepare.close_course(course, roster)
        course_fixture.grader(course, "publish", ASSIGNMENT, env=env)
        port = free_port()
        hub = subprocess.Popen(
            [python, "-m", "jupyterhub", "-f", str(course / "hub" / "jupyterhub_config.py"), "--ip=127.0.0.1",
             f"--port={port}", f"--JupyterHub.hub_port={free_port()}",
             f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"],
            cwd=state, env={**nbgrader_env(), **env}, stdout=subprocess.DEVNULL, stderr=open(base / "hub.log", "w"),
            start_new_session=True,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}/"
        wait_for(lambda: _status(url + "hub/api/") == 200, 60, hub, base / "hub.log")
        yield ClassHub(
            url, {s: passwords[s] for s in students}, python, str(base / "models"), course, env
        )
    finally:
        if sys.exc_info()[0] is not None and (base / "hub.log").is_file():
            kept = Path(tempfile.gettempdir()) / f"bertlab-{prefix}-hub.log"
            shutil.copy(base / "hub.log", kept)
            print(f"class hub: the hub's log is {kept}", file=sys.stderr)
        if hub is not None:
            hub.send_signal(signal.SIGTERM)  # the hub stops the students' servers as it exits
            try:
                hub.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(hub.pid, signal.SIGKILL)
        for name in made:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        class_machine.remove_users(made)
        shutil.rmtree(base, ignore_errors=True)


def no_students_python() -> str:
    """Why no course environment students may run can be made here (a skip's reason)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return required.reason(
        "users",
        f"students cannot run the course's Python {os.path.realpath(sys.executable)} and this "
        f"machine has no /usr/bin/python{version} to make one from (apt install python{version}; "
        ".ci/run installs it)",
    )


#: Prints the folder in the course cache of each model ``bertlab.models.prepare_all`` assembles,
#: assembling it first.
_ASSEMBLED = """
from pathlib import Path
from bertlab.models import ModelNotAvailableError, cache_root, decoder_path, model_path
for resolve in (model_path, decoder_path):
    try:
        folder = Path(resolve())
    except ModelNotAvailableError:
        continue
    if folder.is_relative_to(cache_root()):
        print(folder)
"""


def seed_models(cache: Path) -> None:
    """Copy the course's assembled models into the hub's ``cache`` from the instructor's own cache
    (the grader assembles them there before it autogrades: ``c.GuardedExecute.prepare``), so that
    ``prepare.shared_models`` finds them intact, as on ``make hub``'s second start, instead of
    converting the decoder again (20 s and 0.5 GB, for no step of ps00)."""
    offline = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _ASSEMBLED], env=offline, capture_output=True, text=True, check=True
    )
    for folder in map(Path, done.stdout.splitlines()):
        shutil.copytree(folder, cache / folder.name)


def _status(url: str) -> int:
    """The HTTP status of a GET of ``url``; 0 if nothing answered."""
    import requests

    try:
        return requests.get(url, timeout=5).status_code
    except requests.RequestException:
        return 0


def wait_for(ready, seconds: float, hub=None, log: Path | None = None) -> None:
    """Call ``ready`` every half second until it is true; raise after ``seconds``, or as soon as
    the ``hub`` process exits, with the end of its ``log``."""
    deadline = time.monotonic() + seconds
    while not ready():
        if hub is not None and hub.poll() is not None:
            raise RuntimeError(
                f"class hub: the hub exited ({hub.returncode}):\n{log.read_text()[-3000:]}"
            )
        if time.monotonic() > deadline:
            tail = f":\n{log.read_text()[-3000:]}" if log else ""
            raise RuntimeError(f"class hub: not ready after {seconds} s{tail}")
        time.sleep(0.5)


def cookie(session, name: str, path: str) -> str | None:
    """The value of the cookie ``name`` set for ``path`` (or a path above it)."""
    found = [c for c in session.cookies if c.name == name and path.startswith(c.path.rstrip("/"))]
    return max(found, key=lambda c: len(c.path)).value if found else None

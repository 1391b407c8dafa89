"""`make bench`'s figures for the class hub (hub/, ``make hub``): measured on this machine, reported.

A class arrives at once: the course's own hub (``hub/jupyterhub_config.py``: PAM, JupyterLab as
each student's own system user, nbgrader's exchange) runs on loopback with temporary students
(``blbench-<random>-sNN``, removed afterwards: :func:`class_hub.class_hub`), and every student,
in a thread of their own, logs in through the hub's login form, waits for their server, and
fetches ps00 through the same request the Assignments tab sends
(``POST /user/<name>/assignments/fetch``). Reported: the seconds until the whole class has fetched,
and each student's; the memory of one idle student's server (the resident memory of every process
the student runs, once all are idle); what a student's Validate of ps00 costs (seconds and peak
memory of ``nbgrader validate`` as that student); and, from those figures, how many students this
machine's memory and cores hold.

Needs root (it makes system users) and Node.js's ``npm`` (the hub's proxy, ``hub/package-lock.json``);
where either is missing it says so and measures nothing.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import class_machine
import course_fixture
from class_hub import ASSIGNMENT, class_hub, cookie, wait_for, why_not_here

REPO = course_fixture.REPO
STUDENTS = int(os.environ.get("BERTLAB_BENCH_STUDENTS", "20"))


def arrive(url: str, student: str, password: str, course_id: str) -> tuple[float, int]:
    """Log in, wait for the server, fetch the assignment as the Assignments tab does: (seconds
    taken, spawns that failed and were launched again, as a student presses Launch again)."""
    import requests

    start = time.perf_counter()
    with requests.Session() as s:
        s.get(url + "hub/login", timeout=30)
        login = s.post(
            url + "hub/login",
            data={"username": student, "password": password, "_xsrf": cookie(s, "_xsrf", "/hub")},
            timeout=120,
        )
        if "/hub/login" in login.url:
            raise RuntimeError(f"{student}: the hub refused the login")
        server, api = f"{url}user/{student}/", f"{url}hub/api/users/{student}"
        headers = {"X-XSRFToken": cookie(s, "_xsrf", "/hub")}
        relaunched = [0]

        def ready() -> bool:
            if s.get(server + "api/status", timeout=30).status_code == 200:
                return True
            model = s.get(api, headers=headers, timeout=30).json()
            if not model.get("pending") and not model.get("server"):  # not starting: it failed
                relaunched[0] += 1
                s.post(api + "/server", headers=headers, timeout=30)
            s.get(
                server + "lab", timeout=60
            )  # a page: through the hub's OAuth, and the server's cookies
            return False

        wait_for(ready, 360)  # the hub gives a server 300 s to start (hub/jupyterhub_config.py)
        token = cookie(s, "_xsrf", f"/user/{student}")
        fetched = s.post(
            server + "assignments/fetch",
            data={"course_id": course_id, "assignment_id": ASSIGNMENT},
            headers={"X-XSRFToken": token},
            timeout=120,
        )
        listed = fetched.json().get("value", []) if fetched.status_code == 200 else []
        if not any(
            a.get("assignment_id") == ASSIGNMENT and a.get("status") == "fetched" for a in listed
        ):
            raise RuntimeError(
                f"{student}: fetch answered {fetched.status_code}: {fetched.text[:300]}"
            )
    return time.perf_counter() - start, relaunched[0]


def resident_mb(user: str) -> float:
    """Resident memory of every process ``user`` runs, in MB (shared pages counted in each)."""
    out = subprocess.run(["ps", "-o", "rss=", "-u", user], capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split()) / 1024


def validate_once(python: str, student: str, cache: str) -> tuple[float, float]:
    """``nbgrader validate`` of the fetched ps00 as ``student``: (seconds, peak resident MB of it
    and its kernel), read from GNU time where there is one."""
    notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    timed = ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []
    start = time.perf_counter()
    env = {"BERTLAB_CACHE": cache, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = class_machine.as_user(
        student, *timed, python, "-m", "nbgrader", "validate", notebook, env=env, check=False
    )
    seconds = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return seconds, int(peak.group(1)) / 1024 if peak else float("nan")


def hub_logins() -> list[str]:
    """Print the hub's figures; returns [] (reported, not budgeted)."""
    why = why_not_here()
    if why:
        print(f"\nthe class hub: not measured here ({why})")
        return []
    from traitlets.config.loader import PyFileConfigLoader

    course_id = (
        PyFileConfigLoader("nbgrader_config.py", path=str(REPO))
        .load_config()
        .CourseDirectory.course_id
    )
    with class_hub(STUDENTS) as hub:
        students = hub.students
        start = time.perf_counter()
        with ThreadPoolExecutor(len(students)) as pool:
            arrived = list(pool.map(lambda s: arrive(hub.url, s, students[s], course_id), students))
        whole = time.perf_counter() - start
        each, relaunched = [a[0] for a in arrived], sum(a[1] for a in arrived)
        time.sleep(10)  # every server idle
        idle = statistics.median(resident_mb(s) for s in students)
        seconds, peak = validate_once(hub.python, next(iter(students)), hub.models)
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cores = os.cpu_count() or 1
    by_memory = int(0.8 * memory_gb * 1024 // (idle + peak)) if peak == peak else None
    print(
        f"\nthe class hub on this machine ({cores} cores, {memory_gb:.0f} GB), {len(students)} students at once:"
    )
    print(
        f"  all logged in, servers started and {ASSIGNMENT} fetched in {whole:.1f} s "
        f"(one student: median {statistics.median(each):.1f} s, slowest {max(each):.1f} s); "
        f"spawns that failed and were launched again: {relaunched}"
    )
    print(f"  one idle student's server: {idle:.0f} MB resident")
    print(
        f"  one Validate of {ASSIGNMENT}: {seconds:.1f} s, peak {peak:.0f} MB (nbgrader and its kernel)"
    )
    if by_memory:
        print(
            f"  memory (80% of {memory_gb:.0f} GB) holds {by_memory} students validating {ASSIGNMENT} at once; "
            f"{cores} cores run about {cores * 60 / seconds:.0f} of those Validates a minute"
        )
    return []


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    hub_logins()

"""What the tests need of the machine, and what a missing part means: a skip on a developer's
machine, a failure in CI.

A test that needs one of :data:`GROUPS` and cannot have it here calls :func:`skip` (or skips with
a reason from :func:`reason`): a developer's run skips it, saying what is missing. Under
``CI=true`` (``.ci/run``, which installs and arranges every group) the conftest turns that skip
into a failure (:func:`pytest_runtest_makereport`, imported there), so a green CI means every
guarantee was tested. The grader's sandbox and cgroups are checked once, before any test runs
(:func:`session_problems`): without them the tests would grade unsandboxed.
"""

from __future__ import annotations

import os

import pytest

#: group -> what it is and how a machine gets it.
GROUPS = {
    "sandbox": "bubblewrap able to build the grader's sandbox (apt install bubblewrap)",
    "cgroups": "a cgroup of the grader's own, for each kernel's hard caps",
    "postgres": "PostgreSQL's server binaries (apt install postgresql)",
    "chromium": "headless Chromium and Playwright's Python package (apt install chromium)",
    "node": "Node.js and npm, for the hub's proxy (apt install nodejs npm)",
    "users": "root and the shadow tools, to make the hub's students' system users, and a Python "
    "they can run",
}
#: How a skip for a missing group begins; the rest says what exactly is missing.
PREFIX = "needs {group}: "


def in_ci() -> bool:
    """True where the environment says this run is CI's (``CI=true``, as GitHub Actions,
    GitLab CI and ``.ci/run`` set it)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def reason(group: str, why: str) -> str:
    """A skip's reason that says the machine lacks ``group``: ``needs <group>: <why>``."""
    if group not in GROUPS:
        raise ValueError(f"no group {group!r} (one of {', '.join(GROUPS)})")
    return PREFIX.format(group=group) + why


def skip(group: str, why: str):
    """Skip the calling test (or fixture): this machine lacks ``group``, because ``why``."""
    pytest.skip(reason(group, why))


def group_of(skip_reason: str) -> str | None:
    """The group a skip's reason says is missing, or None for any other skip."""
    text = skip_reason.removeprefix("Skipped: ")
    return next((g for g in GROUPS if text.startswith(PREFIX.format(group=g))), None)


def session_problems() -> list[str]:
    """What of the grader's isolation this machine lacks (empty where kernels are sandboxed and
    capped): checked once per run, since without it every grading test runs unisolated."""
    from bertlab_grader.sandbox import bwrap, cgroup

    problems = []
    if os.environ.get("BERTLAB_SANDBOX", "").strip().lower() == "off":
        problems.append(reason("sandbox", "BERTLAB_SANDBOX=off turns the grader's sandbox off"))
    elif why := bwrap.why_unavailable():
        problems.append(reason("sandbox", why))
    if why := cgroup.why_unavailable():
        problems.append(reason("cgroups", why))
    return problems


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI, a skip for a missing group is a failure that says so."""
    report = yield
    expected = hasattr(report, "wasxfail")
    if report.skipped and not expected and in_ci() and isinstance(report.longrepr, tuple):
        path, line, said = report.longrepr
        group = group_of(said)
        if group is not None:
            report.outcome = "failed"
            report.longrepr = (
                f"{path}:{line}: CI requires {group} ({GROUPS[group]}), and this machine lacks "
                f"it: {said.removeprefix('Skipped: ')}. .ci/run installs and arranges it."
            )
    return report

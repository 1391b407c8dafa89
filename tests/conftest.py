"""Shared pytest setup: offline, headless, and whole groups of tests on one pytest-xdist worker.

``make check`` and ``make test`` run pytest-xdist with ``--dist loadgroup``: tests that share an
``xdist_group`` mark run on the same worker, so a module-scoped fixture (a scratch course, a
round trip, a variant report) is built once. A test without one is grouped with its module, and
with the value of each module-scoped fixture it takes a parameter of (one assignment's round
trip is its own group: ``test_assignments.graded``). pytest-xdist reads the marks before the marks
of fixture parameters reach the tests, so those are grouped here, by their values.

What a test needs of the machine (the sandbox, cgroups, PostgreSQL, Chromium, Node.js, system
users) is required in CI (``CI=true``): a skip for a missing part fails there
(:mod:`required`), and a machine without the grader's sandbox or cgroups stops the run at once.
"""

import os
import signal
from pathlib import Path

import pytest

import required
from required import pytest_runtest_makereport  # noqa: F401 (the hook: CI fails a required skip)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
# make test runs these tests as a background job of its shell, which ignores SIGINT, and an
# ignored signal stays ignored across exec: every process a test starts would then shrug off an
# interrupt (a Jupyter kernel sets its own handler; a plain Python, such as test_crossing's
# student, would not). A caught signal is reset to the default across exec, so catch it here.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _sandbox_or_off() -> str | None:
    """The grader refuses to start a kernel it cannot sandbox (bertlab_grader.sandbox.manager).
    Where bubblewrap cannot build one here and no mode was chosen, a developer's tests grade
    unsandboxed on purpose (BERTLAB_SANDBOX=off), as an instructor may, and say so; the sandbox's
    own tests skip. In CI the run stops instead (:func:`pytest_configure`)."""
    if "BERTLAB_SANDBOX" in os.environ or required.in_ci():
        return None
    from bertlab_grader.sandbox import bwrap

    problem = bwrap.why_unavailable()
    if problem:
        os.environ["BERTLAB_SANDBOX"] = "off"
    return problem


_UNSANDBOXED = _sandbox_or_off()


def pytest_configure(config):
    if required.in_ci() and not hasattr(config, "workerinput"):  # once, in the controller
        problems = required.session_problems()
        if problems:
            raise pytest.UsageError(
                "CI=true: the grader's tests need its isolation, and this machine lacks it ("
                + "; ".join(problems)
                + "). .ci/run installs bubblewrap; a developer's run without CI grades unsandboxed."
            )


def pytest_report_header(config):
    if _UNSANDBOXED:
        return f"grading UNSANDBOXED (BERTLAB_SANDBOX=off): {_UNSANDBOXED}; the sandbox tests skip"


def _parametrized_here(item) -> set[str]:
    """The argument names of the test's own ``@pytest.mark.parametrize`` marks."""
    names = set()
    for mark in item.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs["argnames"]
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(n.strip() for n in argnames)
    return names


def _shared_params(item) -> list[str]:
    """``name=value`` for each parameter ``item`` takes from a fixture's ``params`` (every such
    fixture here is module-scoped, so wider than one test), not from its own ``parametrize``
    marks. Read from the item's ``callspec`` and its marks, with no private pytest attribute."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return []
    own = _parametrized_here(item)
    return [f"{name}={spec.params[name]}" for name in sorted(spec.params) if name not in own]


#: Tests that start a service (the ``services`` mark: opt-in for a bare ``pytest``, run by ``make
#: test`` and CI) though their files do not say so: by the fixture that starts it, or by module.
#: tests/grader/test_hub_lab.py and the Chromium checks of tests/site mark themselves.
SERVICE_FIXTURES = {"postgres": "PostgreSQL", "cluster": "a Dask LocalCluster"}
SERVICE_MODULES = {"tests/assignments/test_lab.py": "JupyterLab (make lab)"}
ROOT = Path(__file__).resolve().parents[1]


def _starts_a_service(item) -> bool:
    return bool(SERVICE_FIXTURES.keys() & set(getattr(item, "fixturenames", ()))) or (
        item.path.is_relative_to(ROOT) and item.path.relative_to(ROOT).as_posix() in SERVICE_MODULES
    )


def pytest_itemcollected(item):
    """As each test is collected, before pytest-xdist reads the marks (in collection_modifyitems)
    and before ``-m`` deselects by them."""
    if item.get_closest_marker("xdist_group") is None:
        item.add_marker(
            pytest.mark.xdist_group("-".join([item.module.__name__, *_shared_params(item)]))
        )
    if item.get_closest_marker("services") is None and _starts_a_service(item):
        item.add_marker(pytest.mark.services)

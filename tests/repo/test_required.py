"""Required means required: under ``CI=true`` a test that skips for want of a part of the machine
the tests need (tests/required.py's groups) fails, and a run without the grader's sandbox stops;
a developer's run skips, saying why. Tried in pytest sessions of their own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import required

ROOT = Path(__file__).resolve().parents[2]

CASES = """
import pytest
import required

def test_needs_postgres():
    required.skip("postgres", "no initdb here")

def test_skips_for_another_reason():
    pytest.skip("this machine has a CUDA GPU")

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_to_fail():
    assert False
"""


def run(tmp_path: Path, ci: bool, *args: str, cwd: Path | None = None, **settings: str):
    """pytest in a process of its own, with or without ``CI=true``; what it did."""
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "PYTEST_ADDOPTS"}}
    env.update(PYTHONPATH=str(ROOT / "tests"), **settings)
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args],
        cwd=cwd or tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ci_fails_a_skip_for_a_missing_part_and_keeps_the_others(tmp_path):
    (tmp_path / "test_cases.py").write_text(CASES)
    ci = run(tmp_path, True, "-p", "required", "test_cases.py")
    assert ci.returncode == 1, ci.stdout
    assert "1 failed, 1 skipped, 1 xfailed" in ci.stdout, ci.stdout
    assert "CI requires postgres" in ci.stdout and "no initdb here" in ci.stdout, ci.stdout

    local = run(tmp_path, False, "-p", "required", "test_cases.py")
    assert local.returncode == 0, local.stdout
    assert "2 skipped, 1 xfailed" in local.stdout, local.stdout
    assert "needs postgres: no initdb here" in local.stdout, local.stdout


def test_this_run_applies_the_rule(request):
    hooks = request.config.pluginmanager.hook.pytest_runtest_makereport.get_hookimpls()
    assert required.pytest_runtest_makereport in [impl.function for impl in hooks], (
        "tests/conftest.py imports required's hook"
    )


def test_ci_stops_before_grading_unsandboxed(tmp_path):
    """The grader's sandbox turned off, as a developer may: CI refuses to run the suite at all."""
    stopped = run(tmp_path, True, "--collect-only", "tests/repo", cwd=ROOT, BERTLAB_SANDBOX="off")
    assert stopped.returncode == pytest.ExitCode.USAGE_ERROR, stopped.stdout + stopped.stderr
    assert "needs sandbox: BERTLAB_SANDBOX=off" in stopped.stderr, stopped.stderr


def test_a_reason_names_one_known_group():
    assert required.group_of(required.reason("chromium", "no Chromium")) == "chromium"
    assert required.group_of("Skipped: needs users: no runuser") == "users"
    assert required.group_of("no bwrap here") is None
    with pytest.raises(ValueError, match="no group 'gpu'"):
        required.reason("gpu", "no CUDA")

"""What the repository's root promises a visitor: the licence the README names, and the grader's
command (``bertlab-grader``, beside ``python -m bertlab_grader``) pointing at a real function, and
the benchmarks `make bench` runs importing what they need."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_licence_at_the_root_is_the_one_the_package_declares():
    assert PROJECT["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    # The standard text of https://www.apache.org/licenses/LICENSE-2.0.txt, appendix included.
    for line in (
        "Apache License",
        "Version 2.0, January 2004",
        "END OF TERMS AND CONDITIONS",
        "APPENDIX: How to apply the Apache License to your work.",
    ):
        assert line in text, f"LICENSE is not the full Apache-2.0 text (no {line!r})"
    assert "Apache-2.0 ([LICENSE](LICENSE))" in (ROOT / "README.md").read_text()


def test_the_grader_command_runs_the_same_main_as_python_dash_m():
    module, _, function = PROJECT["scripts"]["bertlab-grader"].partition(":")
    assert module == "bertlab_grader.__main__"
    main = getattr(importlib.import_module(module), function)
    assert callable(main)
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0


def test_the_benchmarks_import():
    """``make bench`` runs tests/bench.py, which imports helpers from the test folders (live_bench,
    browser, course_fixture, the site's tests); a stage name it does not know stops it after those
    imports, before any measurement."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "tests/bench.py", "no-such-stage"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "unknown stage no-such-stage" in done.stderr, done.stderr[-2000:]

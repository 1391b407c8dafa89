"""Shared pytest setup: offline, headless, and whole groups of tests on one pytest-xdist worker.

``make check`` and ``make test`` run pytest-xdist with ``--dist loadgroup``: tests that share an
``xdist_group`` mark run on the same worker, so a module-scoped fixture (a scratch course, a
round trip, a variant report) is built once. A test without one is grouped with its module.
"""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks
def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))

"""Shared pytest setup: offline, headless, and the `site` tests only after a book build."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

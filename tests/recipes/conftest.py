"""The recipe's tests share one tiny corpus and one 3-step run per pytest worker (tests/recipes/tiny_runs.py)."""

from __future__ import annotations

import json

import pytest

from recipes.checkpoint import train
from tiny_runs import TINY_ARGS, sentences


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "train.txt").write_text("\n".join(sentences(120, 1)) + "\n")  # ~6 KB
    (folder / "heldout.txt").write_text("\n".join(sentences(20, 2)) + "\n")
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "sources": [
                    {
                        "name": "synthetic",
                        "package": "-",
                        "version": "-",
                        "licence": "test",
                        "train_chars": 6000,
                    }
                ]
            }
        )
    )
    return folder


@pytest.fixture(scope="session")
def tiny_run(tiny_corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    train.main(["--corpus", str(tiny_corpus), "--out", str(out), "--max-steps", "3", *TINY_ARGS])
    return out

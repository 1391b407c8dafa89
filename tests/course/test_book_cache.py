"""``make book``'s execution cache is emptied when the code the pages import changes: the book's
own ``book/reference`` and the course package ``bertlab`` (bertlab.book_cache; the model side is
tested in tests/course/test_models.py)."""

from __future__ import annotations

import re
from pathlib import Path

from bertlab import book_cache

ROOT = Path(__file__).resolve().parents[2]


def test_make_book_hashes_the_course_package_and_the_books_code():
    line = next(
        line
        for line in (ROOT / "Makefile").read_text().splitlines()
        if "bertlab.book_cache" in line
    )
    folders = re.search(r"bertlab\.book_cache (\S+) (.*)$", line).group(2).split()
    assert set(folders) >= {"book/reference", "bertlab"}, (
        f"make book's cache ignores edits to {line}"
    )


def test_an_edit_to_a_package_module_empties_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(book_cache, "model_identity", lambda: "model")  # no model resolved here
    package = tmp_path / "bertlab"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "masking.py").write_text("P = 0.15\n")
    build = tmp_path / "_build"
    assert not book_cache.refresh(build, [package])
    (build / ".jupyter_cache").mkdir()
    assert not book_cache.refresh(build, [package]) and (build / ".jupyter_cache").is_dir()
    (package / "sub" / "masking.py").write_text("P = 0.2\n")
    assert book_cache.refresh(build, [package]) and not (build / ".jupyter_cache").exists()

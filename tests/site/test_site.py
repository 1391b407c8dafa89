"""Checks on the built website (run by `make test` after `make book`): nothing secret is
published, every page in the toc was built from an executed notebook, widgets load locally."""

import os
from pathlib import Path

import pytest

import course_fixture
from course_fixture import toc_files

REPO = course_fixture.REPO
SITE = Path(
    os.environ.get("BERTLAB_SITE", REPO / "_build" / "html")
).resolve()  # as tests/site/test_browser.py
pytestmark = pytest.mark.site


@pytest.fixture(scope="module")
def site_text() -> dict[Path, str]:
    assert (SITE / "index.html").exists(), "no built site: run `make book` first"
    suffixes = {".html", ".md", ".txt", ".ipynb", ".js", ".json", ".py"}
    return {
        p: course_fixture.readable(p)
        for p in SITE.rglob("*")
        if p.is_file() and p.suffix in suffixes
    }


def test_no_solution_or_hidden_test_is_published(site_text):
    """No two consecutive lines of a hidden test or a reference solution appear on the site."""
    for assignment in course_fixture.assignments():
        solution = course_fixture.solution_notebook(assignment)
        secret = course_fixture.marked_pairs(
            solution, "HIDDEN TESTS"
        ) + course_fixture.marked_pairs(solution, "SOLUTION")
        for path, text in site_text.items():
            assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, path
            leaked = [pair for pair in secret if pair in text]
            assert not leaked, f"{path.relative_to(SITE)} publishes {assignment}'s {leaked[:2]}"


def test_every_toc_page_is_built_and_executed():
    for file in toc_files():
        page = SITE / f"{file}.html"
        assert page.exists(), f"{file} is in the toc but {page} was not built"
        source = (REPO / f"{file}.md").read_text()
        if "```{code-cell}" in source:
            assert "cell_output" in page.read_text(), f"{file} has code cells but no outputs"
        if any(call in source for call in ("plt.", "token_grid(", "vectors_heatmap(", "plot_")):
            # a kernel with a non-inline matplotlib backend (e.g. MPLBACKEND=Agg) drops figures
            assert "<img" in page.read_text(), f"{file} plots but its page has no figure"


def test_no_solutions_in_toc():
    assert not [f for f in toc_files() if f.startswith(("solutions", "exercises", "autograder"))]


def test_widget_renderer_is_served_locally():
    assert (SITE / "_static" / "jupyter-widgets" / "embed.js").exists()
    for page in SITE.rglob("*.html"):
        text = page.read_text()
        if "application/vnd.jupyter.widget-state+json" in text:
            assert "_static/jupyter-widgets/embed.js" in text, (
                f"{page} loads widgets from elsewhere"
            )
            assert "cdn.jsdelivr.net/npm/@jupyter-widgets" not in text, page


def test_no_page_publishes_a_build_path(site_text):
    """No page prints a folder of the machine that built it (the repository, the venv, the
    course cache, the home folder): outputs say ``$BERTLAB_CACHE/...`` or ``<site-packages>/...``."""
    import sys

    from bertlab.models import cache_root

    folders = {str(REPO), sys.prefix, str(cache_root()), str(Path.home())}
    folders = {f.rstrip("/") + "/" for f in folders if len(f) > 1}
    for path, text in site_text.items():
        found = [f for f in folders if f in text]
        assert not found, f"{path.relative_to(SITE)} publishes build-machine folders {found}"


def test_every_chapter_links_its_notebook_and_ends_with_a_self_check():
    """Each chapter with an exercise offers the released notebook for download (never a
    solution), links it on Colab/Binder, and ends with a recap and a self-check."""
    for file in toc_files():
        source = (REPO / f"{file}.md").read_text()
        if "## Exercise" not in source:
            continue
        page = (SITE / f"{file}.html").read_text()
        assert "## Recap" in source and "## Self-check" in source, (
            f"{file}: add a recap and a self-check"
        )
        assert source.count(":class: dropdown") >= 3, f"{file}: at least three self-check questions"
        downloads = [a for a in page.split('href="')[1:] if "_downloads/" in a.split('"')[0]]
        assert downloads, f"{file}: no download of its notebook"
        for link in downloads:
            target = SITE / Path(file).parent / link.split('"')[0]
            assert target.suffix == ".ipynb" and target.exists(), (
                f"{file}: broken download {link[:80]}"
            )
            assert "### BEGIN" not in target.read_text() and "solutions" not in link.split('"')[0]
        assert "colab.research.google.com" in page and "mybinder.org" in page, (
            f"{file}: no launch links"
        )

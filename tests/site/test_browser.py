"""The built website in headless Chromium, as a reader uses it (run by `make test` after `make book`).

Every page of the table of contents is opened from a localhost server with nothing reachable
beyond it: no console error, no failed request, no request off localhost, every image loaded and
described, every widget drawn and its controls live, every formula typeset by the site's own
MathJax, headings in order, code readable; a screenshot at a laptop and a phone width lands in
`_build/screenshots/`. Search finds each chapter, the exercise links point at the chapter's own
notebook, nothing secret is reachable by following links, and broken copies of a page show that
each check fails when it should. The site is `$BERTLAB_SITE` (default `_build/html`).
Helpers: tests/browser.py. Skipped, saying why, only where Chromium cannot run.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import unquote, urldefrag, urljoin, urlparse
from urllib.request import Request, urlopen

import pytest
import yaml

import browser
import course_fixture
from browser import toc_pages

REPO = course_fixture.REPO
SITE = browser.SITE
SCREENSHOTS = SITE.parent / "screenshots"
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium


@pytest.fixture(scope="module")
def reports(context, base) -> dict[str, browser.PageReport]:
    """Every built page of the toc, visited once (test_every_toc_page_is_built names the others)."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    return {
        path: browser.visit(context, base, path, screenshots=SCREENSHOTS)
        for path in toc_pages()
        if (SITE / path).exists()
    }


def test_every_toc_page_is_built(reports):
    missing = [path for path in toc_pages() if path not in reports]
    assert not missing, f"in _toc.yml but not in {SITE} (rebuild the site): {missing}"


def failures(reports, *kinds: str) -> list[str]:
    return [
        f"{path}: [{kind}] {message}"
        for path, report in reports.items()
        for kind in kinds
        for message in report.of(kind)
    ]


def test_pages_load_cleanly_and_offline(reports):
    """No console error, no failed request, nothing asked of any host but localhost."""
    assert not failures(reports, "console", "requests", "offsite")


def test_every_image_loads_and_has_alt_text(reports):
    assert not failures(reports, "images", "alt")


def test_figures_are_described_not_named_by_their_file(reports):
    """myst-nb names a cell's figure by its file unless the cell says (metadata mystnb: image: alt: ...)."""
    assert not failures(reports, "alt-file-name")


def test_every_formula_is_typeset_by_the_local_mathjax(reports):
    assert sum(r.formulas for r in reports.values()) > 0, (
        "no page has mathematics: the check is void"
    )
    assert not failures(reports, "math")


def test_widgets_draw_and_their_controls_change_what_is_shown(reports):
    """Every view drawn (progress bars too); every dropdown and slider changes the picture."""
    with_controls = [path for path, r in reports.items() if r.controls_tried]
    # Chapter 2 (attention layer and head) and Chapter 4 (masking draw) at the least
    assert len(with_controls) >= 2, f"widget controls found only on {with_controls}"
    assert not failures(reports, "widgets", "controls")


def test_headings_do_not_skip_levels_and_code_is_readable(reports):
    assert not failures(reports, "headings", "contrast")


def test_screenshots_match_the_content(reports):
    """A full-page screenshot at each width, as high as the page, with ink down to its end."""
    assert not failures(reports, "screenshot")
    for path, report in reports.items():
        assert len(report.screenshots) == 2 and all(p.stat().st_size for p in report.screenshots), (
            path
        )


def distinctive_word(path: str, reports) -> str:
    """A word of this page's prose that no other page's prose uses (or the rarest one)."""

    def words(text: str) -> Counter:
        return Counter(re.findall(r"\b[a-z]{7,}\b", text.lower()))

    mine = words(reports[path].prose)
    # Sphinx's search stems words ("transform" finds "transformers"), so a word is only as rare
    # as its first seven letters are in the other pages' prose.
    others = [r.prose.lower() for p, r in reports.items() if p != path]
    assert mine, f"{path} has no prose to search for"
    return min(mine, key=lambda w: (sum(w[:7] in o for o in others), -mine[w], w))


def test_search_finds_each_chapter_by_a_word_in_its_body(context, base, reports):
    page = context.new_page()
    try:
        for path in reports:
            word = distinctive_word(path, reports)
            page.goto(f"{base}search.html?q={word}")
            # Sphinx lists hits one by one and writes this summary only after the last one.
            page.wait_for_function(
                "() => /Search finished|did not match/.test(document.querySelector("
                "'#search-results .search-summary')?.innerText || '')",
                timeout=15_000,
            )
            hits = page.eval_on_selector_all("#search-results a", "els => els.map(a => a.href)")
            assert any(urlparse(h).path == f"/{path}" for h in hits), (
                f"searching {word!r} did not find {path}: {hits}"
            )
    finally:
        page.close()


def repository() -> tuple[str, str]:
    """owner/name of the course repository, as _config.yml states it."""
    url = yaml.safe_load((REPO / "_config.yml").read_text())["repository"]["url"]
    return urlparse(url).path.strip("/"), url


def graded_cells(notebook: dict) -> list[str]:
    """The nbgrader cell ids of a notebook, in order: what makes it this assignment."""
    return [
        cell["metadata"]["nbgrader"]["grade_id"]
        for cell in notebook["cells"]
        if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})
    ]


def test_exercise_links_point_at_the_chapters_own_notebook(base, reports):
    owner_and_name, _ = repository()
    pages = {path: r.exercise for path, r in reports.items() if r.exercise}
    assert pages, "no page has an Exercise section"
    for path, section in pages.items():
        ids = sorted({n for n in section["named"] if re.fullmatch(r"ps\d\d[a-z]?-[a-z0-9-]+", n)})
        assert len(ids) == 1, (
            f"{path}: the Exercise section should name one assignment, names {ids}"
        )
        (assignment,) = ids
        released = REPO / "exercises" / assignment / f"{assignment}.ipynb"
        assert released.exists(), f"{path} names {assignment}, which has no released notebook"
        assert section["downloads"], f"{path}: no download link for {assignment}.ipynb"
        for href in section["downloads"]:
            assert Path(urlparse(href).path).name == f"{assignment}.ipynb", (
                f"{path}: download {href}"
            )
            with urlopen(href) as response:
                offered = json.loads(response.read())
            assert graded_cells(offered) == graded_cells(json.loads(released.read_text())), (
                f"{path}: {href} is not the released {released.name} (other graded cells)"
            )
        assert section["launches"], f"{path}: no launch links (Colab, Binder) for {assignment}"
        notebook = f"exercises/{assignment}/{assignment}.ipynb"
        for label, href in section["launches"]:
            assert notebook in unquote(href), (
                f"{path}: {label} link {href} does not open {notebook}"
            )
            assert owner_and_name in unquote(href), (
                f"{path}: {label} link {href} is not {owner_and_name}"
            )


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [value for name, value in attrs if name in {"href", "src"} and value]


def test_nothing_secret_is_reachable_by_following_links(base, reports):
    """Crawl everything linked from the toc pages (sources, downloads, scripts, ...): no line pair
    of a hidden test or reference solution, and no link that leads nowhere."""
    secrets = []
    for assignment in course_fixture.assignments():
        solution = course_fixture.solution_notebook(assignment)
        secrets += course_fixture.marked_pairs(
            solution, "HIDDEN TESTS"
        ) + course_fixture.marked_pairs(solution, "SOLUTION")
    assert secrets
    queue = [urljoin(base, path) for path in reports] + [
        link for r in reports.values() for link in r.links
    ]
    seen, broken, leaks = set(), [], []
    while queue:
        url = urldefrag(queue.pop())[0].split("?")[0]
        if not url.startswith(base) or url in seen:
            continue
        seen.add(url)
        picture = url.endswith((".png", ".jpg", ".svg", ".gif", ".ico", ".woff", ".woff2", ".ttf"))
        try:  # pictures and fonts hold no text: asking whether they exist is enough
            with urlopen(Request(url, method="HEAD" if picture else "GET")) as response:
                body = response.read()
        except HTTPError as error:
            broken.append(f"{error.code} {url.removeprefix(base)}")
            continue
        text = body.decode("utf-8", errors="replace")
        if (
            "BEGIN HIDDEN TESTS" in text
            or "BEGIN SOLUTION" in text
            or any(s in text for s in secrets)
        ):
            leaks.append(url.removeprefix(base))
        if url.endswith((".html", "/")):
            parser = _Links()
            parser.feed(text)
            queue += [urljoin(url, link) for link in parser.links]
    for part in ("_sources/", "_downloads/", "_static/"):  # the page sources and notebooks too
        assert any(f"/{part}" in url for url in seen), f"the crawl reached nothing under {part}"
    assert not leaks, f"solution or hidden-test text reachable at {leaks}"
    assert not broken, f"links that lead nowhere: {broken}"


# A check that cannot fail proves nothing: break copies of a real page, one way each ----------


def _widget_page() -> str:
    """The page with the most to break: linked widgets, a figure, mathematics, code."""

    def score(path: str) -> int:
        html = (SITE / path).read_text()
        return sum(
            part in html
            for part in ('"LinkModel"', 'src="../_images/', 'class="math', 'class="highlight')
        )

    pages = [
        path
        for path in toc_pages()
        if (SITE / path).exists() and "widget-state+json" in (SITE / path).read_text()
    ]
    assert pages, "no page with widgets to break"
    return max(pages, key=score)


def _unlink_controls(html: str) -> str:
    """The controls stay, but their links to what is shown point at an invisible attribute."""

    def edit(match):
        state = json.loads(match.group(2))
        for model in state["state"].values():
            if model["model_name"] in {"LinkModel", "DirectionalLinkModel"}:
                model["state"]["target"][1] = "tooltip"
        return match.group(1) + json.dumps(state) + match.group(3)

    return re.sub(
        r'(<script type="application/vnd.jupyter.widget-state\+json">)(.*?)(</script>)',
        edit,
        html,
        count=1,
        flags=re.S,
    )


BREAKAGES = {
    # name: (what is done to the page, the kinds of problem it must raise)
    "missing-image": (
        lambda h: re.sub(
            r'(<img alt="[^"]*" src="\.\./_images/)[^"]+(\.png")', r"\1gone\2", h, count=1
        ),
        {"images", "requests"},
    ),
    "cdn-request": (
        lambda h: h.replace(
            "</head>",
            '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/'
            'tex-mml-chtml.js"></script></head>',
            1,
        ),
        {"offsite"},
    ),
    "broken-widget": (
        lambda h: re.sub(r'("model_id": ")[0-9a-f]+', r"\g<1>" + "0" * 32, h, count=1),
        {"widgets"},
    ),
    "dead-control": (_unlink_controls, {"controls"}),
    # MathJax asked of a CDN, as Sphinx does by default: offline, every formula stays raw TeX
    "cdn-mathjax": (
        lambda h: re.sub(
            r'src="[^"]*mathjax/tex-mml-chtml\.js[^"]*"',
            'src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"',
            h,
        ),
        {"math", "offsite"},
    ),
    "script-error": (
        lambda h: h.replace("</body>", "<script>undefinedCourseFunction()</script></body>", 1),
        {"console"},
    ),
    "collapsed": (
        lambda h: h.replace(
            "</head>", "<style>.bd-article{max-height:120px;overflow:hidden}</style></head>", 1
        ),
        {"screenshot"},
    ),
    "empty": (
        lambda h: re.sub(
            r'(<article class="bd-article">).*?(</article>)', r"\1\2", h, count=1, flags=re.S
        ),
        {"screenshot"},
    ),
    "inaccessible": (
        lambda h: re.sub(
            r"<h2>([^<]*<a class=\"headerlink\".*?)</h2>",
            r"<h4>\1</h4>",
            re.sub(r'<img alt="[^"]*"( src="\.\./_images/)', r"<img\1", h, count=1),
            count=1,
            flags=re.S,
        ),
        {"alt", "headings"},
    ),
    "unreadable-code": (
        lambda h: h.replace(
            "</head>",
            "<style>.highlight pre, .highlight pre span{color:#ddd !important}</style></head>",
            1,
        ),
        {"contrast"},
    ),
}


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory):
    """A copy of the site with one broken copy of a widget page per breakage, beside the original."""
    root = tmp_path_factory.mktemp("broken-site") / "html"
    shutil.copytree(SITE, root, ignore=shutil.ignore_patterns("_sources", "_downloads", "*.ipynb"))
    page = _widget_page()
    original = (root / page).read_text()
    names = {}
    for name, (breakage, _) in BREAKAGES.items():
        broken = breakage(original)
        assert broken != original, f"breakage {name} changed nothing on {page}"
        target = str(Path(page).with_name(f"broken-{name}.html"))
        (root / target).write_text(broken)
        names[name] = target
    return root, page, names


def test_broken_pages_fail_the_checks(context, broken_site, tmp_path):
    root, page, names = broken_site
    with browser.serve(root) as base:
        # the copy itself is sound (its screenshots and controls are the real page's, checked above)
        clean = browser.visit(context, base, page, widths={}, controls=False)
        already = {kind: found for kind, found in clean.problems.items() if kind != "alt-file-name"}
        assert not already, f"the unbroken copy of {page} already fails: {already}"
        missed = {}
        for name, (_, kinds) in BREAKAGES.items():
            # only the slow checks a breakage needs: screenshots, moving the controls
            widths = {"laptop": browser.LAPTOP} if "screenshot" in kinds else {}
            report = browser.visit(
                context,
                base,
                names[name],
                widths=widths,
                screenshots=tmp_path,
                controls="controls" in kinds,
            )
            missed.update(
                {f"{name}: {kind}": report.problems for kind in kinds if not report.of(kind)}
            )
    assert not missed, f"breakages the checks did not notice: {missed}"

"""The built pages read like a textbook in Chromium (issue 49; run by `make test` after `make book`).

At a 1280-pixel window no code block scrolls sideways (every code cell is formatted to its
column by tools/format_book_code.py, folded cells opened too), except the lines that
tools/long_code_lines.yml allows; at a 390-pixel phone width no page scrolls sideways as a whole
(wide things scroll inside their own box); and every box that scrolls can be reached by the
keyboard, with a tab stop and a label (book/_site/scroll-boxes.js; axe's rule
scrollable-region-focusable). A printed output longer than :data:`LONG_OUTPUT` lines is evidence,
not the lesson, and sits in a box of its own (the cell's tag ``output_scroll``) or folded
(``hide-output``), so the figure or the prose after it stays near the code. The site is
`$BERTLAB_SITE` (default `_build/html`); the browser is tests/browser.py's, offline.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
import yaml

import browser
import course_fixture
from browser import toc_pages

REPO = course_fixture.REPO
SITE = browser.SITE
ALLOWED = REPO / "tools" / "long_code_lines.yml"
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium
#: A printed output longer than this many lines scrolls in its own box or is folded.
LONG_OUTPUT = 20
#: The cell tags (Jupyter Book's) that keep a long output out of the reader's way.
FOLDING_TAGS = ("tag_output_scroll", "tag_scroll-output", "tag_hide-output", "tag_hide-cell")

# Every folded cell opened, then the code blocks (sources and printed outputs) wider than their box.
_WIDE_CODE_JS = """() => {
  const article = document.querySelector('article.bd-article');
  for (const details of article.querySelectorAll('details:not([open])')) details.open = true;
  return [...article.querySelectorAll('div.highlight pre')]
    .filter(pre => pre.getClientRects().length && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => ({lines: pre.textContent.split('\\n'), over: pre.scrollWidth - pre.clientWidth,
                  where: pre.closest('.cell_output') ? 'output' : 'code'}));
}"""

# Whether the page as a whole scrolls sideways, and the outermost elements that stick out.
_PAGE_WIDTH_JS = """() => {
  const root = document.documentElement, limit = root.clientWidth + 1;
  const clipped = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (/auto|scroll|hidden|clip/.test(getComputedStyle(a).overflowX)) return true; } return false; };
  const out = [...document.body.querySelectorAll('*')].filter(el => {
    const r = el.getBoundingClientRect();
    const parent = el.parentElement;
    return r.width && r.right > limit && !clipped(el) && !(parent && parent.getBoundingClientRect().right > limit);
  }).map(el => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} reaches `
    + `${Math.round(el.getBoundingClientRect().right)} px`);
  return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, out: out.slice(0, 5)};
}"""

# Boxes in the article that scroll, and whether a keyboard can reach them and what they are called.
_SCROLL_BOXES_JS = """() => [...document.querySelector('article.bd-article').querySelectorAll('*')]
  .filter(el => el.getClientRects().length).filter(el => {
    const s = getComputedStyle(el);
    return (/auto|scroll/.test(s.overflowX) && el.scrollWidth > el.clientWidth + 1)
        || (/auto|scroll/.test(s.overflowY) && el.scrollHeight > el.clientHeight + 1);
  }).map(el => ({what: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`,
                 text: el.textContent.trim().slice(0, 50), tabIndex: el.tabIndex,
                 label: (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || '').trim()}))"""


def allowed_lines() -> dict[str, list[str]]:
    """The long lines tools/long_code_lines.yml allows, by site page (book/x.md -> book/x.html)."""
    allowed: dict[str, list[str]] = {}
    for entry in yaml.safe_load(ALLOWED.read_text()) or []:
        allowed.setdefault(str(Path(entry["page"]).with_suffix(".html")), []).append(
            entry["line"].strip()
        )
    return allowed


def long_outputs(html: str) -> list[str]:
    """The printed outputs of a built page longer than :data:`LONG_OUTPUT` lines whose cell is
    neither scrolled nor folded (:data:`FOLDING_TAGS`), each by its first line."""
    from bs4 import BeautifulSoup

    found = []
    for cell in BeautifulSoup(html, "html.parser").select("div.cell"):
        if any(tag in cell.get("class", []) for tag in FOLDING_TAGS):
            continue
        for out in cell.select("div.cell_output pre"):
            lines = out.get_text().strip("\n").split("\n")
            if len(lines) > LONG_OUTPUT:
                found.append(f"{len(lines)} lines, from {lines[0].strip()[:60]!r}")
    return found


def _open(page, url: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(url, wait_until="load", timeout=60_000)
    page.evaluate("""async () => { await document.fonts.ready;
      if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise; }""")
    page.wait_for_timeout(600)  # widgets drawn, then the scripts' resize and mutation handlers


def wide_code(page, allowed: list[str]) -> list[str]:
    blocks = page.evaluate(_WIDE_CODE_JS)
    return [
        f"a {b['where']} block scrolls {b['over']} px sideways: {max(b['lines'], key=len).strip()[:80]!r}"
        for b in blocks
        if not any(line.strip().startswith(a) for line in b["lines"] for a in allowed)
    ]


def page_too_wide(page) -> list[str]:
    found = page.evaluate(_PAGE_WIDTH_JS)
    if found["scrollWidth"] <= found["clientWidth"]:
        return []
    return [
        f"the page is {found['scrollWidth']} px wide in a {found['clientWidth']} px window: {found['out']}"
    ]


def unreachable_boxes(page) -> list[str]:
    return [
        f"{b['what']} ({b['text']!r}) scrolls, but has tabindex {b['tabIndex']} and label {b['label']!r}"
        for b in page.evaluate(_SCROLL_BOXES_JS)
        if b["tabIndex"] != 0 or not b["label"]
    ]


@pytest.fixture(scope="module")
def site_pages():
    with browser.served_site(SITE) as base, browser.reader() as context:
        page = context.new_page()
        try:
            yield base, page
        finally:
            page.close()


@pytest.fixture(scope="module")
def findings(site_pages) -> dict[str, dict[str, list[str]]]:
    """Every toc page at laptop and at phone width: what each check found, by page."""
    base, page = site_pages
    allowed = allowed_lines()
    found = {}
    for path in toc_pages():
        if not (SITE / path).exists():
            continue
        _open(page, base + path, browser.LAPTOP["width"])
        laptop_boxes = unreachable_boxes(page)
        code = wide_code(page, allowed.get(path, []))
        page.wait_for_timeout(300)
        _open(page, base + path, browser.PHONE["width"])
        phone_width = page_too_wide(page)
        page.evaluate(_WIDE_CODE_JS)  # folded cells opened at this width too
        page.wait_for_timeout(300)
        found[path] = {
            "code": code,
            "phone": phone_width,
            "keyboard": laptop_boxes + unreachable_boxes(page),
        }
    assert found, "no page of the toc is built"
    return found


def _failures(findings, kind: str) -> list[str]:
    return [f"{path}: {message}" for path, found in findings.items() for message in found[kind]]


def test_no_code_block_scrolls_sideways_at_laptop_width(findings):
    assert not _failures(findings, "code"), (
        "wrap the code (python tools/format_book_code.py) or name the line in tools/long_code_lines.yml"
    )


def test_no_page_scrolls_sideways_at_phone_width(findings):
    assert not _failures(findings, "phone")


def test_every_scroll_box_is_reachable_by_keyboard_and_labelled(findings):
    assert not _failures(findings, "keyboard")


def test_long_printed_outputs_scroll_in_their_own_box_or_are_folded():
    """Read in the built pages (no browser needed). A long output the prose quotes is split or
    cut instead: a reader must not scroll a box to find the words the text discusses."""
    found = [
        f"{path}: {message}"
        for path in toc_pages()
        if (SITE / path).exists()
        for message in long_outputs((SITE / path).read_text())
    ]
    assert not found, (
        f"outputs over {LONG_OUTPUT} lines: tag the cell output_scroll (evidence) or print less"
    )


def test_the_long_output_check_catches_one():
    cell = '<div class="cell docutils container {tag}"><div class="cell_output"><pre>{text}</pre></div></div>'
    text = "\n".join(f"row {i}" for i in range(LONG_OUTPUT + 1))
    assert long_outputs(cell.format(tag="", text=text)) == [
        f"{LONG_OUTPUT + 1} lines, from 'row 0'"
    ]
    assert not long_outputs(cell.format(tag="tag_output_scroll", text=text))
    assert not long_outputs(cell.format(tag="", text="\n".join(text.split("\n")[:LONG_OUTPUT])))


def test_every_allowed_long_line_is_still_in_its_page():
    """An allow-list entry whose line has gone allows nothing: remove it. A line is in the page's
    source, or in a file the page shows with literalinclude."""
    for path, lines in allowed_lines().items():
        page = REPO / Path(path).with_suffix(".md")
        source = page.read_text()
        for included in re.findall(r"^```\{literalinclude\} (\S+)", source, flags=re.M):
            source += (page.parent / included).read_text()
        for line in lines:
            assert line in source, f"{ALLOWED.name}: {line!r} is no longer in {path}"


def test_the_checks_catch_a_wide_block_a_wide_page_and_an_unlabelled_box(site_pages):
    """Each check fails on a page broken its way (a check that cannot fail proves nothing),
    and the site's script labels a scroll box that appears after the page loaded."""
    base, page = site_pages
    path = next(
        p for p in toc_pages() if (SITE / p).exists() and "cell_input" in (SITE / p).read_text()
    )
    _open(page, base + path, browser.PHONE["width"])
    assert not page_too_wide(page)
    new_box = page.evaluate("""() => {
      const article = document.querySelector('article.bd-article');
      const cell = article.querySelector('.cell_input div.highlight');
      const pre = document.createElement('pre'); pre.textContent = 'x = ' + '1 + '.repeat(60) + '1';
      cell.appendChild(pre);
      const wide = document.createElement('div'); wide.style.width = '900px'; wide.textContent = 'wide';
      article.appendChild(wide);
      const box = document.createElement('div'); box.id = 'late-box';
      box.style.cssText = 'overflow-x: auto; width: 200px';
      box.innerHTML = '<div style="width: 900px">a box that scrolls</div>';
      article.appendChild(box);
      return !box.hasAttribute('aria-label');
    }""")
    assert new_box, "the box was labelled before the script could have run"
    assert any("'x = 1 + 1" in m for m in wide_code(page, [])), "a long code line went unnoticed"
    assert page_too_wide(page), "a 900 px element at phone width went unnoticed"
    from playwright.sync_api import TimeoutError as NotInTime

    with contextlib.suppress(NotInTime):  # the site's script labels it; the assert says what lacks
        page.wait_for_function(
            "() => { const b = document.getElementById('late-box');"
            " return b.tabIndex === 0 && !!b.getAttribute('aria-label'); }",
            timeout=5_000,
        )
    late = page.evaluate(
        "() => [document.getElementById('late-box').tabIndex, "
        "document.getElementById('late-box').getAttribute('aria-label')]"
    )
    assert late[0] == 0 and late[1], (
        f"book/_site/scroll-boxes.js did not label a new scroll box: {late}"
    )
    page.evaluate("() => document.getElementById('late-box').removeAttribute('aria-label')")
    assert any("a box that scrolls" in m for m in unreachable_boxes(page)), (
        "an unlabelled box went unnoticed"
    )

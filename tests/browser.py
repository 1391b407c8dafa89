"""The built website in headless Chromium, as a reader meets it (used by tests/site/test_browser.py).

Debian's ``chromium`` is driven by Playwright's Python package through ``executable_path``
(Playwright's own browser download is never used), started with the flags that keep it off the
network, in a fresh profile, on a site served from a localhost port. Any request for another
host is recorded and aborted, so a check can never reach the internet either.

``visit`` opens one page and returns every problem it sees, by kind; the same function runs on
the real site and on deliberately broken copies of its pages, which is how the tests show that
each check can fail.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import required

CHROMIUM = Path(os.environ.get("BERTLAB_CHROMIUM", "/usr/bin/chromium"))
# Without these Chromium phones home (updates, sync, field trials) and floods a closed network.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # and no host name resolves: a page that asks for a CDN gets an error, not the CDN
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
# Requests for any other host are aborted too (an IP address needs no resolving). A pattern, not
# a Python function, so Chromium intercepts only those requests and not every local file.
OFFSITE = re.compile(r"^(https?|wss?)://(?!(127\.0\.0\.1|localhost)[:/])")
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'
# Chromium asks every site for /favicon.ico by itself (the site has no icon): not a request the
# site makes, so its 404 is not counted.
IGNORED_PATHS = {"/favicon.ico"}
# WCAG 2 AA contrast for normal text.
MIN_CONTRAST = 4.5


def why_unavailable() -> str | None:
    """Why the browser checks cannot run here (a skip's reason, which CI fails: :mod:`required`),
    or None if they can (launching is tried later)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return required.reason(
            "chromium",
            "Playwright's Python package is not installed (make install, or pip install -r requirements/test.txt)",
        )
    if not os.access(CHROMIUM, os.X_OK):
        return required.reason(
            "chromium",
            f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; .ci/run installs it)",
        )
    return None


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextlib.contextmanager
def serve(root: Path):
    """Serve ``root`` on a free localhost port; yields its base URL ending in '/'."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def is_local(url: str) -> bool:
    scheme = urlparse(url).scheme
    return scheme in {"data", "blob", "about"} or urlparse(url).hostname in LOCAL_HOSTS


@contextlib.contextmanager
def chromium():
    """A Chromium browser context with a fresh profile; requests off localhost are aborted."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="bertlab-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS, viewport=LAPTOP
            )
            context.route(OFFSITE, lambda route: route.abort("blockedbyclient"))
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def toc_pages() -> list[str]:
    """The site paths of the pages in ``_toc.yml``, in reading order (``book/intro.html``, ...)."""
    import course_fixture

    return [f"{file}.html" for file in course_fixture.toc_files()]


#: The built site the checks read: ``make book``'s, or the folder ``BERTLAB_SITE`` names.
SITE = Path(
    os.environ.get("BERTLAB_SITE", Path(__file__).resolve().parents[1] / "_build" / "html")
).resolve()


@contextlib.contextmanager
def served_site(site: Path = SITE):
    """Serve a built site (asserting it was built) on a localhost port; yields its base URL."""
    assert (site / "index.html").exists(), f"no built site in {site}: run `make book` first"
    with serve(site) as url:
        yield url


@contextlib.contextmanager
def reader():
    """:func:`chromium` for a module of site checks, or a skip saying why it cannot run here (no
    Playwright, no Chromium, or a Chromium that cannot start: not findings about the site; CI fails
    it, :mod:`required`)."""
    import pytest

    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    stack = contextlib.ExitStack()
    try:
        context = stack.enter_context(chromium())
    except Exception as error:
        if "launch" in str(error).lower() or "executable" in str(error).lower():
            required.skip(
                "chromium", f"Chromium at {CHROMIUM} cannot start here: {str(error)[:300]}"
            )
        raise
    with stack:
        yield context


@dataclass
class PageReport:
    """What one page showed: problems by kind (empty lists where all is well), plus facts."""

    path: str
    problems: dict[str, list[str]] = field(default_factory=dict)
    prose: str = ""  # the page's paragraphs and list items outside cell outputs
    links: list[str] = field(default_factory=list)  # every href and src on the page, absolute
    exercise: dict = field(default_factory=dict)  # the "Exercise" section's links and ids
    widget_views: int = 0
    controls_tried: int = 0
    formulas: int = 0
    screenshots: list[Path] = field(default_factory=list)

    def add(self, kind: str, message: str) -> None:
        self.problems.setdefault(kind, []).append(message)

    def of(self, kind: str) -> list[str]:
        return self.problems.get(kind, [])


# DOM queries, run in the page once MathJax and the widgets are done -------------------------

_FACTS_JS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const outside = (el, sel) => !el.closest(sel);
  const images = [...document.images].map(img => ({
    src: img.currentSrc || img.src, alt: img.getAttribute('alt'), ok: img.complete && img.naturalWidth > 0,
    inWidget: !!img.closest('.jupyter-widgets'),
    shown: img.getClientRects().length > 0}));
  const math = [...article.querySelectorAll('.math')].map(el => ({
    typeset: !!el.querySelector('mjx-container'), error: !!el.querySelector('mjx-merror'),
    text: el.textContent.slice(0, 60)}));
  const headings = [...article.querySelectorAll('h1,h2,h3,h4,h5,h6')]
    .map(h => [Number(h.tagName[1]), h.textContent.trim().replace(/¶$|#$/, '')]);
  const prose = [...article.querySelectorAll('p, li')].filter(el => outside(el, '.cell_output'))
    .map(el => el.innerText).join('\\n');
  const links = [...document.querySelectorAll('[href], [src]')].map(el => el.href || el.src)
    .filter(u => typeof u === 'string');
  const section = [...article.querySelectorAll('section')].find(s => {
    const h = s.querySelector(':scope > h2'); return h && /^exercise/i.test(h.textContent.trim());});
  const exercise = section ? {
    named: [...section.querySelectorAll('strong, code')].map(el => el.textContent.trim()),
    downloads: [...section.querySelectorAll('a.download, a[href*="_downloads/"]')].map(a => a.href),
    launches: [...section.querySelectorAll('a[href^="http"]')].filter(a => !a.href.startsWith(location.origin))
      .map(a => [a.textContent.trim(), a.href])} : {};
  // the colour a piece of text is drawn on: the first non-transparent background above it
  const background = el => { for (; el; el = el.parentElement) {
      const c = getComputedStyle(el).backgroundColor;
      if (c && !/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') return c; }
    return 'rgb(255, 255, 255)'; };
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  const lowContrast = [];
  // code blocks (sources and outputs) and inline code, as the theme colours them
  for (const pre of article.querySelectorAll('div.highlight pre, :not(pre) > code')) {
    if (!pre.getClientRects().length) continue;
    for (const el of [pre, ...pre.querySelectorAll('span')]) {
      const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
      if (!own) continue;
      const fg = getComputedStyle(el).color, bg = background(el), ratio = contrast(fg, bg);
      const what = `${el.className || 'pre'} "${el.textContent.trim().slice(0, 20)}"`;
      if (ratio < %(MIN_CONTRAST)s) lowContrast.push(`${what} ${fg} on ${bg}: ${ratio.toFixed(2)}`);
    }
  }
  return {images, math, headings, prose, links, exercise, lowContrast,
          text: article.innerText.trim().length,
          views: document.querySelectorAll('%(WIDGET_VIEW)s').length};
}""" % {"MIN_CONTRAST": MIN_CONTRAST, "WIDGET_VIEW": WIDGET_VIEW.replace('"', '\\"')}

# How far the content reaches down the page, and whether anything clips it.
_EXTENT_JS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  let bottom = 0;
  for (const el of article.querySelectorAll('p, li, pre, img, table, h1, h2, h3, .jupyter-widgets')) {
    const r = el.getBoundingClientRect();
    if (r.height > 0 && getComputedStyle(el).visibility !== 'hidden') bottom = Math.max(bottom, r.bottom + scrollY);
  }
  const box = article.getBoundingClientRect();
  return {bottom: Math.ceil(bottom), height: document.documentElement.scrollHeight,
          left: Math.max(0, Math.floor(box.left)), right: Math.ceil(box.right), top: Math.floor(box.top + scrollY)};
}"""

# Widget views the manager has drawn: each view script gets a rendered sibling inside its output.
_DRAWN_JS = """() => [...document.querySelectorAll('%s')].map(s => {
  const area = s.parentElement; const view = area.querySelector('.jupyter-widgets, .widget-subarea');
  return {id: (JSON.parse(s.textContent || '{}').model_id || '?'),
          drawn: !!view && view.getBoundingClientRect().height > 0};
})""" % WIDGET_VIEW.replace('"', '\\"')


def _settle(
    page, report: PageReport, in_flight: dict, quiet_ms: int = 400, limit_s: float = 20
) -> None:
    """Wait until the page's own scripts are done: no request in flight for ``quiet_ms``,
    fonts loaded, MathJax finished typesetting, images decoded."""
    quiet, waited = 0, 0
    while quiet < quiet_ms:
        page.wait_for_timeout(100)
        waited += 100
        quiet = 0 if in_flight else quiet + 100
        if waited > limit_s * 1000:
            report.add(
                "requests", f"still loading after {limit_s:.0f} s: {sorted(in_flight.values())[:5]}"
            )
            break
    page.evaluate("""async () => {
      await document.fonts.ready;
      if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
      await Promise.all([...document.images].map(img => {
        if (img.loading === 'lazy') img.loading = 'eager';
        return img.decode().catch(() => null); }));
    }""")


def _wait_for_widgets(page, timeout_ms: int = 6_000) -> list[dict]:
    try:
        page.wait_for_function(f"() => ({_DRAWN_JS})().every(v => v.drawn)", timeout=timeout_ms)
    except Exception:  # noqa: BLE001 (a timeout: the views that were not drawn are reported)
        pass
    return page.evaluate(_DRAWN_JS)


def _inked_rows(shot: bytes, left: int, right: int) -> list[int]:
    """The rows of the screenshot (in page pixels) where the article's column has something drawn,
    read from the JPEG at a quarter of its size (JPEG decodes that way directly, and fast)."""
    import numpy as np
    from PIL import Image

    image = Image.open(io.BytesIO(shot))
    width, height = image.size
    image.draft("L", (width // 4, height // 4))
    scale = height / image.height
    x0, x1 = int(left / scale), max(int(left / scale) + 1, int(min(right, width) / scale))
    pixels = np.asarray(
        image.convert("L").crop((x0, 0, x1, image.height)), dtype=np.int16
    )  # (rows, cols)
    inked = np.flatnonzero(pixels.max(axis=1) - pixels.min(axis=1) > 24)
    return [int(row * scale) for row in inked]


def _full_page_shot(page, where: str) -> bytes:
    """A full-page JPEG. Chromium has once left such a capture waiting past Playwright's 30 s on
    a busy machine; a second try gets 90 s, and the error then names the page."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    options = dict(full_page=True, type="jpeg", quality=80, animations="disabled")
    try:
        return page.screenshot(**options)
    except PlaywrightTimeout:
        try:
            return page.screenshot(**options, timeout=90_000)
        except PlaywrightTimeout as error:
            raise AssertionError(f"no full-page screenshot of {where} in 120 s: {error}") from None


def check_screenshot(
    page, report: PageReport, name: str, viewport: dict, folder: Path | None
) -> None:
    """A full-page screenshot at this width; its height must be the page's, and ink must reach
    down to where the content ends (an empty or collapsed page fails)."""
    from PIL import Image

    # The theme slides its sidebars in and out when the window changes size; measured halfway
    # through such a slide, the page is not the one in the picture. No transitions, then.
    page.add_style_tag(
        content="*, *::before, *::after {transition: none !important; animation: none !important}"
    )
    page.set_viewport_size(viewport)
    # from the top, as a reader arrives: sticky sidebars are drawn where the scroll left them, so
    # the picture waits for a frame painted after the scroll (no smooth scrolling)
    page.evaluate("""() => new Promise(done => {
      window.scrollTo({top: 0, left: 0, behavior: 'instant'});
      requestAnimationFrame(() => requestAnimationFrame(done));
    })""")
    extent = page.evaluate(_EXTENT_JS)
    shot = _full_page_shot(page, f"{report.path} at {name} width")
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{report.path.removesuffix('.html').replace('/', '-')}-{name}.jpg"
        target.write_bytes(shot)
        report.screenshots.append(target)
    height = Image.open(io.BytesIO(shot)).height
    where = f"{name} ({viewport['width']} px wide)"
    if abs(height - extent["height"]) > 2:
        report.add(
            "screenshot", f"{where}: screenshot is {height} px high, the page {extent['height']} px"
        )
    if extent["bottom"] > height + 2:
        report.add(
            "screenshot",
            f"{where}: content reaches {extent['bottom']} px but the page is only "
            f"{height} px high (collapsed or clipped)",
        )
    if extent["bottom"] - extent["top"] < viewport["height"] / 2:
        report.add(
            "screenshot", f"{where}: the content is only {extent['bottom'] - extent['top']} px high"
        )
    drawn = [
        y
        for y in _inked_rows(shot, extent["left"], extent["right"])
        if extent["top"] <= y <= extent["bottom"]
    ]
    last = drawn[-1] if drawn else 0
    # a quarter-size row stands for 4 page rows
    if last < extent["bottom"] - 200 or 4 * len(drawn) < 0.2 * max(
        1, extent["bottom"] - extent["top"]
    ):
        report.add(
            "screenshot",
            f"{where}: nothing drawn below {last} px, though content reaches "
            f"{extent['bottom']} px ({len(drawn)} rows with ink)",
        )


def _changes(root, before: bytes, seconds: float = 3.0) -> bool:
    """Whether what a widget area shows (:func:`_visible_without_controls`) differs from
    ``before`` within ``seconds``: asked again until it does, so a quick view passes at once and
    a slow one is given time, rather than one look after a fixed pause."""
    deadline = time.monotonic() + seconds
    while _visible_without_controls(root) == before:
        if time.monotonic() > deadline:
            return False
        root.page.wait_for_timeout(50)
    return True


def _visible_without_controls(root):
    """A picture of a widget area with its controls hidden: what the controls change."""
    page = root.page
    page.add_style_tag(
        content=".bertlab-hide-controls .widget-dropdown, .bertlab-hide-controls "
        ".widget-slider, .bertlab-hide-controls .widget-readout "
        "{visibility: hidden !important}"
    )
    root.evaluate("el => el.classList.add('bertlab-hide-controls')")
    try:
        return root.screenshot(animations="disabled")
    finally:
        root.evaluate("el => el.classList.remove('bertlab-hide-controls')")


def check_controls(page, report: PageReport) -> None:
    """Every dropdown and slider of every drawn widget must change what the widget shows."""
    roots = page.locator(".cell_output .widget-subarea > .jupyter-widgets")
    for r in range(roots.count()):
        root = roots.nth(r)
        dropdowns = root.locator(".widget-dropdown select")
        sliders = root.locator(".widget-slider .noUi-handle, .widget-slider input[type=range]")
        for kind, controls in (("dropdown", dropdowns), ("slider", sliders)):
            for c in range(controls.count()):
                control = controls.nth(c)
                label = f"widget {r + 1}, {kind} {c + 1}"
                root.scroll_into_view_if_needed()
                before = _visible_without_controls(root)
                if kind == "dropdown":
                    options = control.locator("option").count()
                    if options < 2:
                        continue
                    current = control.evaluate("el => el.selectedIndex")
                    control.select_option(index=(current + 1) % options)
                else:
                    control.focus()
                    page.keyboard.press("ArrowRight")
                report.controls_tried += 1
                if not _changes(root, before):
                    report.add("controls", f"{label}: changing it did not change what is shown")


def visit(
    context,
    base: str,
    path: str,
    *,
    screenshots: Path | None = None,
    widths: dict[str, dict] | None = None,
    controls: bool = True,
) -> PageReport:
    """Open ``base + path`` at laptop width and check it; then take a screenshot at each width."""
    widths = {"laptop": LAPTOP, "phone": PHONE} if widths is None else widths
    report = PageReport(path)
    page = context.new_page()
    page.set_viewport_size(LAPTOP)

    def on_console(message):
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        if urlparse(url).path in IGNORED_PATHS:
            return
        report.add("console", f"{message.text[:300]} ({url.removeprefix(base) or 'inline'})")

    def on_response(response):
        if response.status >= 400 and urlparse(response.url).path not in IGNORED_PATHS:
            report.add("requests", f"{response.status} {response.url.removeprefix(base)}")

    def on_failed(request):
        if is_local(request.url):
            report.add("requests", f"failed: {request.url.removeprefix(base)} ({request.failure})")

    in_flight: dict = {}
    page.on("request", lambda r: in_flight.__setitem__(r, r.url.removeprefix(base)))
    page.on("requestfinished", lambda r: in_flight.pop(r, None))
    page.on("requestfailed", lambda r: in_flight.pop(r, None))
    page.on("console", on_console)
    page.on("pageerror", lambda error: report.add("console", f"uncaught: {error}"))
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    page.on("request", lambda r: None if is_local(r.url) else report.add("offsite", r.url))
    try:
        page.goto(base + path, wait_until="load", timeout=60_000)
        _settle(page, report, in_flight)
        drawn = _wait_for_widgets(page)
        for view in drawn:
            if not view["drawn"]:
                report.add("widgets", f"widget view {view['id']} was not drawn")
        facts = page.evaluate(_FACTS_JS)
        report.widget_views, report.prose, report.links = (
            facts["views"],
            facts["prose"],
            facts["links"],
        )
        report.exercise, report.formulas = facts["exercise"], len(facts["math"])
        if facts["text"] < 100:
            report.add("screenshot", f"the page shows only {facts['text']} characters of text")
        for image in facts["images"]:
            name = image["src"].removeprefix(base)[:80]
            if not image["ok"] and (
                image["shown"] or not image["inWidget"]
            ):  # a hidden stack page may wait
                report.add("images", f"not loaded: {name}")
            # precomputed widget views are pictures of what the text around them describes;
            # ipywidgets' Image has no alt attribute to set
            alt = (image["alt"] or "").strip()
            if not image["inWidget"] and not alt:
                report.add("alt", f"no alt text: {name}")
            elif alt and Path(urlparse(image["src"]).path).name == Path(alt).name:
                # myst-nb's default for a cell's figure: a screen reader reads out a hash
                report.add("alt-file-name", f"alt text is only the file name: {name}")
        for formula in facts["math"]:
            if not formula["typeset"] or formula["error"]:
                report.add("math", f"not typeset by MathJax: {formula['text']!r}")
        levels = facts["headings"]
        if levels and levels[0][0] != 1:
            report.add("headings", f"first heading is h{levels[0][0]}: {levels[0][1]!r}")
        for (previous, _), (level, text) in zip(levels, levels[1:]):
            if level > previous + 1:
                report.add("headings", f"h{previous} is followed by h{level}: {text!r}")
        for line in facts["lowContrast"]:
            report.add("contrast", line)
        if controls and report.widget_views:
            check_controls(page, report)
        for name, viewport in widths.items():
            check_screenshot(page, report, name, viewport, screenshots)
    finally:
        page.close()
    return report

"""axe-core on every page of the built site: no serious or critical violation (run after `make book`).

axe-core comes inside the ``axe-playwright-python`` wheel and is injected into the page, so the
check needs no network. Every toc page is checked as a reader first sees it, and the two "Try it"
boxes once more after they have answered (tests/site/test_live_models.py tests what they answer).
:data:`KNOWN` names, per page, the rules still failing for a reason outside the page's prose,
each with what fixes it; a rule not listed there fails the test. axe's ``region`` rule
(content outside landmarks) is "moderate" and the theme's own, so it is reported, not gated.
The site is `$BERTLAB_SITE` (default `_build/html`); helpers: tests/browser.py.
"""

from __future__ import annotations


import pytest

import browser
from browser import toc_pages

SITE = browser.SITE
GATED = ("serious", "critical")
#: page -> {axe rule: why it still fails and what fixes it}. Remove an entry once its fix lands.
KNOWN: dict[str, dict[str, str]] = {}
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium


def violations(page, context: str | None = None) -> dict[str, int]:
    """{rule: number of nodes} of axe's serious and critical violations on the page (or in ``context``)."""
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page, context=context, options={"resultTypes": ["violations"]})
    return {v["id"]: len(v["nodes"]) for v in result.response["violations"] if v["impact"] in GATED}


@pytest.mark.parametrize("path", toc_pages())
def test_no_serious_or_critical_axe_violation(context, base, path):
    page = context.new_page()
    try:
        page.goto(base + path)
        page.wait_for_load_state("load")  # not "networkidle": a widget-heavy page may never be idle
        page.wait_for_timeout(1500)  # the widgets draw and the theme sets code blocks' tabindex
        found = violations(page)
    finally:
        page.close()
    unexplained = {rule: n for rule, n in found.items() if rule not in KNOWN.get(path, {})}
    assert not unexplained, f"{path}: axe finds {unexplained} (rule: nodes)"
    stale = sorted(set(KNOWN.get(path, {})) - set(found))
    assert not stale, f"{path}: axe no longer finds {stale}: remove the entry from KNOWN"


@pytest.mark.parametrize(
    ("path", "box"),
    [
        ("book/04-masked-language-modelling.html", '[data-live="fillmask"]'),
        ("book/06b-masked-diffusion.html", '[data-live="canvas"]'),
    ],
)
def test_the_try_it_boxes_pass_axe_once_they_have_answered(context, base, path, box):
    page = context.new_page()
    try:
        page.goto(base + path)
        page.wait_for_function(
            f"document.querySelector('{box}')?.dataset.state === 'idle'", timeout=30_000
        )
        assert violations(page, box) == {}
        page.click(f"{box} button[type=submit]")  # the box's run-everything button
        page.wait_for_function(
            f"['done', 'error'].includes(document.querySelector('{box}').dataset.state)",
            timeout=120_000,
        )
        assert page.eval_on_selector(box, "b => b.dataset.state") == "done"
        assert violations(page, box) == {}
    finally:
        page.close()

"""What the checks of the built site share: the site served on localhost and one headless Chromium
per module (:mod:`browser`; the Try it boxes' module keeps a Chromium of its own that records
every request), and the pages of the table of contents (:func:`browser.toc_pages`)."""

from __future__ import annotations

import pytest

import browser


@pytest.fixture(scope="module")
def base():
    """The built site (``$BERTLAB_SITE``, default ``_build/html``) on localhost: its URL."""
    with browser.served_site(browser.SITE) as url:
        yield url


@pytest.fixture(scope="module")
def context():
    """A browser context of headless Chromium, nothing off localhost reachable (or a skip that CI
    fails: :mod:`required`)."""
    with browser.reader() as ctx:
        yield ctx

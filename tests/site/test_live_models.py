"""The "Try it" boxes of Chapters 4 and 6b in headless Chromium (run by `make test` after `make book`).

The boxes run the course's models in the page (book/live/, exported by recipes/site/web_models.py).
Here the browser must give onnxruntime-Python's answers (``_static/live/models/reference.json``):
the top 5 fills and their probabilities within 1e-4 for three sentences, and the canvas's every
step for a fixed seed in both orders, written at once (Run all) and one pass per press (Step);
its tokenizer must equal transformers' on every probe sentence. No request may leave the site,
a loaded box must still answer offline, a missing runtime or model file must say so in the box,
the box must work from the keyboard alone, and the page must read without JavaScript and say
how to serve the site when opened as a file. The site is `$BERTLAB_SITE` (default
`_build/html`); helpers: tests/browser.py.
"""

from __future__ import annotations

import json
import re
from urllib.request import urlopen

import pytest

import browser

SITE = browser.SITE
LIVE = SITE / "_static" / "live"
FILL_PAGE = "book/04-masked-language-modelling.html"
CANVAS_PAGE = "book/06b-masked-diffusion.html"
FILL, CANVAS = '[data-live="fillmask"]', '[data-live="canvas"]'
LOAD_MS = 120_000  # the first query downloads ~60 MB and compiles the runtime
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium


@pytest.fixture(scope="module")
def reference() -> dict:
    path = LIVE / "models" / "reference.json"
    assert path.is_file(), (
        f"no {path}: build the site with `make book` (it runs PYTHONPATH=book python -m recipes.site.web_models)"
    )
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def base(reference):
    with browser.serve(SITE) as url:
        yield url


@pytest.fixture(scope="module")
def context():
    with browser.reader() as ctx:
        ctx.requests = []
        ctx.on("request", lambda request: ctx.requests.append(request.url))
        yield ctx


def state(page, box: str, timeout: int = LOAD_MS, states=("done", "error")) -> str:
    """Wait until the box is in one of ``states``; returns its state."""
    page.wait_for_function(
        f"{list(states)}.includes(document.querySelector('{box}')?.dataset.state)", timeout=timeout
    )
    return page.eval_on_selector(box, "b => b.dataset.state")


def status(page, box: str) -> str:
    return page.inner_text(f"{box} .bertlab-live-status")


def fills(page) -> list[tuple[int, float]]:
    return page.eval_on_selector_all(
        f"{FILL} tr[data-id]", "rs => rs.map(r => [Number(r.dataset.id), Number(r.dataset.prob)])"
    )


@pytest.fixture(scope="module")
def fill_page(context, base):
    page = context.new_page()
    page.goto(base + FILL_PAGE)
    state(page, FILL, 30_000, ("idle", "error"))
    yield page
    page.close()


def ask(page, text: str) -> str:
    page.fill(f"{FILL} input", text)
    page.press(f"{FILL} input", "Enter")
    page.wait_for_function(f"document.querySelector('{FILL}').dataset.state !== 'idle'")
    return state(page, FILL)


def test_the_box_names_its_model_and_says_nothing_leaves_the_browser(fill_page):
    text = fill_page.inner_text(FILL)
    assert "bertlab-minilm-l6-mlm" in text and "nothing you type leaves it" in text
    assert " MB" in status(fill_page, FILL), (
        "the box should give the download's size before it starts"
    )


@pytest.mark.parametrize("n", range(3))
def test_fill_mask_gives_the_reference_answers(fill_page, reference, n):
    example = reference["fill_mask"][n]
    assert ask(fill_page, example["text"]) == "done", status(fill_page, FILL)
    (want,) = example["fills"]
    got = fills(fill_page)
    assert [i for i, _ in got] == want["ids"], (example["text"], got, want)
    assert all(abs(p - q) <= 1e-4 for (_, p), q in zip(got, want["probs"])), (got, want["probs"])


def test_the_tokenizer_and_the_generator_are_pythons(fill_page, reference):
    got = fill_page.evaluate(
        """async (texts) => {
      const { tokenizer } = await import('../_static/live/runtime.mjs');
      const { mulberry32 } = await import('../_static/live/canvas.mjs');
      const tok = await tokenizer();
      const draw = mulberry32(0);
      return { ids: texts.map((t) => tok.encode(t)), draws: Array.from({ length: 8 }, draw) };
    }""",
        list(reference["tokenized"]),
    )
    assert dict(zip(reference["tokenized"], got["ids"])) == reference["tokenized"]
    assert got["draws"] == reference["mulberry32_seed0"]


def test_no_request_leaves_the_site(fill_page, context, base):
    assert ask(fill_page, "Cows give us [MASK].") == "done"
    offsite = [url for url in context.requests if not browser.is_local(url)]
    assert not offsite, offsite
    assert any(url.endswith(".wasm") for url in context.requests)


def test_a_loaded_box_answers_offline(fill_page, context, reference):
    context.set_offline(True)
    try:
        example = reference["fill_mask"][0]
        assert ask(fill_page, example["text"]) == "done", status(fill_page, FILL)
        assert [i for i, _ in fills(fill_page)] == example["fills"][0]["ids"]
    finally:
        context.set_offline(False)


@pytest.mark.parametrize("missing", ["ort-wasm-simd-threaded.wasm", "model_*.onnx"])
def test_a_missing_file_says_so_in_the_box(context, base, missing):
    page = context.new_page()
    page.route(
        f"**/_static/live/**/{missing}", lambda route: route.fulfill(status=404, body="not found")
    )
    try:
        page.goto(base + FILL_PAGE)
        state(page, FILL, 30_000, ("idle",))
        page.click(f"{FILL} button")
        assert state(page, FILL, 30_000) == "error"
        assert "missing (HTTP 404)" in status(page, FILL) and "make book" in status(page, FILL), (
            status(page, FILL)
        )
    finally:
        page.close()


def test_the_keyboard_alone_runs_the_box(context, base):
    page = context.new_page()
    try:
        page.goto(base + FILL_PAGE)
        state(page, FILL, 30_000, ("idle",))
        for _ in range(400):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement?.id") == "bertlab-fillmask-text":
                break
        else:
            pytest.fail("Tab never reached the box's input")
        page.keyboard.press("Control+A")
        page.keyboard.type("The [MASK] barked at the postman all morning.")
        page.keyboard.press("Enter")
        assert state(page, FILL) == "done", status(page, FILL)
        assert len(fills(page)) == 5
    finally:
        page.close()


def test_without_javascript_or_from_a_file_the_page_says_how_to_serve_it(context, base):
    serve = "python -m http.server -d _build/html 8000"
    html = urlopen(base + FILL_PAGE).read().decode()  # what a browser without JavaScript shows
    assert 'class="bertlab-live-note"' in html and serve in html
    page = context.new_page()  # opened as a file, Chromium refuses the module: the note stays
    try:
        refused = re.compile(r"Access to script at '.*/fillmask\.mjs' .* blocked by CORS policy")
        with page.expect_console_message(lambda m: bool(refused.search(m.text))):
            page.goto((SITE / FILL_PAGE).as_uri())
        assert serve in page.inner_text(f"{FILL} .bertlab-live-note")
        assert page.eval_on_selector(FILL, "b => b.dataset.state") is None
    finally:
        page.close()


def canvas_rows(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"{CANVAS} tr[data-ids]", "rs => rs.map(r => [r.dataset.ids, r.dataset.committed])"
    )


def reference_rows(want: dict) -> list[list[str]]:
    return [
        [" ".join(map(str, s["canvas"])), " ".join(map(str, s["committed"]))] for s in want["steps"]
    ]


def open_canvas(context, base, want: dict, order: str):
    page = context.new_page()
    page.goto(base + CANVAS_PAGE)
    state(page, CANVAS, 30_000, ("idle",))
    assert page.input_value(f"{CANVAS} #bertlab-canvas-word") == want["word"]
    page.select_option(f"{CANVAS} #bertlab-canvas-order", order)
    page.fill(f"{CANVAS} #bertlab-canvas-seed", str(want["seed"]))
    return page


@pytest.mark.parametrize("order", ["confidence", "random"])
def test_the_canvas_writes_the_reference_steps(context, base, reference, order):
    want = next(c for c in reference["canvas"] if c["order"] == order)
    page = open_canvas(context, base, want, order)
    try:
        page.click(f"{CANVAS} #bertlab-canvas-run")
        assert state(page, CANVAS) == "done", status(page, CANVAS)
        rows = canvas_rows(page)
        assert len(rows) == want["k"] + 1
        assert rows == reference_rows(want)
    finally:
        page.close()


def step(page, rows: int) -> str:
    """Press Step and wait for the canvas to hold ``rows`` rows and the box to rest; its state."""
    page.click(f"{CANVAS} #bertlab-canvas-step")
    page.wait_for_function(
        f"document.querySelectorAll('{CANVAS} tr[data-ids]').length === {rows}"
        f" && document.querySelector('{CANVAS}').dataset.state !== 'running'",
        timeout=LOAD_MS,
    )
    return page.eval_on_selector(CANVAS, "b => b.dataset.state")


@pytest.mark.parametrize("order", ["confidence", "random"])
def test_the_canvas_steps_one_pass_at_a_time(context, base, reference, order):
    """Step writes one row per press, each the reference's row; Run all writes the rest; a
    changed setting starts a new canvas."""
    want = next(c for c in reference["canvas"] if c["order"] == order)
    expected = reference_rows(want)
    page = open_canvas(context, base, want, order)
    try:
        for k in range(1, want["k"]):
            assert step(page, k + 1) == "stepped", (k, status(page, CANVAS))
            assert canvas_rows(page) == expected[: k + 1], f"after {k} presses of Step"
            assert f"Pass {k} of {want['k']}" in status(page, CANVAS)
        page.click(f"{CANVAS} #bertlab-canvas-run")  # the last pass
        assert state(page, CANVAS) == "done", status(page, CANVAS)
        assert canvas_rows(page) == expected
        page.fill(f"{CANVAS} #bertlab-canvas-n", "4")  # a new canvas, from its first pass
        assert step(page, 2) == "stepped", status(page, CANVAS)
        rows = canvas_rows(page)
        assert len(rows[0][0].split()) == 4 and len(rows[1][1].split()) == 1, rows
    finally:
        page.close()

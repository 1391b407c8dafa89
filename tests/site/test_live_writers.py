"""Chapter 6's "Who can write?" box in headless Chromium (run by `make test` after `make book`).

The box (book/live/writers.mjs) runs three writers side by side: the course's left-to-right
writer (model "causal"), BERT forced to write (model "diffusion": one [MASK] appended at a time,
Gibbs-style resampling or Mask-Predict) and the canvas. Here every column must write
onnxruntime-Python's steps (``_static/live/models/reference.json`` "writers", the numpy twins
of book/reference/web_sampler.py): the ids and the positions written at every pass exactly, each
token's probability within 1e-4, for both reference examples and every way of forcing BERT,
pressing Run all and pressing Step; each column must show its forward-pass count and how it
stopped; Run all must first ask which column finishes in the fewest passes and then say whether
the prediction held. The models must download only when a button is pressed, a loaded box must
still write offline, a missing model file must say so in the box, no request may leave the site,
the box must work from the keyboard alone and pass axe, its columns must stack on a phone, and
the page must say how to serve the site without JavaScript. One page is loaded for the module
and reused (the models download once); only the missing-file checks open pages of their own.
The site is `$BERTLAB_SITE` (default `_build/html`); helpers: tests/browser.py.
"""

from __future__ import annotations

import json
from urllib.request import urlopen

import pytest

import browser

SITE = browser.SITE
LIVE = SITE / "_static" / "live"
PAGE = "book/06-forcing-bert-to-write.html"
BOX = '[data-live="writers"]'
LOAD_MS = 120_000  # the first press downloads two models (~46 MB each) and compiles the runtime
COLUMNS = ("decoder", "forced", "canvas")
#: the box's ways of forcing BERT -> the reference's key
METHODS = {"append": "append", "gibbs": "gibbs", "maskpredict": "mask_predict"}
CHOICES = ("decoder", "forced", "canvas", "tie")
PREDICT = "bertlab-writers-predict"  # the radio group's name (predict.mjs's choiceQuestion)
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium


@pytest.fixture(scope="module")
def reference() -> dict:
    path = LIVE / "models" / "reference.json"
    assert path.is_file(), (
        f"no {path}: build the site with `make book` (it runs PYTHONPATH=book python -m recipes.site.web_models)"
    )
    reference = json.loads(path.read_text())
    assert reference.get("writers"), f"{path} has no 'writers' references: rebuild with `make book`"
    return reference


@pytest.fixture(scope="module")
def models() -> dict:
    return json.loads((LIVE / "models" / "models.json").read_text())


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


def wait(page, states=("done", "error"), timeout: int = LOAD_MS) -> str:
    """Wait until the box is in one of ``states``; returns its state."""
    page.wait_for_function(
        f"{list(states)}.includes(document.querySelector('{BOX}')?.dataset.state)", timeout=timeout
    )
    return page.eval_on_selector(BOX, "b => b.dataset.state")


def status(page) -> str:
    return page.inner_text(f"{BOX} .bertlab-live-status")


def verdict(page) -> str:
    return page.inner_text(f"{BOX} .bertlab-live-verdict")


@pytest.fixture(scope="module")
def page(context, base):
    """The chapter, loaded once; the tests below share it (and its downloaded models)."""
    page = context.new_page()
    page.goto(base + PAGE)
    wait(page, ("idle", "error"), 30_000)
    yield page
    page.close()


def rows(page, column: str) -> list[tuple[list[int], list[int], list[float]]]:
    """Each pass of a column: (answer ids, positions written, their probabilities)."""
    got = page.eval_on_selector_all(
        f'{BOX} [data-writer="{column}"] tr[data-ids]',
        "rs => rs.map(r => [r.dataset.ids, r.dataset.committed, r.dataset.probs])",
    )
    split = lambda text, kind: [kind(x) for x in text.split()]  # noqa: E731
    return [(split(i, int), split(c, int), split(p, float)) for i, c, p in got]


def expected(steps: list[dict]) -> list[tuple[list[int], list[int], list[float]]]:
    """The reference's passes (its step 0, the start, has no row)."""
    return [(s.get("ids", s.get("canvas")), s["committed"], s["probs"]) for s in steps[1:]]


def same(got, want) -> bool:
    return len(got) == len(want) and all(
        gi == wi
        and gc == wc
        and len(gp) == len(wp)
        and all(abs(a - b) <= 1e-4 for a, b in zip(gp, wp))
        for (gi, gc, gp), (wi, wc, wp) in zip(got, want)
    )


def passes(page, column: str) -> int:
    return int(page.eval_on_selector(f'{BOX} [data-writer="{column}"]', "c => c.dataset.passes"))


def count_line(page, column: str) -> str:
    return page.inner_text(f'{BOX} [data-writer="{column}"] .bertlab-writers-count')


def reference_steps(want: dict, method: str) -> dict[str, list[dict]]:
    return {"decoder": want["decoder"], "forced": want[METHODS[method]], "canvas": want["canvas"]}


def set_up(page, models: dict, want: dict, method: str, prediction: str | None) -> None:
    """The box on the reference's example and settings; a prediction ticked, or none."""
    examples = [list(e) for e in models.get("writer_examples") or models["canvas_examples"]]
    page.select_option(
        f"{BOX} #bertlab-writers-example", str(examples.index([want["word"], want["sentence"]]))
    )
    assert page.input_value(f"{BOX} #bertlab-writers-word") == want["word"]
    assert page.input_value(f"{BOX} #bertlab-writers-sentence") == want["sentence"]
    page.select_option(f"{BOX} #bertlab-writers-method", method)
    fields = {"n": want["n"], "k": want["k"]}  # and the chosen way's own, the only ones shown
    fields |= {
        "append": {},
        "gibbs": {"gibbs": want["gibbs_passes"], "seed": want["seed"]},
        "maskpredict": {"iterations": want["iterations"]},
    }[method]
    for field, value in fields.items():
        page.fill(f"{BOX} #bertlab-writers-{field}", str(value))
    page.evaluate(
        f"""p => document.querySelectorAll('{BOX} input[name={PREDICT}]').forEach(r => {{
        r.checked = r.value === p; }})""",
        prediction,
    )


def predicted_right(counts: dict[str, int], guess: str) -> bool:
    fewest = min(counts.values())
    winners = [c for c in COLUMNS if counts[c] == fewest]
    return len(winners) > 1 if guess == "tie" else winners == [guess]


def test_the_box_names_its_models_and_downloads_nothing_before_a_press(page, context, models):
    text = page.inner_text(BOX)
    for name in ("causal", "diffusion"):
        assert models["models"][name]["bertlab_name"] in text, text
    assert "nothing you type leaves it" in text
    assert " MB" in status(page) and "when you first press" in status(page), status(page)
    assert not any(url.endswith(".onnx") for url in context.requests), (
        "a model loaded before a press"
    )
    assert page.inner_text(f"{BOX} legend") == (
        "Before you run: which column finishes in the fewest forward passes?"
    )


def test_run_all_asks_for_a_prediction_first(page, models, reference):
    set_up(page, models, reference["writers"][0], "append", None)
    page.click(f"{BOX} #bertlab-writers-run")
    assert wait(page, ("asking",), 5_000) == "asking"
    assert "First predict" in status(page)
    assert page.evaluate("document.activeElement.name") == PREDICT
    assert not page.query_selector_all(f"{BOX} tr[data-ids]"), "Run all ran without a prediction"


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("example", [0, 1])
def test_run_all_writes_the_reference_steps(page, models, reference, example, method):
    want = reference["writers"][example]
    guess = CHOICES[(2 * example + list(METHODS).index(method)) % len(CHOICES)]
    set_up(page, models, want, method, guess)
    page.click(f"{BOX} #bertlab-writers-run")
    assert wait(page) == "done", status(page)
    steps = reference_steps(want, method)
    for column in COLUMNS:
        got, ref = rows(page, column), expected(steps[column])
        assert same(got, ref), (column, got, ref)
        assert passes(page, column) == len(ref)
        assert count_line(page, column).startswith(f"{len(ref)} forward pass"), count_line(
            page, column
        )
    stopped = want["decoder"][-1]["ids"][-1] == reference["special"]["sep"]
    line = count_line(page, "decoder")
    assert ("stopped by itself at [SEP]" in line) == stopped, line
    assert ("budget of" in line) == (not stopped), line
    assert "budget of" in count_line(page, "forced") and "budget of" in count_line(page, "canvas")
    counts = {c: len(steps[c]) - 1 for c in COLUMNS}
    right = predicted_right(counts, guess)
    assert ("your prediction held" if right else "it did not hold") in verdict(page), (
        guess,
        counts,
        verdict(page),
    )
    assert page.eval_on_selector(BOX, "b => b.dataset.prediction") == (
        "held" if right else "missed"
    )
    assert (
        page.eval_on_selector(f"{BOX} .bertlab-live-verdict", "v => v.dataset.held")
        == str(right).lower()
    )
    assert "Fewest forward passes: " in verdict(page)


def step(page, k: int) -> str:
    """Press Step for the ``k``-th pass of a run and wait for the box to rest; its state."""
    page.click(f"{BOX} #bertlab-writers-step")
    page.wait_for_function(
        f"""() => {{ const box = document.querySelector('{BOX}');
          const most = Math.max(...[...box.querySelectorAll('[data-writer]')].map(c => Number(c.dataset.passes)));
          return most === {k} && !['running', 'idle'].includes(box.dataset.state); }}""",
        timeout=LOAD_MS,
    )
    return page.eval_on_selector(BOX, "b => b.dataset.state")


def test_step_runs_one_pass_in_every_column_not_finished(page, models, reference):
    """Each press adds one pass to each unfinished column, the reference's; a finished column
    gets none; Run all writes the rest; a changed setting starts over."""
    want = reference["writers"][0]
    set_up(page, models, want, "maskpredict", "tie")
    steps = reference_steps(want, "maskpredict")
    ref = {c: expected(steps[c]) for c in COLUMNS}
    presses = max(len(r) for r in ref.values()) - 1  # every column but the longest finishes
    for k in range(1, presses + 1):
        assert step(page, k) in ("stepped", "done"), (k, status(page))
        for column in COLUMNS:
            assert same(rows(page, column), ref[column][:k]), (k, column)
            assert passes(page, column) == min(k, len(ref[column]))
        if page.eval_on_selector(BOX, "b => b.dataset.state") == "stepped":
            assert "Passes so far" in status(page)
    page.click(f"{BOX} #bertlab-writers-run")
    assert wait(page) == "done", status(page)
    assert all(same(rows(page, c), ref[c]) for c in COLUMNS)
    page.fill(f"{BOX} #bertlab-writers-n", "4")  # a new run, from its first pass
    assert step(page, 1) in ("stepped", "done"), status(page)
    for column in COLUMNS:
        assert passes(page, column) == 1 and len(rows(page, column)) == 1, column
    assert len(rows(page, "canvas")[0][0]) == 4


def test_the_writers_stop_as_their_twins_do(page):
    """On a fake model: the left-to-right writer stops after the pass that writes [SEP], and
    Mask-Predict stops early once floor(n (T - t) / T) is 0 (n = 3, T = 6: five passes)."""
    got = page.evaluate(
        """async () => {
      const { decoderWriter, maskPredictWriter } = await import('../_static/live/writers.mjs');
      const tok = { cls: 0, sep: 1, pad: 2, mask: 3, token: (id) => `t${id}` };
      const V = 8;
      // logits [T, V] whose every row ranks pick(ids) first
      const fake = (pick) => async (ids) => {
        const data = new Float32Array(ids.length * V);
        for (let t = 0; t < ids.length; t++) data[t * V + pick(ids)] = 5;
        return { data, length: ids.length, vocab: V };
      };
      // [CLS] 4 4 [SEP] then 5, 6 and [SEP]
      const decoder = decoderWriter(fake((ids) => [5, 6, 1][ids.length - 4]), tok, [4, 4], 12);
      while (!decoder.done) await decoder.step();
      const mp = maskPredictWriter(fake(() => 7), tok, [4, 4], 3, 6);
      while (!mp.done) await mp.step();
      return { decoder: decoder.history.map((s) => s.ids), stopped: decoder.stopped,
               mp: mp.history.map((s) => s.committed) };
    }"""
    )
    assert got["decoder"] == [[], [5], [5, 6], [5, 6, 1]] and got["stopped"], got
    assert got["mp"] == [[], [0, 1, 2], [0, 1], [0, 1], [0], [0]], got


def test_the_keyboard_alone_runs_the_box(page, reference):
    page.evaluate(
        f"""() => {{ document.querySelectorAll('{BOX} input[name={PREDICT}]')
          .forEach(r => {{ r.checked = false; }}); document.activeElement?.blur(); window.scrollTo(0, 0); }}"""
    )

    def tab_to(test: str) -> None:
        for _ in range(600):
            page.keyboard.press("Tab")
            if page.evaluate(f"(() => {{ const e = document.activeElement; return {test}; }})()"):
                return
        pytest.fail(f"Tab never reached {test}")

    tab_to("e?.id === 'bertlab-writers-word'")
    page.keyboard.press("Control+A")
    page.keyboard.type(reference["writers"][0]["word"])  # a changed setting: a new run
    tab_to(f"e?.name === '{PREDICT}'")
    page.keyboard.press("Space")  # the first choice: the left-to-right writer
    tab_to("e?.id === 'bertlab-writers-step'")
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"document.querySelector('{BOX}').dataset.state === 'stepped'", timeout=LOAD_MS
    )
    assert all(passes(page, c) == 1 for c in COLUMNS)
    tab_to("e?.id === 'bertlab-writers-run'")
    page.keyboard.press("Enter")
    assert wait(page) == "done", status(page)
    assert "You predicted “the left-to-right writer”" in verdict(page), verdict(page)


def test_a_loaded_box_writes_offline(page, context, models, reference):
    want = reference["writers"][1]
    context.set_offline(True)
    try:
        set_up(page, models, want, "gibbs", "forced")
        page.click(f"{BOX} #bertlab-writers-run")
        assert wait(page) == "done", status(page)
        assert same(rows(page, "forced"), expected(want["gibbs"]))
    finally:
        context.set_offline(False)


def test_no_request_leaves_the_site(page, context):
    offsite = [url for url in context.requests if not browser.is_local(url)]
    assert not offsite, offsite
    assert any(url.endswith(".wasm") for url in context.requests)
    assert sum(url.endswith(".onnx") for url in context.requests) == 2, [
        u for u in context.requests if u.endswith(".onnx")
    ]


def test_the_box_passes_axe_and_its_columns_stack_on_a_phone(page):
    from test_accessibility import violations

    assert page.eval_on_selector(BOX, "b => b.dataset.state") == "done"
    assert violations(page, BOX) == {}
    left = lambda: page.eval_on_selector_all(  # noqa: E731
        f"{BOX} .bertlab-writers-column",
        "cs => cs.map(c => Math.round(c.getBoundingClientRect().left))",
    )
    assert len(set(left())) == 3, "three columns side by side at laptop width"
    page.set_viewport_size(browser.PHONE)
    try:
        assert len(set(left())) == 1, "the columns stack on a phone"
        width = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width[0] <= width[1] + 1, f"the page scrolls sideways on a phone: {width}"
    finally:
        page.set_viewport_size(browser.LAPTOP)


def open_fresh(context, base, route: str, handler):
    page = context.new_page()
    page.route(route, handler)
    page.goto(base + PAGE)
    return page


def test_a_missing_model_file_says_so_in_the_box(context, base, models):
    missing = models["models"]["causal"]["file"]
    page = open_fresh(
        context,
        base,
        f"**/_static/live/models/{missing}",
        lambda route: route.fulfill(status=404, body="no"),
    )
    try:
        wait(page, ("idle",), 30_000)
        page.click(f"{BOX} #bertlab-writers-step")
        assert wait(page, timeout=30_000) == "error"
        assert "missing (HTTP 404)" in status(page) and "make book" in status(page), status(page)
    finally:
        page.close()


def test_a_site_built_without_the_writer_says_so(context, base, models):
    without = {**models, "models": {k: v for k, v in models["models"].items() if k != "causal"}}
    page = open_fresh(
        context,
        base,
        "**/_static/live/models/models.json",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(without)
        ),
    )
    try:
        assert wait(page, ("error",), 30_000) == "error"
        note = page.inner_text(f"{BOX} .bertlab-live-note")
        assert 'no "causal" model' in note and "make book" in note, note
    finally:
        page.close()


def test_a_decoder_over_150_mb_names_its_size_on_the_buttons(context, base, models):
    big = json.loads(json.dumps(models))
    big["models"]["causal"]["bytes"] = 200_000_000
    page = open_fresh(
        context,
        base,
        "**/_static/live/models/models.json",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(big)
        ),
    )
    try:
        wait(page, ("idle",), 30_000)
        assert "200.0 MB" in page.inner_text(f"{BOX} #bertlab-writers-run")
    finally:
        page.close()


def test_without_javascript_the_page_says_what_the_box_does_and_how_to_serve_it(base):
    html = urlopen(base + PAGE).read().decode()  # what a browser without JavaScript shows
    start = html.index('data-live="writers"')
    note = html[start : html.index("</div>", start)]
    assert (
        'class="bertlab-live-note"' in note and "python -m http.server -d _build/html 8000" in note
    )
    assert "three" in note and "forward" in note
    assert '<script type="module" src="../_static/live/writers.mjs"></script>' in html

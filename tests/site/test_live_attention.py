"""Chapter 1's attention box and the predict-then-run questions, in headless Chromium (run by
`make test` after `make book`).

The box (book/live/attention.mjs) runs the course checkpoint's encoder (the "attention" model,
recipes/site/web_models.py) under BERT's bidirectional mask and under a causal mask. Here it must
give onnxruntime-Python's answers (``_static/live/models/reference.json``): every head's weights,
as its two heat-map tables show them, within 1e-4 for every layer and head of the two reference
sentences; each token's relative change when the last word is edited ("edits") within 1e-4; and
the right verdict on the reader's predictions (predict.mjs). Chapter 4's fill-mask box must say
whether a guess of the top fill held. The box must work from the keyboard alone, answer offline
once loaded, say so in the box when its model file is missing or the site was built without it,
never send a request off the site, and pass axe (no serious or critical violation) once it has
answered. One page load per box; the site is `$BERTLAB_SITE` (default `_build/html`); helpers:
tests/browser.py.
"""

from __future__ import annotations

import json
from urllib.parse import urlparse
from urllib.request import urlopen

import pytest

import browser

SITE = browser.SITE
LIVE = SITE / "_static" / "live"
PAGE = "book/01-encoder-not-decoder.html"
FILL_PAGE = "book/04-masked-language-modelling.html"
BOX, FILL = '[data-live="attention"]', '[data-live="fillmask"]'
LOAD_MS = 120_000  # the first press downloads ~60 MB and compiles the runtime
TOLERANCE = 1e-4
pytestmark = [pytest.mark.site, pytest.mark.services]  # Chromium


@pytest.fixture(scope="module")
def reference() -> dict:
    path = LIVE / "models" / "reference.json"
    assert path.is_file(), (
        f"no {path}: build the site with `make book` (it runs PYTHONPATH=book python -m recipes.site.web_models)"
    )
    found = json.loads(path.read_text())
    assert "attention" in found and "edits" in found, (
        f"{path} has no 'attention' or 'edits': the site was built before the attention box; rebuild it"
    )
    return found


@pytest.fixture(scope="module")
def vocab() -> list[str]:
    return (LIVE / "models" / "vocab.txt").read_text().splitlines()


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
    page.wait_for_function(
        f"{list(states)}.includes(document.querySelector('{box}')?.dataset.state)", timeout=timeout
    )
    return page.eval_on_selector(box, "b => b.dataset.state")


def status(page, box: str = BOX) -> str:
    return page.inner_text(f"{box} .bertlab-live-status")


def press(page, selector: str, key: str = "Enter", box: str = BOX) -> str:
    """Press ``key`` on ``selector`` (a submit: the box goes to "running" at once); its end state."""
    page.press(selector, key)
    return state(page, box)


def violations(page, context: str) -> dict[str, int]:
    """axe's serious and critical violations in ``context``: {rule: nodes} (tests/site/test_accessibility.py)."""
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page, context=context, options={"resultTypes": ["violations"]})
    return {
        v["id"]: len(v["nodes"])
        for v in result.response["violations"]
        if v["impact"] in ("serious", "critical")
    }


@pytest.fixture(scope="module")
def page(context, base):
    """Chapter 1, loaded once; the tests below run in order on it."""
    page = context.new_page()
    page.goto(base + PAGE)
    state(page, BOX, 30_000, ("idle", "error"))
    yield page
    page.close()


def test_the_box_names_its_model_and_says_nothing_leaves_the_browser(page):
    assert page.eval_on_selector(BOX, "b => b.dataset.state") == "idle", page.inner_text(BOX)
    text = page.inner_text(BOX)
    assert "bertlab-minilm-l6-mlm" in text and "Nothing you type leaves it" in text
    assert " MB" in status(page), "the box should give the download's size before it starts"


def test_a_missing_model_file_says_so_in_the_box(page):
    """First press with the model file refused: a clear error; the next press loads it."""
    pattern = "**/_static/live/models/attention-*/*.onnx"
    page.route(pattern, lambda route: route.fulfill(status=404, body="not found"))
    try:
        assert press(page, f"{BOX} #bertlab-attention-text") == "error"
        assert "missing (HTTP 404)" in status(page) and "make book" in status(page), status(page)
    finally:
        page.unroute(pattern)


def heads(page) -> dict:
    """Every layer's and head's weights as the two tables show them, chosen with the selects:
    {mask: [L][H][T][T]}, and the ids the maps were computed for."""
    return page.evaluate(
        """(box) => {
      const el = document.querySelector(box);
      const [layer, head] = ['layer', 'head'].map((n) => el.querySelector(`#bertlab-attention-${n}`));
      const out = { bidirectional: [], causal: [], ids: el.querySelector('.bertlab-live-heatmaps').dataset.ids };
      for (let l = 0; l < layer.options.length; l++) {
        for (const mask of ['bidirectional', 'causal']) out[mask].push([]);
        for (let h = 0; h < head.options.length; h++) {
          layer.value = String(l);
          head.value = String(h);
          head.dispatchEvent(new Event('change'));
          for (const mask of ['bidirectional', 'causal']) {
            const table = el.querySelector(`table[data-mask="${mask}"]`);
            if (table.dataset.layer !== String(l) || table.dataset.head !== String(h)) throw new Error('not redrawn');
            out[mask][l].push([...table.querySelectorAll('tr[data-query]')].map(
              (r) => [...r.querySelectorAll('td')].map((c) => Number(c.dataset.weight))));
          }
        }
      }
      return out;
    }""",
        BOX,
    )


@pytest.mark.parametrize("n", range(2))
def test_every_head_under_both_masks_is_the_references(page, reference, n):
    want = reference["attention"][n]
    page.fill(f"{BOX} #bertlab-attention-text", want["text"])
    assert press(page, f"{BOX} #bertlab-attention-text") == "done", status(page)
    got = heads(page)
    assert got["ids"] == " ".join(map(str, want["input_ids"]))
    for mask in ("bidirectional", "causal"):
        g, w = got[mask], want[mask]
        assert [len(g), len(g[0]), len(g[0][0])] == [len(w), len(w[0]), len(w[0][0])], mask
        worst = max(
            abs(a - b)
            for gl, wl in zip(g, w)
            for gh, wh in zip(gl, wl)
            for gr, wr in zip(gh, wh)
            for a, b in zip(gr, wr)
        )
        assert worst <= TOLERANCE, f"{mask}: a weight differs from the reference's by {worst:.2e}"
    T = len(want["input_ids"])
    blocked = page.eval_on_selector_all(
        f'{BOX} table[data-mask="causal"] td.bertlab-live-masked', "cs => cs.length"
    )
    assert blocked == T * (T - 1) // 2, "the causal table should mark the cells above its diagonal"


def moved(page) -> dict:
    return page.evaluate(
        """(box) => {
      const t = document.querySelector(`${box} table.bertlab-live-moved`);
      const rows = [...t.querySelectorAll('tr[data-position]')];
      return { changedFrom: Number(t.dataset.changedFrom),
               bidirectional: rows.map((r) => Number(r.dataset.movedBidirectional)),
               causal: rows.map((r) => Number(r.dataset.movedCausal)) };
    }""",
        BOX,
    )


def verdicts(page) -> dict:
    return {
        mask: page.eval_on_selector(
            f"#bertlab-attention-predict-{mask}-verdict",
            "p => [p.dataset.held, p.dataset.actual, p.textContent]",
        )
        for mask in ("bidirectional", "causal")
    }


def choose(page, mask: str, value: str) -> None:
    page.check(f'{BOX} input[name="bertlab-attention-predict-{mask}"][value="{value}"]')


def test_edit_the_last_word_moves_the_references_vectors_and_judges_the_predictions(
    page, reference
):
    edits = reference["edits"]
    page.select_option(f"{BOX} #bertlab-attention-example", edits["pair"][0])
    assert page.input_value(f"{BOX} #bertlab-attention-word") == edits["pair"][1].split()[
        -1
    ].rstrip(".")
    choose(page, "bidirectional", "all")  # right
    choose(page, "causal", "all")  # wrong: only the edited word and what follows move
    assert press(page, f"{BOX} #bertlab-attention-word") == "done", status(page)
    got = moved(page)
    assert got["changedFrom"] == edits["changed_from"]
    for mask in ("bidirectional", "causal"):
        worst = max(abs(a - b) for a, b in zip(got[mask], edits["moved"][mask], strict=True))
        assert worst <= TOLERANCE, f"{mask}: a relative change differs by {worst:.2e}"
    v = verdicts(page)
    assert v["bidirectional"][:2] == ["true", "all"], v
    assert v["causal"][:2] == ["false", "edited"], v
    assert "your prediction held" in v["bidirectional"][2] and "did not hold" in v["causal"][2]
    choose(page, "causal", "edited")  # the same run again, right this time; then no prediction
    assert press(page, f"{BOX} #bertlab-attention-word") == "done"
    assert verdicts(page)["causal"][:2] == ["true", "edited"]
    page.evaluate(
        "() => document.querySelectorAll('input[name^=bertlab-attention-predict]').forEach(r => { r.checked = false; })"
    )
    assert press(page, f"{BOX} #bertlab-attention-word") == "done"
    assert [v[0] for v in verdicts(page).values()] == ["none", "none"]


def test_a_word_of_another_length_says_why_it_cannot_be_compared(page):
    page.fill(f"{BOX} #bertlab-attention-word", "unflabbergasted")  # several word pieces
    assert press(page, f"{BOX} #bertlab-attention-word") == "error"
    assert "do not line up" in status(page), status(page)


def test_the_box_passes_axe_once_it_has_answered(page):
    assert press(page, f"{BOX} #bertlab-attention-text") == "done"
    page.fill(f"{BOX} #bertlab-attention-word", "robbed")
    assert press(page, f"{BOX} #bertlab-attention-word") == "done"
    assert violations(page, BOX) == {}


def test_the_keyboard_alone_runs_the_box(page):
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")

    def focused() -> str:
        return page.evaluate("document.activeElement?.id || document.activeElement?.className")

    def tab_to(target: str, limit: int = 400) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if focused() == target:
                return
        pytest.fail(f"Tab never reached {target}")

    tab_to("bertlab-attention-text")
    page.keyboard.press("Control+A")
    page.keyboard.type("The dog chased the ball.")
    page.keyboard.press("Enter")
    assert state(page, BOX) == "done", status(page)
    tab_to("bertlab-attention-layer", 6)
    for key in ("Home", "ArrowDown"):  # the second layer
        page.keyboard.press(key)
    tab_to("bertlab-attention-head", 2)
    for key in ("Home", "ArrowDown", "ArrowDown"):  # the third head
        page.keyboard.press(key)
    shown = page.eval_on_selector(
        f'{BOX} table[data-mask="causal"]', "t => [t.dataset.layer, t.dataset.head]"
    )
    assert shown == ["1", "2"], shown
    tab_to("bertlab-attention-predict-bidirectional-0", 8)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # the third answer: all of them
    page.keyboard.press("Tab")  # into the causal group
    page.keyboard.press("Space")  # the first answer: none
    tab_to("bertlab-attention-word", 4)
    page.keyboard.press("Control+A")
    page.keyboard.type("cat")
    page.keyboard.press("Enter")
    assert state(page, BOX) == "done", status(page)
    v = verdicts(page)
    assert v["bidirectional"][:2] == ["true", "all"] and v["causal"][:2] == ["false", "edited"], v


def test_a_loaded_box_answers_offline_and_nothing_left_the_site(page, context):
    page.evaluate(  # loaded already by the tests above; this one can also run alone
        "async () => { const rt = await import('../_static/live/runtime.mjs');"
        " await rt.tokenizer(); await rt.model('attention'); }"
    )
    context.set_offline(True)
    try:
        page.fill(
            f"{BOX} #bertlab-attention-text", "The boat on the lake was sinking."
        )  # not run yet
        assert press(page, f"{BOX} #bertlab-attention-text") == "done", status(page)
        page.fill(f"{BOX} #bertlab-attention-word", "floating")
        assert press(page, f"{BOX} #bertlab-attention-word") == "done", status(page)
    finally:
        context.set_offline(False)
    offsite = [url for url in context.requests if not browser.is_local(url)]
    assert not offsite, offsite
    assert any(urlparse(url).path.endswith(".onnx") for url in context.requests)


def test_a_site_built_without_the_model_says_so(context, base):
    other = context.new_page()

    def without_attention(route):
        index = json.loads((LIVE / "models" / "models.json").read_text())
        index["models"].pop("attention")
        route.fulfill(status=200, content_type="application/json", body=json.dumps(index))

    other.route("**/_static/live/models/models.json", without_attention)
    try:
        other.goto(base + PAGE)
        assert state(other, BOX, 30_000) == "error"
        note = other.inner_text(f"{BOX} .bertlab-live-note")
        assert 'without its live model "attention"' in note and "make book" in note, note
    finally:
        other.close()


def test_without_javascript_the_page_says_what_the_box_does_and_how_to_serve_it(base):
    html = urlopen(base + PAGE).read().decode()  # what a browser without JavaScript shows
    start = html.index('data-live="attention"')
    note = html[start : html.index("</div>", start)]
    assert (
        'class="bertlab-live-note"' in note and "python -m http.server -d _build/html 8000" in note
    )
    assert "predict" in note and "causal mask" in note
    assert '<script type="module" src="../_static/live/attention.mjs"></script>' in html


@pytest.fixture(scope="module")
def fill_page(context, base):
    page = context.new_page()
    page.goto(base + FILL_PAGE)
    state(page, FILL, 30_000, ("idle", "error"))
    yield page
    page.close()


def guess(page, text: str, word: str) -> list[str]:
    """Guess ``word`` (empty: no guess), fill in ``text``; the verdict's [held, rank, text]."""
    page.fill(f"{FILL} #bertlab-fillmask-text", text)
    page.fill(f"{FILL} #bertlab-fillmask-guess", word)
    assert press(page, f"{FILL} #bertlab-fillmask-guess", box=FILL) == "done", status(page, FILL)
    return page.eval_on_selector(
        "#bertlab-fillmask-guess-verdict",
        "p => [p.dataset.held ?? null, p.dataset.actual ?? null, p.textContent]",
    )


def test_chapter_4_says_whether_a_guess_of_the_top_fill_held(fill_page, reference, vocab):
    example = reference["fill_mask"][0]
    top = [vocab[i] for i in example["fills"][0]["ids"]]
    held, rank, text = guess(fill_page, example["text"], top[0].upper())  # uncased, as the model
    assert (held, rank) == ("true", "1") and "your prediction held" in text, text
    held, rank, text = guess(fill_page, example["text"], top[2])
    assert (held, rank) == ("false", "3") and "choice number 3 of 5" in text, text
    held, rank, text = guess(fill_page, example["text"], "zzzzqq")
    assert (held, rank) == ("false", "0") and "not in the model's top 5" in text, text
    held, rank, text = guess(fill_page, example["text"], "")
    assert (held, rank, text) == (None, None, ""), "no guess, no verdict"
    assert violations(fill_page, FILL) == {}

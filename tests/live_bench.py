"""`make bench`'s figures for the "Try it" boxes (book/live/): timed in headless Chromium, reported.

Exports the live models as make book does (PYTHONPATH=book python -m recipes.site.web_models, into _build/bench/web,
where a second run reuses them), serves them on localhost with an empty page and times, on this
machine: the fill-mask model's load (download from the local server and session start, runtime
included), one fill-mask query, the loads of the left-to-right writer ("causal") and of Chapter 1's
encoder ("attention"), each a download and a session start once the runtime is loaded, one
decoder step (the causal model over a 32-token sequence and the choice of its next token, no
cache, as Chapter 6's writer runs it) and one BERT step like for like (the diffusion model's pass
over the same 32 positions, the prompt then [MASK]s, and the softmax at every [MASK]: a pass of
BERT forced to write in Chapter 6); reported beside them, one step of Chapter 6b's canvas with 32
[MASK]s after the prompt (45 positions). A step is the median of 5 after one to warm up. Goals from the issues, on a
2-core machine: load <= 5 s, query <= 300 ms, step <= 150 ms. Also the bytes the boxes add to the
site: every live model, the runtime, and the rest (modules, vocabulary, reference answers).
``python tests/live_bench.py --live DIR`` times a folder already built (``_build/html/_static/live``)
instead of exporting.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import browser
import course_fixture

GOALS = {"load_s": 5.0, "query_ms": 300, "step_ms": 150}  # every load, every step

_TIMINGS_JS = """async () => {
  const rt = await import('/live/runtime.mjs');
  const { topFills } = await import('/live/fillmask.mjs');
  const { fillCanvas } = await import('/live/canvas.mjs');
  const now = () => performance.now();
  const median = async (work, n = 5) => {
    await work();  // warm
    const times = [];
    for (let i = 0; i < n; i++) { const t = now(); await work(); times.push(now() - t); }
    return times.sort((a, b) => a - b)[n >> 1];
  };
  let t = now();
  await rt.model('mlm');
  const load = (now() - t) / 1000;
  await topFills('The capital of France is [MASK].');  // warm
  t = now();
  await topFills('She drinks a cup of [MASK] every morning.');
  const query = now() - t;
  const tok = await rt.tokenizer();
  const loads = {};
  for (const name of ['causal', 'attention']) {
    t = now();
    await rt.model(name);  // the runtime is loaded: the model's download and its session
    loads[name] = (now() - t) / 1000;
  }
  const source = tok.encodeWithoutSpecials('bank : they pulled the canoe up on the bank');
  const prompt = [tok.cls, ...source, tok.sep];
  const ids = [...prompt, ...Array.from({ length: 32 - prompt.length }, (_, i) => source[i % source.length])];
  const types = ids.map((_, i) => (i < prompt.length ? 0 : 1));
  const banned = [tok.cls, tok.pad, tok.mask];
  const causal = await rt.model('causal');
  const decoder = await median(async () => {  // the whole sequence, no cache; the next token
    const probs = rt.softmaxRow(await causal.run(ids, types), ids.length - 1, banned);
    let best = 0;
    for (let i = 1; i < probs.length; i++) if (probs[i] > probs[best]) best = i;
    return best;
  });
  const diffusion = await rt.model('diffusion');
  // BERT forced, like for like with the decoder: one pass over the same 32 positions, the prompt
  // then [MASK]s, and the softmax at every [MASK] (a Mask-Predict pass; append and Gibbs read one)
  const masked = [...prompt, ...Array(32 - prompt.length).fill(tok.mask)];
  const bannedBert = [tok.cls, tok.sep, tok.pad, tok.mask];
  const bert = await median(async () => {
    const logits = await diffusion.run(masked, types);
    for (let t = prompt.length; t < masked.length; t++) rt.softmaxRow(logits, t, bannedBert);
  });
  // the canvas's first pass with 32 [MASK]s after the prompt (45 positions): all 32 committed
  const canvas = await median(() => fillCanvas(diffusion.run, tok, source, 32, 1));
  const { models, runtime_bytes: runtime } = await rt.index();
  const canvasLength = prompt.length + 33;  // the prompt, 32 [MASK]s, [SEP]
  return { load, query, loads, decoder, bert, canvas, canvasLength, decoderLength: ids.length, models, runtime };
}"""


def export() -> Path:
    """The live models, exported as make book does, in ``_build/bench/web`` (reused when built)."""
    out = course_fixture.REPO / "_build" / "bench" / "web"
    subprocess.run(
        [sys.executable, "-m", "recipes.site.web_models", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=course_fixture.REPO,
        env={**os.environ, "PYTHONPATH": "book"},
    )
    return out


def live_models(live: Path | None = None) -> list[str]:
    """Print the boxes' timings and bytes (of ``live``, else of a fresh export); returns []
    (reported, not budgeted)."""
    out = Path(live) if live is not None else export()
    site = course_fixture.REPO / "_build" / "bench" / "web-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text("<!doctype html><title>bench</title>")
    link = site / "live"
    if link.is_symlink() and link.resolve() != out.resolve():
        link.unlink()
    if not link.exists():
        link.symlink_to(out.resolve(), target_is_directory=True)
    with browser.serve(site) as base, browser.chromium() as context:
        page = context.new_page()
        page.goto(base + "index.html")
        timings = page.evaluate(_TIMINGS_JS)
    sizes = {name: record["bytes"] for name, record in timings["models"].items()}
    sizes["runtime"] = timings["runtime"]
    files = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    shipped = {r["file"] for r in timings["models"].values()}
    stale = sum(
        path.stat().st_size
        for path in (out / "models").rglob("*.onnx")
        if path.relative_to(out / "models").as_posix() not in shipped
    )  # an older export left in the folder: not in the site's models.json
    sizes["the rest (modules, vocabulary, reference answers)"] = files - stale - sum(sizes.values())
    goal_s, goal_ms, query_ms = GOALS["load_s"], GOALS["step_ms"], GOALS["query_ms"]
    lines = [
        (
            "fill-mask model load (download + session, runtime included)",
            f"{timings['load']:.1f} s",
            f"{goal_s} s",
        ),
        ("one fill-mask query", f"{timings['query']:.0f} ms", f"{query_ms} ms"),
        *(
            (f"{name} model load (download + session)", f"{seconds:.1f} s", f"{goal_s} s")
            for name, seconds in timings["loads"].items()
        ),
        (
            f"one decoder step, {timings['decoderLength']} positions (causal)",
            f"{timings['decoder']:.0f} ms",
            f"{goal_ms} ms",
        ),
        (
            f"one BERT step, {timings['decoderLength']} positions (diffusion, forced)",
            f"{timings['bert']:.0f} ms",
            f"{goal_ms} ms",
        ),
        (
            f"one canvas step, 32 masks ({timings['canvasLength']} positions)",
            f"{timings['canvas']:.0f} ms",
            "none: reported",
        ),
    ]
    print("\nthe Try it boxes in headless Chromium (wasm, one thread):")
    for what, value, goal in lines:
        print(f"  {what + ':':<62} {value:>7}   (goal {goal})")
    print(
        "  bytes added to the site: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items())
        + f"; {sum(sizes.values()) / 1e6:.1f} MB in all"
    )
    return []


if __name__ == "__main__":
    import argparse

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--live", type=Path, help="a built live folder to time (default: export one)"
    )
    live_models(parser.parse_args().live)

"""`make bench`'s figures for the "Try it" boxes (book/live/): timed in headless Chromium, reported.

Exports the live models as make book does (PYTHONPATH=book python -m recipes.site.web_models, into _build/bench/web,
where a second run reuses them), serves them on localhost with an empty page and times, on this
machine: the fill-mask model's load (download from the local server and session start, runtime
included), one fill-mask query, and one canvas step for 32 positions (the diffusion model's pass
over the canvas and the choice of what to commit). Goals from the issue, on a 2-core machine:
load <= 5 s, query <= 300 ms, step <= 150 ms. Also the bytes the boxes add to the site.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import browser
import course_fixture

GOALS = {"load_s": 5.0, "query_ms": 300, "step_ms": 150}

_TIMINGS_JS = """async () => {
  const rt = await import('/live/runtime.mjs');
  const { topFills } = await import('/live/fillmask.mjs');
  const { fillCanvas } = await import('/live/canvas.mjs');
  const now = () => performance.now();
  let t = now();
  await rt.model('mlm');
  const load = (now() - t) / 1000;
  await topFills('The capital of France is [MASK].');  // warm
  t = now();
  await topFills('She drinks a cup of [MASK] every morning.');
  const query = now() - t;
  const tok = await rt.tokenizer();
  const diffusion = await rt.model('diffusion');
  const source = tok.encodeWithoutSpecials('bank : they pulled the canoe up on the bank');
  await fillCanvas(diffusion.run, tok, source, 32, 1);  // warm
  t = now();
  await fillCanvas(diffusion.run, tok, source, 32, 1);  // one step commits all 32
  return { load, query, step: now() - t };
}"""


def live_models() -> list[str]:
    """Print the boxes' timings and bytes; returns [] (reported, not budgeted)."""
    out = course_fixture.REPO / "_build" / "bench" / "web"
    subprocess.run(
        [sys.executable, "-m", "recipes.site.web_models", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=course_fixture.REPO,
        env={**os.environ, "PYTHONPATH": "book"},
    )
    site = out.parent / "web-site"
    site.mkdir(exist_ok=True)
    (site / "index.html").write_text("<!doctype html><title>bench</title>")
    link = site / "live"
    if not link.exists():
        link.symlink_to(out, target_is_directory=True)
    with browser.serve(site) as base, browser.chromium() as context:
        page = context.new_page()
        page.goto(base + "index.html")
        timings = page.evaluate(_TIMINGS_JS)
    sizes: dict[str, int] = {}
    for path in out.rglob("*"):
        if path.is_file():
            part = path.relative_to(out).parts[0]
            key = part if part in ("models", "ort") else "the boxes' modules"
            sizes[key] = sizes.get(key, 0) + path.stat().st_size
    print("\nthe Try it boxes in headless Chromium (wasm, one thread):")
    print(
        f"  fill-mask model load (download + session): {timings['load']:.1f} s   (goal {GOALS['load_s']} s)"
    )
    print(
        f"  one fill-mask query:                       {timings['query']:.0f} ms   (goal {GOALS['query_ms']} ms)"
    )
    print(
        f"  one canvas step, 32 positions:             {timings['step']:.0f} ms   (goal {GOALS['step_ms']} ms)"
    )
    print(
        "  bytes added to the site: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items()))
        + f"; {sum(sizes.values()) / 1e6:.1f} MB in all"
    )
    return []


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    live_models()

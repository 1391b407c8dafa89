"""`make bench`: speed and memory of the course on this machine, checked against the budgets.

Prints, for the current machine (the site it builds stays in _build/bench):
- cold book build time (empty cache) and cached rebuild time (nothing changed);
- each page's execution time and peak RSS (VmHWM of its kernel);
- autograde seconds per submission, for every assignment's reference solution;
- 20 submissions (honest, wrong, hostile) graded by plain ``nbgrader autograde`` and by the
  course grader with 2 workers: the speed-up (target >= 1.8x), the overhead per submission
  (target <= 1 s) and whether the scores are identical;
- a section of ps01 (12 and 60 submissions) graded by plain serial ``nbgrader autograde`` with
  warm kernels and by the course grader with 2 workers, sandbox in force: the speed-up (targets
  >= 1.6x and >= 2.0x);
- the shipped BERT2BERT's assembly on first use and its load;
- grading on a Dask LocalCluster of 1 and 2 workers: submissions per minute, scheduler overhead per task;
- the Try it boxes in Chromium: each model's load, one query, one canvas step, one decoder step,
  the bytes they add to the site (tests/live_bench.py);
- the class hub: 20 students logging in and fetching ps00 at once, one idle student server's
  memory, one Validate, and what the machine holds (tests/hub_bench.py; docs/instructors.md,
  "A class on a JupyterHub").

Budgets (from the issues): cached rebuild <= 20 s; every page <= 90 s and <= 2 GB peak RSS
(the fine-tuning pages of Chapter 5: <= 180 s each, <= 8 minutes together; Chapter 6 <= 120 s;
Chapter 7, Chapter 8 and the FAQ <= 180 s);
each assignment's reference solution autogrades in <= 30 s; the browser checks of the built
site (tests/site/test_browser.py) take <= 180 s; the decoder converts from its GGUF on first use in
<= 60 s and loads in <= 5 s. Exits 1 if one is exceeded.

``python tests/bench.py STAGE...`` runs only the named stages (:data:`STAGES`).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import course_fixture  # noqa: E402
from hub_bench import hub_logins  # noqa: E402
from live_bench import live_models  # noqa: E402
from tests.site.test_site import toc_files  # noqa: E402

REPO = course_fixture.REPO
BUDGET = {
    "cached_rebuild_s": 20,
    "page_s": 90,
    "page_rss_gb": 2.0,
    "autograde_s": 30,
    "load_forward_s": 3.0,
    "load_rss_gb": 1.0,
    # Chapter 5 fine-tunes during the build (issue 13): its pages get more, the chapter 8 min
    "finetune_page_s": 180,
    "finetune_chapter_s": 480,
    # every toc page in headless Chromium, screenshots and broken copies included (issue 19)
    "browser_checks_s": 180,
    # the decoder (issue 14): GGUF -> HF folder on first use, then every later load
    "decoder_convert_s": 60,
    "decoder_load_s": 5,
    # Chapter 8 and the FAQ run the encoder, the decoder and an index in the build (issue 16)
    "choosing_page_s": 180,
    # forcing BERT to write (issue 14) and BERT2BERT (issue 15)
    "forcing_page_s": 120,
    "bert2bert_page_s": 180,
    # masked diffusion (issue 35): the page, and what make diffusion ships
    "diffusion_page_s": 180,
    "diffusion_train_min": 90,
    "diffusion_delta_mb": 30,
}
FINETUNE_PAGES = "book/05"  # the pages of Chapter 5 start with this
#: Pages with a budget of their own (first match wins); every other page gets BUDGET["page_s"].
PAGE_BUDGETS = (
    (FINETUNE_PAGES, "finetune_page_s"),
    (("book/08-", "book/faq"), "choosing_page_s"),
    ("book/06-", "forcing_page_s"),
    ("book/06b-", "diffusion_page_s"),
    ("book/07-", "bert2bert_page_s"),
)
PEAK_RSS = "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"


def build_book(output: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "jupyter-book"),
            "build",
            str(REPO),
            "-W",
            "-n",
            "--keep-going",
            "--path-output",
            str(output),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise SystemExit(
            f"the book build failed (see {output}/_build/html/reports):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return time.perf_counter() - start


def browser_checks(site: Path) -> tuple[float, bool]:
    """Seconds tests/site/test_browser.py takes on this build of the site, and whether it passed."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "site", "tests/site/test_browser.py"],
        cwd=REPO,
        env={**os.environ, "BERTLAB_SITE": str(site)},
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, result.returncode == 0


def run_page(file: str) -> tuple[float, float]:
    """Execute one page in a fresh kernel; return (seconds, peak RSS in GB)."""
    source = REPO / f"{file}.md"
    notebook = jupytext.read(source)
    notebook.cells.append(nbformat.v4.new_code_cell(PEAK_RSS))
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    line = notebook.cells[-1].outputs[0]["text"]  # "VmHWM:   123456 kB"
    return seconds, int(line.split()[1]) / 1024**2


def autograde_seconds(assignment: str, copies: int = 3) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        course = course_fixture.make_course(Path(scratch))
        course_fixture.release(course, assignment)
        solution = course_fixture.solution_notebook(assignment)
        for i in range(copies):
            course_fixture.submit(course, assignment, f"student{i}", solution)
        start = time.perf_counter()
        course_fixture.autograde(course, assignment)
        return (time.perf_counter() - start) / copies


def grading_batch(course: Path, assignment: str, n: int = 20) -> dict[str, str]:
    """``n`` submissions: honest (the solution), wrong (the released stub) and hostile (a kernel
    that kills itself, a rigged kernel, a file that is not a notebook). Returns student -> kind."""
    solution = course_fixture.solution_notebook(assignment)
    stub = nbformat.read(course_fixture.release(course, assignment), as_version=4)
    killer, rigged = nbformat.from_dict(solution), nbformat.from_dict(solution)
    killer.cells.insert(len(killer.cells) // 2, nbformat.v4.new_code_cell("import os; os._exit(1)"))
    rigged.cells.insert(
        1,
        nbformat.v4.new_code_cell(
            "get_ipython().input_transformers_cleanup.append(lambda lines: [])"
        ),
    )
    kinds = {}
    for i in range(n):
        kind = [
            "honest",
            "honest",
            "wrong",
            "honest",
            "wrong",
            "killer",
            "honest",
            "rigged",
            "honest",
            "not-a-notebook",
        ][i % 10]
        student = f"s{i:02d}-{kind}"
        path = course_fixture.submit(
            course,
            assignment,
            student,
            {
                "honest": solution,
                "wrong": stub,
                "killer": killer,
                "rigged": rigged,
                "not-a-notebook": solution,
            }[kind],
        )
        if kind == "not-a-notebook":
            path.write_text("not a notebook")
        kinds[student] = kind
    return kinds


def execution_seconds(notebook, cwd: Path) -> float:
    """A notebook's own execution time in a plain kernel (no nbgrader, no guard, no sandbox)."""
    client = NotebookClient(
        nbformat.from_dict(notebook),
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def plain_nbgrader(course: Path, assignment: str, warm: bool) -> float:
    """Seconds plain ``nbgrader autograde`` takes over every submission of ``assignment`` in
    ``course``, serially, its kernels warm (the course's zygote) or cold."""
    from bertlab_grader.nbgrader_course import nbgrader_env
    from bertlab_grader.sandbox.warm import pool

    start = time.perf_counter()
    subprocess.run(
        [
            str(Path(sys.executable).parent / "nbgrader"),
            "autograde",
            assignment,
            "--create",
            "--force",
        ],
        cwd=course,
        env={**nbgrader_env(), pool.ENV_VAR: "on" if warm else "off"},
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start


def parallel_grading(assignment: str = "ps00-tokens", n: int = 20, workers: int = 2) -> list[str]:
    """The same n submissions graded by plain ``nbgrader autograde`` (one kernel started cold for
    each, as nbgrader starts them) and by the course grader with ``workers`` workers (warm kernels,
    ``bertlab_grader.sandbox.warm``): the speed-up, each one's overhead per submission, and equal
    scores. Also plain ``nbgrader autograde`` with the course's warm kernels: what parallelism
    alone adds."""
    from bertlab_grader import parallel

    with tempfile.TemporaryDirectory() as scratch:
        plain = course_fixture.make_course(Path(scratch) / "plain")
        kinds = grading_batch(plain, assignment, n)
        plain_s = plain_nbgrader(plain, assignment, warm=False)
        plain_warm = course_fixture.make_course(Path(scratch) / "plain-warm")
        grading_batch(plain_warm, assignment, n)
        plain_warm_s = plain_nbgrader(plain_warm, assignment, warm=True)
        ours = course_fixture.make_course(Path(scratch) / "ours")
        grading_batch(ours, assignment, n)
        start = time.perf_counter()
        parallel.autograde(ours, assignment, workers=workers, progress=False)
        ours_s = time.perf_counter() - start
        graded = [s for s, k in kinds.items() if k != "not-a-notebook"]
        differences = score_differences(plain, ours, assignment, kinds) + score_differences(
            plain, plain_warm, assignment, kinds, names=("plain", "warm plain")
        )
        same = not differences
        honest = next(s for s, k in kinds.items() if k == "honest")
        own = execution_seconds(course_fixture.solution_notebook(assignment), Path(scratch))
        stub_own = execution_seconds(
            nbformat.read(
                ours
                / "exercises"
                / assignment
                / f"{course_fixture.notebook_name(assignment)}.ipynb",
                as_version=4,
            ),
            Path(scratch),
        )
    own_total = sum(own if kinds[s] in ("honest", "killer", "rigged") else stub_own for s in graded)
    plain_over = (plain_s - own_total) / n
    ours_over = (ours_s * workers - own_total) / n
    ratio = plain_s / ours_s
    print(
        f"\ngrading {n} submissions of {assignment} (honest, wrong, hostile; {honest} among them):"
    )
    print(
        f"  plain nbgrader autograde:        {plain_s:6.1f} s, overhead {plain_over:4.1f} s per submission"
    )
    print(
        f"  the same, with warm kernels:     {plain_warm_s:6.1f} s, overhead {(plain_warm_s - own_total) / n:4.1f} s "
        "per submission"
    )
    print(
        f"  course grader, {workers} workers:        {ours_s:6.1f} s, overhead {ours_over:4.1f} s per submission "
        f"(wall x workers - own execution in a fresh kernel, {own:.1f} s for the solution)"
    )
    print(
        f"  speed-up {ratio:.2f}x (target >= 1.8x; {plain_warm_s / ours_s:.2f}x over warm plain nbgrader), "
        f"overhead target <= 1 s; scores identical: {same}"
    )
    for line in differences:
        print(f"    {line}")
    return [] if ratio >= 1.8 and ours_over <= 1.0 and same else ["parallel grading"]


def score_differences(
    plain: Path,
    ours: Path,
    assignment: str,
    kinds: dict[str, str],
    names: tuple[str, str] = ("plain", "course grader"),
) -> list[str]:
    """Every graded cell whose score differs between two courses that graded the same batch
    (:func:`grading_batch`'s students and kinds): student, kind, cell, and both scores, each
    under its course's name in ``names``."""
    found = []
    for student, kind in kinds.items():
        if kind == "not-a-notebook":
            continue
        a = course_fixture.scores(plain, assignment, student)
        b = course_fixture.scores(ours, assignment, student)
        for cell in sorted(set(a) | set(b)):
            x, y = a.get(cell), b.get(cell)
            if x != y:
                found.append(
                    f"{student} ({kind}) {cell}: {names[0]} {x.score if x else 'missing'}, "
                    f"{names[1]} {y.score if y else 'missing'}"
                )
    return found


def section_grading(
    assignment: str = "ps01-attention",
    sizes: tuple[int, ...] = (12, 60),
    workers: int | None = None,
) -> list[str]:
    """A section's submissions of ``assignment`` (honest, wrong and hostile, :func:`grading_batch`)
    graded by plain serial ``nbgrader autograde`` with the course's config and warm kernels, and by
    ``make autograde``'s grader with ``workers`` workers (default: its own,
    :func:`bertlab_grader.parallel.default_workers`), sandbox in force for both: the speed-up
    at each size (targets: >= 1.6x at 12, >= 2.0x at 60, both with two kernels per notebook) and
    identical scores."""
    from bertlab_grader import parallel
    from bertlab_grader.sandbox.bwrap import bwrap_path

    targets = {12: 1.6, 60: 2.0}
    failures = []
    print(
        f"\na section of {assignment}: plain serial nbgrader autograde (warm kernels) against the "
        f"course grader ({workers or 'its default'} workers); sandbox {'bwrap' if bwrap_path() else 'NOT available'}"
    )
    for n in sizes:
        with tempfile.TemporaryDirectory() as scratch:
            plain = course_fixture.make_course(Path(scratch) / "plain")
            kinds = grading_batch(plain, assignment, n)
            plain_s = plain_nbgrader(plain, assignment, warm=True)
            ours = course_fixture.make_course(Path(scratch) / "ours")
            grading_batch(ours, assignment, n)
            start = time.perf_counter()
            parallel.autograde(ours, assignment, workers=workers, progress=False)
            ours_s = time.perf_counter() - start
            differences = score_differences(plain, ours, assignment, kinds)
            same = not differences
        ratio, target = plain_s / ours_s, targets.get(n, 1.6)
        used = workers or parallel.default_workers(n)
        print(
            f"  {n:3d} submissions: plain {plain_s:6.1f} s, course grader {ours_s:6.1f} s ({used} workers), "
            f"speed-up {ratio:.2f}x (target >= {target}x); scores identical: {same}"
        )
        for line in differences:
            print(f"    {line}")
        if ratio < target or not same:
            failures.append(f"section grading at {n}")
    return failures


def cluster_grading(assignment: str = "ps00-tokens", n: int = 8) -> list[str]:
    """Submissions per minute graded on a Dask ``LocalCluster`` of 1 and of 2 worker processes,
    and the scheduler's own overhead per task (a task that does nothing, 200 times)."""
    from distributed import Client, LocalCluster

    from bertlab_grader import distributed

    print(
        f"\ngrading {n} submissions of {assignment} on a Dask LocalCluster (autograde --scheduler):"
    )
    rates = {}
    with tempfile.TemporaryDirectory() as scratch:
        for workers in (1, 2):
            course = course_fixture.make_course(Path(scratch) / f"cluster{workers}")
            course_fixture.release(course, assignment)
            for i in range(n):
                course_fixture.submit(
                    course, assignment, f"s{i:02d}", course_fixture.solution_notebook(assignment)
                )
            with (
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                start = time.perf_counter()
                outcomes = distributed.autograde(course, assignment, client, progress=False)
                seconds = time.perf_counter() - start
                assert len(outcomes) == n and all(o.success for o in outcomes)
                if workers == 2:
                    start = time.perf_counter()
                    client.gather(client.map(lambda i: i, range(200), pure=False))
                    overhead = (time.perf_counter() - start) / 200
            rates[workers] = n / seconds * 60
            print(
                f"  {workers} worker(s): {seconds:6.1f} s, {rates[workers]:5.1f} submissions per minute"
            )
    print(f"  scheduler overhead per task: {overhead * 1000:.1f} ms")
    print(f"  1,000 submissions on K one-core workers: about {1000 / rates[1]:.0f} / K minutes")
    return []


def checkpoint_load() -> list[str]:
    """The embedded checkpoint: first-use assembly, then cold load + one 2 x 16 forward pass."""
    from bertlab.models import encoder as embedded
    from recipes.checkpoint.evaluate import measure_load

    if not embedded.is_shipped():
        print(
            "\nembedded checkpoint: not shipped (default is the MiniLM encoder); load not measured"
        )
        return []
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        embedded.checkpoint_path(cache_dir=Path(cache))
        print(
            f"\ncheckpoint assembly on first use (empty cache): {time.perf_counter() - start:.1f} s"
        )
    load = measure_load(embedded.checkpoint_path())
    print(
        f"checkpoint load + forward 2x16 (fresh process): {load['load_forward_s']:.2f} s "
        f"(+ {load['import_s']:.2f} s importing torch and transformers), peak RSS "
        f"{load['peak_rss_mb'] / 1024:.2f} GB   (budget {BUDGET['load_forward_s']} s, {BUDGET['load_rss_gb']} GB)"
    )
    over = (
        load["load_forward_s"] > BUDGET["load_forward_s"]
        or load["peak_rss_mb"] / 1024 > BUDGET["load_rss_gb"]
    )
    return ["checkpoint load"] if over else []


def first_use_then_load(resolve, load_code: str, classes: str) -> tuple[float, float, float]:
    """Seconds ``resolve(cache_dir=<empty>)`` takes to build a model folder on first use; then, in a
    fresh process, seconds importing torch and ``classes`` from transformers, and seconds ``load_code``
    (with ``{path!r}`` for the folder) takes after that import (the checkpoint's load is timed the same way)."""
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        resolve(cache_dir=Path(cache))
        first_use = time.perf_counter() - start
    path = resolve()
    script = (
        "import time; t = time.perf_counter(); import torch; from transformers import "
        + classes
        + "; i = time.perf_counter() - t; t = time.perf_counter(); "
        + load_code.format(path=path)
        + "; print(i, time.perf_counter() - t)"
    )
    imports, load = map(
        float,
        subprocess.run(
            [sys.executable, "-c", script], check=True, capture_output=True, text=True
        ).stdout.split()[-2:],
    )
    return first_use, imports, load


def diffusion_shipped() -> list[str]:
    """What ``make diffusion`` recorded: its training time and the size of the shipped delta."""
    import json

    from bertlab.models.diffusion import WEIGHTS_DIR

    if not (WEIGHTS_DIR / "manifest.json").is_file():
        print("\nmasked diffusion: not shipped (run make diffusion)")
        return ["diffusion not shipped"]
    record = json.loads((WEIGHTS_DIR / "manifest.json").read_text())
    minutes = record["settings"]["last_session_seconds"] / 60
    mb = (WEIGHTS_DIR / record["weights_file"]).stat().st_size / 2**20
    print(
        f"\nmake diffusion (recorded): {record['settings']['steps_done']} steps in {minutes:.0f} min on "
        f"{record['hardware']}   (budget {BUDGET['diffusion_train_min']} min); delta {mb:.1f} MB "
        f"(budget {BUDGET['diffusion_delta_mb']} MB)"
    )
    return (
        ["make diffusion"]
        if minutes > BUDGET["diffusion_train_min"] or mb > BUDGET["diffusion_delta_mb"]
        else []
    )


def bert2bert_load() -> list[str]:
    """The shipped BERT2BERT: assembly on first use (empty cache), then a load in a fresh process."""
    from bertlab.models import bert2bert as b2b

    if not b2b.is_shipped():
        print("\nBERT2BERT: not shipped (run make bert2bert); load not measured")
        return ["bert2bert not shipped"]
    assembly, imports, load = first_use_then_load(
        b2b.bert2bert_path, "EncoderDecoderModel.from_pretrained({path!r})", "EncoderDecoderModel"
    )
    print(
        f"\nBERT2BERT assembly on first use (empty cache): {assembly:.1f} s; load (fresh process): {load:.2f} s "
        f"(+ {imports:.2f} s importing torch and transformers)"
    )
    return []


def decoder_load() -> list[str]:
    """The embedded decoder: GGUF -> HF folder on first use (empty cache), then a load in a fresh process."""
    from bertlab.models import decoder

    convert, imports, load = first_use_then_load(
        decoder.embedded_decoder_path,
        "AutoModelForCausalLM.from_pretrained({path!r}); AutoTokenizer.from_pretrained({path!r})",
        "AutoModelForCausalLM, AutoTokenizer",
    )
    print(
        f"decoder conversion on first use (empty cache): {convert:.1f} s   (budget {BUDGET['decoder_convert_s']} s)"
    )
    print(
        f"decoder load, model + tokenizer (fresh process): {load:.2f} s (+ {imports:.2f} s importing torch and "
        f"transformers)   (budget {BUDGET['decoder_load_s']} s)"
    )
    return (
        ["decoder load"]
        if convert > BUDGET["decoder_convert_s"] or load > BUDGET["decoder_load_s"]
        else []
    )


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    failures = []
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )

    if os.environ.get("BENCH_SKIP_BUILD"):  # e.g. right after a timed cold `make book`
        print("book builds and browser checks: skipped (BENCH_SKIP_BUILD)")
        return pages_and_grading(failures)
    # Built from an empty cache into _build/bench (kept: BERTLAB_SITE=_build/bench/_build/html
    # points the site checks at it), never into the _build/html of `make book`.
    out = REPO / "_build" / "bench"
    shutil.rmtree(out, ignore_errors=True)
    cold = build_book(out)
    cached = build_book(out)
    browser_s, browser_ok = browser_checks(out / "_build" / "html")
    print(f"book build, cold (empty cache): {cold:6.1f} s")
    print(
        f"book build, cached rebuild:     {cached:6.1f} s   (budget {BUDGET['cached_rebuild_s']} s)"
    )
    if cached > BUDGET["cached_rebuild_s"]:
        failures.append("cached rebuild")
    print(
        f"browser checks of the site:     {browser_s:6.1f} s   (budget {BUDGET['browser_checks_s']} s)"
        + ("" if browser_ok else "  (some FAILED: run pytest -m site tests/site/test_browser.py)")
    )
    if browser_s > BUDGET["browser_checks_s"]:
        failures.append("browser checks")
    return pages_and_grading(failures)


def pages_and_grading(failures: list[str]) -> int:
    """Every page in a fresh kernel, every assignment's autograde, the parallel grader, the loads."""

    print(f"\n{'page':<40} {'seconds':>8} {'peak RSS GB':>12}")
    finetune_total = 0.0
    for file in toc_files():
        try:
            seconds, rss = run_page(file)
        except Exception as error:  # a page that fails is a result too; the others still run
            print(
                f"{file:<40} FAILED: {type(error).__name__}: {str(error).strip().splitlines()[-1][:200]}"
            )
            failures.append(file)
            continue
        limit = next(
            (BUDGET[key] for prefix, key in PAGE_BUDGETS if file.startswith(prefix)),
            BUDGET["page_s"],
        )
        finetune_total += seconds if file.startswith(FINETUNE_PAGES) else 0.0
        flag = "" if seconds <= limit and rss <= BUDGET["page_rss_gb"] else "  OVER BUDGET"
        print(f"{file:<40} {seconds:8.1f} {rss:12.2f}{flag}")
        if flag:
            failures.append(file)
    print(
        f"(budget per page: {BUDGET['page_s']} s, {BUDGET['finetune_page_s']} s for the fine-tuning pages, "
        f"{BUDGET['choosing_page_s']} s for Chapter 8 and the FAQ, {BUDGET['forcing_page_s']} s for Chapter 6, "
        f"{BUDGET['bert2bert_page_s']} s for Chapter 7, {BUDGET['diffusion_page_s']} s for Chapter 6b, "
        f"{BUDGET['page_rss_gb']} GB)"
    )
    print(
        f"fine-tuning chapter ({FINETUNE_PAGES}*): {finetune_total:.1f} s   (budget {BUDGET['finetune_chapter_s']} s)"
    )
    if finetune_total > BUDGET["finetune_chapter_s"]:
        failures.append("fine-tuning chapter")

    print(f"\n{'assignment':<40} {'autograde s/submission':>22}")
    for assignment in course_fixture.assignments():
        seconds = autograde_seconds(assignment)
        flag = "" if seconds <= BUDGET["autograde_s"] else "  OVER BUDGET"
        print(f"{assignment:<40} {seconds:22.1f}{flag}")
        if flag:
            failures.append(assignment)
    print(f"(budget: {BUDGET['autograde_s']} s for a reference solution)")

    # Model loads first, on a quiet machine: timed after the Dask stage they paid for its workers'
    # shutdown (5.1 s and 15.9 s against 0.25 s and 2.5 s alone).
    failures += checkpoint_load()
    failures += decoder_load()
    failures += bert2bert_load()
    failures += diffusion_shipped()
    failures += live_models()  # the "Try it" boxes in Chromium (tests/live_bench.py)
    failures += parallel_grading()
    failures += section_grading()
    failures += cluster_grading()
    failures += hub_logins()  # a class logging in to the course's hub at once (tests/hub_bench.py)

    print("\nbudgets: " + ("all met" if not failures else "EXCEEDED by " + ", ".join(failures)))
    return 1 if failures else 0


#: Stages that run alone: ``python tests/bench.py STAGE`` (e.g. ``section_grading``).
STAGES = (
    "parallel_grading",
    "section_grading",
    "cluster_grading",
    "checkpoint_load",
    "decoder_load",
    "live_models",
    "bert2bert_load",
    "diffusion_shipped",
    "hub_logins",
)

if __name__ == "__main__":
    if len(sys.argv) > 1:
        unknown = [s for s in sys.argv[1:] if s not in STAGES]
        if unknown:
            sys.exit(f"bench: unknown stage {', '.join(unknown)}; stages: {', '.join(STAGES)}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        sys.exit(1 if sum((globals()[s]() for s in sys.argv[1:]), []) else 0)
    sys.exit(main())

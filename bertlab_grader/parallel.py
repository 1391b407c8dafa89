"""Grade a folder of submissions N at a time, with one process writing the gradebook.

Plain ``nbgrader autograde`` grades students one after another, and several ``nbgrader`` processes
on one SQLite gradebook fight over its lock (a lock held for over 5 s aborts the batch). Here each
of N worker processes owns a scratch course: the course's nbgrader config and sources, and a copy of
the gradebook taken after the release, so it knows the assignment's cells and hidden tests. A worker
grades one student at a time there with nbgrader's own ``NbGraderAPI.autograde`` (the course's
guarded, sandboxed ``Execute`` included: the config is the course's) and sends back plain values:
every grade, comment and flag of that submission. The parent process alone writes them into the
course gradebook, and copies the graded notebooks into ``autograder/autograded/``
(:mod:`bertlab_grader.records`). Workers start once (importing nbgrader costs seconds) and take the
next student as soon as they are free; a progress bar shows the ETA.

Regrading is idempotent. A submission's content hash is recorded after it is graded
(``autograder/autograded/.bertlab-graded.json``); a submission whose hash has not changed is not
graded again unless ``force``. Manual scores and comments already in the gradebook are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm.auto import tqdm

from bertlab_grader import layout
from bertlab_grader.nbgrader_course import (
    gradebook_snapshot,
    nbgrader_api,
    nbgrader_env,
    scratch_copy,
)
from bertlab_grader.records import Outcome, failed, place_graded, read_submission, settle

STATE_FILE = ".bertlab-graded.json"
#: What a worker needs before its first submission: nbgrader's API, converters and preprocessors,
#: and the grader's own preprocessors the course config names (:mod:`bertlab_grader.config`);
#: first, what it never imports (:mod:`bertlab_grader.unused_imports`).
WORKER_IMPORTS = [
    "bertlab_grader.unused_imports",
    "bertlab_grader.parallel",
    "nbgrader.apps",
    "nbgrader.converters",
    "nbgrader.preprocessors",
    "bertlab_grader.guarded_execute",
    "bertlab_grader.pasted_cells",
    "bertlab_grader.feedback_redaction",
]
_worker: dict = {}  # in each worker process: its scratch course and NbGraderAPI


def submission_hash(folder: Path) -> str:
    """sha256 over the names and bytes of every file in a submission folder."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def db_url(course: Path) -> str:
    """The course gradebook (:func:`bertlab_grader.layout.gradebook_url`)."""
    return layout.gradebook_url(course)


# --- in a worker process -------------------------------------------------------------------


def _start_worker(source: str, snapshot: str, env: dict, cwd: str) -> None:
    """Make this worker's scratch course and its NbGraderAPI (once per process). Its gradebook is
    a copy of the release's, ``snapshot`` (:func:`bertlab_grader.nbgrader_course.gradebook_snapshot`);
    its config and sources are the course's at ``source``. Its environment and folder are the
    parent's now (``env``, ``cwd``), not the fork server's from when it started."""
    from multiprocessing.util import Finalize

    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    course = scratch_copy(Path(source), Path(tempfile.mkdtemp(prefix="bertlab-grader-")))
    Finalize(None, shutil.rmtree, args=(course,), kwargs={"ignore_errors": True}, exitpriority=10)
    os.environ[layout.GRADEBOOK_ENV] = "sqlite:///" + str(
        course / layout.GRADEBOOK
    )  # its own, never the course's
    shutil.copy(snapshot, course / layout.GRADEBOOK)
    _worker.update(course=course, api=nbgrader_api(course))


def _grade(assignment: str, student: str, submitted: str) -> Outcome:
    """Grade one student's submission in this worker's scratch course."""
    course, api = _worker["course"], _worker["api"]
    dest = layout.submission(course, student, assignment)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(submitted, dest)
    start = time.perf_counter()
    result = api.autograde(assignment, student, force=True, create=True)
    seconds = time.perf_counter() - start
    if not result["success"]:
        return failed(student, seconds, (result.get("error") or result.get("log") or "")[-4000:])
    stamp, notebooks = read_submission(db_url(course), assignment, student)
    return Outcome(
        student,
        True,
        seconds,
        timestamp=stamp,
        notebooks=notebooks,
        autograded=str(layout.autograded(course, student, assignment)),
    )


def to_grade(course: Path, assignment: str, students: list[str] | None, force: bool):
    """Who to grade: every submission of ``assignment`` (or only ``students``) whose content
    changed since it was graded, or all if ``force``. Returns (todo, submitted folders, content
    hashes, the state, the state file). Raises FileNotFoundError naming an unknown student."""
    submitted = {
        p.parent.name: p
        for p in sorted((course / layout.SUBMITTED).glob(f"*/{assignment}"))
        if p.is_dir()
    }
    if students:
        unknown = sorted(set(students) - set(submitted))
        if unknown:
            raise FileNotFoundError(
                f"no submission of {assignment} for {', '.join(unknown)} in "
                f"{course / layout.SUBMITTED}/<student>/{assignment}/"
            )
        submitted = {s: submitted[s] for s in students}
    state_path = course / layout.AUTOGRADED / STATE_FILE
    state = json.loads(state_path.read_text()) if state_path.is_file() else {}
    hashes = {s: submission_hash(p) for s, p in submitted.items()}
    todo = [
        s
        for s in submitted
        if force
        or state.get(f"{assignment}/{s}") != hashes[s]
        or not layout.autograded(course, s, assignment).is_dir()
    ]
    return todo, submitted, hashes, state, state_path


#: Submissions per core from which one worker more than the cores pays for its start.
EXTRA_WORKER_FROM = 8


def _worker_context():
    """Workers forked from a fork server: a fresh interpreter (no kernels or threads of this
    process) that imports :data:`WORKER_IMPORTS` once, so that N workers do not each import
    nbgrader (on 2 cores, 12 ps01 submissions grade about 1 s sooner than with ``spawn``). The
    server's start is the one stretch where a core idles: 2.1 s, and 1.0 s since it leaves out
    jsonschema's IRI grammar (:mod:`bertlab_grader.unused_imports`). Where a fork server cannot
    run (not POSIX), ``spawn``."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_IMPORTS)  # read when the server starts: once
    return context


def default_workers(submissions: int, cores: int | None = None) -> int:
    """How many workers grade ``submissions`` at once: one per core, and one more for a batch of
    at least :data:`EXTRA_WORKER_FROM` submissions per core, never more than the submissions.

    A worker waits on its kernel part of the time (starting it, reading its replies), so a worker
    more than the cores fills those gaps; but each worker starts once (its warm-kernel zygote
    importing torch: about 4 CPU-seconds; nbgrader is imported once for all,
    :func:`_worker_context`). Measured on ps01 on 2 cores, 2 workers against 3: 60 submissions
    49.4 and 52.1 s against 44.1 and 45.2 s; 32: 29.5 and 30.6 s against 27.3 and 28.5 s; 20: 24.3
    and 21.7 s against 22.7 and 20.9 s; 12: 15.2-16.3 s against 14.5-15.9 s, a draw, where the
    third zygote's memory is not worth it. ``python tests/bench.py section_grading`` measures 12
    and 60."""
    cores = cores or os.cpu_count() or 1
    wanted = cores + 1 if submissions >= EXTRA_WORKER_FROM * cores else cores
    return max(1, min(wanted, submissions))


def tests_zygote(course: Path, env: dict[str, str]):
    """The tests' zygote every worker shares, starting beside them
    (:class:`bertlab_grader.sandbox.warm.shared.SharedTestsZygote`), with the course's sandbox
    settings, after the course's ``prepare`` functions (which make the folders a kernel reads)."""
    import logging

    from traitlets.config.loader import PyFileConfigLoader

    from bertlab_grader.guarded_execute import GuardedExecute, call
    from bertlab_grader.sandbox.settings import Sandbox
    from bertlab_grader.sandbox.warm.shared import SharedTestsZygote

    def settings() -> Sandbox:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        for spec in GuardedExecute(config=config).prepare:
            call(spec)
        return Sandbox(config=config)

    # the environment a worker's kernel is started in: nbgrader's autograde adds this one
    kernels = {**env, "NBGRADER_EXECUTION": "autograde"}
    return SharedTestsZygote(settings, kernels, logging.getLogger(__name__)).start()


@contextlib.contextmanager
def _stopping(shared):
    """Stop the shared tests' zygote, and remove the workers' zygotes' folder, at the end."""
    try:
        yield
    finally:
        if shared is not None:
            shared.stop()


def autograde(
    course: Path,
    assignment: str,
    workers: int | None = None,
    students: list[str] | None = None,
    force: bool = False,
    progress: bool = True,
) -> list[Outcome]:
    """Grade every submission of ``assignment`` in ``course`` (or only ``students``), ``workers``
    at a time (default: :func:`default_workers`). The assignment must be released (in the gradebook)."""
    course = Path(course).resolve()
    todo, submitted, hashes, state, state_path = to_grade(course, assignment, students, force)
    if not todo:
        return []
    workers = max(1, min(workers, len(todo))) if workers else default_workers(len(todo))
    env = {**nbgrader_env(), "OMP_NUM_THREADS": "1"}
    outcomes = []
    shared = tests_zygote(course, env) if workers > 1 else None
    if shared is not None:
        env.update(shared.env)
    with tempfile.TemporaryDirectory() as scratch, _stopping(shared):
        snapshot = str(
            Path(scratch) / "gradebook.db"
        )  # after the release: the cells and hidden tests
        shutil.copy(gradebook_snapshot(course, assignment, Path(scratch)), snapshot)
        context = _worker_context()
        with (
            ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(str(course), snapshot, env, os.getcwd()),
            ) as pool,
            tqdm(
                total=len(todo),
                desc=f"grading {assignment} ({workers} at a time)",
                unit="student",
                disable=not progress,
            ) as bar,
        ):
            futures = [pool.submit(_grade, assignment, s, str(submitted[s])) for s in todo]
            for future in as_completed(futures):
                outcome = future.result()
                settle(course, assignment, outcome, hashes[outcome.student], state, state_path)
                place_graded(course, assignment, outcome)
                outcomes.append(outcome)
                bar.set_postfix_str(f"last: {outcome.student} {outcome.seconds:.0f} s")
                bar.update()
    return sorted(outcomes, key=lambda o: o.student)

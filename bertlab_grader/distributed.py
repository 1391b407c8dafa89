"""``autograde --scheduler ADDRESS``: one Dask task per submission, on any Dask cluster.

The local grader (:mod:`bertlab_grader.parallel`) fills the cores of one machine. A course with
a thousand students needs more machines, and Dask distributed already schedules tasks on them:
a scheduler, workers started by hand, by ``dask-jobqueue`` on SLURM, or on Kubernetes.

- The client ships the course once (:func:`course_bundle`: the nbgrader config, the assignment's
  source with its hidden tests, and the gradebook after the release when it is SQLite) with
  ``Client.scatter(broadcast=True, hash=False)``, then submits one task per submission with the
  submission's files. Task keys name (assignment, student, submission hash, grader version) and
  the run, so the same submission is never two tasks of a run. Every key is new to the cluster:
  the scheduler forgets a released key asynchronously, and a key the previous run just released
  (a content-hashed bundle, a regraded student) came back cancelled ("already forgotten",
  dask/distributed#4612).
- A task (:func:`grade_task`) runs on a worker, but student code never runs in the worker's own
  process: the task starts ``python -m bertlab_grader.grade_one`` as a child with a hard time
  limit, which grades in a scratch course with the course's sandboxed, capped kernels and writes
  a JSON record; the task returns that record parsed and checked (:meth:`bertlab_grader.records.Outcome.from_json`).
- The client is the only writer of the gradebook: it takes records as they complete
  (``distributed.as_completed``) and writes each in one transaction
  (:func:`bertlab_grader.records.record`), then the graded notebooks, then the state file.
- A worker that dies mid-task: the scheduler runs its task again on another worker (Dask's own
  rescheduling); a submission that has killed ``distributed.scheduler.allowed-failures`` workers
  (3 by default) comes back as ``KilledWorker`` (or, in a race, as a task the scheduler dropped
  with the course's files those workers held) and is reported, not retried for ever.

Used by ``python -m bertlab_grader autograde ASSIGNMENT --scheduler tcp://host:8786`` and by
``make bench`` (a ``LocalCluster``); ``docs/instructors.md`` shows a cluster set up by hand.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

from tqdm.auto import tqdm

from bertlab_grader import layout
from bertlab_grader.nbgrader_course import gradebook_snapshot
from bertlab_grader.parallel import submission_hash, to_grade
from bertlab_grader.records import Outcome, failed, place_graded, settle

#: Seconds a task's grading child may run before it is killed (a notebook's own wall clock is 600 s).
TASK_TIMEOUT = 900


def grader_version(course: Path, assignment: str) -> str:
    """What a grade depends on besides the submission: the packages installed here (every
    distribution's name and version: the course's own package, torch, nbgrader, the grader), the
    grader's config and the assignment's source (its hidden tests). 12 hex digits."""
    from importlib.metadata import distributions

    installed = sorted({f"{d.metadata['Name']}=={d.version}" for d in distributions()})
    digest = hashlib.sha256("\n".join(installed).encode())
    for path in [
        Path(course) / "autograder" / "nbgrader_config.py",
        *sorted((Path(course) / layout.SOURCE / assignment).rglob("*")),
    ]:
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def course_bundle(course: Path, assignment: str) -> bytes:
    """A .tar.gz of what grading ``assignment`` needs: the config, the source, and a SQLite
    gradebook that knows the assignment's cells (the course's own file after the release; for a
    gradebook on a server, one released here, once, so no task has to)."""
    course = Path(course)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar, tempfile.TemporaryDirectory() as scratch:
        tar.add(course / "nbgrader_config.py", "nbgrader_config.py")
        tar.add(course / "autograder" / "nbgrader_config.py", "autograder/nbgrader_config.py")
        tar.add(course / layout.SOURCE / assignment, f"{layout.SOURCE}/{assignment}")
        tar.add(gradebook_snapshot(course, assignment, Path(scratch)), layout.GRADEBOOK)
    return buffer.getvalue()


def submission_files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file()
    }


def grade_task(
    bundle: bytes,
    assignment: str,
    student: str,
    files: dict[str, bytes],
    timeout: float = TASK_TIMEOUT,
) -> dict:
    """On a Dask worker: unpack the course, place the submission, grade it in a child process;
    return the child's JSON record, checked. Never raises for what a submission does."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bertlab-task-") as scratch:
        course = Path(scratch) / "course"
        with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as tar:
            tar.extractall(course, filter="data")
        folder = layout.submission(course, student, assignment)
        for name, data in files.items():
            path = folder / name
            if not path.resolve().is_relative_to(folder.resolve()):
                raise ValueError(f"a submitted file outside the submission folder: {name}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        out = (
            Path(scratch) / "record.json"
        )  # outside the course: the sandboxed kernel cannot see it
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        env.pop(layout.GRADEBOOK_ENV, None)
        try:
            child = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bertlab_grader.grade_one",
                    str(course),
                    assignment,
                    student,
                    str(out),
                ],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                preexec_fn=_die_with_parent,
            )
        except subprocess.TimeoutExpired:
            return failed(
                student,
                time.perf_counter() - start,
                f"grading took more than {timeout:.0f} s and was stopped",
            ).to_json()
        if child.returncode != 0 or not out.is_file():
            return failed(
                student,
                time.perf_counter() - start,
                f"the grading process failed ({child.returncode}): {child.stderr[-2000:]}",
            ).to_json()
        try:
            return Outcome.from_json(json.loads(out.read_text())).to_json()
        except ValueError as exc:
            return failed(
                student,
                time.perf_counter() - start,
                f"the grading process wrote no valid record: {exc}",
            ).to_json()


def _die_with_parent() -> None:
    """In the grading child, before it starts: die when the worker does (Linux's PR_SET_PDEATHSIG),
    so a killed worker leaves no grading behind (its kernels end with it: bwrap --die-with-parent)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except OSError:
        pass


def _outcome(student: str, result) -> Outcome:
    """The outcome of ``student``'s task: its record checked again here (a task's result is not
    trusted), with no folder on this machine (its notebooks come as text)."""
    if isinstance(result, Outcome):
        return result
    try:
        outcome = Outcome.from_json(dict(result))
    except (TypeError, ValueError) as exc:
        return failed(student, 0.0, f"its task returned no valid record: {exc}")
    if outcome.student != student:
        return failed(
            student, outcome.seconds, f"its task returned the record of {outcome.student[:100]!r}"
        )
    outcome.autograded = ""
    return outcome


def autograde(
    course: Path,
    assignment: str,
    scheduler,
    students: list[str] | None = None,
    force: bool = False,
    progress: bool = True,
    timeout: float = TASK_TIMEOUT,
    task=grade_task,
) -> list[Outcome]:
    """Grade the submissions of ``assignment`` on the Dask cluster at ``scheduler`` (an address,
    or a ``distributed.Client``). The same choice of who to grade as the local grader.

    ``task`` is what each Dask task runs (:func:`grade_task`, with its arguments); the tests pass
    one that kills its worker, which a sandboxed submission cannot do, to prove that such a
    submission is reported once the scheduler gives up on it."""
    from concurrent.futures import CancelledError

    from distributed import Client, as_completed
    from distributed.scheduler import KilledWorker

    course = Path(course).resolve()
    todo, submitted, hashes, state, state_path = to_grade(course, assignment, students, force)
    if not todo:
        return []
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    version = grader_version(course, assignment)
    outcomes = []
    try:
        bundle = client.scatter(course_bundle(course, assignment), broadcast=True, hash=False)
        run = uuid.uuid4().hex[:8]  # see the module's docstring: no key of an earlier run again
        futures = {}
        for student in todo:
            key = f"bertlab-grade-{assignment}-{student}-{hashes[student][:16]}-{version}-{run}"
            futures[
                client.submit(
                    task,
                    bundle,
                    assignment,
                    student,
                    submission_files(submitted[student]),
                    timeout,
                    key=key,
                    pure=False,
                )
            ] = student
        with tqdm(
            total=len(todo),
            desc=f"grading {assignment} on {client.scheduler.address}",
            unit="student",
            disable=not progress,
        ) as bar:
            for future in as_completed(futures):
                student = futures[future]
                try:
                    result = future.result()
                except KilledWorker as exc:
                    result = failed(
                        student, 0.0, f"it killed every worker it ran on ({exc}); not retried again"
                    )
                except CancelledError as exc:
                    # the grader cancels nothing itself: the scheduler drops a task whose
                    # workers all died, together with the scattered bundle they held, and may
                    # do so before it marks the task KilledWorker (a race in distributed)
                    result = failed(
                        student,
                        0.0,
                        "the scheduler dropped its task: it most likely killed every "
                        f"worker it ran on, and the course's files with them ({exc}); not retried again",
                    )
                except (
                    Exception
                ) as exc:  # the task itself failed (a bad bundle, a full disk): say so
                    result = failed(student, 0.0, f"{type(exc).__name__}: {exc}")
                outcome = _outcome(student, result)
                settle(course, assignment, outcome, hashes[student], state, state_path)
                place_graded(course, assignment, outcome)
                outcomes.append(outcome)
                bar.set_postfix_str(f"last: {student} {outcome.seconds:.0f} s")
                bar.update()
    finally:
        if client is not scheduler:
            client.close()
    return sorted(outcomes, key=lambda o: o.student)


__all__ = ["autograde", "course_bundle", "grade_task", "grader_version", "submission_hash"]

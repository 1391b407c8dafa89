"""``python -m bertlab_grader autograde --workers N`` (and ``--scheduler``): each submission scores
what its content deserves, one writer of the gradebook, a regrade that skips what has not
changed, and a broken submission that costs only its own student; on a Dask cluster into
PostgreSQL, the same grades as locally into SQLite, and a worker killed mid-batch loses nothing.

The cluster is a real ``distributed.LocalCluster`` of two worker processes (the machine's two
cores); the PostgreSQL server is Debian's, started for these tests (``tests/postgres.py``): those
tests skip, saying why, only where no server can be started.

Everything here grades the grader's test course (``tests/grader_course``: one tiny assignment in
plain Python that loads no model), so a kernel takes a second, not a model load; the course's own
notebooks are graded in the round trips (``tests/assignments/test_assignments.py``)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import nbformat
import pytest

from bertlab_grader import __main__ as cli
import course_fixture
from bertlab_grader import distributed, grade_report, layout, parallel
from bertlab_grader.sandbox.procfs import process_tree
from postgres import Server
from test_kernel_sandbox import needs_bwrap

pytestmark = pytest.mark.slow

ASSIGNMENT = "fx00-tiny"  # the grader's test course's one assignment
FIRST_TESTS = {"test_word_lengths", "test_word_lengths_hidden"}  # the first graded function's tests
POINTS = 6  # the assignment's points
PAUSE = 8  # seconds: how long the tasks a killed worker was running take at least


def make_course(dest):
    return course_fixture.make_course(dest, repo=course_fixture.GRADER_COURSE)


def solution_notebook():
    return course_fixture.solution_notebook(ASSIGNMENT, course_fixture.GRADER_COURSE)


def submissions(course):
    """An honest student, one who handed in the stub, one who killed the kernel halfway, one
    whose file is not a notebook."""
    solution = solution_notebook()
    released = nbformat.read(course_fixture.release(course, ASSIGNMENT), as_version=4)
    course_fixture.submit(course, ASSIGNMENT, "ada", solution)
    course_fixture.submit(course, ASSIGNMENT, "cy", released)
    killer = nbformat.from_dict(solution)
    last = max(
        i
        for i, c in enumerate(killer.cells)
        if c.metadata.get("nbgrader", {}).get("grade")
        and c.metadata["nbgrader"]["grade_id"] == "test_word_lengths_hidden"
    )
    killer.cells.insert(last + 1, nbformat.v4.new_code_cell("import os; os._exit(1)"))
    course_fixture.submit(course, ASSIGNMENT, "dee", killer)
    course_fixture.submit(course, ASSIGNMENT, "eve", solution).write_text("not a notebook")


class Zygotes(threading.Thread):
    """The warm-kernel zygotes this process starts (directly or not) while it watches: each one's
    control socket, and whether it serves several kernels at once (``--many``)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.before = self.running()  # zygotes this process keeps from earlier tests
        self.seen: dict[str, bool] = {}
        self.done = threading.Event()

    @staticmethod
    def running() -> dict[str, bool]:
        found = {}
        for pid in process_tree(os.getpid()):
            try:
                argv = open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\0")
            except (OSError, ValueError):
                continue
            if "bertlab_grader.sandbox.warm.zygote" in argv:
                at = argv.index("bertlab_grader.sandbox.warm.zygote")
                found[argv[at + 1]] = "--many" in argv
        return found

    def run(self):
        while not self.done.is_set():
            self.seen.update({k: v for k, v in self.running().items() if k not in self.before})
            self.done.wait(0.2)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.join()


SEEN: dict[str, bool] = {}  # the zygotes that ran while ``graded`` graded


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Four submissions graded by the parallel grader, two at a time, and the zygotes that ran.
    (``make bench`` grades 20 with plain ``nbgrader autograde`` as well and checks the scores are
    identical.)"""
    ours = make_course(tmp_path_factory.mktemp("parallel"))
    submissions(ours)
    with Zygotes() as zygotes:
        outcomes = parallel.autograde(ours, ASSIGNMENT, workers=2, progress=False)
    SEEN.update(zygotes.seen)
    return ours, {o.student: o for o in outcomes}


gradebook = layout.using_gradebook  # grade with this gradebook URL (None: each course's own SQLite)


@pytest.fixture(scope="module")
def postgres():
    server = Server().start()
    if server.url is None:
        pytest.skip(server.why)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as local,
        Client(local) as client,
    ):
        yield local, client


@pytest.fixture(scope="module")
def on_cluster(tmp_path_factory, cluster, postgres):
    """The same four submissions graded on a Dask LocalCluster of two worker processes, into a
    PostgreSQL gradebook (``autograde --scheduler``)."""
    _, client = cluster
    url = postgres.database()
    remote = make_course(tmp_path_factory.mktemp("remote"))
    with gradebook(url):
        submissions(remote)
        outcomes = {
            o.student: o for o in distributed.autograde(remote, ASSIGNMENT, client, progress=False)
        }
    return remote, url, outcomes


def test_each_submission_scores_what_its_content_deserves(graded):
    ours, outcomes = graded
    assert sorted(outcomes) == ["ada", "cy", "dee", "eve"]
    full = course_fixture.scores(ours, ASSIGNMENT, "ada")
    assert all(s.score == s.max_score for s in full.values()) and len(full) == 4
    assert sum(s.score for s in course_fixture.scores(ours, ASSIGNMENT, "cy").values()) == 0
    dee = course_fixture.scores(ours, ASSIGNMENT, "dee")
    kept = {k for k, s in dee.items() if s.score}
    assert kept == FIRST_TESTS, "the cells before the kernel died keep their scores"
    assert not outcomes["eve"].success and outcomes["ada"].success
    assert (ours / "autograder" / "autograded" / "ada" / ASSIGNMENT).is_dir()


def scores(course, url, student):
    with gradebook(url):
        return {
            k: (c.score, c.max_score)
            for k, c in course_fixture.scores(course, ASSIGNMENT, student).items()
        }


def test_the_cluster_into_postgresql_grades_as_the_local_grader_into_sqlite(graded, on_cluster):
    local, _ = graded
    remote, url, outcomes = on_cluster
    assert sorted(outcomes) == ["ada", "cy", "dee", "eve"]
    assert not outcomes["eve"].success and outcomes["ada"].success
    for student in ("ada", "cy", "dee"):
        assert scores(local, None, student) == scores(remote, url, student), student
    assert sum(s for s, _ in scores(remote, url, "ada").values()) == POINTS
    with gradebook(None):
        here = grade_report.report(local, ASSIGNMENT)
    with gradebook(url):
        there = grade_report.report(remote, ASSIGNMENT)
    assert here == there
    assert (remote / layout.AUTOGRADED / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()


def test_the_workers_share_one_tests_zygote(graded):
    """Each worker forks its students' kernels from a zygote of its own, one at a time; the tests'
    kernels of both come from one zygote the grader started once (``--many``), not one per worker
    (each zygote imports what the course's notebooks import: seconds of CPU)."""
    needs_bwrap()
    many = [control for control, shared in SEEN.items() if shared]
    own = [control for control, shared in SEEN.items() if not shared]
    assert len(many) == 1 and len(own) == 2, SEEN


def test_unchanged_submissions_are_not_graded_again_unless_forced(graded):
    ours, _ = graded
    before = course_fixture.scores(ours, ASSIGNMENT, "ada")
    assert (
        parallel.autograde(ours, ASSIGNMENT, workers=2, students=["ada", "cy"], progress=False)
        == []
    )
    again = parallel.autograde(
        ours, ASSIGNMENT, workers=1, students=["ada"], force=True, progress=False
    )
    assert [o.student for o in again] == ["ada"] and again[0].success
    assert course_fixture.scores(ours, ASSIGNMENT, "ada") == before, (
        "the same submission, the same grades"
    )


def test_a_manual_score_survives_a_regrade(graded):
    from nbgrader.api import Gradebook

    ours, _ = graded
    with Gradebook(parallel.db_url(ours)) as gradebook:
        grade = gradebook.find_grade(
            "test_word_lengths_hidden",
            course_fixture.notebook_name(ASSIGNMENT, ours),
            ASSIGNMENT,
            "cy",
        )
        grade.manual_score = 1.0
        gradebook.db.commit()
    parallel.autograde(ours, ASSIGNMENT, workers=1, students=["cy"], force=True, progress=False)
    with Gradebook(parallel.db_url(ours)) as gradebook:
        grade = gradebook.find_grade(
            "test_word_lengths_hidden",
            course_fixture.notebook_name(ASSIGNMENT, ours),
            ASSIGNMENT,
            "cy",
        )
        assert grade.manual_score == 1.0 and grade.auto_score == 0


def test_the_command_reports_every_student_and_names_who_needs_a_look(graded, capsys):
    ours, _ = graded
    code = cli.main(["autograde", ASSIGNMENT, "--course", str(ours), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 1 and "eve" in err and "dee" in err and "ada" not in err
    assert "eve" in out and "not graded" in out, "eve's file is tried again: it was never graded"
    rows = json.loads((ours / "autograder" / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {r["student"] for r in rows} == {"ada", "cy", "dee", "eve"}


def test_a_student_with_no_submission_is_a_clear_error(graded):
    ours, _ = graded
    with pytest.raises(FileNotFoundError, match=f"no submission of {ASSIGNMENT} for zed"):
        parallel.autograde(ours, ASSIGNMENT, students=["zed"], progress=False)


def test_release_then_collect_a_canvas_zip_and_a_folder(tmp_path, capsys):
    """``release`` records the tests; ``collect`` maps Canvas's file names to students (late and
    resubmitted ones too) through nbgrader's zip_collect, and copies a folder of student folders."""
    import zipfile

    course = make_course(tmp_path / "course")
    assert cli.main(["autograde", ASSIGNMENT, "--course", str(course)]) == 2
    assert "release it first" in capsys.readouterr().err
    assert cli.main(["release", ASSIGNMENT, "--course", str(course)]) == 0
    notebook = nbformat.writes(solution_notebook())
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"lovelaceada_12345_678_{ASSIGNMENT}.ipynb", notebook)
        z.writestr(f"turingalan_late_222_333_{ASSIGNMENT}-1.ipynb", notebook)
        z.writestr("readme.txt", "not a submission")
    assert cli.main(["collect", ASSIGNMENT, str(archive), "--course", str(course)]) == 0
    assert "lovelaceada, turingalan" in capsys.readouterr().out
    for student in ("lovelaceada", "turingalan"):
        assert (
            course / "autograder" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        ).is_file()

    folder = tmp_path / "by-hand"
    (folder / "hopper").mkdir(parents=True)
    (folder / "hopper" / f"{ASSIGNMENT}.ipynb").write_text(notebook)
    assert cli.main(["collect", ASSIGNMENT, str(folder), "--course", str(course)]) == 0
    assert (
        course / "autograder" / "submitted" / "hopper" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    ).is_file()

    (tmp_path / "notes.txt").write_text("hello")
    assert (
        cli.main(["collect", ASSIGNMENT, str(tmp_path / "notes.txt"), "--course", str(course)]) == 2
    )
    assert "not a zip file" in capsys.readouterr().err
    with zipfile.ZipFile(tmp_path / "odd.zip", "w") as z:
        z.writestr(f"{ASSIGNMENT}.ipynb", notebook)
    assert (
        cli.main(["collect", ASSIGNMENT, str(tmp_path / "odd.zip"), "--course", str(course)]) == 2
    )
    assert "--regexp" in capsys.readouterr().err


def test_export_quotes_names_and_has_a_column_per_question(graded):
    import csv

    from nbgrader.api import Gradebook

    from bertlab_grader.export import export

    ours, _ = graded
    with Gradebook(parallel.db_url(ours)) as gradebook:
        gradebook.update_or_create_student(
            "ada", last_name="Lovelace, Countess of", first_name="Ada"
        )
    paths = export(ours, [ASSIGNMENT])
    with paths[0].open(newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert rows["ada"]["last_name"] == "Lovelace, Countess of"
    cells = course_fixture.scores(ours, ASSIGNMENT, "ada")
    assert all(float(rows["ada"][g]) == s.score for g, s in cells.items())
    for student in ("ada", "cy"):  # cy's one point is the manual score given above
        assert float(rows[student]["score"]) == sum(
            s.score for s in course_fixture.scores(ours, ASSIGNMENT, student).values()
        )
    named = {p.name: p for p in paths}
    with named["totals.csv"].open(newline="") as f:
        totals = {r["student"]: r for r in csv.DictReader(f)}
    assert totals["ada"][ASSIGNMENT] == rows["ada"]["score"]
    with named["canvas.csv"].open(newline="") as f:
        canvas = list(csv.DictReader(f))
    assert (
        canvas[0]["Student"].strip() == "Points Possible" and float(canvas[0][ASSIGNMENT]) == POINTS
    )
    assert {r["SIS Login ID"]: r["Student"] for r in canvas[1:]}[
        "ada"
    ] == "Lovelace, Countess of, Ada"
    with named["moodle.csv"].open(newline="") as f:
        assert {r["Username"]: r[ASSIGNMENT] for r in csv.DictReader(f)}["ada"] == rows["ada"][
            "score"
        ]
    with named[f"{ASSIGNMENT}-items.csv"].open(newline="") as f:
        items = {r["grade_id"]: r for r in csv.DictReader(f)}
    assert set(items) == set(cells) and all(
        0 <= float(r["share_full_marks"]) <= 1 for r in items.values()
    )


def test_feedback_for_one_student_hides_the_hidden_tests(graded):
    ours, _ = graded
    assert cli.main(["feedback", ASSIGNMENT, "--student", "ada", "--course", str(ours)]) == 0
    html = course_fixture.readable(
        ours / "autograder" / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    )
    hidden = course_fixture.marked_pairs(solution_notebook(), "HIDDEN TESTS")
    assert hidden and not [pair for pair in hidden if pair in html]
    assert not (ours / "autograder" / "feedback" / "cy").exists(), "only the student asked for"


def test_reruns_on_the_cluster_change_nothing_even_with_a_worker_killed_midway(on_cluster, cluster):
    """Three reruns: two that skip what has not changed, and a forced one during which a busy
    worker is killed (SIGKILL): its submission is graded again on another worker, exactly once,
    and nothing in the gradebook changes. (Before the forced one, ada's and dee's notebooks get
    a cell that sleeps a few seconds, as a model load would: a task that long is surely still
    running when its worker is killed.)"""
    from nbgrader.api import Gradebook, SubmittedAssignment

    remote, url, _ = on_cluster
    _, client = cluster
    before = {s: scores(remote, url, s) for s in ("ada", "cy", "dee")}
    with gradebook(url):
        for _ in range(2):  # unchanged: skipped; only eve's file, never graded, is tried again
            rerun = distributed.autograde(remote, ASSIGNMENT, client, progress=False)
            assert [(o.student, o.success) for o in rerun] == [("eve", False)]
        for student in ("ada", "dee"):  # the same work, and a pause before it
            path = layout.submission(remote, student, ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            notebook.cells.insert(2, nbformat.v4.new_code_cell(f"import time\ntime.sleep({PAUSE})"))
            nbformat.write(notebook, path)
        done: dict = {}
        grader = threading.Thread(
            target=lambda: done.update(
                outcomes=distributed.autograde(
                    remote, ASSIGNMENT, client, students=["ada", "dee"], force=True, progress=False
                )
            )
        )
        grader.start()
        deadline = time.monotonic() + 120
        while not any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(PAUSE / 2)  # well into the tasks
        busy = next(address for address, tasks in client.processing().items() if tasks)
        os.kill(client.run(os.getpid)[busy], signal.SIGKILL)
        grader.join(timeout=600)
        assert not grader.is_alive()
        outcomes = done["outcomes"]
        assert sorted(o.student for o in outcomes) == ["ada", "dee"], (
            "every submission graded exactly once"
        )
        assert all(o.success for o in outcomes), [o.error[-300:] for o in outcomes if not o.success]
        with Gradebook(url) as book:
            rows = book.db.query(SubmittedAssignment).count()
    assert {s: scores(remote, url, s) for s in before} == before
    assert rows == 3, "one submission row per graded student, however often graded"


def test_a_submission_that_kills_every_cluster_worker_it_lands_on_is_reported_not_retried_for_ever(
    on_cluster, cluster
):
    """Dask retries a task whose worker died on another worker; once it has killed more than
    ``allowed_failures`` workers the scheduler gives up (``KilledWorker``) and the grader reports
    that student and goes on. A sandboxed submission cannot kill its worker, so the task here
    does (``os._exit`` in the worker's own process) before grading anything."""
    remote, url, _ = on_cluster
    _, client = cluster

    def kills_its_worker(bundle, assignment, student, files, timeout):
        os._exit(1)

    allowed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
    client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", 1))
    try:
        with gradebook(url):
            before = scores(remote, url, "ada")
            outcomes = distributed.autograde(
                remote,
                ASSIGNMENT,
                client,
                students=["eve"],
                force=True,
                progress=False,
                task=kills_its_worker,
            )
            after = scores(remote, url, "ada")
    finally:
        client.run_on_scheduler(
            lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", allowed)
        )
    assert [(o.student, o.success) for o in outcomes] == [("eve", False)]
    assert (
        "killed every worker it ran on" in outcomes[0].error
        and "not retried again" in outcomes[0].error
    )
    assert after == before, "nobody else's grades move"
    client.wait_for_workers(2, timeout=120)  # the nannies restart the killed workers


def test_one_worker_per_core_and_one_more_for_a_large_batch():
    """A worker more than the cores fills the time the others wait on their kernels, but pays its
    own start-up: only from EXTRA_WORKER_FROM submissions per core (bench: section_grading)."""
    big = parallel.EXTRA_WORKER_FROM * 2
    assert parallel.default_workers(12, cores=2) == 2
    assert parallel.default_workers(big - 1, cores=2) == 2
    assert parallel.default_workers(big, cores=2) == 3
    assert parallel.default_workers(1, cores=8) == 1  # never more workers than submissions


def test_the_workers_leave_out_the_iri_grammar_and_still_read_notebooks():
    """The workers' fork server imports ``unused_imports`` before nbgrader: jsonschema then skips
    its IRI checker, whose module builds a Lark grammar at import (a second of a worker's start),
    and nbformat still reads and validates a notebook, a bad one included."""
    import subprocess
    import sys

    assert parallel.WORKER_IMPORTS[0] == "bertlab_grader.unused_imports"
    check = (
        "import sys, bertlab_grader.unused_imports, nbformat, nbgrader.apps\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')])\n"
        "nbformat.validate(nbformat.reads(nbformat.writes(nb), as_version=4))\n"
        "try:\n"
        "    nbformat.validate({'cells': 1})\n"
        "except nbformat.ValidationError:\n"
        "    pass\n"
        "else:\n"
        "    sys.exit('a bad notebook validated')\n"
        "print('rfc3987_syntax' in sys.modules, sys.modules.get('rfc3987_syntax', 0) is None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "True"], "the IRI grammar's module is marked absent, never imported"

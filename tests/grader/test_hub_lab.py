"""The class hub end to end in Chromium, as a class meets it: ps00 out, work in, feedback back.

The course's hub runs on loopback with two temporary students (:func:`class_hub.class_hub`). Each
logs in through the hub's form in Chromium (:mod:`browser`: one browser, a context of their own,
so their own cookies), opens the Assignments tab (the student's own menu, Assignments > Assignment List: student-lab/,
as in ``make lab``) and fetches ps00.
One types the reference solution into the notebook's three functions, the other leaves the stubs;
each presses Validate in the notebook's toolbar and reads the dialog, then submits in the tab. The
instructor's grader collects, autogrades and releases feedback through the exchange
(``python -m bertlab_grader``, as in tests/grader/test_hub_exchange.py); each student presses
Fetch Feedback in the tab and opens it. The two students act side by side: while one's server
starts or validates, the other's does too. Skipped, saying why, where this machine cannot create
users, start the hub's proxy or start Chromium; CI fails instead (:mod:`required`).
"""

from __future__ import annotations

import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest

import browser
import class_hub
import course_fixture
from class_hub import ASSIGNMENT

# JupyterHub and Chromium; the students are system users
pytestmark = [pytest.mark.slow, pytest.mark.services, pytest.mark.system]

FUNCTIONS = {"impl_pad_batch": "pad_batch", "impl_pieces_per_word": "pieces_per_word",
             "impl_segment_ids": "segment_ids"}  # fmt: skip
# Each answer cell the student fills in, and text that finds it: the functions, and the prediction
ANSWERS = {**{grade_id: f"def {name}(" for grade_id, name in FUNCTIONS.items()},
           "impl_predict_most_pieces": "PREDICT_MOST_PIECES ="}  # fmt: skip
MARKERS = {"### BEGIN SOLUTION", "### END SOLUTION"}
STEP_MS = 60_000  # one click's answer on a loaded machine
SPAWN_MS = 240_000  # the hub gives a server 180 s to answer (hub/jupyterhub_config.py)
VALIDATE_MS = 180_000  # ps00 in a kernel: torch, the tokenizer, every test cell
# nbgrader's Assignments tab (its JupyterLab extension's AssignmentList) and its three lists
TAB = "#nbgrader-assignment-list"
MENU = "Assignments"  # student-lab/labconfig/default_setting_overrides.json
RELEASED, FETCHED, SUBMITTED = ("#released_assignments_list", "#fetched_assignments_list",
                                "#submitted_assignments_list")  # fmt: skip


def typed_solution() -> dict[str, str]:
    """What the student who does the work types into each answer cell: the reference solution,
    its ``### BEGIN/END SOLUTION`` lines left out."""
    solution = course_fixture.solution_notebook(ASSIGNMENT)
    typed = {}
    for cell in solution.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ANSWERS:
            lines = cell.source.splitlines()
            typed[grade_id] = "\n".join(line for line in lines if line.strip() not in MARKERS)
    return typed


@dataclass
class Seen:
    """What one student saw, and what their server answered them."""

    name: str
    fetched: str = ""  # the tab's "Downloaded assignments" after Fetch
    validation: str = ""  # the dialog Validate opened, as shown
    submitted: str = ""  # the tab's "Submitted assignments" after Submit
    tab: str = ""  # the whole tab after Fetch Feedback
    feedback_listing: list[str] = field(default_factory=list)  # the file browser at the feedback
    feedback: str = ""  # the feedback HTML, read through their server
    other_home: dict[str, int] = field(default_factory=dict)  # how the other's home was refused


class Student:
    """One student in Chromium: a browser context of their own, one page, their JupyterLab."""

    def __init__(self, chromium, hub: class_hub.ClassHub, name: str):
        self.hub, self.seen = hub, Seen(name)
        self.name, self.password = name, hub.students[name]
        self.server = f"{hub.url}user/{name}/"
        self.context = chromium.browser.new_context(viewport=browser.LAPTOP)
        self.context.route(browser.OFFSITE, lambda route: route.abort("blockedbyclient"))
        self.context.set_default_timeout(STEP_MS)
        self.page = self.context.new_page()

    def log_in(self) -> None:
        """The hub's login form; the hub then starts the server (waited for in :meth:`arrive`)."""
        self.page.goto(self.hub.url + "hub/login")
        self.page.fill("#username_input", self.name)
        self.page.fill("#password_input", self.password)
        self.page.click("#login_submit")

    def arrive(self) -> None:
        """Wait for JupyterLab, then open the Assignments tab from its menu."""
        menu = self.page.get_by_role("menuitem", name=MENU, exact=True)
        menu.wait_for(timeout=SPAWN_MS)
        self.open_tab()

    def open_tab(self) -> None:
        self.page.get_by_role("menuitem", name=MENU, exact=True).click()
        self.page.get_by_role("menuitem", name="Assignment List").click()
        self.page.locator(TAB).wait_for()

    def row(self, listing: str):
        return self.page.locator(f"{TAB} {listing} > .list_item", has_text=ASSIGNMENT)

    def fetch(self) -> None:
        self.row(RELEASED).get_by_role("button", name="Fetch", exact=True).click()
        self.row(FETCHED).wait_for()
        self.seen.fetched = self.page.locator(f"{TAB} {FETCHED}").inner_text()

    def open_notebook(self) -> None:
        """Open ps00 from its row in the tab, as the tab's link does."""
        self.row(FETCHED).locator(".assignment-notebooks-link").click()
        self.row(FETCHED).locator(".nested_list_item a", has_text=ASSIGNMENT).click()
        self.page.locator(".jp-NotebookPanel .jp-CodeCell", has_text="def pad_batch(").wait_for()

    def write(self, sources: dict[str, str]) -> None:
        """Replace each answer cell with ``sources[grade_id]``, as one types or pastes it."""
        for grade_id, source in sources.items():
            cell = self.page.locator(".jp-NotebookPanel .jp-CodeCell", has_text=ANSWERS[grade_id])
            cell.locator(".cm-content").click()
            self.page.keyboard.press("Control+a")
            self.page.keyboard.insert_text(source)

    def press_validate(self) -> None:
        self.page.locator(".jp-NotebookPanel-toolbar jp-button.validate-button").click()

    def read_validation(self) -> None:
        """Wait for the dialog Validate opens (its results, or an error), keep its text, press OK."""
        dialog = self.page.locator(".jp-Dialog .jp-Dialog-content")
        dialog.wait_for(timeout=VALIDATE_MS)
        self.seen.validation = dialog.inner_text()
        dialog.locator(".jp-mod-accept").click()

    def submit(self) -> None:
        self.open_tab()
        self.row(FETCHED).get_by_role("button", name="Submit", exact=True).click()
        self.row(SUBMITTED).wait_for()
        self.seen.submitted = self.page.locator(f"{TAB} {SUBMITTED}").inner_text()

    def fetch_feedback(self) -> None:
        """Refresh the tab, press Fetch Feedback, open the feedback from the tab's link, read it."""
        self.page.locator(f"{TAB} #refresh_assignments_list").click()
        self.row(SUBMITTED).get_by_text("(feedback available to fetch)").wait_for()
        self.row(SUBMITTED).get_by_role("button", name="Fetch Feedback", exact=True).click()
        view = self.row(SUBMITTED).get_by_text("(view feedback)")
        view.wait_for()
        self.seen.tab = self.page.locator(TAB).inner_text()
        view.click()
        listed = self.page.locator(".jp-DirListing-content .jp-DirListing-itemText")
        listed.filter(has_text=".html").first.wait_for()
        self.seen.feedback_listing = listed.all_inner_texts()
        folder = f"{ASSIGNMENT}/feedback"
        (stamp,) = [item["name"] for item in self.get(f"api/contents/{folder}").json()["content"]]
        self.seen.feedback = self.get(f"files/{folder}/{stamp}/{ASSIGNMENT}.html").text()

    def try_other_home(self, other: str) -> None:
        """Ask for the other student's home: through this student's server, and from theirs."""
        self.seen.other_home = {
            "own server": self.get(f"api/contents/{quote('../' + other, safe='')}").status,
            "other's server": self.context.request.get(
                f"{self.hub.url}user/{other}/api/contents"
            ).status,
        }

    def get(self, path: str):
        """A GET of ``path`` on this student's server, with their cookies."""
        return self.context.request.get(self.server + path)

    def keep_screenshot(self) -> None:
        kept = Path(tempfile.gettempdir()) / f"bertlab-hub-lab-{self.name}.png"
        try:
            self.page.screenshot(path=str(kept), full_page=True)
            print(f"hub lab: {self.name}'s page is {kept}", file=sys.stderr)
        except Exception as error:  # noqa: BLE001 (a page that cannot be drawn is no finding)
            print(f"hub lab: no screenshot of {self.name}'s page: {error}", file=sys.stderr)


@dataclass
class ClassDay:
    """What the two students saw, and what the gradebook says of them."""

    writer: Seen  # the student who typed the reference solution
    stub: Seen  # the student who left the stubs
    scores: dict[str, dict[str, course_fixture.CellScore]]  # student -> grade id -> score


@pytest.fixture(scope="module")
def class_day() -> ClassDay:
    """The whole day once, both students side by side; then the hub, its users and the browser
    are gone, and the tests read what was seen."""
    why = class_hub.why_not_here() or browser.why_unavailable()
    if why:
        pytest.skip(why)
    with browser.reader() as chromium, ExitStack() as stack:
        try:
            hub = stack.enter_context(class_hub.class_hub(2, prefix="bltest"))
        except class_hub.HubUnavailable as unavailable:
            pytest.skip(str(unavailable))
        writer, stub = (Student(chromium, hub, name) for name in hub.students)
        both = (writer, stub)
        try:
            for student in both:
                student.log_in()
            for student in both:
                student.arrive()
                student.fetch()
                student.open_notebook()
                if student is writer:
                    student.write(typed_solution())
                student.press_validate()
            for student in both:
                student.read_validation()
                student.submit()
            hub.grader("collect", ASSIGNMENT, "exchange")
            hub.grader("autograde", ASSIGNMENT, allowed=(0, 1))  # 1: the stub needs a look
            hub.grader("feedback", ASSIGNMENT)
            for student, other in ((writer, stub), (stub, writer)):
                student.fetch_feedback()
                student.try_other_home(other.name)
        except Exception:
            for student in both:
                student.keep_screenshot()
            raise
        finally:
            for student in both:
                student.context.close()
        scores = {s.name: course_fixture.scores(hub.course, ASSIGNMENT, s.name) for s in both}
    return ClassDay(writer.seen, stub.seen, scores)


def test_both_students_fetch_ps00_in_the_assignments_tab(class_day):
    for seen in (class_day.writer, class_day.stub):
        assert ASSIGNMENT in seen.fetched, f"{seen.name}'s Downloaded assignments: {seen.fetched}"


def test_both_students_submit_in_the_assignments_tab(class_day):
    for seen in (class_day.writer, class_day.stub):
        assert ASSIGNMENT in seen.submitted, (
            f"{seen.name}'s Submitted assignments: {seen.submitted}"
        )


def test_validate_tells_the_writer_their_notebook_passes(class_day):
    assert "Success! Your notebook passes all the tests." in class_day.writer.validation, (
        class_day.writer.validation
    )


def test_validate_shows_the_stub_its_failing_tests(class_day):
    shown = class_day.stub.validation
    assert "Success" not in shown
    assert shown.count("The following cell failed:") >= len(FUNCTIONS), shown
    for function in FUNCTIONS.values():
        assert f"{function}(" in shown, f"no failing test of {function} in:\n{shown}"
    assert "NotImplementedError" in shown, shown


def test_the_gradebook_gives_the_solution_full_marks_and_the_stub_zero(class_day):
    writer = class_day.scores[class_day.writer.name].values()
    stub = class_day.scores[class_day.stub.name].values()
    full = sum(cell.max_score for cell in writer)
    assert full > 0
    assert sum(cell.score for cell in writer) == full, [vars(c) for c in writer]
    assert sum(cell.score for cell in stub) == 0, [vars(c) for c in stub]


def score_line(cells) -> str:
    """How nbgrader's feedback page heads a notebook's score."""
    cells = list(cells)
    total, full = sum(c.score for c in cells), sum(c.max_score for c in cells)
    return f"{ASSIGNMENT} (Score: {round(total, 2)} / {round(full, 2)})"


def test_each_student_reads_their_own_feedback_from_the_tab(class_day):
    for seen in (class_day.writer, class_day.stub):
        assert "(view feedback)" in seen.tab, seen.tab
        assert f"{ASSIGNMENT}.html" in seen.feedback_listing, seen.feedback_listing
        own = score_line(class_day.scores[seen.name].values())
        assert own in seen.feedback, f"{seen.name}'s feedback lacks {own!r}"


def test_no_student_sees_the_other_students_work(class_day):
    pairs = ((class_day.writer, class_day.stub), (class_day.stub, class_day.writer))
    for seen, other in pairs:
        assert other.name not in seen.tab + seen.feedback, f"{seen.name} sees {other.name}"
        theirs = score_line(class_day.scores[other.name].values())
        assert theirs not in seen.feedback, f"{seen.name}'s feedback shows {theirs!r}"
        refused = {how: code for how, code in seen.other_home.items() if code not in (403, 404)}
        assert not refused, f"{seen.name} asked for {other.name}'s home and got {refused}"

"""`make lab` serves JupyterLab with nbgrader's Validate working on exercises/ (its server API), and
none of nbgrader's instructor tools; in Chromium, Validate's dialog opens on a failing test's
message, not on test code."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from test_validate_messages import with_implementation
from variant_runner import variants

import browser
import course_fixture
from loopback import free_port

pytestmark = pytest.mark.slow
#: What student-lab/labconfig/page_config.json turns off (the Validate button and the Assignments
#: list stay).
STUDENT_DISABLES = (
    "@jupyter/nbgrader:menu",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:create-assignment",
    "@jupyterlab/apputils-extension:announcements",
)
TOKEN = "bertlab-test"
#: The height of the Validate dialog's box at a laptop's window (LAPTOP): what a student reads
#: without scrolling.
DIALOG_BOX_PX = 375
#: ps04's known mistake planted for the dialog check, and the words of its visible test's message.
PLANTED, PLANTED_SAYS = "labels_zero_for_unselected", "unselected positions get -100"


@pytest.fixture(scope="module")
def lab():
    """``make lab`` on a free port: its base URL."""
    port = free_port()
    flags = f"--no-browser --port={port} --ServerApp.token={TOKEN} --ServerApp.ip=127.0.0.1 --allow-root"
    server = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_FLAGS={flags}"],
        cwd=course_fixture.REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_validate_button_works_on_the_released_stub(lab):
    base, token = lab, TOKEN
    assignment = course_fixture.assignments()[0]
    path = f"exercises/{assignment}/{course_fixture.notebook_name(assignment)}.ipynb"
    request = urllib.request.Request(
        f"{base}/assignments/validate?token={token}",
        data=urllib.parse.urlencode({"path": path}).encode(),
        method="POST",
    )
    reply = json.loads(urllib.request.urlopen(request, timeout=120).read())
    assert reply["success"], reply
    result = reply["value"]
    assert result.get("failed"), f"validating the stub should report failing cells: {result}"

    # the student's settings (student-lab/): no instructor tools, no news pop-up
    page = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30).read().decode()
    for plugin in STUDENT_DISABLES:
        assert plugin in page, f"make lab leaves {plugin} enabled"
    try:
        urllib.request.urlopen(f"{base}/formgrader?token={token}", timeout=30)
        raise AssertionError("make lab serves nbgrader's formgrader to the student")
    except urllib.error.HTTPError as error:
        assert error.code == 404, error


#: Where in Validate's dialog body the first line holding ``words`` ends, in pixels from the top of
#: the box (scrolled to its top), and the box's own height.
WHERE_IN_THE_BOX = """([words]) => {
    const box = document.querySelector('.jp-Dialog .jp-Dialog-body');
    box.scrollTop = 0;
    const top = box.getBoundingClientRect().top;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent.indexOf(words);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + words.length);
        return {bottom: range.getBoundingClientRect().bottom - top, box: box.clientHeight};
    }
    return null;
}"""


def test_validate_dialog_opens_on_the_failure(lab, tmp_path):
    """ps04 with a known mistake in mask_tokens, validated with the notebook's Validate button in
    Chromium: the failing cell shows one line (the call of its visible tests, which sit in the
    read-only cell above it), and the assertion's message, expected and got, is read in the
    dialog's box without scrolling."""
    reason = browser.why_unavailable()
    if reason:
        pytest.skip(reason)
    assignment = "ps04-mlm"
    # a copy in the served folder (make lab serves the checkout), in _build/, which git ignores
    scratch = Path(tempfile.mkdtemp(prefix="lab-validate-", dir=course_fixture.REPO / "_build"))
    try:
        notebook = Path(
            with_implementation(assignment, variants(assignment)["WRONG"][PLANTED], scratch)
        )
        where = notebook.relative_to(course_fixture.REPO).as_posix()
        with browser.reader() as chromium:
            page = chromium.new_page()
            page.goto(f"{lab}/lab/tree/{urllib.parse.quote(where)}?token={TOKEN}")
            page.locator(".jp-NotebookPanel .jp-CodeCell", has_text="def mask_tokens(").wait_for(
                timeout=120_000
            )
            page.locator(".jp-NotebookPanel-toolbar jp-button.validate-button").click()
            message = page.locator(".jp-Dialog #validation-message")  # the dialog's body
            message.wait_for(timeout=480_000)
            page.screenshot(path=str(tmp_path / "validate-dialog.png"))
            shown = message.inner_text()
            sources = message.locator(".jp-RenderedText pre").all_inner_texts()[::2]
            places = {
                words: page.evaluate(WHERE_IN_THE_BOX, [words])
                for words in (PLANTED_SAYS, "expected:", "got:")
            }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert "The following cell failed:" in shown, shown[:3000]
    assert sources == ["check_mask_tokens(mask_tokens)"], (
        f"the failing cells shown are not one line each (the call of the visible tests): {sources}"
    )
    for words, place in places.items():
        assert place is not None, f"the dialog does not say {words!r}:\n{shown[:3000]}"
        assert place["bottom"] <= min(DIALOG_BOX_PX, place["box"]), (
            f"{words!r} sits {place['bottom']:.0f} px down the dialog's {place['box']} px box: "
            f"a student who does not scroll does not see it\n{shown[:3000]}"
        )

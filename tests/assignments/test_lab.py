"""`make lab` serves JupyterLab with nbgrader's Validate working on exercises/ (its server API), and
none of nbgrader's instructor tools."""

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

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


def test_validate_button_works_on_the_released_stub():
    port, token = free_port(), "bertlab-test"
    flags = f"--no-browser --port={port} --ServerApp.token={token} --ServerApp.ip=127.0.0.1 --allow-root"
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
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
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
    finally:
        import os
        import signal

        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

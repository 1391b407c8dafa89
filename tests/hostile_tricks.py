"""Hostile tricks shared by ``test_hostile.py`` (the whole list, on the grader's test course,
``tests/grader_course``) and ``test_assignments.py`` (every assignment's round trip): the cells a
hostile submission adds, and the edits it makes.

Each trick is a code cell's source or a function of a notebook; what must happen to it is in
the module that grades it.
"""

from __future__ import annotations

import nbformat

from bertlab_grader.sandbox import bwrap

# --- cells that use up a resource ---------------------------------------------------------------

#: 5 GB in 256 MB blocks: the grader stops the kernel at its memory cap (bertlab_grader.kernel_limits).
MEMORY_BOMB = "blocks = [bytearray(2**28) for _ in range(20)]  # 5 GB"
MEMORY_CAP_SAID = "over the memory cap"

#: 100 processes that wait: the grader stops the kernel at its process cap.
PROCESS_BOMB = (
    "import subprocess, time\nps = [subprocess.Popen(['sleep', '300']) for _ in range(100)]\n"
    "time.sleep(300)"
)
PROCESS_CAP_SAID = "processes, more than the cap"

#: The kernel kills itself.
SELF_KILL = "import os\nos._exit(1)"

# --- cells that take too long -----------------------------------------------------------------

#: The first line of a cell that the round trips grade under a short time limit
#: (:func:`short_time_limits`), so that every assignment meets the time-limit cases in seconds.
TIME_LIMIT_CASE = "# a time-limit case"

#: An endless loop: interrupted at its cell's time limit, and the notebook goes on.
ENDLESS_LOOP = f"{TIME_LIMIT_CASE}\nwhile True:\n    pass"

#: Ignores the interrupt and sleeps for 10 minutes: the grader stops the kernel.
IGNORES_INTERRUPT = (
    f"{TIME_LIMIT_CASE}\nimport signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "time.sleep(600)"
)
IGNORED_INTERRUPT_SAID = "limit and ignored the interrupt"


def short_time_limits(course, seconds: int = 5, grace: int = 5) -> None:
    """Append to the course config of the scratch course ``course``: a cell that starts with
    ``TIME_LIMIT_CASE`` is interrupted after ``seconds`` (every other cell keeps the course's
    own limit, nbclient's ``timeout_func``), and a kernel that has not stopped ``grace`` seconds
    after an interrupt is stopped (``GuardedExecute.interrupt_grace``; the course's is 30 s)."""
    with (course / "autograder" / "nbgrader_config.py").open("a") as config:
        config.write(
            f"\nc.Execute.timeout_func = lambda cell, limit=c.Execute.timeout: "
            f"{seconds} if cell.source.startswith({TIME_LIMIT_CASE!r}) else limit\n"
            f"c.GuardedExecute.interrupt_grace = {grace}\n"
        )


#: Three connections out; the sandbox has no network, so each prints "no network:".
NETWORK = """
import socket
for where in [("1.1.1.1", 53), ("pypi.org", 443), ("127.0.0.1", 22)]:
    try:
        socket.create_connection(where, timeout=3).close()
        print("reached", where)
    except OSError as exc:
        print("no network:", where, exc)
"""


def flood(n_bytes: int) -> str:
    """One line of ``n_bytes`` characters (nbgrader's ``LimitOutput`` counts lines, not bytes)."""
    return f"print('x' * {n_bytes:_})"


OUTPUT_CUT_SAID = "the grader cut the output here"

# --- edits to the notebook --------------------------------------------------------------------


def is_test(cell) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def edit_tests(notebook, source: str = "pass", points: int = 100):
    """Every test cell's source replaced by ``source`` and its points set to ``points``
    (nbgrader restores both from the gradebook)."""
    edited = nbformat.from_dict(notebook)
    for cell in edited.cells:
        if is_test(cell):
            cell.source = source
            cell.metadata.nbgrader["points"] = points
    return edited


def own_graded_cell(notebook, at: int = 2, grade_id: str = "bonus", points: int = 100):
    """A graded test cell of the student's own, worth ``points``, inserted at index ``at``
    (nbgrader grades only the cells its gradebook knows)."""
    notebook = nbformat.from_dict(notebook)
    cell = nbformat.v4.new_code_cell("pass")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": points,
        "grade_id": grade_id,
        "schema_version": 3,
        "task": False,
    }
    notebook.cells.insert(at, cell)
    return notebook


def copy_test_cell(notebook, grade_id: str):
    """The test cell ``grade_id`` pasted again right after itself, as Jupyter's copy and paste
    does: the copy keeps the cell's nbgrader metadata (its grade id too) and gets a new cell id.
    nbgrader's ``DeduplicateIds`` keeps the metadata of the last copy only."""
    notebook = nbformat.from_dict(notebook)
    at = next(
        i
        for i, c in enumerate(notebook.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
    copy = nbformat.from_dict(notebook.cells[at])
    copy.id = nbformat.v4.new_code_cell().id
    notebook.cells.insert(at + 1, copy)
    return notebook


def insert_after(notebook, index: int, *sources: str):
    """``sources`` as new code cells right after cell ``index``, in order."""
    notebook = nbformat.from_dict(notebook)
    for k, source in enumerate(sources):
        notebook.cells.insert(index + 1 + k, nbformat.v4.new_code_cell(source))
    return notebook


def sandboxed() -> bool:
    """Whether autograde runs kernels in bubblewrap: unless it is off (tests/conftest.py turns it
    off, saying so, where bubblewrap cannot build a sandbox), the grader sandboxes or refuses.

    (With the sandbox off, the tests of the submission that writes course files fail: tried.)"""
    return bwrap.mode() != "off"


def with_cell(notebook, source: str, after: str = "setup"):
    """A copy of ``notebook`` with a code cell of ``source`` inserted after the cell whose grade id
    is ``after``: where a hostile (or honest) submission adds its trick."""
    notebook = nbformat.from_dict(notebook)
    at = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells].index(after) + 1
    notebook.cells.insert(at, nbformat.v4.new_code_cell(source))
    return notebook

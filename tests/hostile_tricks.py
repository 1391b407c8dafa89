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

#: 5 GB in 256 MB blocks: the grader stops the kernel at its memory cap (bertlab_grader.sandbox.limits).
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


# --- the boundary between the student's kernel and the tests' kernel ----------------------------
# Each is a cell a hostile submission adds (after its set-up) to change what the tests' kernel
# reads of it: paired with work that fails every test, a point it earns is a point stolen. Written
# against the grader's public source (bertlab_grader/crossing), as a student could.

#: Replace the grader's module in the student's kernel: every call answers True.
REPLACE_THE_GRADERS_MODULE = """
import bertlab_grader.crossing.student_side as _side

def _answer_true(self, head, request):
    self.reply({"value": True})

_side.Channel.call = _answer_true
"""

#: Reload the grader's modules and wrap their encoder: every value it writes is True.
WRAP_AND_RELOAD_THE_GRADERS_MODULES = """
import importlib
import bertlab_grader.crossing.values as _values
import bertlab_grader.crossing.student_side as _side
importlib.reload(_values)
importlib.reload(_side)
_encode = _values.Encoder.encode

def _true(self, value, depth=0):
    return True if depth == 0 and not isinstance(value, dict) else _encode(self, value, depth)

_values.Encoder.encode = _true
"""

#: What the tests compare with, replaced in the student's kernel.
REPLACE_LIBRARY_FUNCTIONS = """
import builtins, math
builtins.isinstance = lambda *args: True
builtins.sorted = lambda items, **kwargs: list(items)
math.isclose = lambda *args, **kwargs: True
try:
    import torch
    torch.equal = lambda *args, **kwargs: True
    torch.allclose = lambda *args, **kwargs: True
    torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)
except ImportError:
    pass
"""

#: Every Python hook through which code runs between cells or around a call.
PYTHON_HOOKS = """
import gc, signal, sys, threading
sys.settrace(lambda *args: None)
sys.setprofile(lambda *args: None)
threading.settrace(lambda *args: None)
sys.addaudithook(lambda event, args: None)
sys.excepthook = lambda *args: None
sys.unraisablehook = lambda *args: None
class _Finder:
    def find_spec(self, *args):
        return None
sys.meta_path.insert(0, _Finder())
sys.path_hooks.insert(0, lambda path: None)
gc.callbacks.append(lambda phase, info: None)
signal.signal(signal.SIGALRM, lambda *args: None)
signal.setitimer(signal.ITIMER_REAL, 600)
"""

#: Every IPython hook: cells blanked, asserts dropped, errors swallowed, tracebacks hidden.
IPYTHON_HOOKS = """
import ast
_shell = get_ipython()
class _DropAsserts(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()
_shell.ast_transformers.append(_DropAsserts())
_shell.set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: [])
_shell.events.register("post_run_cell", lambda result: None)
_shell.events.register("pre_execute", lambda: None)
_shell.display_formatter.formatters["text/plain"].for_type(int, lambda obj, p, cycle: p.text("1"))
_shell.showtraceback = lambda *args, **kwargs: None
_shell.input_transformers_post.append(lambda lines: ["pass\\n"])
"""

#: A thread that keeps changing the student's side and the builtins while the tests run.
A_THREAD_THAT_CHANGES_THINGS = """
import builtins, threading, time
import bertlab_grader.crossing.student_side as _side

def _meddle():
    while True:
        builtins.isinstance = lambda *args: True
        _side.Channel.call = lambda self, head, request: self.reply({"value": True})
        time.sleep(0.01)

threading.Thread(target=_meddle, daemon=True).start()
"""


def forged_answer(kind: str) -> str:
    """A cell that makes the student's side answer every call with a forged frame: a pickle, a
    body of 10 GB, a tensor whose header lies about its shape, a handle whose attributes are
    itself, or no answer at all (``never``); ``no-serve``: it never serves the tests."""
    bodies = {
        "pickle": 'wire.send(self.sock, {"kind": "reply", "value": {"$": "pickle", "v": "gASVBQAAAAAAAAB9lC4="}})',
        "huge": 'self.sock.sendall(wire.FRAME.pack(2, 10 * 2**30) + b"{}")',
        "lying-shape": (
            "from safetensors.torch import save\n"
            '    blob = save({"t": __import__("torch").zeros(2)}).replace(b"[2]", b"[9]")\n'
            '    wire.send(self.sock, {"kind": "reply", "value": {"$": "tensor", "b": 0, "i": 0},\n'
            '                          "blobs": [["st", len(blob)]]}, blob)'
        ),
        "handle-cycle": (
            "class Cycle:\n"
            "        def __getattr__(self, name):\n"
            "            return self\n"
            "        def __iter__(self):\n"
            "            return iter([self])\n"
            '    wire.send(self.sock, {"kind": "reply", "value": {"$": "handle", "id": received.keep(Cycle()), '
            '"type": "builtins.list", "callable": True}})'
        ),
        "never": "import time\n    time.sleep(3600)",
    }
    if kind == "no-serve":
        return "import bertlab_grader.crossing.student_side as side\nside.serve = lambda *args, **kwargs: None\n"
    return (
        "import bertlab_grader.crossing.student_side as side\n"
        "import bertlab_grader.crossing.received as received\n"
        "import bertlab_grader.crossing.wire as wire\n\n"
        "def _forged(self, head, request):\n"
        f"    {bodies[kind]}\n\n"
        "side.Channel.call = _forged\n"
    )


#: The tricks above, by name: the cell each adds.
BOUNDARY = {
    "replace-the-graders-module": REPLACE_THE_GRADERS_MODULE,
    "wrap-and-reload-the-graders-modules": WRAP_AND_RELOAD_THE_GRADERS_MODULES,
    "replace-library-functions": REPLACE_LIBRARY_FUNCTIONS,
    "python-hooks": PYTHON_HOOKS,
    "ipython-hooks": IPYTHON_HOOKS,
    "a-thread-that-changes-things": A_THREAD_THAT_CHANGES_THINGS,
    **{
        f"forged-{kind}": forged_answer(kind)
        for kind in ("pickle", "huge", "lying-shape", "handle-cycle")
    },
    "never-answers": forged_answer("never"),
    "never-serves": forged_answer("no-serve"),
}


def short_calls(course, seconds: float = 3) -> None:
    """Append to the scratch course's config: a call waits at most ``seconds``, and a kernel has 5 s
    to stop after an interrupt (the tricks that never answer, graded in seconds)."""
    with (course / "autograder" / "nbgrader_config.py").open("a") as config:
        config.write(
            f"\nc.GuardedExecute.call_timeout = {seconds}\nc.GuardedExecute.interrupt_grace = 5\n"
        )

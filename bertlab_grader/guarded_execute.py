"""nbgrader's ``Execute`` as the course grades with it: two kernels, sandboxed, bounded.

:class:`GuardedExecute` replaces ``Execute`` in the autograde pipeline
(``autograder/nbgrader_config.py``). Where nbgrader runs every cell in one kernel, it runs two:

- the *student's kernel* runs the student's cells (and the read-only set-up cells), as nbgrader
  would;
- the *tests' kernel* (:mod:`bertlab_grader.tests_kernel`), which never holds student code, runs
  the read-only set-up cells too and every graded test cell, visible and hidden, each at its place
  in notebook order. A name a test cell reads but neither defines nor has from the set-up (the
  graded function) is looked up in the student's kernel as it is at that point, and a function
  becomes a proxy whose calls cross over a Unix socket; what comes back is read without running
  code (:mod:`bertlab_grader.crossing`). So whatever decides a score (an ``assert``,
  ``torch.equal``, the error that fails a cell) runs in a process the submission cannot touch: a
  rigged kernel, a patched library or a lying tensor type changes only the student's own answers.

On top of nbgrader's own preprocessor it also

- calls the course's ``prepare`` functions, once per process (a sandboxed kernel cannot write
  what they write: the course's models, assembled into their cache);
- starts both kernels in the sandbox of :mod:`bertlab_grader.sandbox.manager` (read-only course,
  gradebook and hidden tests out of sight, no network, IPC sockets), each with its own memory,
  process and thread caps (:mod:`bertlab_grader.kernel_limits`);
- reads the submitted cells for a graded function that is the course's own code
  (:mod:`bertlab_grader.answer_key`): the test cells of that function score 0, saying why;
- keeps what the student's code printed while a hidden test called it for the instructor (in the
  cell's metadata, never in the feedback); a visible test's cell shows it;
- bounds time twice: a cell past ``timeout`` (nbgrader's own, 120 s in the course config) is
  interrupted (in the student's kernel too, for the call in progress) and the notebook goes on; a
  single call waits at most ``call_timeout``; the whole notebook past ``notebook_timeout`` (its
  wall clock, 600 s) has its kernels stopped; so has a kernel that has not stopped the cell
  ``interrupt_grace`` seconds after the interrupt;
- costs a dying kernel (``os._exit``, a signal, a crash, a cap) only the cells from that
  point: plain nbgrader discards the whole submission (every score None); here the cell it died
  in and every later code cell get an error output, so their tests score 0, and the cells that
  ran before keep their scores;
- caps the output a notebook keeps in bytes, over every output type (nbgrader's ``LimitOutput``
  counts lines), with a note where it cut;
- kills the kernels when the notebook is done (``shutdown_kernel = "immediate"``).

The time and output bounds are :class:`bertlab_grader.bounded_execute.BoundedExecute`'s, which
this class extends. Explained for instructors in ``docs/instructors.md``;
``tests/grader/test_hostile.py`` grades submissions that try each of these.
"""

from __future__ import annotations

import ast
import builtins
import re

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.utils import is_solution
from traitlets import Float, Integer, List, Unicode, default

from bertlab_grader import answer_key
from bertlab_grader.bounded_execute import BoundedExecute
from bertlab_grader.feedback_redaction import (
    FROM_SUBMISSION_KEY,
    GRADER_KEYS,
    HIDDEN_MARKER,
    NOTICES_KEY,
    PRINTED_KEY,
)
from bertlab_grader.sandbox.manager import SandboxedKernelManager
from bertlab_grader.tests_kernel import BIND, SERVE, TestsKernel, rendezvous

is_test_cell = answer_key.is_test_cell
#: What of the student's printing during a test cell is kept (the instructor's copy), in characters.
PRINTED_CHARS = 20_000


def call(spec: str) -> None:
    """Import ``module`` and call its ``function()``, for a ``"module:function"`` string."""
    from pkgutil import resolve_name

    if ":" not in spec:
        raise ValueError(f"{spec!r}: give module:function (GuardedExecute.prepare)")
    resolve_name(spec)()


def error_output(ename: str, why: str, cell: NotebookNode | None = None) -> NotebookNode:
    """An error output, as a failed cell has one (HTML feedback shows its traceback lines); the
    grader's own, listed in ``cell``'s metadata so the feedback shows it whole (NOTICES_KEY)."""
    if cell is not None:
        cell.metadata.setdefault(NOTICES_KEY, []).append(f"{ename}: {why}")
    return NotebookNode(output_type="error", ename=ename, evalue=why, traceback=[f"{ename}: {why}"])


def free_names(cell: NotebookNode) -> list[str]:
    """The names a test cell reads but never binds itself (builtins left out): what it may need
    from the submission."""
    tree = answer_key.parse(cell)
    if tree is None:
        return []
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(read - bound - set(dir(builtins)))


class GuardedExecute(BoundedExecute):
    """nbgrader's ``Execute`` with test cells in a kernel of their own (see the module)."""

    _prepared: set = set()  # the prepare functions this process has called

    @default("shutdown_kernel")
    def _kill_when_done(self) -> str:
        # nbclient's NotebookClient.shutdown_kernel: "immediate" kills the kernel without the
        # shutdown request, whose wait is idle time on every notebook.
        return "immediate"

    prepare = List(
        Unicode(),
        default_value=[],
        config=True,
        help=(
            'Functions to call, as "module:function" strings, once per grader process before its first '
            "notebook: whatever a notebook needs written outside its own folder (a model assembled into a "
            "cache, say), which a sandboxed kernel cannot write. The course's config names its own "
            '(c.GuardedExecute.prepare = ["bertlab.models:prepare_all"]).'
        ),
    )

    answer_key_packages = List(
        Unicode(),
        default_value=[],
        config=True,
        help=(
            "Top-level packages whose code a graded function may not be: the course's own package, which "
            "ships the chapters' code. A graded function (see `graded_function_id`) that a submitted cell "
            "imports from one, or builds from one, scores 0 in every test cell that reads it (the grader "
            "reads the cells' source: bertlab_grader/answer_key.py)."
        ),
    )

    graded_function_id = Unicode(
        "",
        config=True,
        help=(
            "A regular expression over the grade ids of solution cells; its group `name` is the name of "
            "the graded function that cell defines: a course's naming convention, set in its config "
            '(r"^task_(?P<name>\\w+)$" would say task_top_k defines top_k). The functions a solution cell '
            "defines with `def` count too (and alone, by default)."
        ),
    )

    call_timeout = Float(
        60.0,
        config=True,
        help=(
            "Seconds a test waits for one call of a graded function in the student's kernel; past it the "
            "call is interrupted there and fails in the test (the cell's own `timeout` bounds them all)."
        ),
    )

    answer_bytes = Integer(
        512 * 2**20,
        config=True,
        help="The largest answer (a result and what the call changed, encoded) one call may send back.",
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    # --- one notebook ------------------------------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        self._died_in = None  # the index of the cell a kernel died in
        self._dead_kernel = "student"  # which kernel, for the message
        self._tests = self._student_km = None
        for spec in self.prepare:
            if spec not in GuardedExecute._prepared:
                call(spec)
                GuardedExecute._prepared.add(spec)
        for cell in nb.cells:  # only the grader writes its own keys: none the submission brought
            for key in GRADER_KEYS:
                cell.get("metadata", {}).pop(key, None)
        graded = self.graded_names(nb)
        self._borrowed = answer_key.borrowed(nb, graded, self.answer_key_packages)
        self._has_tests = any(is_test_cell(c) for c in nb.cells)
        return super().preprocess(nb, resources, km)

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        self._student_km = self.km
        if self._has_tests:
            self._tests = await TestsKernel.start(self, self.call_timeout, self.answer_bytes)
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _async_cleanup_kernel(self) -> None:
        tests, self._tests = self._tests, None
        if tests is not None:
            await tests.stop()
        await super()._async_cleanup_kernel()

    _cleanup_kernel = run_sync(_async_cleanup_kernel)

    def graded_names(self, nb) -> list[str]:
        """The graded functions of a notebook: named by its solution cells' grade ids
        (``graded_function_id``) and defined with ``def`` in those cells."""
        names = set()
        for cell in nb.cells:
            if cell.cell_type != "code" or not is_solution(cell):
                continue
            grade_id = str(cell.metadata.get("nbgrader", {}).get("grade_id", ""))
            match = re.match(self.graded_function_id, grade_id) if self.graded_function_id else None
            if match and match.groupdict().get("name"):
                names.add(match.group("name"))
            tree = answer_key.parse(cell)
            names |= {n.name for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef)}
        return sorted(names)

    # --- one cell ------------------------------------------------------------------------------

    def preprocess_cell(self, cell, resources, index):
        if self._died_in is not None:
            if cell.cell_type == "code":
                whose = (
                    "the submission's kernel"
                    if self._dead_kernel == "student"
                    else "the tests' kernel"
                )
                cell.outputs = [
                    error_output(
                        "KernelDied",
                        f"not run: {whose} died in cell {self._died_in}, so this cell scores 0",
                        cell,
                    )
                ]
            return cell, resources
        iopub_timeout, self._interrupted_after = self.iopub_timeout, None
        try:
            try:
                if cell.cell_type == "code" and self._past_deadline():
                    run_sync(self._stop_kernel)(self._wall_clock())
                if self._deadline is None:
                    self._start_clock()  # both kernels are up
                if self._tests is not None and is_test_cell(cell):
                    return self._run_test(cell, resources, index)
                if self._tests is not None and answer_key.is_setup_cell(cell):
                    return self._run_setup(cell, resources, index)
                return super().preprocess_cell(cell, resources, index)
            except CellTimeoutError:
                # A kernel never went idle: after the interrupt at a cell's timeout (it ignores
                # interrupts), or after a reply. Plain nbgrader discards the whole submission here.
                if self._interrupted_after is None:  # a reply whose outputs never ended
                    why = f"the kernel sent no end to a cell's outputs for {iopub_timeout} s"
                else:
                    why = (
                        f"a cell ran past its {self._interrupted_after} s limit and ignored the interrupt "
                        f"for {self.interrupt_grace} s"
                    )
                run_sync(self._stop_kernel)(why)
        except DeadKernelError:
            return self._dead(cell, resources, index)
        finally:
            self.iopub_timeout = iopub_timeout

    def _run_setup(self, cell, resources, index):
        """A read-only set-up cell: in the tests' kernel (silently, at the same time) and in the student's."""
        sent = self._tests.send(cell.source)
        cell, resources = super().preprocess_cell(cell, resources, index)
        reply = run_sync(self._tests.reply)(sent, float(self._get_timeout(cell) or 600))
        if reply.get("status") != "ok":
            why = f"the tests' kernel could not run this set-up cell: {reply.get('ename')}: {reply.get('evalue')}"
            self.log.error("Cell %s: %s", index, why)
            cell.outputs.append(error_output("TestsKernelError", why, cell))
        return cell, resources

    def _run_test(self, cell, resources, index):
        """A test cell, in the tests' kernel, while the student's kernel serves its calls."""
        names = free_names(cell)
        borrowed = [self._borrowed[n] for n in names if n in self._borrowed]
        if borrowed:
            cell.outputs = [
                error_output(
                    "GradingIntegrityError",
                    "this test does not count: " + "; ".join(borrowed),
                    cell,
                )
            ]
            return cell, resources
        socket, _ = rendezvous(self.km)
        serving = self.kc.execute(SERVE.format(path=str(socket)), silent=True, store_history=False)
        try:
            bound = run_sync(self._tests.run)(BIND.format(names=names), self.call_timeout + 30)
            if bound.get("status") == "ok":
                with self._tests.swap_into(self):
                    try:
                        cell, resources = super().preprocess_cell(cell, resources, index)
                    except DeadKernelError:
                        self._dead_kernel = "tests"
                        raise
            else:
                why = f"the test could not reach the submission's kernel: {bound.get('evalue')}"
                cell.outputs = [error_output("SubmissionError", why, cell)]
        finally:
            report = run_sync(self._tests.end_cell)()
            if report.get("error_from_submission"):
                cell.metadata[FROM_SUBMISSION_KEY] = True
            run_sync(self._end_serving)(serving, cell, index)
        return cell, resources

    async def _end_serving(self, serving: str, cell, index: int) -> None:
        """Wait for the student's kernel to stop serving (interrupt it, then stop it, if it does not);
        keep what it printed meanwhile."""
        printed: list[str] = []
        reply = await self._serving_reply(serving, 10, printed)
        if reply is None and await ensure_async(self.km.is_alive()):
            self.log.warning(
                "Cell %s: the submission's kernel kept running after the tests: interrupting it",
                index,
            )
            await ensure_async(self.km.interrupt_kernel())
            reply = await self._serving_reply(serving, self.interrupt_grace, printed)
            if reply is None:
                watch = getattr(self.km, "watch", None)
                why = f"it kept running after the tests and ignored the interrupt for {self.interrupt_grace} s"
                if watch is not None:
                    watch.kill(why)
                else:
                    await ensure_async(self.km.shutdown_kernel(now=True))
        text = "".join(printed)[:PRINTED_CHARS]
        if text:
            cell.metadata[PRINTED_KEY] = text
            if HIDDEN_MARKER not in cell.source:
                cell.outputs.append(
                    NotebookNode(
                        output_type="stream",
                        name="stdout",
                        text=f"[printed by your code during these tests]\n{text}",
                    )
                )
        if not await ensure_async(self.km.is_alive()):
            self._died_in, self._dead_kernel = index, "student"
            watch = getattr(self.km, "watch", None)
            why = (watch.reason if watch is not None else None) or "os._exit, a signal or a crash"
            cell.outputs.append(
                error_output(
                    "KernelDied",
                    f"the submission's kernel died while these tests ran ({why}): this cell and every later one "
                    "score 0; the cells before it keep their scores",
                    cell,
                )
            )

    async def _serving_reply(self, serving: str, timeout: float, printed: list[str]):
        """The serve request's reply from the student's kernel (None if none comes in ``timeout``
        seconds), reading what the kernel printed meanwhile."""
        import time
        from queue import Empty

        deadline, reply, idle = time.monotonic() + timeout, None, False
        while time.monotonic() < deadline and not (reply is not None and idle):
            if reply is None:
                try:
                    msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=0.02))
                    if msg.get("parent_header", {}).get("msg_id") == serving:
                        reply, deadline = (
                            msg,
                            min(deadline, time.monotonic() + 2),
                        )  # then its last outputs
                except Empty:
                    if not await ensure_async(self.km.is_alive()):
                        return None
            while True:
                try:
                    msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=0))
                except Empty:
                    break
                if msg.get("parent_header", {}).get("msg_id") != serving:
                    continue
                content = msg.get("content", {})
                if msg.get("msg_type") == "stream" and sum(map(len, printed)) < PRINTED_CHARS:
                    printed.append(str(content.get("text", "")))
                elif msg.get("msg_type") == "status" and content.get("execution_state") == "idle":
                    idle = True
        return reply

    # --- stopping ------------------------------------------------------------------------------

    async def _stop_kernel(self, why: str) -> None:
        """Stop both kernels (the wall clock, a kernel that ignores interrupts), remember why, and
        raise DeadKernelError: the cell running and every later one score 0."""
        self._stopped_because = why
        kernels = [self._student_km or self.km] + (
            [self._tests.km] if self._tests is not None else []
        )
        for km in kernels:
            watch = getattr(km, "watch", None)
            if watch is not None:
                watch.kill(why)
            else:
                await ensure_async(km.shutdown_kernel(now=True))
        raise DeadKernelError(why)

    def _dead(self, cell, resources, index):
        """A kernel died in this cell: say why there; every later code cell gets an error."""
        self._died_in = index
        km = self._tests.km if self._dead_kernel == "tests" and self._tests is not None else self.km
        watch = getattr(km, "watch", None)
        reason = (watch.reason if watch is not None else None) or self._stopped_because
        why = f"the grader stopped it: {reason}" if reason else "os._exit, a signal or a crash"
        whose = "the submission's kernel" if self._dead_kernel == "student" else "the tests' kernel"
        self.log.error(
            "%s died in cell %s (%s): this and every later cell score 0", whose, index, why
        )
        cell.outputs.append(
            error_output(
                "KernelDied",
                f"{whose} died while running this cell ({why}): this cell and every later "
                "one score 0; the cells before it keep their scores",
                cell,
            )
        )
        return cell, resources

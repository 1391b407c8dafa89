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
  process and thread caps (:mod:`bertlab_grader.sandbox.limits`);
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
import re

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.utils import is_solution
from traitlets import Float, Integer, List, Unicode, default

from bertlab_grader import answer_key
from bertlab_grader.bounded_execute import BoundedExecute
from bertlab_grader.feedback_redaction import GRADER_KEYS, error_output
from bertlab_grader.sandbox.manager import SandboxedKernelManager
from bertlab_grader.test_cells import TestCells
from bertlab_grader.tests_kernel import PREPARE, TestsKernel

is_test_cell = answer_key.is_test_cell


def call(spec: str) -> None:
    """Import ``module`` and call its ``function()``, for a ``"module:function"`` string."""
    from pkgutil import resolve_name

    if ":" not in spec:
        raise ValueError(f"{spec!r}: give module:function (GuardedExecute.prepare)")
    resolve_name(spec)()


class GuardedExecute(TestCells, BoundedExecute):
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
        """The student's kernel's client and, beside it (both kernels start at once), the tests' kernel."""
        import asyncio

        if not self._has_tests:
            return await super().async_start_new_kernel_client()
        self._student_km = self.km
        tests = asyncio.ensure_future(TestsKernel.start(self, self.call_timeout, self.answer_bytes))
        try:
            kc = await super().async_start_new_kernel_client()
        except BaseException:
            await asyncio.wait([tests])
            if not tests.cancelled() and tests.exception() is None:
                await tests.result().stop()
            raise
        prepared = kc.execute(PREPARE, silent=True, store_history=False)
        self._tests = await tests
        reply = await self.async_wait_for_reply(prepared)
        if reply is None or reply["content"].get("status") != "ok":
            self.log.warning(
                "The submission's kernel could not prepare to serve the tests: %s", reply
            )
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

"""nbgrader's ``Execute`` as the course grades with it: sandboxed, guarded, bounded.

:class:`GuardedExecute` replaces ``Execute`` in the autograde pipeline
(``autograder/nbgrader_config.py``). On top of nbgrader's own preprocessor it

- calls the course's ``prepare`` functions, once per process (a sandboxed kernel cannot
  write what they write: the course's models, assembled into their cache);
- starts every kernel in the sandbox of :mod:`bertlab_grader.sandbox.manager` (read-only course,
  gradebook and hidden tests out of sight, no network, IPC sockets);
- fingerprints the kernel before the first cell and around every test cell
  (:mod:`bertlab_grader.kernel_guard`; the library functions tests take their expected values
  from are the course's ``oracles``): a test cell run in a rigged kernel gets an error and scores 0;
  so does a test cell run after a graded function was bound to an object of a package named in
  ``answer_key_packages`` (``from bertlab... import top_k`` is not the student's work);
- caps the memory, processes and threads of every kernel (:mod:`bertlab_grader.kernel_limits`);
- bounds time twice: a cell past ``timeout`` (nbgrader's own, 120 s in the course config) is
  interrupted and the notebook goes on; the whole notebook past ``notebook_timeout`` (its wall
  clock, 600 s) has its kernel stopped; so has a kernel that has not stopped the cell
  ``interrupt_grace`` seconds after the interrupt (``signal.signal(SIGINT, SIG_IGN)`` and a long
  sleep: plain nbgrader discards the submission);
- costs a dying kernel (``os._exit``, a signal, a crash, a cap) only the cells from that
  point: plain nbgrader discards the whole submission (every score None); here the cell it died
  in and every later code cell get an error output, so their tests score 0, and the cells that
  ran before keep their scores;
- caps the output a notebook keeps in bytes, over every output type (nbgrader's ``LimitOutput``
  counts lines, so one 100 MB line passed it), with a note where it cut;
- kills the kernel when the notebook is done (``shutdown_kernel = "immediate"``) instead of asking
  it to stop: nothing of a graded kernel is kept, no exit hook of the submission runs, and the
  polite stop cost 0.3-0.5 s a notebook, and 2.6 s now and then (a kernel still alive 2.5 s after
  the request gets SIGTERM: jupyter_client's ``finish_shutdown``).

The time and output bounds are :class:`bertlab_grader.bounded_execute.BoundedExecute`'s, which
this class extends.

Explained for instructors in ``docs/instructors.md``; ``tests/grader/test_hostile.py`` grades submissions
that try each of these.
"""

from __future__ import annotations

import ast
import json
import re

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from jupyter_core.utils import run_sync
from nbgrader.utils import is_grade, is_solution
from traitlets import List, Unicode, default

from bertlab_grader.bounded_execute import BoundedExecute
from bertlab_grader.feedback_redaction import NOTICES_KEY
from bertlab_grader.kernel_guard import differences, state_probe
from bertlab_grader.kernel_origins import answer_key_probe, library_origins
from bertlab_grader.sandbox.manager import SandboxedKernelManager


def call(spec: str) -> None:
    """Import ``module`` and call its ``function()``, for a ``"module:function"`` string."""
    import importlib

    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{spec!r}: give module:function (GuardedExecute.prepare)")
    function = importlib.import_module(module)
    for part in name.split("."):
        function = getattr(function, part)
    function()


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test cell: graded, code, not a solution."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def error_output(ename: str, why: str, cell: NotebookNode | None = None) -> NotebookNode:
    """An error output, as a failed cell has one (HTML feedback shows its traceback lines); the
    grader's own, listed in ``cell``'s metadata so the feedback shows it whole (NOTICES_KEY)."""
    if cell is not None:
        cell.metadata.setdefault(NOTICES_KEY, []).append(f"{ename}: {why}")
    return NotebookNode(output_type="error", ename=ename, evalue=why, traceback=[f"{ename}: {why}"])


class GuardedExecute(BoundedExecute):
    """nbgrader's ``Execute``: sandboxed kernels, fingerprinted around every test cell; a dead
    kernel costs the cells from that point; time and output bounded by :class:`BoundedExecute`
    (see the module docstring)."""

    _prepared: set = set()  # the prepare functions this process has called

    @default("shutdown_kernel")
    def _kill_when_done(self) -> str:
        # nbclient's NotebookClient.shutdown_kernel: "immediate" kills the kernel (the warm
        # kernel's stub; the zygote then kills the kernel and empties its sandbox) without the
        # shutdown request, whose wait is idle time on every notebook (module docstring).
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

    oracles = List(
        Unicode(),
        default_value=[],
        config=True,
        help=(
            'The library code tests take their expected values from, as "module:attribute.path" strings '
            '("transformers.models.bert.modeling_bert:BertSelfAttention.forward"). Whenever a kernel has '
            "imported an oracle's module, the oracle must still be defined where the library defines it, "
            "as in the grader's own process; a test cell run after one was replaced scores 0."
        ),
    )

    answer_key_packages = List(
        Unicode(),
        default_value=[],
        config=True,
        help=(
            "Top-level packages whose objects a graded function may not be: the course's own package, "
            "which ships the chapters' code. A test cell run after a graded function (see "
            "`graded_function_id`) was bound to one of their objects gets an error and scores 0."
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

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, km=None):
        self._baseline = None  # one notebook, one fresh kernel, one baseline
        self._died_in = None  # the index of the cell the kernel died in
        for spec in self.prepare:
            if spec not in GuardedExecute._prepared:
                call(spec)
                GuardedExecute._prepared.add(spec)
        self._graded_names = self.graded_names(nb)
        for cell in nb.cells:  # only the grader lists its notices: none the submission brought
            cell.get("metadata", {}).pop(NOTICES_KEY, None)
        return super().preprocess(nb, resources, km)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.oracles = tuple(self.oracles)  # a warm kernel's zygote reads where they are defined
        return km

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
            try:
                names |= {
                    n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)
                }
            except SyntaxError:
                pass
        return sorted(names)

    def _fingerprint(self, probe: str | None = None):
        """The kernel's fingerprint now (or the JSON that another ``probe`` returns), or (None, why not)."""
        probe = probe or state_probe(self.oracles)
        msg_id = self.kc.execute(
            "", silent=True, store_history=False, user_expressions={"state": probe}
        )
        reply = self.wait_for_reply(msg_id)
        try:
            result = reply["content"]["user_expressions"]["state"]
            if result.get("status") != "ok":
                return None, f"{result.get('ename')}: {result.get('evalue')}"
            return json.loads(ast.literal_eval(result["data"]["text/plain"])), ""
        except Exception as exc:  # no reply (timeout), or a reply someone rewrote
            return None, f"no readable reply ({type(exc).__name__})"

    def preprocess_cell(self, cell, resources, index):
        if self._died_in is not None:
            if cell.cell_type == "code":
                cell.outputs = [
                    error_output(
                        "KernelDied",
                        f"not run: the kernel died in cell {self._died_in}, so this cell scores 0",
                        cell,
                    )
                ]
            return cell, resources
        iopub_timeout, self._interrupted_after = self.iopub_timeout, None
        try:
            try:
                if cell.cell_type == "code" and self._past_deadline():
                    run_sync(self._stop_kernel)(self._wall_clock())
                return self._preprocess_cell(cell, resources, index)
            except CellTimeoutError:
                # The kernel never went idle: after the interrupt at a cell's timeout (it ignores
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

    def _dead(self, cell, resources, index):
        """The kernel died in this cell: say why there; every later code cell gets an error."""
        self._died_in = index
        watch = getattr(self.km, "watch", None)
        reason = (watch.reason if watch is not None else None) or self._stopped_because
        why = f"the grader stopped it: {reason}" if reason else "os._exit, a signal or a crash"
        self.log.error(
            "The kernel died in cell %s (%s): this and every later cell score 0", index, why
        )
        cell.outputs.append(
            error_output(
                "KernelDied",
                f"the kernel died while running this cell ({why}): this cell and every later "
                "one score 0; the cells before it keep their scores",
                cell,
            )
        )
        return cell, resources

    def _preprocess_cell(self, cell, resources, index):
        if self._baseline is None:  # a fresh kernel, before any cell of the notebook runs
            self._start_clock()
            self._baseline, why = self._fingerprint()
            if self._baseline is None:
                raise RuntimeError(f"the grader could not fingerprint a fresh kernel: {why}")
        if not is_test_cell(cell):
            return super().preprocess_cell(cell, resources, index)

        before, why_before = self._fingerprint()
        cell, resources = super().preprocess_cell(cell, resources, index)
        after, why_after = self._fingerprint()
        problems = []
        for when, state, why in (("before", before, why_before), ("after", after, why_after)):
            if state is None:
                problems.append(f"the grader could not check the kernel {when} this test ({why})")
            else:
                problems += [
                    f"{p} ({when} this test)"
                    for p in differences(
                        self._baseline,
                        state,
                        library_origins(self.oracles, getattr(self.km, "oracle_origins", None)),
                    )
                ]
        if problems:
            problems = [
                "the notebook changed how the kernel runs or checks code: "
                + "; ".join(dict.fromkeys(problems))
            ]
        if self.answer_key_packages and self._graded_names:
            borrowed, why = self._fingerprint(
                answer_key_probe(self._graded_names, self.answer_key_packages)
            )
            if borrowed is None:
                problems.append(f"the grader could not check the graded functions ({why})")
            elif borrowed:
                problems.append(
                    "a graded function is the course package's code, not the notebook's own: "
                    + ", ".join(borrowed)
                )
        if problems:
            self.log.warning(
                "Test cell %s does not count: %s", cell.metadata.nbgrader.get("grade_id"), problems
            )
            why = "this test does not count: " + "; ".join(problems)
            cell.outputs.append(error_output("GradingIntegrityError", why, cell))
        return cell, resources

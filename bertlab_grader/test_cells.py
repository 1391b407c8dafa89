"""Set-up and test cells in the tests' kernel: the part of
:class:`~bertlab_grader.guarded_execute.GuardedExecute` where the two kernels meet.

- A read-only set-up cell runs in the tests' kernel (silently) at the same time as in the
  student's (:meth:`TestCells._run_setup`): both need its imports and models.
- A test cell (:meth:`TestCells._run_test`): the student's kernel serves the calls
  (:data:`~bertlab_grader.tests_kernel.SERVE`), the tests' kernel binds the names the cell reads
  from the submission (:data:`~bertlab_grader.tests_kernel.BIND`) and runs the cell with
  nbclient's own machinery (outputs, time limit, output budget), then says the cell is over; the
  student's kernel is stopped if it does not stop serving. A test cell that reads a graded function
  handed in as the course's own code (:mod:`bertlab_grader.answer_key`) scores 0 unrun, saying why.
"""

from __future__ import annotations

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode

from bertlab_grader.feedback_redaction import (
    FROM_SUBMISSION_KEY,
    HIDDEN_MARKER,
    PRINTED_KEY,
    error_output,
)
from bertlab_grader.tests_kernel import BIND, Serving, free_names, rendezvous


class TestCells:
    """Set-up and test cells in the tests' kernel (a mixin of GuardedExecute, whose ``_tests``,
    ``_borrowed``, ``call_timeout`` and ``interrupt_grace`` it reads)."""

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
        serving = Serving(self.kc, self.km, str(socket))
        try:
            if not run_sync(serving.started)():
                why = "the submission's kernel does not serve the tests' calls (its notebook stopped it)"
                cell.outputs = [error_output("SubmissionError", why, cell)]
                return cell, resources
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

    async def _end_serving(self, serving: Serving, cell, index: int) -> None:
        """The student's kernel stops serving (interrupted, then stopped, if it does not); what it
        printed meanwhile is kept; if it died, this cell and every later one score 0."""
        text = await serving.stop(self.interrupt_grace, self.log)
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
                    f"the submission's kernel died while these tests ran ({why}): this cell and every "
                    "later one score 0; the cells before it keep their scores",
                    cell,
                )
            )

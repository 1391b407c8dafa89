"""nbgrader's ``Execute`` bounded in time and output: the base of
:class:`bertlab_grader.guarded_execute.GuardedExecute`, which says when to stop a kernel.

- Time, twice: a cell past ``timeout`` (nbgrader's own) is interrupted and the notebook goes on;
  the whole notebook past ``notebook_timeout`` (its wall clock, counted from :meth:`_start_clock`)
  has its kernel stopped (:meth:`_stop_kernel`); so has a kernel still busy ``interrupt_grace``
  seconds after an interrupt.
- Output, in bytes over every output type (nbgrader's ``LimitOutput`` counts lines, so one 100 MB
  line passed it), with a note where it cut; errors are always kept, cut to 10 kB.

Its settings are read as ``c.GuardedExecute.<name>`` too (a subclass reads its bases' traits).
"""

from __future__ import annotations

import json
import math
import time

from jupyter_core.utils import ensure_async
from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer


class BoundedExecute(Execute):
    """nbgrader's ``Execute`` with a wall clock, a grace after interrupts and an output budget."""

    output_limit = Integer(
        1_000_000,
        config=True,
        help=(
            "Bytes of output (streams, displays, errors) one notebook may keep; what comes after is "
            "dropped, with a note in the notebook and its feedback (nbgrader's LimitOutput counts lines, "
            "so one 100 MB line passed it). Errors are always kept, cut to 10 kB, so a failed test fails."
        ),
    )

    notebook_timeout = Integer(
        600,
        config=True,
        help=(
            "Seconds one notebook may run in all, counted once its kernel is up (its wall clock; 0: no "
            "limit). At that point its kernel "
            "is stopped: the cell running and every later one score 0, the cells before keep their scores. "
            "A single cell's limit is `timeout` (it is interrupted, and the notebook goes on)."
        ),
    )

    interrupt_grace = Integer(
        30,
        config=True,
        help=(
            "Seconds a cell interrupted at its timeout has to stop; a kernel still busy after that "
            "ignores the interrupt and is stopped: that cell and every later one score 0. (nbclient would "
            "wait `iopub_timeout` for the interrupted cell's last outputs; this wait replaces it.)"
        ),
    )

    def preprocess(self, nb, resources=None, km=None):
        self._stopped_because = None  # why the grader stopped the kernel, when it did
        self._output_bytes, self._output_cut = 0, False
        self._deadline = (
            None  # set once its kernel is up (_start_clock): starting the kernel (and, for the
        )
        # first notebook a grader process grades, the warm-kernel zygote) is the grader's time, not the notebook's
        return super().preprocess(nb, resources, km)

    def _start_clock(self) -> None:
        """Start the notebook's wall clock (its kernel is up)."""
        if self.notebook_timeout:
            self._deadline = time.monotonic() + self.notebook_timeout

    def _get_timeout(self, cell):
        """A cell's wait: its own timeout, never past the notebook's wall clock."""
        timeout = super()._get_timeout(cell)
        deadline = getattr(self, "_deadline", None)
        if deadline is None:
            return timeout
        left = max(1, math.ceil(deadline - time.monotonic()))
        return left if timeout is None else min(timeout, left)

    def _past_deadline(self) -> bool:
        deadline = getattr(self, "_deadline", None)
        return deadline is not None and time.monotonic() >= deadline - 0.5

    async def _stop_kernel(self, why: str) -> None:
        """Kill the kernel's process tree (it may ignore interrupts), remember why, and raise
        DeadKernelError: the cell it was in and every later one score 0."""
        self._stopped_because = why
        watch = getattr(self.km, "watch", None)
        if watch is not None:
            watch.kill(why)
        else:
            await ensure_async(self.km.shutdown_kernel(now=True))
        raise DeadKernelError(why)

    def _wall_clock(self) -> str:
        return f"the notebook ran past its wall clock of {self.notebook_timeout} s"

    async def _async_handle_timeout(self, timeout, cell=None):
        if self._past_deadline():
            await self._stop_kernel(self._wall_clock())
        self._interrupted_after = timeout
        reply = await super()._async_handle_timeout(timeout, cell)
        # nbclient now waits iopub_timeout for the interrupted cell's last outputs (its idle status):
        # that wait is the kernel's grace; past it nbclient raises CellTimeoutError (preprocess_cell).
        # Set back after the cell.
        self.iopub_timeout = self.interrupt_grace
        return reply

    def _cut_note(self) -> NotebookNode:
        """The note left where the output budget ran out (in the notebook and its feedback)."""
        return NotebookNode(
            output_type="stream",
            name="stderr",
            text=(
                f"[the grader cut the output here: the notebook printed more than {self.output_limit:,} "
                "bytes; only its tests' results count]\n"
            ),
        )

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's handler of one output message, within the notebook's byte budget."""
        content = msg.get("content", {})
        if msg.get("msg_type") == "error":  # always kept: a test cell fails by its error
            content["evalue"] = str(content.get("evalue", ""))[:10_000]
            content["traceback"] = [
                str(line)[:10_000] for line in content.get("traceback", [])[:50]
            ]
            return super().output(outs, msg, display_id, cell_index)
        size = len(json.dumps(content, default=str))
        if self._output_bytes + size > self.output_limit:
            if not self._output_cut:
                self._output_cut = True
                outs.append(self._cut_note())
            return None
        self._output_bytes += size
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg):
        """``update_display`` rewrites an earlier output in place, outside :meth:`output`: the same budget."""
        size = len(json.dumps(msg.get("content", {}), default=str))
        if self._output_bytes + size > self.output_limit:
            if not self._output_cut and display_id in self._display_id_map:
                self._output_cut = True
                first = next(iter(self._display_id_map[display_id]))
                self.nb.cells[first].outputs.append(self._cut_note())
            return None
        self._output_bytes += size
        return super()._update_display_id(display_id, msg)

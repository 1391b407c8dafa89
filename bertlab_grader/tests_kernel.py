"""The tests' kernel: a second kernel per notebook that runs its set-up cells and its test cells.

:class:`bertlab_grader.guarded_execute.GuardedExecute` starts it beside the student's kernel, with
the same kernel manager (sandboxed, capped, warm where it can be: forked from a zygote of its own,
never one that forked a student's kernel), in an empty working folder of its own (a folder a
submission wrote could shadow ``torch`` there), and able to reach only the folder where the
student's kernel serves its calls. It holds no student code: what it gets of the submission
comes over that socket and is read without running code (:mod:`bertlab_grader.crossing`).

The code the grader sends to either kernel is in :data:`SERVE`, :data:`START`, :data:`BIND` and
:data:`END`.
"""

from __future__ import annotations

import ast
import json
import shutil
import tempfile
import time
from pathlib import Path

from jupyter_core.utils import ensure_async

_TESTS_SIDE = "__import__('bertlab_grader.crossing.tests_side', fromlist=['bind'])"
#: Run (silently) in the student's kernel before each test cell: serve its calls until the cell ends.
SERVE = "__import__('bertlab_grader.crossing.student_side', fromlist=['serve']).serve({path!r}, globals())"
#: Run once in the tests' kernel: where the student's kernel serves, and the caps of a call.
START = _TESTS_SIDE + ".start({path!r}, call_timeout={call_timeout!r}, max_bytes={max_bytes!r})"
#: Run before each test cell in the tests' kernel: the names it reads from the submission.
BIND = _TESTS_SIDE + ".bind({names!r})"
#: Run after each test cell in the tests' kernel: its expression ``report`` is what the grader keeps.
END = _TESTS_SIDE + ".end_cell()"


def rendezvous(student_km) -> tuple[Path, Path]:
    """(the socket the student's kernel serves on, the folder the tests' kernel must be able to read
    for it): in the student kernel's own socket folder (its zygote's scratch folder holds it, for a
    warm kernel)."""
    folder = getattr(student_km, "_socket_dir", None)
    if folder is None:  # a kernel manager of another kind: a folder of our own
        folder = student_km._bertlab_calls = Path(tempfile.mkdtemp(prefix="bertlab-calls-"))
    warm = getattr(student_km, "_warm", None)
    return Path(folder) / "calls", (Path(warm.scratch) if warm is not None else Path(folder))


class TestsKernel:
    """A running tests' kernel: its manager, client and folder, and how to run code in it."""

    def __init__(self, km, kc, folder: Path):
        self.km, self.kc, self.folder = km, kc, folder

    @classmethod
    async def start(cls, executor, call_timeout: float, max_bytes: int) -> "TestsKernel":
        """A tests' kernel for the notebook ``executor`` (a GuardedExecute whose student kernel is up)."""
        student = executor.km
        socket, readable = rendezvous(student)
        folder = Path(tempfile.mkdtemp(prefix="bertlab-tests-"))
        km = executor.kernel_manager_class(kernel_name=executor.kernel_name, config=executor.config)
        km.role, km.extra_readable = "tests", (readable,)
        try:
            await ensure_async(
                km.start_kernel(extra_arguments=executor.extra_arguments, cwd=str(folder))
            )
            kc = km.client()
            await ensure_async(kc.start_channels())
            await ensure_async(kc.wait_for_ready(timeout=executor.startup_timeout))
        except BaseException:
            await ensure_async(km.shutdown_kernel(now=True))
            shutil.rmtree(folder, ignore_errors=True)
            raise
        tests = cls(km, kc, folder)
        code = START.format(
            path=str(socket), call_timeout=float(call_timeout), max_bytes=int(max_bytes)
        )
        reply = await tests.run(code, timeout=120)
        if reply.get("status") != "ok":
            await tests.stop()
            raise RuntimeError(
                f"the tests' kernel could not start: {reply.get('ename')}: {reply.get('evalue')}"
            )
        return tests

    def send(self, code: str, expressions: dict | None = None) -> str:
        """Run ``code`` silently (no output, no history); the request's id."""
        return self.kc.execute(
            code, silent=True, store_history=False, user_expressions=expressions or {}
        )

    async def reply(self, msg_id: str, timeout: float) -> dict:
        """The reply's content, or an error content if none comes in ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {
                    "status": "error",
                    "ename": "TimeoutError",
                    "evalue": f"no reply in {timeout:.0f} s",
                }
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=min(left, 1.0)))
            except Exception:  # noqa: BLE001 - queue.Empty: wait on, while the kernel lives
                if not await ensure_async(self.km.is_alive()):
                    return {
                        "status": "error",
                        "ename": "DeadKernelError",
                        "evalue": "the tests' kernel died",
                    }
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg["content"]

    async def run(self, code: str, timeout: float, expressions: dict | None = None) -> dict:
        return await self.reply(self.send(code, expressions), timeout)

    async def end_cell(self) -> dict:
        """Close the test cell's connection; the tests' side's report (calls, seconds, whether the
        cell's error came from the submission)."""
        reply = await self.run("pass", timeout=60, expressions={"report": END})
        try:
            found = reply["user_expressions"]["report"]
            return json.loads(ast.literal_eval(found["data"]["text/plain"]))
        except Exception:  # noqa: BLE001 - no report: nothing known
            return {}

    def swap_into(self, executor):
        """A context in which ``executor``'s kernel is this one (nbclient runs a cell on ``executor.kc``)."""
        tests = self

        class _Swap:
            def __enter__(self):
                self.saved = executor.km, executor.kc
                executor.km, executor.kc = tests.km, tests.kc

            def __exit__(self, *exc):
                executor.km, executor.kc = self.saved
                return False

        return _Swap()

    async def stop(self) -> None:
        try:
            self.kc.stop_channels()
        except Exception:  # noqa: BLE001 - already closed
            pass
        try:
            await ensure_async(self.km.shutdown_kernel(now=True))
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

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
import builtins
import json
import shutil
import tempfile
import time
from pathlib import Path

from jupyter_core.utils import ensure_async

from bertlab_grader import answer_key

_TESTS_SIDE = "__import__('bertlab_grader.crossing.tests_side', fromlist=['bind'])"
#: Run (silently) in the student's kernel when it starts: what serving needs, imported before any cell.
PREPARE = "__import__('bertlab_grader.crossing.student_side', fromlist=['prepare']).prepare()"
#: What the student's kernel prints (to its own request's output) once it listens for the calls.
READY = "\x00bertlab: serving\x00"
#: Run (silently) in the student's kernel before each test cell: serve its calls until the cell ends.
SERVE = "__import__('bertlab_grader.crossing.student_side', fromlist=['serve']).serve({path!r}, globals())"
#: Run once in the tests' kernel: where the student's kernel serves, and the caps of a call.
START = _TESTS_SIDE + ".start({path!r}, call_timeout={call_timeout!r}, max_bytes={max_bytes!r})"
#: Run before each test cell in the tests' kernel: the names it reads from the submission.
BIND = _TESTS_SIDE + ".bind({names!r})"
#: Run after each test cell in the tests' kernel: its expression ``report`` is what the grader keeps.
END = _TESTS_SIDE + ".end_cell()"


#: What of the student's printing during a test cell is kept (the instructor's copy), in characters.
PRINTED_CHARS = 20_000


def free_names(cell) -> list[str]:
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


class Serving:
    """The student's kernel serving one test cell's calls (:data:`SERVE`, a silent execute):
    whether it started (:data:`READY`, which it prints once it listens), what it printed meanwhile,
    and its end. Without it a kernel rigged to run nothing (an input transformer that blanks every
    cell) would keep each test waiting for a connection."""

    def __init__(self, kc, km, path: str):
        self.kc, self.km = kc, km
        self.msg_id = kc.execute(SERVE.format(path=path), silent=True, store_history=False)
        self.reply, self.ready, self.idle = None, False, False
        self.printed: list[str] = []

    async def _read(self, timeout: float) -> None:
        """Read what has come from the kernel for this request, waiting at most ``timeout`` for
        something on either channel: its reply (shell) or its outputs and status (iopub). Waking
        on both matters: ``READY`` comes on iopub, and a wait on the shell channel alone would
        leave every test cell idle until that wait ran out."""
        from queue import Empty

        if timeout > 0:
            await self._wait(timeout)
        while self.reply is None:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=0))
            except Empty:
                break
            if msg.get("parent_header", {}).get("msg_id") == self.msg_id:
                self.reply = msg
        while True:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=0))
            except Empty:
                return
            if msg.get("parent_header", {}).get("msg_id") != self.msg_id:
                continue
            content = msg.get("content", {})
            if msg.get("msg_type") == "stream":
                text = str(content.get("text", ""))
                if READY in text:
                    self.ready, text = True, text.replace(READY, "")
                if text and sum(map(len, self.printed)) < PRINTED_CHARS:
                    self.printed.append(text)
            elif msg.get("msg_type") == "status" and content.get("execution_state") == "idle":
                self.idle = True

    async def _wait(self, timeout: float) -> None:
        """Wait until the iopub channel (and the shell channel, until the reply came) has a
        message, or ``timeout`` seconds pass."""
        import zmq
        import zmq.asyncio

        sockets = [self.kc.iopub_channel.socket]
        if self.reply is None:
            sockets.append(self.kc.shell_channel.socket)
        asynchronous = all(isinstance(s, zmq.asyncio.Socket) for s in sockets)
        poller = zmq.asyncio.Poller() if asynchronous else zmq.Poller()  # else a blocking client
        for s in sockets:
            poller.register(s, zmq.POLLIN)
        await ensure_async(poller.poll(int(timeout * 1000)))

    async def started(self, timeout: float = 30) -> bool:
        """Whether the kernel serves (it said so before its request ended)."""
        deadline = time.monotonic() + timeout
        while not self.ready and self.reply is None and time.monotonic() < deadline:
            await self._read(0.1)
            if not self.ready and self.reply is None and not await ensure_async(self.km.is_alive()):
                return False
        await self._read(0)
        return self.ready

    async def _ended(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not (self.reply is not None and self.idle):
            await self._read(min(0.1, max(0.0, deadline - time.monotonic())))
            if self.reply is not None:
                deadline = min(deadline, time.monotonic() + 2)  # then its last outputs
            elif not await ensure_async(self.km.is_alive()):
                return False
        return self.reply is not None

    async def stop(self, grace: float, log) -> str:
        """Wait for the serving to end after the test cell: interrupt the kernel if it has not within
        10 s, stop it if it then ignores the interrupt for ``grace`` seconds. What it printed."""
        if not await self._ended(10) and await ensure_async(self.km.is_alive()):
            log.warning("The submission's kernel kept running after a test cell: interrupting it")
            await ensure_async(self.km.interrupt_kernel())
            if not await self._ended(grace):
                why = f"it kept running after the tests and ignored the interrupt for {grace} s"
                watch = getattr(self.km, "watch", None)
                if watch is not None:
                    watch.kill(why)
                else:
                    await ensure_async(self.km.shutdown_kernel(now=True))
        return "".join(self.printed)[:PRINTED_CHARS]

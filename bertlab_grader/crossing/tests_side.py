"""What runs in the tests' kernel: the graded functions as proxies, their calls sent across, what
comes back read without running code and written into the test's own objects.

The grader, before each test cell, runs ``bind(names)`` here: it connects to the student's kernel
(:mod:`bertlab_grader.crossing.student_side`, serving on a Unix socket) and looks up every name the
cell reads but neither defines nor finds among the tests' own (the set-up cells ran here too): a
function of the student's becomes a :class:`StudentFunction`, any other object that is not plain
data a :class:`StudentObject`, and plain data comes by value. After the cell, ``end_cell()`` says
the cell is over and returns what the grader keeps of it (:func:`end_cell`).

A call sends the test's arguments by value (a pickle that only the student's side reads: tensors,
models, tokenizers, optimizers; a function or an object of the test's own, a hook say, goes as a
handle the student's side calls back), with the test's random generators' state and grad mode.
What comes back is decoded by :class:`bertlab_grader.crossing.values.Decoder`: the result, what
the call changed in its arguments (written into the test's objects:
:func:`bertlab_grader.crossing.changes.write_back`), the generators' state after, its warnings
(raised here again) and, for a result that needs gradients of a tensor the test passed, a backward
pass that crosses too (:class:`RemoteBackward`). An exception the function raised is raised here
with the same built-in type and message, marked as the submission's. A large model or a tokenizer
is sent once per notebook and referred to after, while it is unchanged (:class:`SentOnce`).

A proxy answers only calls and public attributes: ``==``, ``bool``, ``len``, ``[]`` and the like are
the proxy's own (identity), so an object of the student's that "equals anything" equals nothing
here. Each call waits at most ``call_timeout`` seconds; an abort (the cell's time limit, a test's
``signal.alarm``) interrupts the call in the student's kernel too.
"""

from __future__ import annotations

import builtins
import pickle
import sys
import time
import warnings

from bertlab_grader.crossing import changes, interrupts, proxies, values, wire
from bertlab_grader.crossing.proxies import (
    SubmissionError,
    _proxy,
    _replace,
    _unreadable,
    raised,
    remote_backward,
)
from bertlab_grader.crossing.sending import _sent, answer_callback, dumps

#: Settings the grader passes with :func:`start`.
settings = {"path": None, "call_timeout": 60.0, "max_bytes": 512 * 2**20}
_bound: dict[str, object] = {}  # names this module bound in the tests' namespace, and to what
_report = {"calls": 0, "seconds": 0.0}
_last_error: list = [None]  # the last test cell's exception (IPython's post_run_cell)


class Channel:
    """One test cell's connection to the student's kernel: requests, answers and callbacks."""

    def __init__(self, path: str):
        wait = min(10.0, settings["call_timeout"])
        try:
            self.calls = wire.connect(path, wait)
            self.interrupts = wire.connect(path, wait)
        except OSError as exc:
            raise SubmissionError(
                f"the submission's kernel is not serving the tests ({exc})"
            ) from None
        wire.send(self.calls, {"kind": "hello", "role": "calls"})
        wire.send(self.interrupts, {"kind": "hello", "role": "interrupts"})
        self.broken: str | None = None
        self.sent = 0  # requests sent: the student's side numbers them alike, from 1

    def close(self, end: bool = True) -> None:
        if end and self.broken is None:
            try:
                wire.send(self.calls, {"kind": "request", "op": "end"})
            except OSError:
                pass
        for sock in (self.calls, self.interrupts):
            sock.close()

    def request(
        self, header: dict, body: bytes = b"", timeout: float | None = None
    ) -> tuple[dict, bytes]:
        """Send a request and wait for its answer, serving the student's callbacks meanwhile. An
        exception while waiting (a time limit, an alarm) interrupts the call over there first."""
        if self.broken:
            raise SubmissionError(self.broken)
        self.sent += 1
        number = self.sent
        wire.send(self.calls, {"kind": "request", **header}, body)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            return self._answer(deadline)
        except wire.WireError as exc:
            if "no answer in time" in str(exc):
                self._abort(number)
                raise TimeoutError(
                    f"the submission's function did not return within {timeout:.0f} s (interrupted)"
                ) from None
            self.broken = f"the submission's kernel sent what cannot be read: {exc}"
            raise SubmissionError(self.broken) from None
        except (KeyboardInterrupt, TimeoutError, Exception):
            self._abort(number)
            raise

    def _answer(self, deadline: float | None) -> tuple[dict, bytes]:
        while True:
            frame = wire.receive(self.calls, max_body=settings["max_bytes"], deadline=deadline)
            if frame is None:
                self.broken = (
                    "the submission's kernel closed the connection (it died, or stopped serving)"
                )
                raise SubmissionError(self.broken)
            head, body = frame
            if head.get("kind") == "reply":
                return head, body
            if head.get("kind") == "request":
                self._callback(head, body)
            else:
                raise wire.WireError("a message of no known kind")

    def _abort(self, number: int) -> None:
        """Interrupt request ``number`` over there (running, or not yet read) and read its (late)
        answer, so that the next request gets its own; or, if none comes, give up on this
        connection."""
        if self.broken:
            return
        try:
            self.interrupts.sendall(interrupts.NUMBER.pack(number))
            self._answer(time.monotonic() + 10)
        except (OSError, wire.WireError, SubmissionError, KeyboardInterrupt, TimeoutError):
            self.broken = "an earlier call of this test cell never ended"

    def _callback(self, head: dict, body: bytes) -> None:
        """Run what the student's code asked of a test's object, here; answer with a pickle."""
        wire.send(self.calls, {"kind": "reply"}, answer_callback(head, body))

    def ask(self, header: dict):
        """A plain request (an attribute): its decoded value."""
        head, body = self.request(header, timeout=settings["call_timeout"])
        return self._value(head, body)

    def _value(self, head: dict, body: bytes):
        if head.get("interrupted"):
            raise SubmissionError("the submission's code was interrupted")
        if head.get("raised") is not None:
            raise raised(head["raised"])
        with _unreadable():
            return values.Decoder(head, body, _proxy).decode(head.get("value"))

    def call(self, number: int, args: tuple, kwargs: dict):
        """Call the student's function ``number`` with the test's arguments (see the module)."""
        import random

        torch = sys.modules.get("torch")  # a test that never imported torch passes no tensor
        installs, used = [], set()
        state = {"random": random.getstate()}
        if torch is not None:
            state.update(torch=torch.get_rng_state(), grad=torch.is_grad_enabled())
        if "numpy" in sys.modules:
            state["numpy"] = sys.modules["numpy"].random.get_state()
        payload = dumps({"args": list(args), "kwargs": dict(kwargs)}, installs=installs, used=used)
        hooks = {}
        for key in used:
            entry = _sent.entries.get(key)
            if (
                entry is not None
                and entry[0]() is not None
                and hasattr(entry[0](), "named_modules")
            ):
                hooks[entry[1]] = _sent.hooks(entry[0]())
        request = dumps({"installs": installs, "hooks": hooks}) if installs or hooks else b""
        plain = pickle.dumps(state, protocol=5)  # plain data: the C pickler alone
        started = time.monotonic()
        head, body = self.request(
            {"op": "call", "id": number, "prelude": len(request), "state": len(plain)},
            request + plain + payload,
            timeout=settings["call_timeout"],
        )
        _report["calls"] += 1
        _report["seconds"] += time.monotonic() - started
        if head.get("interrupted"):
            raise SubmissionError("the submission's function was interrupted")
        with _unreadable():
            decoder = values.Decoder(head, body, _proxy)
            try:
                self._after(decoder, head, args, kwargs)
            finally:
                for key in used:
                    entry = _sent.entries.get(key)
                    if entry is not None and entry[0]() is not None:
                        _sent.refresh(entry[0]())
            if head.get("raised") is not None:
                raise raised(head["raised"])
            value = decoder.decode(head.get("value"))
        return self._with_gradients(value, decoder, head.get("grad"), args, kwargs)

    def _after(self, decoder, head: dict, args: tuple, kwargs: dict) -> None:
        """The call's changes, generators and warnings, here."""
        import random

        torch = sys.modules.get("torch")
        for entry in head.get("changes") or []:
            change = decoder.decode(entry.get("change"))
            if not isinstance(change, dict):
                raise wire.WireError("a malformed change")
            try:
                changes.write_back(changes.locate(list(args), kwargs, entry.get("path")), change)
            except changes.WriteBackError as exc:
                raise SubmissionError(
                    f"what the function changed in its arguments cannot be read back: {exc}"
                ) from None
        state = decoder.decode(head.get("state") or {"$": "dict", "v": []})
        try:
            if torch is not None and isinstance(state.get("torch"), torch.Tensor):
                torch.set_rng_state(state["torch"])
            if state.get("random") is not None:
                random.setstate(state["random"])
            if state.get("numpy") is not None and "numpy" in sys.modules:
                sys.modules["numpy"].random.set_state(state["numpy"])
        except (TypeError, ValueError, RuntimeError) as exc:
            raise SubmissionError(
                f"a random generator's state that cannot be set ({exc})"
            ) from None
        for entry in head.get("warnings") or []:
            if isinstance(entry, list) and len(entry) == 3:
                category = next(
                    (
                        c
                        for n in entry[1]
                        if isinstance(c := getattr(builtins, str(n), None), type)
                        and issubclass(c, Warning)
                    ),
                    UserWarning,
                )
                warnings.warn(str(entry[2]), category, stacklevel=3)

    def _with_gradients(self, value, decoder, grad, args, kwargs):
        """The result, its tensors that need gradients joined to the test's tensors they came from."""
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(grad, dict) or not torch.is_grad_enabled():
            return value
        outputs = [decoder.tensors.get(i) for i in grad.get("outputs") or []]
        try:
            inputs = [changes.locate(list(args), kwargs, p) for p in grad.get("inputs") or []]
        except changes.WriteBackError:
            return value
        if not outputs or any(not isinstance(t, torch.Tensor) for t in outputs + inputs):
            return value
        joined = remote_backward().apply(
            self, grad.get("id"), len(outputs), *[t.detach() for t in outputs], *inputs
        )
        swap = {id(old): new for old, new in zip(outputs, joined)}
        return _replace(value, swap)

    def backward(self, number, grad_outputs) -> list:
        head, body = self.request(
            {"op": "backward", "id": number},
            dumps(list(grad_outputs)),
            timeout=settings["call_timeout"],
        )
        return self._value(head, body)


def start(path: str, call_timeout: float = 60.0, max_bytes: int = 512 * 2**20) -> None:
    """Where the student's kernel serves, and the caps; once, when the tests' kernel starts."""
    settings.update(path=path, call_timeout=float(call_timeout), max_bytes=int(max_bytes))
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.events.register(
            "post_run_cell", lambda result: _last_error.__setitem__(0, result.error_in_exec)
        )


def bind(names: list[str], namespace: dict | None = None) -> None:
    """Connect for one test cell, and look up ``names`` in the student's kernel (see the module);
    the proxies go into ``namespace`` (default: this kernel's)."""
    if namespace is None:
        from IPython import get_ipython

        namespace = get_ipython().user_ns
    _report.update(calls=0, seconds=0.0)
    _last_error[0] = None
    channel = proxies.current[0] = Channel(settings["path"])
    wanted = [n for n in names if n not in namespace or (n in _bound and namespace[n] is _bound[n])]
    if not wanted:
        return
    head, body = channel.request({"op": "lookup"}, dumps(wanted), timeout=settings["call_timeout"])
    found = head.get("names") if isinstance(head.get("names"), dict) else {}
    with _unreadable():
        decoder = values.Decoder(head, body, _proxy)
        looked_up = {name: decoder.decode(found[name]) for name in wanted if name in found}
    for name in wanted:
        if name in looked_up:
            namespace[name] = _bound[name] = looked_up[name]
        elif name in _bound:
            namespace.pop(name, None)
            del _bound[name]


def end_cell() -> str:
    """The test cell is over: close its connection; what the grader keeps, as JSON."""
    import json

    channel, proxies.current[0] = proxies.current[0], None
    if channel is not None:
        channel.close()
    error = _last_error[0]
    return json.dumps(
        {
            **_report,
            "error_from_submission": bool(getattr(error, "bertlab_from_submission", False)),
        }
    )

"""What runs in the student's kernel while a test cell runs in the tests' kernel: it serves the calls.

The grader runs ``serve(path, globals())`` here before each test cell; the tests' kernel connects
to ``path``, a Unix socket both sandboxes see (one connection for calls, one for interrupts), and
sends requests as pickles; each answer is encoded by :class:`bertlab_grader.crossing.values.Encoder`,
which the tests' side reads without running code. The requests:

- ``lookup``: the names a test cell reads (an object that is not plain data becomes a handle);
- ``call``: call a handle with the test's arguments (copies), the test's random generators' state
  and grad mode; answer its result, what it changed in its arguments
  (:mod:`bertlab_grader.crossing.changes`), the generators' state after, the warnings it raised, and
  a handle for a backward pass through a result that needs gradients;
- ``getattr``: an attribute of a handle (a model output's ``logits``, say);
- ``backward``: the gradients of a result's inputs, for gradients of its outputs;
- ``end``: the test cell is over.

While a call runs, the student's code may call back a function or an object of the test's (a
forward hook, a learning-rate lambda, a model class the test defined): :class:`TestsObject` sends
the request to the tests' side, which runs it there. The interrupt connection carries the number
of a request the test stopped waiting for (:mod:`bertlab_grader.crossing.interrupts`).

All of this runs in the student's process, where the student's code can change it: that can only
change what the student's own functions answer, never how the tests' kernel reads or judges it.
The standard library, and torch and numpy where the kernel has imported them.
"""

from __future__ import annotations

import builtins
import pickle
import signal
import socket
import sys
import threading
import warnings

from bertlab_grader.crossing import changes, interrupts, received, values, wire
from bertlab_grader.crossing.received import _cache, _handles, keep

_grads: dict[int, tuple[list, list]] = {}  # a backward handle -> (outputs, inputs)
_listener: list = []  # the bound socket, kept for the kernel's life
#: Printed once the kernel listens: bertlab_grader.tests_kernel.READY.
READY = "\x00bertlab: serving\x00"


def prepare() -> None:
    """Import now what serving a call may need, before any cell of the student's runs: a notebook
    that breaks imports later (a path hook that finds nothing) cannot keep its own tests from
    reaching it. Run by the grader when the kernel starts."""
    import functools  # noqa: F401
    import io  # noqa: F401
    import random  # noqa: F401
    import weakref  # noqa: F401

    if (
        "torch" in sys.modules
    ):  # a kernel that has torch (a warm one) sends tensors: warm that path up
        import torch

        data = pickle.dumps(
            (torch.zeros(1, requires_grad=True), torch.nn.Parameter(torch.zeros(1)))
        )
        received._Unpickler(data, None).load()
        values.Encoder(keep).encode([torch.zeros(1), torch.float32, torch.Size([1])])
    if "numpy" in sys.modules:
        import numpy

        values.Encoder(keep).encode([numpy.zeros(1), numpy.float32(0)])


class Channel:
    """The calls connection, from this side: answers the tests' requests, asks the tests' side."""

    def __init__(self, calls: socket.socket, namespace: dict):
        self.sock, self.namespace = calls, namespace
        self.requests = interrupts.Requests()

    def reply(self, header: dict, encoder: values.Encoder | None = None) -> None:
        encoder = encoder or values.Encoder(keep)
        header, body = encoder.header_and_body({"kind": "reply", **header})
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # a frame is never cut
        try:
            wire.send(self.sock, header, body)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def load(self, body: bytes):
        return received._Unpickler(body, self).load()

    def ask_tests(self, header: dict, args: tuple, kwargs: dict):
        """A request to the tests' side (a callback); serves its requests until the answer comes."""
        encoder = values.Encoder(keep)
        payload = {"args": encoder.encode(list(args)), "kwargs": encoder.encode(dict(kwargs))}
        torch = sys.modules.get("torch")
        if torch is not None:
            payload["grad"] = torch.is_grad_enabled()
        header, body = encoder.header_and_body({"kind": "request", **header, **payload})
        wire.send(self.sock, header, body)
        while True:
            frame = wire.receive(self.sock)
            if frame is None:
                raise ConnectionError("the tests' kernel closed the connection")
            head, body = frame
            if head.get("kind") == "reply":
                answer = self.load(body)
                if "raised" in answer:
                    kind = getattr(builtins, str(answer["raised"]), None)
                    if not (isinstance(kind, type) and issubclass(kind, Exception)):
                        kind = RuntimeError
                    raise kind(
                        f"the test's own code raised {answer['raised']} when your code called it"
                    )
                return answer["value"]
            if self.handle(head, body) == "end":
                raise ConnectionError("the test cell ended while the function ran")

    def handle(self, head: dict, body: bytes) -> str | None:
        """Answer one request of the tests' side; "end" when the test cell is over."""
        op = head.get("op")
        if op == "end":
            return "end"
        number = self.requests.arrive()
        if number is None:  # the test stopped waiting before this request came: it does not run
            self.reply({"interrupted": True})
            return None
        try:
            self._handle(op, head, body)
        finally:
            self.requests.done(number)
        return None

    def _handle(self, op: str, head: dict, body: bytes) -> None:
        try:
            if op == "lookup":
                self.lookup(self.load(body))
            elif op == "call":
                prelude, state = int(head.get("prelude") or 0), int(head.get("state") or 0)
                if prelude:
                    self.prepare(self.load(body[:prelude]))
                request = self.load(body[prelude + state :])
                request["state"] = self.load(body[prelude : prelude + state]) if state else {}
                self.call(head, request)
            elif op == "getattr":
                obj, name = _handles[head["id"]], str(head.get("name", ""))
                encoder = values.Encoder(keep)
                self.reply({"value": encoder.encode(getattr(obj, name))}, encoder)
            elif op == "backward":
                self.backward(head, self.load(body))
            else:
                self.reply(
                    {
                        "raised": {
                            "type": "ValueError",
                            "bases": ["ValueError"],
                            "message": f"no op {op}",
                        }
                    }
                )
        except KeyboardInterrupt:
            self.reply({"interrupted": True})
        except Exception as exc:  # noqa: BLE001 - told to the tests' side, which fails the test
            self.reply({"raised": received.described(exc)})
        return None

    def lookup(self, names: list[str]) -> None:
        encoder = values.Encoder(keep)
        found = {}
        for name in names:
            if name in self.namespace:
                try:
                    found[name] = encoder.encode(self.namespace[name])
                except Exception:  # noqa: BLE001 - a value that cannot be encoded is a handle
                    found[name] = encoder.handle(self.namespace[name])
        self.reply({"names": found}, encoder)

    def prepare(self, setup: dict) -> None:
        """The large objects the test sends once (before the call that first uses them), and the
        hooks its cached models have now."""
        for token, data in setup.get("installs", []):
            _cache[token] = self.load(data)
            while len(_cache) > received.CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
        for token, hooks in setup.get("hooks", {}).items():
            received.set_hooks(_cache[token], hooks)

    def call(self, head: dict, request: dict) -> None:
        import random

        torch = sys.modules.get("torch")
        numpy = sys.modules.get("numpy")
        function = _handles[head["id"]]
        args, kwargs = request["args"], request["kwargs"]
        state = request.get("state", {})
        received.set_state(state, torch, numpy, random)
        followed = [(p, o, w) for p, o in changes.arguments(args, kwargs) if (w := changes.kind(o))]
        for _, obj, what in followed:
            if what == "scheduler":
                received.track_steps(obj)
        before = [changes.snapshot(o, w) for _, o, w in followed]
        raised = result = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad = (
                torch.set_grad_enabled(bool(state.get("grad", True)))
                if torch
                else received.Nothing()
            )
            with grad:
                try:
                    result = function(*args, **kwargs)
                except KeyboardInterrupt:
                    self.reply({"interrupted": True})
                    return
                except BaseException as exc:  # noqa: BLE001 - SystemExit too: a result of the call
                    raised = exc
        encoder = values.Encoder(keep)
        answer = (
            {"raised": received.described(raised)}
            if raised is not None
            else {"value": encoder.encode(result)}
        )
        outputs = len(encoder.tensors)
        answer["changes"] = []
        for (path, obj, what), was in zip(followed, before):
            change = changes.changed(obj, what, was)
            if change is not None:
                answer["changes"].append({"path": path, "change": encoder.encode(change)})
        answer["state"] = encoder.encode(received.changed_state(state, torch, numpy, random))
        answer["warnings"] = [
            [w.category.__name__, [c.__name__ for c in w.category.__mro__], str(w.message)[:2000]]
            for w in caught
        ]
        answer["grad"] = (
            self.grad_handle(encoder.tensors[:outputs], followed)
            if torch and raised is None
            else None
        )
        self.reply(answer, encoder)

    def grad_handle(self, tensors: list, followed: list) -> dict | None:
        """A backward handle where a result needs gradients of tensors the test passed."""
        outputs = [i for i, t in enumerate(tensors) if t.requires_grad and t.grad_fn is not None]
        inputs = [
            (path, obj)
            for path, obj, what in followed
            if what == "tensor" and obj.requires_grad and obj.is_leaf
        ]
        if not outputs or not inputs:
            return None
        number = len(_grads) + 1
        _grads[number] = ([tensors[i] for i in outputs], [obj for _, obj in inputs])
        return {"id": number, "outputs": outputs, "inputs": [path for path, _ in inputs]}

    def backward(self, head: dict, grad_outputs: list) -> None:
        import torch

        outputs, inputs = _grads[head["id"]]
        grads = torch.autograd.grad(
            outputs, inputs, grad_outputs, retain_graph=True, allow_unused=True
        )
        encoder = values.Encoder(keep)
        self.reply({"value": encoder.encode(list(grads))}, encoder)


def _accept_two() -> tuple[socket.socket, socket.socket]:
    """The tests' two connections, by the role each names first."""
    roles = {}
    while len(roles) < 2:
        conn, _ = _listener[0].accept()
        frame = wire.receive(conn, max_header=4096, max_body=0)
        role = (frame or [{}])[0].get("role")
        if role in ("calls", "interrupts") and role not in roles:
            roles[role] = conn
        else:
            conn.close()
    return roles["calls"], roles["interrupts"]


def serve(path: str, namespace: dict) -> None:
    """Serve one test cell's requests on the Unix socket ``path`` with the student's ``namespace``,
    until the tests' side says the cell ended (or closes the connection)."""
    if not _listener:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        _listener.append(listener)
    sys.stdout.write(READY)  # the grader now lets the tests' kernel connect
    sys.stdout.flush()
    calls, interrupted = _accept_two()
    channel = Channel(calls, namespace)
    watcher = threading.Thread(
        target=interrupts.watch, args=(interrupted, channel.requests), daemon=True
    )
    watcher.start()
    try:
        while True:
            try:
                frame = wire.receive(calls)
            except KeyboardInterrupt:  # an interrupt that came as the last call ended
                continue
            except (OSError, wire.WireError):  # the tests' side gave up on this connection
                return
            if frame is None:
                return
            try:
                if channel.handle(*frame) == "end":
                    return
            except KeyboardInterrupt:  # after the answer went out: nothing to do
                continue
            except OSError:  # an answer the tests' side no longer reads
                return
    finally:
        calls.close()
        interrupted.close()
        _grads.clear()  # a backward pass crosses only within its own test cell

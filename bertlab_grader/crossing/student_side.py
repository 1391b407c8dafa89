"""What runs in the student's kernel while a test cell runs in the tests' kernel: it serves the calls.

The grader runs ``serve(path, globals())`` in the student's kernel (a silent execute) before each
test cell and the tests' kernel connects to ``path``, a Unix socket in a folder both sandboxes see:
one connection for the calls, one for interrupts. Each request from the tests' side is a frame
whose body is a pickle the tests' kernel wrote (:mod:`bertlab_grader.crossing.tests_side`); each
answer is encoded by :class:`bertlab_grader.crossing.wire.Encoder`, which the tests' side reads
without running code. The requests:

- ``lookup``: what the names a test cell reads are here (a function or any other object becomes a
  handle, plain data goes by value);
- ``call``: call a handle with the test's arguments (copies), the test's random generators' state
  and grad mode; answer its result, what it changed in its arguments
  (:mod:`bertlab_grader.crossing.changes`), the generators' state after, the warnings it raised, and
  a handle for a backward pass through a result that needs gradients;
- ``getattr``: an attribute of a handle (a model output's ``logits``, say);
- ``backward``: the gradients of a result's inputs, for gradients of its outputs;
- ``end``: the test cell is over.

While a call runs, the student's code may call back a function or an object of the test's (a
forward hook, a learning-rate lambda, a model class the test defined): :class:`TestsObject` sends
the request to the tests' side, which runs it there. A byte on the interrupt connection interrupts
the call in progress (``SIGINT`` to this kernel's main thread): the test stopped waiting for it.

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

from bertlab_grader.crossing import changes, wire

_handles: dict[int, object] = {}  # the student's objects the tests' kernel holds, by number
_cache: dict[str, object] = {}  # objects the tests sent once (a model, a tokenizer), by token
_grads: dict[int, tuple[list, list]] = {}  # a backward handle -> (outputs, inputs)
_listener: list = []  # the bound socket, kept for the kernel's life
CACHE_SIZE = 8


def keep(obj) -> int:
    """A handle for ``obj``: the tests' kernel holds the number, the object stays here."""
    number = id(obj)
    _handles[number] = obj
    return number


class TestsObject:
    """A function or object of the tests' kernel (a hook, a lambda, an instance of a class a test
    defined), seen from the student's code: calling it, reading its public attributes, iterating
    over it or taking its length runs there."""

    __slots__ = ("_channel", "_id", "__dict__")  # an empty __dict__, as a scheduler copies it

    def __init__(self, channel, number: int):
        self._channel, self._id = channel, number

    def _ask(self, op: str, *args, **kwargs):
        return self._channel.ask_tests({"op": op, "id": self._id}, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._ask("call", *args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __iter__(self):
        return self._ask("iter")

    def __next__(self):
        return self._ask("next")

    def __len__(self):
        return self._ask("len")

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __repr__(self) -> str:
        return "<an object of the tests>"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class _Unpickler(pickle.Unpickler):
    """Reads what the tests' kernel sent, its references resolved here."""

    def __init__(self, data: bytes, channel):
        import io

        super().__init__(io.BytesIO(data))
        self.channel = channel

    def persistent_load(self, ref):
        kind = ref[0]
        if kind == "student":
            return _handles[ref[1]]
        if kind == "tests":
            return TestsObject(self.channel, ref[1])
        if kind == "cached":
            return _cache[ref[1]]
        if kind == "param":
            module = _cache[ref[1]]
            try:
                return module.get_parameter(ref[2])
            except AttributeError:
                return module.get_buffer(ref[2])
        raise pickle.UnpicklingError(f"unknown reference {kind!r}")


def rebuild_parameter(data, requires_grad, grad):
    """A parameter with its gradient (pickling a parameter drops ``.grad``)."""
    import torch

    param = torch.nn.Parameter(data, requires_grad=requires_grad)
    param.grad = grad
    return param


def rebuild_leaf(data, requires_grad):
    """A tensor the test passed: a leaf here, requiring gradients if the test's did."""
    return data.requires_grad_(requires_grad) if requires_grad else data


class Channel:
    """The calls connection, from this side: answers the tests' requests, asks the tests' side."""

    def __init__(self, calls: socket.socket, namespace: dict):
        self.sock, self.namespace = calls, namespace

    def reply(self, header: dict, encoder: wire.Encoder | None = None) -> None:
        encoder = encoder or wire.Encoder(keep)
        header, body = encoder.header_and_body({"kind": "reply", **header})
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # a frame is never cut
        try:
            wire.send(self.sock, header, body)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def load(self, body: bytes):
        return _Unpickler(body, self).load()

    def ask_tests(self, header: dict, args: tuple, kwargs: dict):
        """A request to the tests' side (a callback); serves its requests until the answer comes."""
        encoder = wire.Encoder(keep)
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
        try:
            if op == "lookup":
                self.lookup(self.load(body))
            elif op == "call":
                prelude = int(head.get("prelude") or 0)
                if prelude:
                    self.prepare(self.load(body[:prelude]))
                self.call(head, self.load(body[prelude:]))
            elif op == "getattr":
                obj, name = _handles[head["id"]], str(head.get("name", ""))
                encoder = wire.Encoder(keep)
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
            self.reply({"raised": described(exc)})
        return None

    def lookup(self, names: list[str]) -> None:
        encoder = wire.Encoder(keep)
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
            while len(_cache) > CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
        for token, hooks in setup.get("hooks", {}).items():
            set_hooks(_cache[token], hooks)

    def call(self, head: dict, request: dict) -> None:
        import random

        torch = sys.modules.get("torch")
        numpy = sys.modules.get("numpy")
        function = _handles[head["id"]]
        args, kwargs = request["args"], request["kwargs"]
        state = request.get("state", {})
        _set_state(state, torch, numpy, random)
        followed = [(p, o, w) for p, o in changes.arguments(args, kwargs) if (w := changes.kind(o))]
        for _, obj, what in followed:
            if what == "scheduler":
                track_steps(obj)
        before = [changes.snapshot(o, w) for _, o, w in followed]
        raised = result = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad = torch.set_grad_enabled(bool(state.get("grad", True))) if torch else _Nothing()
            with grad:
                try:
                    result = function(*args, **kwargs)
                except KeyboardInterrupt:
                    self.reply({"interrupted": True})
                    return
                except BaseException as exc:  # noqa: BLE001 - SystemExit too: a result of the call
                    raised = exc
        encoder = wire.Encoder(keep)
        answer = (
            {"raised": described(raised)}
            if raised is not None
            else {"value": encoder.encode(result)}
        )
        outputs = len(encoder.tensors)
        answer["changes"] = []
        for (path, obj, what), was in zip(followed, before):
            change = changes.changed(obj, what, was)
            if change is not None:
                answer["changes"].append({"path": path, "change": encoder.encode(change)})
        answer["state"] = encoder.encode(_changed_state(state, torch, numpy, random))
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
        encoder = wire.Encoder(keep)
        self.reply({"value": encoder.encode(list(grads))}, encoder)


def track_steps(scheduler) -> None:
    """Mark the steps of a scheduler's optimizer, as ``LRScheduler.__init__`` does (a pickled
    optimizer loses the mark): the scheduler warns when it is stepped before its optimizer."""
    import functools
    import weakref

    optimizer = scheduler.optimizer
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    step, owner = type(optimizer).step, weakref.ref(optimizer)

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return step(opt, *args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def described(exc: BaseException | None) -> dict | None:
    """An exception as the tests' side re-raises it: its type's name, its built-in bases, its message."""
    if exc is None:
        return None
    bases = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
    try:
        message = str(exc)[:2000]
    except Exception:  # noqa: BLE001 - a message that cannot be made
        message = ""
    return {"type": type(exc).__name__[:200], "bases": bases, "message": message}


def _set_state(state: dict, torch, numpy, random) -> None:
    """The test's random generators and grad mode, as they were when it called."""
    if torch is not None and state.get("torch") is not None:
        torch.set_rng_state(state["torch"])
    if state.get("random") is not None:
        random.setstate(state["random"])
    if numpy is not None and state.get("numpy") is not None:
        numpy.random.set_state(state["numpy"])


def _changed_state(state: dict, torch, numpy, random) -> dict:
    """The random generators' states that the call advanced."""
    found = {}
    if torch is not None and state.get("torch") is not None:
        now = torch.get_rng_state()
        if not torch.equal(now, state["torch"]):
            found["torch"] = now
    if state.get("random") is not None and random.getstate() != state["random"]:
        found["random"] = random.getstate()
    if numpy is not None and state.get("numpy") is not None:
        now = numpy.random.get_state()
        if not (
            numpy.array_equal(now[1], state["numpy"][1]) and now[2:] == tuple(state["numpy"][2:])
        ):
            found["numpy"] = now
    return found


HOOKS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_backward_hooks",
    "_backward_pre_hooks",
)


def set_hooks(module, hooks: list) -> None:
    """A cached model's hooks made those the test's model has now (a test adds and removes hooks
    between calls, and the model is not sent again for that)."""
    for sub in module.modules():
        for attr in HOOKS:
            if getattr(sub, attr, None):
                getattr(sub, attr).clear()
    for name, found in hooks:
        sub = module.get_submodule(name)
        for attr, entries in found.items():
            if attr in HOOKS:
                getattr(sub, attr).update(entries)


def _watch_interrupts(sock: socket.socket, calling: threading.Event) -> None:
    """Interrupt the main thread (a call in progress) for every byte the tests' side sends."""
    main = threading.main_thread().ident
    while True:
        try:
            data = sock.recv(1)
        except OSError:
            return
        if not data:
            return
        if calling.is_set():
            signal.pthread_kill(main, signal.SIGINT)


def _accept_two(path: str) -> tuple[socket.socket, socket.socket]:
    """The tests' two connections, by the role each names first."""
    if not _listener:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        _listener.append(listener)
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
    calls, interrupts = _accept_two(path)
    calling = threading.Event()
    watcher = threading.Thread(target=_watch_interrupts, args=(interrupts, calling), daemon=True)
    watcher.start()
    channel = Channel(calls, namespace)
    try:
        while True:
            try:
                frame = wire.receive(calls)
            except KeyboardInterrupt:  # an interrupt that came as the last call ended
                continue
            if frame is None:
                return
            try:
                calling.set()
                if channel.handle(*frame) == "end":
                    return
            except KeyboardInterrupt:  # after the answer went out: nothing to do
                continue
            finally:
                calling.clear()
    finally:
        calls.close()
        interrupts.close()

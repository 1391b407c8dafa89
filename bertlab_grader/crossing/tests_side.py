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
What comes back is decoded by :class:`bertlab_grader.crossing.wire.Decoder`: the result, what
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
import contextlib
import functools
import io
import os
import pickle
import socket
import stat
import sys
import time
import types
import warnings
import weakref

from bertlab_grader.crossing import changes, student_side, wire

#: Settings the grader passes with :func:`start`.
settings = {"path": None, "call_timeout": 60.0, "max_bytes": 512 * 2**20}
_channel = None  # the current test cell's connection
_bound: dict[str, object] = {}  # names this module bound in the tests' namespace, and to what
_report = {"calls": 0, "seconds": 0.0}
_last_error: list = [None]  # the last test cell's exception (IPython's post_run_cell)
#: A model with at least this many parameter and buffer elements is sent once (:class:`SentOnce`).
HEAVY = 2**20


class SubmissionError(Exception):
    """The student's kernel could not be asked, or its answer could not be read."""


# --- proxies -------------------------------------------------------------------------------------


class StudentObject:
    """An object of the student's kernel, held here by number: its public attributes cross;
    comparisons, truth and hashing are this proxy's own."""

    __slots__ = ("_number", "_type", "__weakref__")

    def __init__(self, number: int, kind: str):
        self._number, self._type = number, kind

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return _current().ask({"op": "getattr", "id": self._number, "name": name})

    def __repr__(self) -> str:
        return f"<{self._type} object of the submission>"

    def __reduce__(self):  # sent back across as the reference it is
        raise pickle.PicklingError("sent by reference")


class StudentFunction(StudentObject):
    """A function (or any callable) of the student's kernel: calling it calls it there."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        return _current().call(self._number, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {self._type} of the submission>"


def _proxy(entry: dict) -> StudentObject:
    kind = StudentFunction if entry.get("callable") is True else StudentObject
    return kind(entry["id"], str(entry.get("type", "?"))[:200])


_raised_types: dict[tuple[str, type], type] = {}


def raised(described: dict) -> BaseException:
    """The student's exception, as an exception of its built-in base type (``except ValueError``
    catches a subclass of the student's), named as the student's was; marked as the submission's."""
    base = RuntimeError
    for name in described.get("bases") or []:
        found = getattr(builtins, str(name), None)
        if isinstance(found, type) and issubclass(found, Exception):
            base = found
            break
    name = str(described.get("type") or base.__name__)[:200]
    if not name.isidentifier():
        name = base.__name__
    kind = _raised_types.get((name, base))
    if kind is None:
        kind = _raised_types[(name, base)] = type(name, (base,), {"__module__": "submission"})
    exc = kind(str(described.get("message", ""))[:2000])
    exc.bertlab_from_submission = True
    return exc


# --- what goes across: the test's arguments, pickled ---------------------------------------------


def tests_only(obj) -> bool:
    """Whether ``obj`` lives only here and crosses as a handle: a function, class or instance
    the tests' cells defined, a method of one, or something no pickle can carry (a generator)."""
    if isinstance(obj, types.MethodType):
        return tests_only(obj.__self__) or tests_only(obj.__func__)
    if isinstance(obj, (types.FunctionType, type)):
        qualname = getattr(obj, "__qualname__", "")
        return (
            getattr(obj, "__module__", None) == "__main__"
            or "<locals>" in qualname
            or "<lambda>" in qualname
        )
    if isinstance(
        obj,
        (
            types.GeneratorType,
            types.CoroutineType,
            types.ModuleType,
            types.FrameType,
            types.CodeType,
        ),
    ):
        return True
    return getattr(type(obj), "__module__", None) == "__main__"


class SentOnce:
    """Large models and tokenizers sent once, then named by a token while they are unchanged (the
    student's side keeps :data:`bertlab_grader.crossing.student_side.CACHE_SIZE` of them, as here)."""

    def __init__(self):
        self.entries: dict[int, tuple] = {}  # id -> (weak reference, token, fingerprint)
        self.order: list[int] = []
        self.count = 0
        self.params: dict[
            int, tuple[str, str]
        ] = {}  # id of a cached model's tensor -> (token, name)

    @staticmethod
    def heavy(obj) -> bool:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj, torch.nn.Module) and not tests_only(obj):
            return sum(t.numel() for t in changes._tensors(obj).values()) >= HEAVY
        base = getattr(sys.modules.get("transformers"), "PreTrainedTokenizerBase", None)
        return base is not None and isinstance(obj, base)

    @staticmethod
    def fingerprint(obj):
        import torch

        if isinstance(obj, torch.nn.Module):
            tensors = changes.snapshot(obj, "module")
            return repr(
                (
                    tensors["tensors"],
                    tensors["grads"],
                    tensors["requires_grad"],
                    tensors["training"],
                    tensors["configs"],
                )
            )
        keys = ("padding_side", "truncation_side", "model_max_length")
        return repr((len(obj), [getattr(obj, k, None) for k in keys], obj.special_tokens_map))

    def token(self, obj, installs: list) -> str:
        """The token the student's side knows ``obj`` by, sending it first where it does not."""
        entry = self.entries.get(id(obj))
        print_ = self.fingerprint(obj)
        if entry is not None and entry[0]() is obj and entry[2] == print_:
            return entry[1]
        self.count += 1
        token = f"t{self.count}"
        installs.append((token, dumps(obj, installing=obj)))
        self.forget(id(obj))
        self.entries[id(obj)] = (weakref.ref(obj), token, print_)
        self.order.append(id(obj))
        if hasattr(obj, "named_parameters"):
            for name, tensor in changes._tensors(obj).items():
                self.params[id(tensor)] = (token, name)
        while len(self.order) > student_side.CACHE_SIZE:
            self.forget(self.order[0])
        return token

    def owner(self, token: str):
        """The object sent as ``token``, if it is still here."""
        for ref, sent, _ in self.entries.values():
            if sent == token:
                return ref()
        return None

    def forget(self, key: int) -> None:
        entry = self.entries.pop(key, None)
        if key in self.order:
            self.order.remove(key)
        if entry is not None:
            self.params = {k: v for k, v in self.params.items() if v[0] != entry[1]}

    def refresh(self, obj) -> None:
        """``obj`` changed the same way on both sides (a call's changes, written back)."""
        entry = self.entries.get(id(obj))
        if entry is not None and entry[0]() is obj:
            self.entries[id(obj)] = (entry[0], entry[1], self.fingerprint(obj))

    def hooks(self, obj) -> list:
        """The hooks of a cached model's submodules now: [(submodule name, {attribute: hooks})]."""
        found = []
        for name, sub in obj.named_modules():
            hooks = {a: dict(getattr(sub, a)) for a in student_side.HOOKS if getattr(sub, a, None)}
            if hooks:
                found.append((name, hooks))
        return found


_sent = SentOnce()
_tests_objects: dict[int, object] = {}  # the test's objects the student's side holds by number


class _Pickler(pickle.Pickler):
    def __init__(self, file, installing=None, installs=None, used=None):
        super().__init__(file, protocol=5)
        self.installing, self.installs, self.used = installing, installs, used

    def persistent_id(self, obj):
        if isinstance(obj, StudentObject):
            return ("student", object.__getattribute__(obj, "_number"))
        if obj is self.installing:
            return None
        if tests_only(obj):
            _tests_objects[id(obj)] = obj
            return ("tests", id(obj))
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj, torch.Tensor):
            ref = _sent.params.get(id(obj))
            owner = _sent.owner(ref[0]) if ref is not None and self.installs is not None else None
            if owner is None or owner is self.installing:
                return None
            token = _sent.token(owner, self.installs)  # sent again first if it changed
            self.used.add(id(owner))
            return ("param", token, ref[1])
        if self.installs is not None and SentOnce.heavy(obj):
            token = _sent.token(obj, self.installs)
            if self.used is not None:
                self.used.add(id(obj))
            return ("cached", token)
        return None

    def reducer_override(self, obj):
        torch = sys.modules.get("torch")
        if (
            torch is not None
            and isinstance(obj, torch.optim.Optimizer)
            and hasattr(obj, "_opt_called")
        ):
            reduced = list(obj.__reduce_ex__(5))  # its state keeps LRScheduler's mark of its steps
            reduced[2] = {**reduced[2], "_opt_called": obj._opt_called}
            return tuple(reduced)
        if torch is None or not isinstance(obj, torch.Tensor):
            return NotImplemented
        if isinstance(obj, torch.nn.Parameter):
            return student_side.rebuild_parameter, (obj.detach(), obj.requires_grad, obj.grad)
        if obj.requires_grad:
            return student_side.rebuild_leaf, (obj.detach(), True)
        return NotImplemented


def dumps(obj, installing=None, installs=None, used=None) -> bytes:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, installing, installs, used).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise SubmissionError(
            f"the test passed something that cannot be sent to the submission's kernel: {exc}"
        ) from None
    return buffer.getvalue()


# --- the connection --------------------------------------------------------------------------------


def _connect(path: str, wait: float = 10.0) -> socket.socket:
    deadline = time.monotonic() + wait
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise SubmissionError("the submission's kernel is not serving (no socket)")
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > deadline:
                raise SubmissionError(
                    "the submission's kernel did not answer (not serving)"
                ) from None
            time.sleep(0.02)


class Channel:
    """One test cell's connection to the student's kernel: requests, answers and callbacks."""

    def __init__(self, path: str):
        self.calls = _connect(path)
        wire.send(self.calls, {"kind": "hello", "role": "calls"})
        self.interrupts = _connect(path)
        wire.send(self.interrupts, {"kind": "hello", "role": "interrupts"})
        self.broken: str | None = None

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
        wire.send(self.calls, {"kind": "request", **header}, body)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            return self._answer(deadline)
        except wire.WireError as exc:
            if "no answer in time" in str(exc):
                self._abort()
                raise TimeoutError(
                    f"the submission's function did not return within {timeout:.0f} s (interrupted)"
                ) from None
            self.broken = f"the submission's kernel sent what cannot be read: {exc}"
            raise SubmissionError(self.broken) from None
        except (KeyboardInterrupt, TimeoutError, Exception):
            self._abort()
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

    def _abort(self) -> None:
        """Interrupt the call in progress over there and read its (late) answer, so that the next
        request gets its own; or, if none comes, give up on this connection."""
        if self.broken:
            return
        try:
            self.interrupts.send(b"!")
            self._answer(time.monotonic() + 10)
        except (OSError, wire.WireError, SubmissionError, KeyboardInterrupt, TimeoutError):
            self.broken = "an earlier call of this test cell never ended"

    def _callback(self, head: dict, body: bytes) -> None:
        """Run what the student's code asked of a test's object, here; answer with a pickle."""
        import torch

        try:
            decoder = wire.Decoder(head, body, _proxy)
            args, kwargs = (
                decoder.decode(head.get("args", [])),
                decoder.decode(head.get("kwargs", {})),
            )
            obj, op = _tests_objects[head.get("id")], head.get("op")
            if (
                not isinstance(args, list)
                or not isinstance(kwargs, dict)
                or not all(isinstance(k, str) for k in kwargs)
            ):
                raise wire.WireError("malformed arguments")
            with torch.set_grad_enabled(bool(head.get("grad", torch.is_grad_enabled()))):
                if op == "call":
                    value = obj(*args, **kwargs)
                elif op == "getattr" and isinstance(args[0], str) and not args[0].startswith("_"):
                    value = getattr(obj, args[0])
                elif op in ("iter", "next", "len"):
                    value = {"iter": iter, "next": next, "len": len}[op](obj)
                elif op == "getitem":
                    value = obj[args[0]]
                else:
                    raise wire.WireError(f"no op {op!r}")
            answer = {"value": value}
        except Exception as exc:  # noqa: BLE001 - told to the student's side by name only
            answer = {"raised": type(exc).__name__}
        try:
            data = dumps(answer)
        except SubmissionError:
            data = dumps({"raised": "TypeError"})
        wire.send(self.calls, {"kind": "reply"}, data)

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
            return wire.Decoder(head, body, _proxy).decode(head.get("value"))

    def call(self, number: int, args: tuple, kwargs: dict):
        """Call the student's function ``number`` with the test's arguments (see the module)."""
        import random

        import torch

        installs, used = [], set()
        state = {
            "torch": torch.get_rng_state(),
            "random": random.getstate(),
            "grad": torch.is_grad_enabled(),
        }
        if "numpy" in sys.modules:
            state["numpy"] = sys.modules["numpy"].random.get_state()
        payload = dumps(
            {"args": list(args), "kwargs": dict(kwargs), "state": state},
            installs=installs,
            used=used,
        )
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
        started = time.monotonic()
        head, body = self.request(
            {"op": "call", "id": number, "prelude": len(request)},
            request + payload,
            timeout=settings["call_timeout"],
        )
        _report["calls"] += 1
        _report["seconds"] += time.monotonic() - started
        if head.get("interrupted"):
            raise SubmissionError("the submission's function was interrupted")
        with _unreadable():
            decoder = wire.Decoder(head, body, _proxy)
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

        import torch

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
            if isinstance(state.get("torch"), torch.Tensor):
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
        import torch

        if not isinstance(grad, dict) or not torch.is_grad_enabled():
            return value
        outputs = [decoder.tensors.get(i) for i in grad.get("outputs") or []]
        try:
            inputs = [changes.locate(list(args), kwargs, p) for p in grad.get("inputs") or []]
        except changes.WriteBackError:
            return value
        if not outputs or any(not isinstance(t, torch.Tensor) for t in outputs + inputs):
            return value
        joined = _remote_backward().apply(
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


@contextlib.contextmanager
def _unreadable():
    """A WireError while reading an answer, as the test sees it: the submission's answer cannot be read."""
    try:
        yield
    except wire.WireError as exc:
        raise SubmissionError(f"the submission's kernel sent what cannot be read: {exc}") from None


def _replace(value, swap: dict, depth: int = 0):
    if id(value) in swap:
        return swap[id(value)]
    if depth > wire.MAX_DEPTH:
        return value
    if type(value) is list:
        return [_replace(v, swap, depth + 1) for v in value]
    if type(value) is tuple:
        return tuple(_replace(v, swap, depth + 1) for v in value)
    if type(value) is dict:
        return {k: _replace(v, swap, depth + 1) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=1)
def _remote_backward():
    """:class:`RemoteBackward`, made once torch is imported here."""
    import torch

    class RemoteBackward(torch.autograd.Function):
        """A result's backward pass, run in the student's kernel, which built its graph."""

        @staticmethod
        def forward(ctx, channel, number, n_outputs, *tensors):
            ctx.channel, ctx.number, ctx.n_outputs = channel, number, n_outputs
            ctx.shapes = [(tuple(t.shape), t.dtype) for t in tensors[n_outputs:]]
            return tuple(t.clone() for t in tensors[:n_outputs])

        @staticmethod
        def backward(ctx, *grad_outputs):
            grads = ctx.channel.backward(ctx.number, grad_outputs)
            if not isinstance(grads, list) or len(grads) != len(ctx.shapes):
                raise SubmissionError("a backward pass that gave the wrong number of gradients")
            for grad, (shape, _) in zip(grads, ctx.shapes):
                if grad is not None and (
                    not isinstance(grad, torch.Tensor) or tuple(grad.shape) != shape
                ):
                    raise SubmissionError("a backward pass that gave a gradient of the wrong shape")
            cast = [g if g is None else g.to(dtype) for g, (_, dtype) in zip(grads, ctx.shapes)]
            return (None, None, None, *([None] * ctx.n_outputs), *cast)

    return RemoteBackward


# --- what the grader calls -------------------------------------------------------------------------


def _current() -> Channel:
    if _channel is None:
        raise SubmissionError("a submission's object used outside the test cell that got it")
    return _channel


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
    global _channel
    if namespace is None:
        from IPython import get_ipython

        namespace = get_ipython().user_ns
    _report.update(calls=0, seconds=0.0)
    _last_error[0] = None
    _channel = Channel(settings["path"])
    wanted = [n for n in names if n not in namespace or (n in _bound and namespace[n] is _bound[n])]
    if not wanted:
        return
    head, body = _channel.request({"op": "lookup"}, dumps(wanted), timeout=settings["call_timeout"])
    found = head.get("names") if isinstance(head.get("names"), dict) else {}
    with _unreadable():
        decoder = wire.Decoder(head, body, _proxy)
        values = {name: decoder.decode(found[name]) for name in wanted if name in found}
    for name in wanted:
        if name in values:
            namespace[name] = _bound[name] = values[name]
        elif name in _bound:
            namespace.pop(name, None)
            del _bound[name]


def end_cell() -> str:
    """The test cell is over: close its connection; what the grader keeps, as JSON."""
    import json

    global _channel
    if _channel is not None:
        _channel.close()
        _channel = None
    error = _last_error[0]
    return json.dumps(
        {
            **_report,
            "error_from_submission": bool(getattr(error, "bertlab_from_submission", False)),
        }
    )

"""What the tests' kernel sends: the test's arguments, pickled for the student's side alone.

A call's arguments go by value: tensors, models, tokenizers, optimizers, as a pickle that only the
student's side reads (:func:`dumps`). A function, class or instance of the test's own (a hook, a
lambda, a model class a hidden test defined) is not sent: it crosses as a handle that the student's
side calls back (:func:`tests_only`), so neither its code nor what it closes over leaves the tests'
kernel. A large model or a tokenizer is sent once per notebook and named by a token while it is
unchanged (:class:`SentOnce`). Runs in the tests' kernel.
"""

from __future__ import annotations

import io
import pickle
import sys
import types
import weakref

from bertlab_grader.crossing import changes, received, values, wire
from bertlab_grader.crossing.proxies import StudentObject, SubmissionError, _nothing, _proxy

#: A model with at least this many parameter and buffer elements is sent once (:class:`SentOnce`).
HEAVY = 2**20


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
    student's side keeps :data:`bertlab_grader.crossing.received.CACHE_SIZE` of them, as here)."""

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
        while len(self.order) > received.CACHE_SIZE:
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
            hooks = {a: dict(getattr(sub, a)) for a in received.HOOKS if getattr(sub, a, None)}
            if hooks:
                found.append((name, hooks))
        return found


_sent = SentOnce()


_tests_objects: dict[int, object] = {}  # the test's objects the student's side holds by number


#: Types that always pickle as themselves.
PLAIN = frozenset({int, float, str, bytes, bool, type(None), complex, range, slice})


class _Pickler(pickle.Pickler):
    def __init__(self, file, installing=None, installs=None, used=None):
        super().__init__(file, protocol=5)
        self.installing, self.installs, self.used = installing, installs, used

    def persistent_id(self, obj):
        if obj.__class__ in PLAIN:  # most of what a test passes: no question to ask
            return None
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
            return received.rebuild_parameter, (obj.detach(), obj.requires_grad, obj.grad)
        if obj.requires_grad:
            return received.rebuild_leaf, (obj.detach(), True)
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


def answer_callback(head: dict, body: bytes) -> bytes:
    """Run what the student's code asked of a test's object (a request of the student's side:
    call, public attribute, iteration, length, item), here; the answer, pickled."""
    torch = sys.modules.get("torch")
    try:
        decoder = values.Decoder(head, body, _proxy)
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
        mode = (
            torch.set_grad_enabled(bool(head.get("grad", torch.is_grad_enabled())))
            if torch
            else _nothing()
        )
        with mode:
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
    return data

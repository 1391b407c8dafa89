"""The student's objects as the tests' kernel holds them, and what it makes of their answers.

A function of the student's is a :class:`StudentFunction`, any other object a :class:`StudentObject`:
a number and a type's name. Calling one, or reading a public attribute, crosses to the student's
kernel over the current test cell's connection (:data:`current`); ``==``, truth, hashing, ``len``
and ``[]`` are the proxy's own, so an object that "equals anything" equals nothing here. An
exception the student's code raised is raised again with its built-in type (:func:`raised`),
marked as the submission's; a result that needs gradients gets a backward pass that crosses too
(:func:`remote_backward`). Runs in the tests' kernel.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import pickle

from bertlab_grader.crossing.values import MAX_DEPTH
from bertlab_grader.crossing.wire import WireError

#: The current test cell's connection (a ``tests_side.Channel``), set by the tests' side.
current: list = [None]


def _current():
    if current[0] is None:
        raise SubmissionError("a submission's object used outside the test cell that got it")
    return current[0]


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


@contextlib.contextmanager
def _nothing():
    yield


@contextlib.contextmanager
def _unreadable():
    """A WireError while reading an answer, as the test sees it: the submission's answer cannot be read."""
    try:
        yield
    except WireError as exc:
        raise SubmissionError(f"the submission's kernel sent what cannot be read: {exc}") from None


def _replace(value, swap: dict, depth: int = 0):
    if id(value) in swap:
        return swap[id(value)]
    if depth > MAX_DEPTH:
        return value
    if type(value) is list:
        return [_replace(v, swap, depth + 1) for v in value]
    if type(value) is tuple:
        return tuple(_replace(v, swap, depth + 1) for v in value)
    if type(value) is dict:
        return {k: _replace(v, swap, depth + 1) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=1)
def remote_backward():
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

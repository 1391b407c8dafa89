"""What the tests' kernel sends, made real in the student's kernel: its pickles read with their
references resolved, the test's own objects as :class:`TestsObject` (called back there), and the
test's state (its random generators, its schedulers' marks, its models' hooks) replayed here.

Also the student's side's tables: the student's objects the tests' kernel holds by number
(:func:`keep`), and the large objects it sent once, by token. The standard library, and torch
where the kernel has imported it. Runs in the student's kernel (:mod:`bertlab_grader.crossing.student_side`).
"""

from __future__ import annotations

import pickle

_handles: dict[int, object] = {}  # the student's objects the tests' kernel holds, by number


_cache: dict[str, object] = {}  # objects the tests sent once (a model, a tokenizer), by token


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


def set_state(state: dict, torch, numpy, random) -> None:
    """The test's random generators and grad mode, as they were when it called."""
    if torch is not None and state.get("torch") is not None:
        torch.set_rng_state(state["torch"])
    if state.get("random") is not None:
        random.setstate(state["random"])
    if numpy is not None and state.get("numpy") is not None:
        numpy.random.set_state(state["numpy"])


def changed_state(state: dict, torch, numpy, random) -> dict:
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


class Nothing:
    """A context that does nothing (grad mode, where torch is not imported)."""

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

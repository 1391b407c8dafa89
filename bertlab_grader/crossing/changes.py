"""What a call changed in its arguments, found in the student's kernel and written back into the
test's own objects in the tests' kernel.

A test passes its own objects to the student's function (by value: the student's kernel gets
copies), and may then check what the function did to them: that it left a tensor as it was, that a
training step moved a model's weights and cleared its gradients, that it stepped a scheduler, that
it set ids on a model's configuration, that it advanced a random generator. So after each call the
student's side lists what changed (:func:`snapshot` before, :func:`changed` after, as plain values
and tensors that :mod:`bertlab_grader.crossing.wire` encodes), and the tests' side writes those
changes into the objects it passed (:func:`write_back`), checking that every tensor it writes has
the shape and dtype of the one it replaces.

What is followed: tensors; ``torch.nn.Module`` (every parameter and buffer, their gradients and
``requires_grad``, each submodule's training mode, the plain-valued settings of its configurations:
``config``, ``generation_config`` and the configurations they hold); optimizers and learning-rate
schedulers (their ``state_dict``); ``torch.Generator`` (its state); and the lists and dicts that hold
them, three levels deep. Anything else a function changes in place stays changed in the student's
copy only.
"""

from __future__ import annotations

import sys

#: How deep into lists, tuples and dicts the arguments are followed.
DEPTH = 3
PLAIN = (str, int, float, bool, type(None))


def arguments(args, kwargs):
    """(path, object) for every argument and every item of the lists, tuples and dicts among them;
    a path is ``["a", index]`` or ``["k", name]``, then keys and indices."""
    found = []

    def visit(path, obj, depth):
        found.append((path, obj))
        if depth >= DEPTH:
            return
        if type(obj) in (list, tuple):
            for i, item in enumerate(obj):
                visit(path + [i], item, depth + 1)
        elif type(obj) is dict:
            for key, item in obj.items():
                if isinstance(key, (str, int)) and not isinstance(key, bool):
                    visit(path + [key], item, depth + 1)

    for i, arg in enumerate(args):
        visit(["a", i], arg, 0)
    for name, arg in kwargs.items():
        visit(["k", name], arg, 0)
    return found


def _plain(value, depth=0):
    """``value`` if it is JSON-plain (lists and dicts of plain values), else a marker."""
    if isinstance(value, PLAIN):
        return value
    if depth < 4 and type(value) in (list, tuple):
        return [_plain(v, depth + 1) for v in value]
    if depth < 4 and type(value) is dict and all(isinstance(k, str) for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    return _NOT_PLAIN


_NOT_PLAIN = object()


def configurations(module) -> list[tuple[list[str], object]]:
    """(path, configuration) for every ``config`` and ``generation_config`` of the module and its
    submodules, and the configurations they hold, each once: the path is the submodule's name, then
    attribute names."""
    found, seen = [], set()

    def visit(path, config, depth):
        if id(config) in seen or depth > 3:
            return
        seen.add(id(config))
        found.append((path, config))
        for key, value in list(vars(config).items()):
            if (
                hasattr(value, "to_dict")
                and hasattr(value, "__dict__")
                and not isinstance(value, type)
            ):
                visit(path + [key], value, depth + 1)

    for name, sub in module.named_modules():
        for attr in ("config", "generation_config"):
            config = getattr(sub, attr, None)
            if config is not None and hasattr(config, "to_dict") and hasattr(config, "__dict__"):
                visit([name, attr], config, 0)
    return found


def _settings(config) -> dict:
    return {
        k: v for k, v in ((k, _plain(v)) for k, v in vars(config).items()) if v is not _NOT_PLAIN
    }


def _tensors(module) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _stamp(tensor):
    return (
        None
        if tensor is None
        else (id(tensor), tensor._version, tensor.data_ptr(), tuple(tensor.shape))
    )


def kind(obj) -> str | None:
    """What of ``obj`` is followed: ``tensor``, ``module``, ``optimizer``, ``scheduler``,
    ``generator``, ``dict``, ``list`` or None."""
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(obj, torch.Tensor):
            return "tensor"
        if isinstance(obj, torch.nn.Module):
            return "module"
        if isinstance(obj, torch.optim.Optimizer):
            return "optimizer"
        if isinstance(obj, torch.optim.lr_scheduler.LRScheduler):
            return "scheduler"
        if isinstance(obj, torch.Generator):
            return "generator"
    if type(obj) is dict:
        return "dict"
    if type(obj) is list:
        return "list"
    return None


def snapshot(obj, what: str):
    """What :func:`changed` compares with, taken before the call."""
    if what == "tensor":
        return _stamp(obj)
    if what == "module":
        tensors = _tensors(obj)
        return {
            "tensors": {n: _stamp(t) for n, t in tensors.items()},
            "grads": {
                n: _stamp(t.grad)
                for n, t in tensors.items()
                if t.requires_grad or t.grad is not None
            },
            "requires_grad": {n: bool(t.requires_grad) for n, t in tensors.items()},
            "training": [m.training for m in obj.modules()],
            "configs": [(path, _settings(c)) for path, c in configurations(obj)],
        }
    if what in ("dict", "list"):
        items = obj.items() if what == "dict" else enumerate(obj)
        return [(k, id(v)) for k, v in items]
    return None  # optimizers, schedulers and generators come back whole


def changed(obj, what: str, before) -> dict | None:
    """What the call changed in ``obj`` (the student's copy), as plain values and tensors; None if
    nothing."""
    if what == "tensor":
        return {"what": "tensor", "value": obj} if _stamp(obj) != before else None
    if what == "module":
        return _module_changes(obj, before)
    if what == "optimizer":
        return {
            "what": "optimizer",
            "state": obj.state_dict(),
            "stepped": bool(getattr(obj, "_opt_called", False)),
        }
    if what == "scheduler":
        return {"what": "scheduler", "state": obj.state_dict()}
    if what == "generator":
        return {"what": "generator", "state": obj.get_state()}
    if what in ("dict", "list"):
        now = [(k, id(v)) for k, v in (obj.items() if what == "dict" else enumerate(obj))]
        if now == before:
            return None
        return {"what": what, "items": dict(obj) if what == "dict" else list(obj)}
    return None


def _module_changes(module, before) -> dict | None:
    tensors = _tensors(module)
    found = {
        "what": "module",
        "tensors": {n: t for n, t in tensors.items() if _stamp(t) != before["tensors"].get(n)},
        "grads": {
            n: t.grad
            for n, t in tensors.items()
            if (t.requires_grad or t.grad is not None) and _stamp(t.grad) != before["grads"].get(n)
        },
        "requires_grad": {
            n: bool(t.requires_grad)
            for n, t in tensors.items()
            if bool(t.requires_grad) != before["requires_grad"].get(n)
        },
        "training": [m.training for m in module.modules()],
        "configs": [],
    }
    if found["training"] == before["training"]:
        found["training"] = None
    old = {tuple(path): settings for path, settings in before["configs"]}
    for path, config in configurations(module):
        now, was = _settings(config), old.get(tuple(path), {})
        diff = {k: v for k, v in now.items() if k not in was or was[k] != v}
        if diff:
            found["configs"].append([path, diff])
    if not any(found[k] for k in ("tensors", "grads", "requires_grad", "training", "configs")):
        return None
    return found


# --- the tests' side ------------------------------------------------------------------------------


class WriteBackError(Exception):
    """A change the student's side reported cannot be written into the test's object."""


def locate(args, kwargs, path):
    """The object at ``path`` (:func:`arguments`) among the test's own arguments."""
    if not isinstance(path, list) or len(path) < 2 or path[0] not in ("a", "k"):
        raise WriteBackError("a malformed path")
    try:
        obj = args[path[1]] if path[0] == "a" else kwargs[path[1]]
        for key in path[2:]:
            if type(obj) not in (list, tuple, dict):
                raise WriteBackError("a path through something that is not a list or a dict")
            obj = obj[key]
    except (IndexError, KeyError, TypeError):
        raise WriteBackError("a path to no argument") from None
    return obj


def _copy_into(target, value, what: str) -> None:
    import torch

    if not isinstance(value, torch.Tensor):
        raise WriteBackError(f"{what}: not a tensor")
    if tuple(value.shape) != tuple(target.shape) or value.dtype != target.dtype:
        raise WriteBackError(
            f"{what} was changed into a tensor of shape {tuple(value.shape)} and dtype {value.dtype}, "
            f"from {tuple(target.shape)} and {target.dtype}: change an argument's values only"
        )
    with torch.no_grad():
        target.copy_(value)


def write_back(target, change: dict) -> None:
    """Write one :func:`changed` record (decoded) into the test's object ``target``."""
    import torch

    what = change.get("what")
    if what != kind(target):
        raise WriteBackError(f"a change to a {what} reported for a {kind(target)}")
    if what == "tensor":
        _copy_into(target, change.get("value"), "an argument")
    elif what == "module":
        _write_module(target, change)
    elif what in ("optimizer", "scheduler"):
        try:
            target.load_state_dict(change.get("state"))
        except (KeyError, ValueError, TypeError, RuntimeError, AttributeError) as exc:
            raise WriteBackError(
                f"the {what}'s state cannot be read back ({type(exc).__name__})"
            ) from None
    elif what == "generator":
        state = change.get("state")
        if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8:
            raise WriteBackError("a generator's state that is not a byte tensor")
        try:
            target.set_state(state)
        except RuntimeError as exc:
            raise WriteBackError(f"a generator's state that cannot be set ({exc})") from None
    elif what == "dict":
        items = change.get("items")
        if not isinstance(items, dict):
            raise WriteBackError("a dict's items that are not a dict")
        target.clear()
        target.update(items)
    elif what == "list":
        items = change.get("items")
        if not isinstance(items, list):
            raise WriteBackError("a list's items that are not a list")
        target[:] = items


def _write_module(module, change: dict) -> None:
    tensors = _tensors(module)
    for name, value in (change.get("tensors") or {}).items():
        if name not in tensors:
            raise WriteBackError(f"a change to {name}, which the model does not have")
        _copy_into(tensors[name], value, name)
    for name, flag in (change.get("requires_grad") or {}).items():
        if name in tensors and tensors[name].is_leaf and isinstance(flag, bool):
            tensors[name].requires_grad_(flag)
    for name, grad in (change.get("grads") or {}).items():
        if name not in tensors:
            raise WriteBackError(f"a gradient of {name}, which the model does not have")
        if grad is not None and tuple(grad.shape) != tuple(tensors[name].shape):
            raise WriteBackError(f"a gradient of {name} of the wrong shape")
        tensors[name].grad = None if grad is None else grad.to(tensors[name].dtype)
    training = change.get("training")
    if training is not None:
        modules = list(module.modules())
        if not isinstance(training, list) or len(training) != len(modules):
            raise WriteBackError("training modes of another model")
        for sub, flag in zip(modules, training):
            sub.training = bool(flag)
    found = {tuple(path): config for path, config in configurations(module)}
    for path, settings in change.get("configs") or []:
        config = found.get(tuple(path)) if isinstance(path, list) else None
        if config is None or not isinstance(settings, dict):
            raise WriteBackError("a change to a configuration the model does not have")
        for key, value in settings.items():
            if isinstance(key, str) and not key.startswith("__"):
                setattr(config, key, value)

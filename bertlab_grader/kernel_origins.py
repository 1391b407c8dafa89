"""Where the objects a test relies on come from, read inside the student's kernel: part of the
guard (:mod:`bertlab_grader.kernel_guard`).

- The *oracles*, the library functions tests take their expected values from
  (``GuardedExecute.oracles``): each must stay defined where its library defines it
  (:func:`oracle_origins` in the kernel against :func:`library_origins` in the grader).
- Tensor and array types that answer comparisons themselves (:func:`lying_types`).
- A graded function that is not the student's own but an object of the course's package
  (:func:`answer_key_objects`, for the packages ``GuardedExecute.answer_key_packages`` names).

Like the guard, it runs inside the student's kernel, so it imports the standard library only.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys

from bertlab_grader import kernel_hooks

# The library code tests take their expected values from is the course's to name: a list of
# "module:attribute.path" strings, ``GuardedExecute.oracles`` in ``autograder/nbgrader_config.py``
# (transformers' BERT modules, say). Pointing one of these at the student's own code makes every
# comparison with it pass. Their modules are often imported late (by the notebook or by a test),
# so they are not compared with the fresh kernel: whenever its module is imported, each must
# still be the library's own function, judged by where it is defined (module and qualified name,
# through ``functools.wraps`` wrappers) against the same lookup in the grader's own process.

# A tensor or array type can answer ``torch.equal(mine, expected)`` itself (``__torch_function__``)
# or lie about its values (``__eq__``, ``tolist``): the tests' comparisons would then check
# nothing. The libraries' own subclasses (``torch.nn.Parameter``, ``numpy.matrix``) are fine; a
# subclass defined anywhere else that overrides one of these is a lying answer.
LYING_HOOKS = {
    "torch:Tensor": {
        "__torch_function__",
        "__torch_dispatch__",
        "__eq__",
        "__ne__",
        "__bool__",
        "__len__",
        "__iter__",
        "__getitem__",
        "__getattribute__",
        "__getattr__",
        "__array__",
        "equal",
        "allclose",
        "isclose",
        "tolist",
        "item",
        "all",
        "any",
        "eq",
        "ne",
        "sum",
        "numel",
        "size",
        "dtype",
        "shape",
    },
    "numpy:ndarray": {
        "__array_function__",
        "__array_ufunc__",
        "__array_finalize__",
        "__eq__",
        "__ne__",
        "__bool__",
        "__len__",
        "__iter__",
        "__getitem__",
        "__getattribute__",
        "tolist",
        "item",
        "all",
        "any",
        "sum",
    },
}


def origin(obj) -> str:
    """Where a function is defined, ``module.qualname``, seen through ``functools.wraps`` layers."""
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # a wrapper loop
        pass
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', None)}"


def oracle_origins(oracles, import_missing: bool = False) -> dict[str, str | None]:
    """:func:`origin` of every oracle (``"module:attribute.path"``); None where its module is not
    imported.

    In the kernel nothing is imported (``import_missing=False``), and the first attribute is read
    from the module's own ``__dict__``, so that transformers' lazy top-level module imports
    nothing either: a name it has not handed out yet cannot have been replaced."""
    found = {}
    for spec in oracles:
        module, path = spec.split(":")
        try:
            obj = importlib.import_module(module) if import_missing else sys.modules.get(module)
            first, *rest = path.split(".")
            obj = (
                getattr(obj, first)
                if import_missing
                else vars(obj).get(first)
                if obj is not None
                else None
            )
            for part in rest if obj is not None else ():
                obj = getattr(obj, part)
        except Exception:  # not installed, or not in this version of the library
            obj = None
        found[f"{module}.{path}"] = None if obj is None else origin(obj)
    return found


_LIBRARY: dict = {}  # oracles -> library_origins(), in the grader's process


def library_origins(oracles, told: dict | None = None) -> dict[str, str | None]:
    """:func:`oracle_origins` as the libraries define them, read once per grader process: as a
    warm-kernel zygote read them before any kernel ran (``told``, bertlab_grader.warm), else by
    importing the libraries here."""
    key = tuple(oracles)
    if key not in _LIBRARY:
        _LIBRARY[key] = told if told else oracle_origins(key, import_missing=True)
    return _LIBRARY[key]


def _installed_class(cls) -> bool:
    """True for a class an installed package defines (scipy's ``MatlabObject``, say), not the
    notebook: its module's file lies in the Python environment (the read-only folders the
    sandbox mounts: :func:`bertlab_grader.kernel_hooks.installed_file`), and the class really is
    that module's attribute (a class cannot pass by writing a library's name into its ``__module__``)."""
    module = sys.modules.get(str(getattr(cls, "__module__", "")))
    file = getattr(module, "__file__", None)
    if not file or not kernel_hooks.installed_file(file):
        return (
            False  # __main__ of a kernel, a module made at run time, or one outside the environment
        )
    obj = module
    for part in str(getattr(cls, "__qualname__", "")).split("."):
        obj = getattr(obj, part, None)
    return obj is cls


def lying_types() -> list[str]:
    """Subclasses of ``torch.Tensor`` and ``numpy.ndarray`` from outside their library and every
    installed package that override a comparison or dispatch hook (:data:`LYING_HOOKS`), as
    ``module.qualname``: a type the notebook defined."""
    found = []
    for spec, hooks in LYING_HOOKS.items():
        module, name = spec.split(":")
        base = getattr(sys.modules.get(module), name, None)
        if not isinstance(base, type):
            continue
        seen, stack = set(), [base]
        while stack:  # type.__subclasses__: a class can't hide by overriding its own
            for cls in type.__subclasses__(stack.pop()):
                if cls in seen:
                    continue
                seen.add(cls)
                stack.append(cls)
                home = str(getattr(cls, "__module__", "")).split(".")[0]
                if (
                    home != module
                    and hooks & set(type.__dict__["__dict__"].__get__(cls))
                    and not _installed_class(cls)
                ):
                    found.append(f"{cls.__module__}.{cls.__qualname__}")
    return sorted(found)


def answer_key_objects(namespace: dict, names: list[str], packages: list[str]) -> str:
    """The graded functions (``names``) that the notebook bound to an object of one of
    ``packages`` (the course's own package, say, which ships the chapters' code), as JSON:
    ``["top_k is bertlab.retrieval.top_k", ...]``. Runs inside the kernel, on its namespace.

    The object is seen through ``functools.partial`` and ``functools.wraps`` layers; a class or
    an instance counts by its class."""
    import functools

    found = []
    for name in names:
        if name not in namespace:
            continue
        obj = namespace[name]
        for _ in range(10):  # partial(partial(f)) ...
            if isinstance(obj, functools.partial):
                obj = obj.func
        try:
            obj = inspect.unwrap(obj)
        except Exception:  # a wrapper loop
            pass
        kind = obj if isinstance(obj, type) or inspect.isroutine(obj) else type(obj)
        module = str(getattr(kind, "__module__", "") or "")
        if module.split(".")[0] in packages:
            found.append(f"{name} is {module}.{getattr(kind, '__qualname__', '?')}")
    return json.dumps(found)


def answer_key_probe(names: list[str], packages: list[str]) -> str:
    """The ``user_expressions`` source that runs :func:`answer_key_objects` on the kernel's namespace."""
    return (
        f"__import__({__name__!r}, fromlist=['answer_key_objects'])"
        f".answer_key_objects(globals(), {sorted(names)!r}, {sorted(packages)!r})"
    )

"""The autograder's guard: a test cell counts only if the kernel that ran it was not rigged.

nbgrader scores a test cell by its outputs alone: no error output means full marks
(``nbgrader.utils.determine_grade``). Student code runs in the same kernel as the tests, so a
submission can make every later test cell pass without passing anything: an IPython input
transformer that blanks each cell, an AST transformer that turns ``assert`` into ``pass``, a
trace function, or ``torch.equal = lambda *a: True``. nbgrader restores the *source* of test
cells from its gradebook, but not the kernel they run in.

:class:`bertlab_grader.guarded_execute.GuardedExecute` is nbgrader's ``Execute`` preprocessor plus this check. Before the
first cell of a notebook runs, it records a fingerprint of the fresh kernel
(:func:`kernel_state`); before and after every test cell it takes the fingerprint again. If
anything differs, the test cell gets an error output that names what changed, so it scores
zero, and the feedback tells the student why. The fingerprint is read through the kernel
protocol's ``user_expressions``, which IPython evaluates with a plain ``eval``: no input or AST
transformer touches it, and it leaves no trace in the notebook or its history.

What it covers: IPython's input and AST transformers, custom exception handlers, replaced
IPython methods (``run_cell``, ``showtraceback``, ...), trace and profile functions, the
builtins, ``math``, ``torch`` and ``numpy`` functions that tests compare with, the library code
tests take their expected values from (the *oracles* the course names in
``GuardedExecute.oracles``: transformers' BERT modules, pipelines and collator, torch's
functional ops), which must stay defined where the library defines it,
and tensor types that answer comparisons themselves (:data:`LYING_HOOKS`); and a graded function
that is not the student's own but an object of the course's package, which ships the chapters'
code (:func:`answer_key_objects`, for the packages ``GuardedExecute.answer_key_packages`` names).
What the kernel can do to files is the sandbox's job (:mod:`bertlab_grader.sandbox.manager`,
which starts its kernels).
What it cannot cover: code in the same process can always fool a check in that process if it
is written against this one; the guard stops the generic tricks, and ``tests/grader/test_hostile.py``
keeps a list of them. Comparisons a test makes against values the student returns are the
tests' own job (``type(x) is list``, not ``x == expected``, for an object whose ``__eq__``
always says yes).

This module runs inside the student's kernel (the probe imports it there), so it imports the
standard library only. Configured in ``autograder/nbgrader_config.py``; explained for
instructors in ``docs/instructors.md``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys

from bertlab_grader import kernel_hooks


# IPython methods that decide what code runs and whether its errors are shown.
SHELL_METHODS = (
    "run_cell", "run_cell_async", "_run_cell", "run_code", "run_ast_nodes", "transform_cell",
    "transform_ast", "showtraceback", "_showtraceback", "showsyntaxerror", "get_exception_only",
    "user_expressions", "ev", "ex", "run_cell_magic", "run_line_magic", "should_run_async", "safe_run_module",
    "object_inspect", "init_user_ns", "push", "ask_exit", "system", "getoutput",
)

# Functions a test compares or checks with: "module:attribute.path". Only these: libraries wrap
# others on import (torch._dynamo replaces torch.manual_seed), which is no sign of rigging.
WATCHED = (
    *(f"builtins:{n}" for n in (
        "isinstance issubclass len sum all any abs round sorted min max list dict set tuple int "
        "float str bool range zip enumerate type repr getattr hasattr iter next map filter print "
        "callable exec eval compile __import__ __build_class__ AssertionError"
    ).split()),
    "math:isclose", "math:isfinite", "math:isnan", "math:fabs",
    *(f"torch:{n}" for n in (
        "equal allclose isclose all any eq ne abs sum mean max min isfinite isnan is_tensor "
        "as_tensor tensor testing.assert_close"
    ).split()),
    *(f"torch:Tensor.{n}" for n in (
        "equal allclose isclose tolist item all any __eq__ __ne__ __bool__ __len__ __iter__ "
        "__getitem__ sum mean abs max min float long eq ne size numel shape dtype"
    ).split()),
    *(f"numpy:{n}" for n in (
        "allclose isclose array_equal all any testing.assert_allclose testing.assert_array_equal"
    ).split()),
)

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
    "torch:Tensor": {"__torch_function__", "__torch_dispatch__", "__eq__", "__ne__", "__bool__", "__len__",
                     "__iter__", "__getitem__", "__getattribute__", "__getattr__", "__array__", "equal",
                     "allclose", "isclose", "tolist", "item", "all", "any", "eq", "ne", "sum", "numel",
                     "size", "dtype", "shape"},
    "numpy:ndarray": {"__array_function__", "__array_ufunc__", "__array_finalize__", "__eq__", "__ne__",
                      "__bool__", "__len__", "__iter__", "__getitem__", "__getattribute__", "tolist", "item",
                      "all", "any", "sum"},
}


def state_probe(oracles: list[str] | tuple[str, ...] = ()) -> str:
    """The ``user_expressions`` source that runs :func:`kernel_state` in the kernel, the oracles
    written into it. It returns one JSON string (a plain repr of a dict could be cut short by
    IPython's pretty printer)."""
    return f"__import__({__name__!r}, fromlist=['kernel_state']).kernel_state({list(oracles)!r})"


def _name(obj) -> str:
    """A stable, readable name for a transformer or handler: module.qualname."""
    kind = obj if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__") else type(obj)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"


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
            obj = getattr(obj, first) if import_missing else vars(obj).get(first) if obj is not None else None
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
        return False  # __main__ of a kernel, a module made at run time, or one outside the environment
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
                if home != module and hooks & set(type.__dict__["__dict__"].__get__(cls)) \
                        and not _installed_class(cls):
                    found.append(f"{cls.__module__}.{cls.__qualname__}")
    return sorted(found)


def kernel_state(oracles=()) -> str:
    """The fingerprint of the running IPython kernel, as JSON (runs inside the kernel); where each
    of ``oracles`` is defined, for those whose module is imported."""
    from IPython import get_ipython

    ip = get_ipython()  # None outside IPython (the unit tests): then only functions are watched
    state = {
        "trace function": _name(sys.gettrace()) if sys.gettrace() else None,
        "profile function": _name(sys.getprofile()) if sys.getprofile() else None,
        "functions": {},
        "oracles": oracle_origins(oracles),
        "lying types": lying_types(),
        **kernel_hooks.python_hooks(),
    }
    if ip is not None:
        state.update(kernel_hooks.ipython_hooks(ip))
        state.update({
            "input_transformers_cleanup": [_name(f) for f in ip.input_transformers_cleanup],
            "input_transformers_post": [_name(f) for f in ip.input_transformers_post],
            "ast_transformers": [_name(f) for f in ip.ast_transformers],
            "custom_exceptions": [_name(e) for e in ip.custom_exceptions],
            "replaced shell methods": sorted(m for m in SHELL_METHODS if m in vars(ip)),
            "shell methods": {m: id(getattr(type(ip), m, None)) for m in SHELL_METHODS},
        })
    for spec in WATCHED:
        module, path = spec.split(":")
        try:
            obj = importlib.import_module(module)
            for part in path.split("."):
                obj = getattr(obj, part)
        except Exception:  # a module that is not installed is simply not watched
            obj = None
        state["functions"][f"{module}.{path}"] = None if obj is None else id(obj)
    return json.dumps(state)


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
    return (f"__import__({__name__!r}, fromlist=['answer_key_objects'])"
            f".answer_key_objects(globals(), {sorted(names)!r}, {sorted(packages)!r})")


#: The fingerprint's hook entries (:mod:`bertlab_grader.kernel_hooks`): any change is rigging.
HOOK_KEYS = ("sys hooks", "thread trace and profile", "import hooks", "path importer cache", "monitoring tools",
             "gc callbacks",
             "signal handlers", "interval timers", "audit hooks refused", "event callbacks", "events",
             "display formatters", "display", "prefilters", "input transformer manager", "IPython hooks")


def _what_changed(before, after) -> str:
    """A short note of what was added to a hook (a dict or list of names), for the feedback."""
    def flat(value):
        if isinstance(value, dict):
            return {f"{k}: {x}" for k, v in value.items() for x in (v if isinstance(v, list) else [v])}
        return set(map(str, value)) if isinstance(value, list) else {str(value)}

    added = sorted(flat(after) - flat(before))[:3]
    return f" (now {'; '.join(added)})" if added else ""


def differences(baseline: dict, now: dict, library: dict | None = None) -> list[str]:
    """What changed between two fingerprints, in words; [] if nothing did.

    ``library`` is :func:`library_origins`: an oracle whose module the
    kernel has imported must be defined where the library defines it."""
    found = []
    for key in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers", "custom_exceptions"):
        added = [n for n in now.get(key, []) if n not in baseline.get(key, [])]
        if now.get(key) != baseline.get(key):
            found.append(f"{key.replace('_', ' ')} changed" + (f" (added {', '.join(added)})" if added else ""))
    if now.get("replaced shell methods") != baseline.get("replaced shell methods"):
        found.append(f"IPython shell methods replaced: {', '.join(now.get('replaced shell methods', []))}")
    changed = [m for m, i in baseline.get("shell methods", {}).items() if now.get("shell methods", {}).get(m) != i]
    if changed:
        found.append(f"IPython shell methods changed: {', '.join(changed)}")
    for key in ("trace function", "profile function"):
        if now.get(key) != baseline.get(key):
            found.append(f"{key} set to {now.get(key)}")
    replaced = [n for n, i in baseline.get("functions", {}).items() if i is not None and now.get("functions", {}).get(n) != i]
    if replaced:
        found.append(f"replaced: {', '.join(replaced)}")
    foreign = [f"{n} (now {o})" for n, o in now.get("oracles", {}).items()
               if o is not None and (library or {}).get(n) not in (None, o)]
    if foreign:
        found.append(f"library functions the tests compare with were replaced: {', '.join(foreign)}")
    hooks = [k for k in HOOK_KEYS if k in baseline and now.get(k) != baseline.get(k)]
    for key in hooks:
        found.append(f"{key} changed{_what_changed(baseline.get(key), now.get(key))}")
    if now.get("lying types"):
        found.append(f"tensor or array types that decide their own comparisons: {', '.join(now['lying types'])}")
    return found

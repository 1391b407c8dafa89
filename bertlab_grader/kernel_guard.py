"""The autograder's guard: a test cell counts only if the kernel that ran it was not rigged.

nbgrader scores a test cell by its outputs alone: no error output means full marks
(``nbgrader.utils.determine_grade``). Student code runs in the same kernel as the tests, so a
submission can make every later test cell pass without passing anything: an IPython input
transformer that blanks each cell, an AST transformer that turns ``assert`` into ``pass``, a
trace function, or ``torch.equal = lambda *a: True``. nbgrader restores the *source* of test
cells from its gradebook, but not the kernel they run in.

:class:`bertlab_grader.guarded_execute.GuardedExecute` is nbgrader's ``Execute`` preprocessor plus
this check. Before the first cell of a notebook runs, it records a fingerprint of the fresh kernel
(:func:`kernel_state`); before and after every test cell it takes the fingerprint again. If anything
differs, the test cell gets an error output that names what changed, so it scores zero, and the
feedback tells the student why. The fingerprint is read through the kernel protocol's
``user_expressions``, which IPython evaluates with a plain ``eval``: no input or AST transformer
touches it, and it leaves no trace in the notebook or its history.

What it covers: IPython's input and AST transformers, custom exception handlers, replaced
IPython methods (``run_cell``, ``showtraceback``, ...), trace and profile functions, the
builtins, ``math``, ``torch`` and ``numpy`` functions that tests compare with, the library code
tests take their expected values from (the *oracles* the course names in
``GuardedExecute.oracles``: transformers' BERT modules, pipelines and collator, torch's
functional ops), which must stay defined where the library defines it,
and tensor types that answer comparisons themselves; and a graded function that is not the
student's own but an object of the course's package, which ships the chapters' code (where each
comes from is read by :mod:`bertlab_grader.kernel_origins`).
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
import json
import sys

from bertlab_grader import kernel_hooks
from bertlab_grader.kernel_origins import lying_types, oracle_origins


# IPython methods that decide what code runs and whether its errors are shown.
SHELL_METHODS = (
    "run_cell",
    "run_cell_async",
    "_run_cell",
    "run_code",
    "run_ast_nodes",
    "transform_cell",
    "transform_ast",
    "showtraceback",
    "_showtraceback",
    "showsyntaxerror",
    "get_exception_only",
    "user_expressions",
    "ev",
    "ex",
    "run_cell_magic",
    "run_line_magic",
    "should_run_async",
    "safe_run_module",
    "object_inspect",
    "init_user_ns",
    "push",
    "ask_exit",
    "system",
    "getoutput",
)

# Functions a test compares or checks with: "module:attribute.path". Only these: libraries wrap
# others on import (torch._dynamo replaces torch.manual_seed), which is no sign of rigging.
WATCHED = (
    *(
        f"builtins:{n}"
        for n in (
            "isinstance issubclass len sum all any abs round sorted min max list dict set tuple int "
            "float str bool range zip enumerate type repr getattr hasattr iter next map filter print "
            "callable exec eval compile __import__ __build_class__ AssertionError"
        ).split()
    ),
    "math:isclose",
    "math:isfinite",
    "math:isnan",
    "math:fabs",
    *(
        f"torch:{n}"
        for n in (
            "equal allclose isclose all any eq ne abs sum mean max min isfinite isnan is_tensor "
            "as_tensor tensor testing.assert_close"
        ).split()
    ),
    *(
        f"torch:Tensor.{n}"
        for n in (
            "equal allclose isclose tolist item all any __eq__ __ne__ __bool__ __len__ __iter__ "
            "__getitem__ sum mean abs max min float long eq ne size numel shape dtype"
        ).split()
    ),
    *(
        f"numpy:{n}"
        for n in (
            "allclose isclose array_equal all any testing.assert_allclose testing.assert_array_equal"
        ).split()
    ),
)


def state_probe(oracles: list[str] | tuple[str, ...] = ()) -> str:
    """The ``user_expressions`` source that runs :func:`kernel_state` in the kernel, the oracles
    written into it. It returns one JSON string (a plain repr of a dict could be cut short by
    IPython's pretty printer)."""
    return f"__import__({__name__!r}, fromlist=['kernel_state']).kernel_state({list(oracles)!r})"


def _name(obj) -> str:
    """A stable, readable name for a transformer or handler: module.qualname."""
    kind = (
        obj
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__")
        else type(obj)
    )
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"


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
        state.update(
            {
                "input_transformers_cleanup": [_name(f) for f in ip.input_transformers_cleanup],
                "input_transformers_post": [_name(f) for f in ip.input_transformers_post],
                "ast_transformers": [_name(f) for f in ip.ast_transformers],
                "custom_exceptions": [_name(e) for e in ip.custom_exceptions],
                "replaced shell methods": sorted(m for m in SHELL_METHODS if m in vars(ip)),
                "shell methods": {m: id(getattr(type(ip), m, None)) for m in SHELL_METHODS},
            }
        )
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


#: The fingerprint's hook entries (:mod:`bertlab_grader.kernel_hooks`): any change is rigging.
HOOK_KEYS = (
    "sys hooks",
    "thread trace and profile",
    "import hooks",
    "path importer cache",
    "monitoring tools",
    "gc callbacks",
    "signal handlers",
    "interval timers",
    "audit hooks refused",
    "event callbacks",
    "events",
    "display formatters",
    "display",
    "prefilters",
    "input transformer manager",
    "IPython hooks",
)


def _what_changed(before, after) -> str:
    """A short note of what was added to a hook (a dict or list of names), for the feedback."""

    def flat(value):
        if isinstance(value, dict):
            return {
                f"{k}: {x}" for k, v in value.items() for x in (v if isinstance(v, list) else [v])
            }
        return set(map(str, value)) if isinstance(value, list) else {str(value)}

    added = sorted(flat(after) - flat(before))[:3]
    return f" (now {'; '.join(added)})" if added else ""


def differences(baseline: dict, now: dict, library: dict | None = None) -> list[str]:
    """What changed between two fingerprints, in words; [] if nothing did.

    ``library`` is :func:`bertlab_grader.kernel_origins.library_origins`: an oracle whose module the
    kernel has imported must be defined where the library defines it."""
    found = []
    for key in (
        "input_transformers_cleanup",
        "input_transformers_post",
        "ast_transformers",
        "custom_exceptions",
    ):
        added = [n for n in now.get(key, []) if n not in baseline.get(key, [])]
        if now.get(key) != baseline.get(key):
            found.append(
                f"{key.replace('_', ' ')} changed"
                + (f" (added {', '.join(added)})" if added else "")
            )
    if now.get("replaced shell methods") != baseline.get("replaced shell methods"):
        found.append(
            f"IPython shell methods replaced: {', '.join(now.get('replaced shell methods', []))}"
        )
    changed = [
        m
        for m, i in baseline.get("shell methods", {}).items()
        if now.get("shell methods", {}).get(m) != i
    ]
    if changed:
        found.append(f"IPython shell methods changed: {', '.join(changed)}")
    for key in ("trace function", "profile function"):
        if now.get(key) != baseline.get(key):
            found.append(f"{key} set to {now.get(key)}")
    replaced = [
        n
        for n, i in baseline.get("functions", {}).items()
        if i is not None and now.get("functions", {}).get(n) != i
    ]
    if replaced:
        found.append(f"replaced: {', '.join(replaced)}")
    foreign = [
        f"{n} (now {o})"
        for n, o in now.get("oracles", {}).items()
        if o is not None and (library or {}).get(n) not in (None, o)
    ]
    if foreign:
        found.append(
            f"library functions the tests compare with were replaced: {', '.join(foreign)}"
        )
    hooks = [k for k in HOOK_KEYS if k in baseline and now.get(k) != baseline.get(k)]
    for key in hooks:
        found.append(f"{key} changed{_what_changed(baseline.get(key), now.get(key))}")
    if now.get("lying types"):
        found.append(
            f"tensor or array types that decide their own comparisons: {', '.join(now['lying types'])}"
        )
    return found

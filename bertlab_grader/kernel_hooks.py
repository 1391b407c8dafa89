"""Every hook through which code can run between cells, or change what a test cell does.

Part of the kernel's fingerprint (:func:`bertlab_grader.kernel_guard.kernel_state`): a
submission that registers an IPython event callback (``post_run_cell`` re-running reference
code after every cell), a display formatter, an IPython hook or prefilter, ``sys.excepthook``,
``sys.displayhook``, an import hook (``sys.meta_path``, ``sys.path_hooks``), a ``gc``
callback, a signal handler or interval timer, or a thread trace function changes the
fingerprint, and every test cell after it scores 0. Libraries register some of these when a
notebook uses them (matplotlib's figure formatters and ``post_execute`` flush): only what can
run the notebook's own code counts (:func:`from_notebook`), and a function counts as a library's
only if its code is the code of the file it names (:func:`genuine_code`: a function compiled
with an installed file's name is the notebook's). ``atexit`` functions run after the
last test, so they change no score (and libraries add them on import). ``sys.addaudithook``
cannot be listed, so the first fingerprint installs an audit hook that refuses every later one
(CPython then drops the new hook: :func:`refuse_audit_hooks`), and counts the attempts.

Runs inside the student's kernel: the standard library only.
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
import threading
import types

EVENTS = ("pre_execute", "pre_run_cell", "post_execute", "post_run_cell", "shell_initialized")

# Signals whose handler could run code in the middle of a test (SIGINT is ipykernel's own).
SIGNALS = tuple(
    getattr(signal, n)
    for n in (
        "SIGALRM",
        "SIGVTALRM",
        "SIGPROF",
        "SIGUSR1",
        "SIGUSR2",
        "SIGIO",
        "SIGPOLL",
        "SIGWINCH",
        "SIGHUP",
        "SIGTERM",
    )
    if hasattr(signal, n)
)

_attempts = [0]  # audit hooks a notebook tried to add, refused


def _name(obj) -> str:
    """module.qualname of a function, or of an object's class."""
    kind = (
        obj
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__")
        else type(obj)
    )
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"


def _object(obj) -> str:
    """An object that must stay the very same one: its class and identity."""
    return f"{_name(obj)}@{id(obj)}"


_roots: list[str] = []  # the environment's folders, read once (by the first fingerprint)


def installed_roots() -> list[str]:
    """The Python environment's folders: its prefixes and the site-packages folders on
    ``sys.path`` (one a ``.pth`` file added too), as they were at the first fingerprint, before
    any cell could add a folder of its own."""
    if not _roots:
        found = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        found |= {p for p in sys.path if os.path.basename(p) in {"site-packages", "dist-packages"}}
        _roots.extend(sorted(os.path.realpath(p) for p in found))
    return _roots


def installed_file(filename: str) -> bool:
    """Whether a code object's (or a module's) file lies in the Python environment, not in the
    notebook's cells or a folder the notebook wrote."""
    if filename.startswith("<frozen "):  # the interpreter's own modules (importlib)
        return True
    if not filename or filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    return any(real.startswith(p + os.sep) for p in installed_roots())


_compiled: dict[str, set] = {}  # an installed file -> every code object compiled from its source


def _codes_in(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in its constants."""
    found, stack = [], [code]
    while stack:
        code = stack.pop()
        found.append(code)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return found


def _frozen_codes(name: str) -> set:
    """The code objects of a frozen module's functions and methods (it has no source file)."""
    module = sys.modules.get(name)
    codes: set = set()
    for value in vars(module).values() if module is not None else ():
        members = vars(value).values() if isinstance(value, type) else [value]
        for member in members:
            member = getattr(member, "__func__", member)
            if isinstance(member, types.FunctionType):
                codes.update(_codes_in(member.__code__))
    return codes


def genuine_code(code: types.CodeType) -> bool:
    """Whether ``code`` is what its file holds: equal to a code object compiled from the installed
    file it names (or found in the frozen module it names), not code the notebook compiled under
    that name (``compile(source, "<site-packages>/x.py", "exec")``). Each file is compiled once."""
    filename = code.co_filename
    if filename not in _compiled:
        if filename.startswith("<frozen ") and filename.endswith(">"):
            _compiled[filename] = _frozen_codes(filename[len("<frozen ") : -1])
        else:
            try:
                with open(filename, "rb") as f:
                    _compiled[filename] = set(
                        _codes_in(compile(f.read(), filename, "exec", dont_inherit=True))
                    )
            except (OSError, SyntaxError, ValueError):
                _compiled[filename] = set()
    return code in _compiled[filename]


def _bound_by_hand(method: types.MethodType) -> bool:
    """Whether a bound method was made by ``types.MethodType(f, obj)`` rather than looked up on its
    object's class: ``MethodType(exec, source)`` runs ``source`` when called with no argument."""
    owner = method.__self__ if isinstance(method.__self__, type) else type(method.__self__)
    for cls in (
        *owner.__mro__,
        *(type(owner).__mro__ if isinstance(method.__self__, type) else ()),
    ):
        if any(getattr(v, "__func__", v) is method.__func__ for v in vars(cls).values()):
            return False
    return True


def from_notebook(obj, depth: int = 0, printer: bool = False) -> bool:
    """Whether calling ``obj`` can run the notebook's own code: a function defined in a cell, a
    builtin bound to arguments (``partial(exec, source)``), or an installed function that holds
    one (in its closure, defaults or partial arguments), any callable bound to arguments
    (``partial(get_ipython().ex, source)``), a method bound by hand, or a function whose code is not
    its file's. matplotlib's and IPython's own callbacks and figure formatters are not; libraries
    register them when a notebook plots. A display formatter's ``printer`` may be an installed
    module function bound to arguments (matplotlib's ``partial(print_figure, fmt="png")``): it runs
    only when a cell's last value is shown, after that cell's asserts."""
    if depth > 4:
        return True
    if isinstance(obj, functools.partial):
        parts = [*obj.args, *obj.keywords.values()]
        library_printer = printer and isinstance(obj.func, types.FunctionType)
        if parts and not library_printer:  # what it runs is data the notebook chose
            return True
        return from_notebook(obj.func, depth + 1) or any(
            callable(p) and from_notebook(p, depth + 1) for p in parts
        )
    if isinstance(obj, types.MethodType):
        owner = obj.__self__ if isinstance(obj.__self__, type) else type(obj.__self__)
        return (
            _bound_by_hand(obj)
            or from_notebook(obj.__func__, depth + 1)
            or from_notebook(owner, depth + 1)
        )
    if isinstance(obj, types.FunctionType):
        if not installed_file(obj.__code__.co_filename) or not genuine_code(obj.__code__):
            return True
        held = [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
        held += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        held += [getattr(obj, "__wrapped__", None)]
        for item in list(held):  # what a library's wrapper keeps in a dict or list (singledispatch)
            if isinstance(item, dict):
                held += list(item.values())
            elif isinstance(item, (list, tuple, set, frozenset)):
                held += list(item)
        return any(
            callable(h) and not isinstance(h, type) and from_notebook(h, depth + 1) for h in held
        )
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return False
    wrapped = getattr(obj, "__wrapped__", None) if not isinstance(obj, type) else None
    if wrapped is not None and from_notebook(wrapped, depth + 1):  # functools.lru_cache(f)
        return True
    kind = obj if isinstance(obj, type) else type(obj)
    module = sys.modules.get(getattr(kind, "__module__", ""), None)
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    if module is not None and origin in {"built-in", "frozen"}:
        return False
    return not installed_file(getattr(module, "__file__", "") or "")


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _notebooks(entries, printers: bool = False) -> list[str]:
    """The names of the callables among ``entries`` (display formatters' ``printers``) that can run
    the notebook's own code."""
    return sorted(_name(f) for f in entries if from_notebook(f, printer=printers))


def _monitoring() -> list[str]:
    """The tools registered with ``sys.monitoring`` (Python 3.12+), which can run code on every
    line, call or return of a test cell."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return []
    return [
        f"{tool}={monitoring.get_tool(tool)}"
        for tool in range(6)
        if monitoring.get_tool(tool) is not None
    ]


def refuse_audit_hooks() -> int:
    """Install, once, an audit hook that refuses every later ``sys.addaudithook`` (CPython drops a
    hook when an existing one raises a RuntimeError for its ``sys.addaudithook`` event); return how
    many were refused."""
    if not getattr(refuse_audit_hooks, "installed", False):

        def refuse(event, _args, attempts=_attempts):
            if event == "sys.addaudithook":
                attempts[0] += 1
                raise RuntimeError("the grader refuses audit hooks")

        sys.addaudithook(refuse)
        refuse_audit_hooks.installed = True
    return _attempts[0]


def python_hooks() -> dict:
    """The interpreter's hooks: what each is now, as names (and identities where it must not change)."""
    installed_roots()
    timers = [t for t in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF") if hasattr(signal, t)]
    return {
        "sys hooks": {
            n: _object(getattr(sys, n))
            for n in ("excepthook", "displayhook", "unraisablehook", "breakpointhook")
            if hasattr(sys, n)
        },
        "thread trace and profile": [
            _name(h) if h else None
            for h in (
                getattr(threading, "_trace_hook", None),
                getattr(threading, "_profile_hook", None),
            )
        ],
        "import hooks": _notebooks([*sys.meta_path, *sys.path_hooks]),
        "path importer cache": _notebooks(
            f for f in list(sys.path_importer_cache.values()) if f is not None
        ),
        "monitoring tools": _monitoring(),
        "gc callbacks": _notebooks(gc.callbacks),
        "signal handlers": {
            signal.Signals(s).name: _name(h)
            for s in SIGNALS
            for h in [signal.getsignal(s)]
            if callable(h) and from_notebook(h)
        },
        "interval timers": [t for t in timers if signal.getitimer(getattr(signal, t))[0] > 0],
        "audit hooks refused": refuse_audit_hooks(),
    }


def ipython_hooks(ip) -> dict:
    """IPython's hooks: event callbacks, display formatters and hooks, prefilters, input
    transformers beyond the two lists :func:`kernel_state` reads, IPython's ``hooks``."""
    formatter = ip.display_formatter
    printers = {}  # the notebook's own printers only: libraries add theirs when a notebook plots
    for mime, f in sorted(formatter.formatters.items()):
        entries = [
            *getattr(f, "type_printers", {}).values(),
            *getattr(f, "deferred_printers", {}).values(),
            *getattr(f, "singleton_printers", {}).values(),
        ]
        printers[mime] = _notebooks(entries, printers=True) + [
            f"enabled={getattr(f, 'enabled', None)}"
        ]
    manager = ip.prefilter_manager
    transforms = ip.input_transformer_manager
    return {
        "event callbacks": {e: _notebooks(ip.events.callbacks.get(e, [])) for e in EVENTS},
        "events": _object(ip.events),
        "display formatters": printers,
        "display": [
            _object(formatter),
            sorted(formatter.active_types),
            _object(ip.displayhook),
            _object(ip.display_pub),
            _object(ip.compile),
        ],
        "prefilters": [_name(c) for c in manager.checkers]
        + [_name(t) for t in manager.transformers]
        + [f"{k}={_name(v)}" for k, v in sorted(manager.handlers.items())],
        "input transformer manager": [_object(transforms)]
        + [_name(f) for f in transforms.line_transforms]
        + [_name(f) for f in transforms.token_transformers],
        "IPython hooks": {
            name: [_name(f) for _, f in getattr(chain, "chain", [])] or [_name(chain)]
            for name, chain in sorted(dict(ip.hooks).items())
        },
    }

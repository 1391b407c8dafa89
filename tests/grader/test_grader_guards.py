"""Unit tests of the grader's two guards, without a kernel (tests/grader/test_hostile.py grades
real hostile submissions end to end)."""

import gc
import json
import re
from pathlib import Path

import nbformat
import pytest

from bertlab_grader import feedback_redaction, kernel_guard, kernel_origins

ROOT = Path(__file__).resolve().parents[2]


def course_config():
    """The course's nbgrader config (``autograder/nbgrader_config.py``), as nbgrader loads it."""
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "autograder")).load_config()


#: The library code the course's tests take their expected values from: the course's config names it.
ORACLES = list(course_config().GuardedExecute.oracles)


def fingerprint():
    return json.loads(kernel_guard.kernel_state(ORACLES))


def test_the_course_names_its_oracles_and_what_to_prepare():
    config = course_config()
    assert "transformers.models.bert.modeling_bert:BertSelfAttention.forward" in ORACLES
    assert config.GuardedExecute.prepare == ["bertlab.models:prepare_all"]
    probe = kernel_guard.state_probe(ORACLES)
    assert json.loads(eval(probe))["oracles"].keys() == {o.replace(":", ".") for o in ORACLES}


def test_an_unchanged_kernel_has_no_differences():
    assert kernel_guard.differences(fingerprint(), fingerprint()) == []


def test_differences_name_what_changed():
    base = fingerprint()
    rigged = json.loads(json.dumps(base))
    rigged["ast_transformers"] = ["__main__.DropAsserts"]
    rigged["custom_exceptions"] = ["builtins.BaseException"]
    rigged["trace function"] = "__main__.<lambda>"
    rigged["functions"]["torch.equal"] += 1
    found = " | ".join(kernel_guard.differences(base, rigged))
    for words in (
        "ast transformers changed (added __main__.DropAsserts)",
        "custom exceptions",
        "trace function set to __main__.<lambda>",
        "replaced: torch.equal",
    ):
        assert words in found, found


def test_the_fingerprint_sees_a_replaced_function(monkeypatch):
    import torch

    base = fingerprint()
    monkeypatch.setattr(torch, "equal", lambda *args: True)
    assert "replaced: torch.equal" in kernel_guard.differences(base, fingerprint())


def test_oracles_must_stay_the_librarys_own(monkeypatch):
    from transformers.models.bert import modeling_bert

    library = kernel_origins.oracle_origins(ORACLES, import_missing=True)
    assert None not in library.values(), [n for n, o in library.items() if o is None]
    base = fingerprint()
    assert kernel_guard.differences(base, fingerprint(), library) == []
    monkeypatch.setattr(
        modeling_bert.BertSelfAttention, "forward", lambda self, *args, **kwargs: None
    )
    found = " ".join(kernel_guard.differences(base, fingerprint(), library))
    assert "BertSelfAttention.forward (now " in found and "<lambda>" in found, found


def test_oracles_are_read_without_importing(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "transformers.pipelines.fill_mask")
    state = fingerprint()
    assert state["oracles"]["transformers.pipelines.fill_mask.FillMaskPipeline.postprocess"] is None
    assert "transformers.pipelines.fill_mask" not in sys.modules


def test_a_tensor_type_that_answers_comparisons_itself_is_named():
    import torch

    base = fingerprint()

    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (
                True
                if func is torch.equal
                else super().__torch_function__(func, types, args, kwargs or {})
            )

    assert torch.equal(torch.zeros(2).as_subclass(Agreeable), torch.ones(2))  # the trick works...
    found = " ".join(kernel_guard.differences(base, fingerprint()))
    assert "decide their own comparisons" in found and "Agreeable" in found, found  # ...and is seen
    # torch's own subclasses (nn.Parameter, FakeTensor, ...) are not named
    assert [name.rsplit(".", 1)[-1] for name in kernel_origins.lying_types()] == ["Agreeable"]


def test_redaction_removes_outputs_that_quote_hidden_tests():
    test_cell = nbformat.v4.new_code_cell(
        "check()\n### BEGIN HIDDEN TESTS\nassert secret_function(3) == 42, 'secret'\n### END HIDDEN TESTS"
    )
    leak = nbformat.v4.new_output(
        "stream", name="stdout", text="\"assert secret_function(3) == 42, 'secret'\\n\","
    )
    honest = nbformat.v4.new_output("stream", name="stdout", text="secret_function(3) is 41\n")
    student_cell = nbformat.v4.new_code_cell("print(...)", outputs=[leak, honest])
    nb = nbformat.v4.new_notebook(cells=[student_cell, test_cell])
    nb, _ = feedback_redaction.RedactHiddenTests().preprocess(nb, {})
    texts = [o.text for o in nb.cells[0].outputs]
    assert texts == [feedback_redaction.NOTICE, "secret_function(3) is 41\n"]


def test_from_the_first_hidden_test_on_feedback_shows_only_the_tests_own_messages():
    """A function a hidden test calls can read that test's source from its caller's frame and print
    it in any encoding, then or in a later cell, or raise it as an error's message: from that point
    the feedback shows a test cell's AssertionError only with a message its own asserts write (the
    values in it cut short), and any other error as its built-in type's name alone."""
    import base64

    secret = (
        "assert secret_function(3) == 42, f'the mask ratio is wrong: expected 0.15, got {ratio}'"
    )
    encoded = base64.b64encode(secret.encode()).decode()
    before = nbformat.v4.new_code_cell(
        "def f(): ...",
        outputs=[nbformat.v4.new_output("stream", name="stdout", text="my own print\n")],
    )
    hidden = nbformat.v4.new_code_cell(
        f"f()\n### BEGIN HIDDEN TESTS\n{secret}\n### END HIDDEN TESTS",
        outputs=[
            nbformat.v4.new_output("stream", name="stdout", text=encoded + "\n"),
            nbformat.v4.new_output(
                "error",
                ename="AssertionError",
                evalue="the mask ratio is wrong: expected 0.15, got 0.3",
                traceback=["Traceback", "  File <cell>", secret, "AssertionError: ..."],
            ),
        ],
    )
    in_the_slot = nbformat.v4.new_code_cell(
        f"### BEGIN HIDDEN TESTS\n{secret}\n### END HIDDEN TESTS",
        outputs=[
            nbformat.v4.new_output(
                "error",
                ename="AssertionError",
                evalue=f"the mask ratio is wrong: expected 0.15, got {encoded}",
                traceback=[],
            )
        ],
    )
    visible = nbformat.v4.new_code_cell(
        "assert g() == 1, mistake('g counts the masks', 1, g())",
        metadata={
            "nbgrader": {"grade": True, "solution": False, "grade_id": "test_g", "points": 1}
        },
        outputs=[
            nbformat.v4.new_output(
                "error",
                ename="AssertionError",
                evalue=f"g counts the masks\n  expected: 1\n  got:      {encoded}\n{encoded}\n{encoded}",
                traceback=[],
            )
        ],
    )
    later = nbformat.v4.new_code_cell(
        "g()",
        outputs=[
            nbformat.v4.new_output("display_data", data={"text/plain": encoded[::-1]}),
            nbformat.v4.new_output("error", ename="ValueError", evalue=encoded, traceback=["long"]),
            nbformat.v4.new_output("error", ename=f"Leak{encoded[:20]}", evalue="x", traceback=[]),
            nbformat.v4.new_output("error", ename="AssertionError", evalue=encoded, traceback=[]),
        ],
    )
    nb = nbformat.v4.new_notebook(cells=[before, hidden, in_the_slot, visible, later])
    nb, _ = feedback_redaction.RedactHiddenTests().preprocess(nb, {})
    assert [o.text for o in nb.cells[0].outputs] == ["my own print\n"], (
        "what ran before any hidden test stays"
    )
    (error,) = nb.cells[1].outputs
    assert (error.ename, error.evalue) == (
        "AssertionError",
        "the mask ratio is wrong: expected 0.15, got 0.3",
    )
    assert error.traceback == [f"AssertionError: {error.evalue}"]
    (slot,) = nb.cells[2].outputs
    assert slot.evalue == f"the mask ratio is wrong: expected 0.15, got {encoded[:60]} [cut]"
    (helper,) = nb.cells[3].outputs
    assert (
        helper.evalue.splitlines()[:2] == ["g counts the masks", "  expected: 1"]
        and len(helper.evalue) < 140
    )
    names = [(o.ename, o.evalue) for o in nb.cells[4].outputs]
    assert [n for n, _ in names] == [
        "ValueError",
        "an exception of the submission's own type",
        "AssertionError",
    ]
    assert all(m == feedback_redaction.NOT_SHOWN for _, m in names)
    assert encoded not in str(nb) and encoded[::-1] not in str(nb)
    assert (
        sum(len(chunk) for chunk in re.findall("[A-Za-z0-9+/=]{20,}", str(nb["cells"][2:]))) < 300
    )


HOOKS = {
    "post_run_cell callback": "get_ipython().events.register('post_run_cell', lambda result: None)",
    "pre_execute callback": "get_ipython().events.register('pre_execute', lambda: None)",
    "wrapped callback": (
        "import functools\n"
        "get_ipython().events.register('post_execute', functools.lru_cache(lambda: None))"
    ),
    "exec bound to source": (
        "import functools\n"
        "get_ipython().events.register('post_execute', functools.partial(exec, 'x = 1'))"
    ),
    "display formatter": (
        "get_ipython().display_formatter.formatters['text/plain']"
        ".for_type(int, lambda o, p, c: p.text('1'))"
    ),
    # (sys.excepthook and sys.displayhook are watched too, but IPython sets back both after each cell)
    "unraisablehook": "import sys\nsys.unraisablehook = lambda *a: None",
    "import hook": (
        "import sys\nclass Finder:\n    def find_spec(self, *a): return None\n"
        "sys.meta_path.insert(0, Finder())"
    ),
    "gc callback": "import gc\ngc.callbacks.append(lambda phase, info: None)",
    "signal handler": "import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)",
    "interval timer": "import signal\nsignal.setitimer(signal.ITIMER_REAL, 100)",
    "audit hook": "import sys\nsys.addaudithook(lambda event, args: None)",
    "thread trace": "import threading\nthreading.settrace(lambda *a: None)",
    "prefilter": (
        "ip = get_ipython()\n"
        "ip.prefilter_manager.register_transformer(type('T', (), {'priority': 1, 'enabled': True})())"
    ),
    "IPython hook": "get_ipython().set_hook('show_in_pager', lambda *a: None)",
    # Disguised as a library's: code compiled under an installed file's name, an installed method
    # bound to source, a builtin bound to source by hand, a frozen module's name.
    "code under an installed file's name": (
        "import os, sys\nsite = [p for p in sys.path if p.endswith('site-packages')][0]\n"
        "ns = {}\nexec(compile('def f(*a): pass', os.path.join(site, 'IPython', 'x.py'), 'exec'), ns)\n"
        "get_ipython().events.register('post_run_cell', ns['f'])"
    ),
    "installed method bound to source": (
        "import functools\nget_ipython().events.register('pre_execute', functools.partial(get_ipython().ex, 'x = 1'))"
    ),
    "builtin bound to source by hand": (
        "import types\nget_ipython().events.register('pre_execute', types.MethodType(exec, 'x = 1'))"
    ),
    "code under a frozen module's name": (
        "ns = {}\nexec(compile('def f(*a): pass', '<frozen importlib._bootstrap>', 'exec'), ns)\n"
        "get_ipython().events.register('post_execute', ns['f'])"
    ),
    "shell_initialized callback": "get_ipython().events.register('shell_initialized', lambda ip: None)",
    "path hook": "import sys\nsys.path_hooks.insert(0, lambda path: None)",
    "path importer cache": (
        "import sys\nclass Finder:\n    def find_spec(self, *a): return None\n"
        "sys.path_importer_cache['/nowhere'] = Finder()"
    ),
}


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_every_hook_that_runs_code_between_cells_changes_the_fingerprint(hook):
    """In a real IPython shell, as in a kernel: each hook changes the fingerprint; plotting with
    matplotlib's inline backend (which registers its own callback and formatters) does not."""
    import signal

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        base = json.loads(kernel_guard.kernel_state())
        shell.run_cell(
            "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
            "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n1",
            store_history=False,
        )
        honest = kernel_guard.differences(base, json.loads(kernel_guard.kernel_state()))
        assert not honest, f"plotting is not rigging: {honest}"
        shell.run_cell(HOOKS[hook], store_history=False).raise_error()
        found = kernel_guard.differences(base, json.loads(kernel_guard.kernel_state()))
        assert found, f"{hook}: the fingerprint did not change"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        import sys
        import threading

        threading.settrace(None)
        sys.unraisablehook = sys.__unraisablehook__
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Finder"]
        sys.path_hooks[:] = [
            h for h in sys.path_hooks if "lambda" not in getattr(h, "__qualname__", "")
        ]
        sys.path_importer_cache.pop("/nowhere", None)
        import gc

        gc.callbacks[:] = [
            c for c in gc.callbacks if "lambda" not in getattr(c, "__qualname__", "")
        ]
        InteractiveShell.clear_instance()


def test_an_installed_packages_own_array_types_are_not_named_but_a_disguised_one_is():
    import numpy as np
    import scipy.io.matlab  # noqa: F401  (defines MatlabObject, an ndarray subclass with hooks)

    assert not [t for t in kernel_origins.lying_types() if "scipy" in t], (
        "a library's type is not the notebook's"
    )

    class Disguised(np.ndarray):
        def __eq__(self, other):
            return True

    Disguised.__module__, Disguised.__qualname__ = "scipy.io.matlab", "MatlabObject2"
    assert "scipy.io.matlab.MatlabObject2" in kernel_origins.lying_types()
    del Disguised
    gc.collect()  # __subclasses__ holds weak references: later tests see no trace of it
    assert "scipy.io.matlab.MatlabObject2" not in kernel_origins.lying_types()


def third_party_imports(statement: str) -> list[str]:
    """The modules outside the standard library and the grader that ``statement`` (an import)
    loads, in a fresh interpreter without site-packages' own start-up (``-S``)."""
    import subprocess
    import sys

    code = (
        f"import sys; {statement}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names))"
    )
    loaded = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    ).stdout
    return [m for m in eval(loaded) if m.split(".")[0] != "bertlab_grader" and m != "__main__"]


def test_the_part_that_runs_in_a_students_kernel_imports_the_standard_library_only():
    """The probe imports bertlab_grader.kernel_guard inside the student's kernel: importing it (and
    the packages above it) may pull in no third-party module; only the kernel's own IPython, which
    its fingerprint reads when it runs there."""
    assert third_party_imports("import bertlab_grader.kernel_guard") == []


def test_a_graded_function_from_the_course_package_is_named():
    import functools

    import bertlab.models
    from bertlab_grader.guarded_execute import GuardedExecute

    def mine(x):
        return x

    namespace = {
        "pad_batch": mine,
        "top_k": bertlab.models.describe,
        "segment_ids": functools.partial(bertlab.models.describe),
        "word_vector": bertlab.models.ModelNotAvailableError,
    }
    found = json.loads(
        kernel_origins.answer_key_objects(
            namespace, ["pad_batch", "top_k", "segment_ids", "word_vector", "absent"], ["bertlab"]
        )
    )
    assert found == [
        "top_k is bertlab.models.encoder.describe",
        "segment_ids is bertlab.models.encoder.describe",
        "word_vector is bertlab.models.resolve.ModelNotAvailableError",
    ], found
    assert json.loads(kernel_origins.answer_key_objects(namespace, ["top_k"], ["reference"])) == []
    probe = kernel_origins.answer_key_probe(["top_k"], ["bertlab"])
    assert json.loads(eval(probe, namespace)) == ["top_k is bertlab.models.encoder.describe"]

    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "from bertlab.models import describe as top_k",
                metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "impl_top_k"}},
            ),
            nbformat.v4.new_code_cell(
                "def helper():\n    pass\ndef recall_at_k():\n    pass",
                metadata={
                    "nbgrader": {"solution": True, "grade": False, "grade_id": "impl_recall"}
                },
            ),
            nbformat.v4.new_code_cell("def not_graded():\n    pass"),
        ]
    )
    course_convention = GuardedExecute(graded_function_id=r"^impl_(?P<name>\w+)$")
    assert course_convention.graded_names(notebook) == ["helper", "recall", "recall_at_k", "top_k"]
    assert GuardedExecute().graded_names(notebook) == [
        "helper",
        "recall_at_k",
    ]  # by default, `def` alone


def test_prepare_calls_module_functions_by_name(monkeypatch):
    import pytest

    from bertlab_grader.guarded_execute import call

    called = []
    monkeypatch.setattr("os.sync", lambda: called.append("sync"))
    call("os:sync")
    assert called == ["sync"]
    with pytest.raises(ValueError, match="module:function"):
        call("os.sync")


def test_the_graders_own_errors_are_shown_whole_and_a_forged_one_is_not():
    """The grader lists the errors it writes (a dead kernel, a rigged one) in the cell's metadata,
    having removed any list the submission brought: those are shown as they are; an error of the
    same name that the submission raised is not."""
    from bertlab_grader.guarded_execute import error_output

    hidden = nbformat.v4.new_code_cell(
        "### BEGIN HIDDEN TESTS\nassert f() == 1\n### END HIDDEN TESTS"
    )
    died = error_output(
        "KernelDied", "the kernel died while running this cell (over the memory cap): ...", hidden
    )
    forged = nbformat.v4.new_output(
        "error", ename="KernelDied", evalue="the kernel died: c2VjcmV0", traceback=[]
    )
    hidden.outputs = [forged, died]
    nb, _ = feedback_redaction.RedactHiddenTests().preprocess(
        nbformat.v4.new_notebook(cells=[hidden]), {}
    )
    shown = [(o.ename, o.evalue) for o in nb.cells[0].outputs]
    assert shown == [
        ("an exception of the submission's own type", feedback_redaction.NOT_SHOWN),
        ("KernelDied", died.evalue),
    ]

"""Unit tests of the grader's two guards, without a kernel (tests/test_hostile.py grades
real hostile submissions end to end)."""

import json

import nbformat

from bertlab import feedback_redaction, kernel_guard


def fingerprint():
    return json.loads(kernel_guard.kernel_state())


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
    for words in ("ast transformers changed (added __main__.DropAsserts)", "custom exceptions",
                  "trace function set to __main__.<lambda>", "replaced: torch.equal"):
        assert words in found, found


def test_the_fingerprint_sees_a_replaced_function(monkeypatch):
    import torch

    base = fingerprint()
    monkeypatch.setattr(torch, "equal", lambda *args: True)
    assert "replaced: torch.equal" in kernel_guard.differences(base, fingerprint())


def test_redaction_removes_outputs_that_quote_hidden_tests():
    test_cell = nbformat.v4.new_code_cell(
        "check()\n### BEGIN HIDDEN TESTS\nassert secret_function(3) == 42, 'secret'\n### END HIDDEN TESTS"
    )
    leak = nbformat.v4.new_output("stream", name="stdout", text='"assert secret_function(3) == 42, \'secret\'\\n",')
    honest = nbformat.v4.new_output("stream", name="stdout", text="secret_function(3) is 41\n")
    student_cell = nbformat.v4.new_code_cell("print(...)", outputs=[leak, honest])
    nb = nbformat.v4.new_notebook(cells=[student_cell, test_cell])
    nb, _ = feedback_redaction.RedactHiddenTests().preprocess(nb, {})
    texts = [o.text for o in nb.cells[0].outputs]
    assert texts == [feedback_redaction.NOTICE, "secret_function(3) is 41\n"]

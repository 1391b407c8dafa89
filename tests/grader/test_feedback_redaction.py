"""The feedback a student gets (bertlab_grader.feedback_redaction), without a kernel: from the first
hidden test on, a test's score and its own assertion's message, never what the submission printed
or raised (tests/grader/test_hostile.py grades real hostile submissions end to end)."""

import re

import nbformat

from bertlab_grader import feedback_redaction


def test_from_the_first_hidden_test_on_feedback_shows_only_the_tests_own_messages():
    """A function a hidden test calls gets the test's hidden inputs and can print them in any
    encoding, then or in a later cell, or raise them as an error's message: from that point the
    feedback shows a test cell's AssertionError only with a message its own asserts write (the
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


def test_an_assertion_the_submissions_code_raised_is_not_shown():
    """An AssertionError raised inside the submission's function (its message the submission's,
    shaped like the test's own) is marked by the tests' kernel, and shown as its type alone."""
    test = nbformat.v4.new_code_cell(
        "### BEGIN HIDDEN TESTS\nassert f(_x) == 1, f'wrong for {_x}'\n### END HIDDEN TESTS",
        metadata={feedback_redaction.FROM_SUBMISSION_KEY: True},
        outputs=[
            nbformat.v4.new_output(
                "error", ename="AssertionError", evalue="wrong for [hidden]", traceback=[]
            )
        ],
    )
    nb, _ = feedback_redaction.RedactHiddenTests().preprocess(
        nbformat.v4.new_notebook(cells=[test]), {}
    )
    (error,) = nb.cells[0].outputs
    assert (error.ename, error.evalue) == ("AssertionError", feedback_redaction.NOT_SHOWN)


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

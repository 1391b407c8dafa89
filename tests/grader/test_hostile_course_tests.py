"""Hostile submissions aimed at the course's own tests, graded on the course (ps00, the quickest
to grade): torch and the library functions the tests take their expected values from rigged
(``torch.equal``, ``Tensor.__eq__``, ``pad_sequence``) in the student's kernel, where the tests do
not run; the course package's own function handed in; and a function that prints the hidden test
cell calling it. Each pairs its trick with wrong work, so any point it earns is stolen. The tricks
on the grader's test course are ``test_hostile.py``'s and ``test_grading_secrecy.py``'s."""

from __future__ import annotations

import nbformat
import pytest
from hostile_checks import graded_output_text, hidden_tests_not_in_feedback, no_points_stolen
from hostile_tricks import with_cell

import course_fixture

pytestmark = pytest.mark.slow

PS00 = "ps00-tokens"  # the course's quickest assignment, for the tricks aimed at its own tests
PS00_FIRST_TESTS = {"test_pad_batch", "test_pad_batch_hidden"}
PS00_POINTS = 11  # the three functions' 9 and the prediction's 2

# Implementations that fail every visible and hidden test of ps00.
PS00_WRONG = {
    "impl_pad_batch": """
def pad_batch(sequences, pad_id, max_length=None):
    return torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long)
""",
    "impl_pieces_per_word": """
def pieces_per_word(word_ids):
    return [1]
""",
    "impl_segment_ids": """
def segment_ids(input_ids, sep_token_id):
    return input_ids * 0
""",
}

# Rig torch, which the course's tests compare with: graded on ps00.
PS00_RIG = {
    "patch-torch": """
torch.equal = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
""",
    "patch-tensor-eq": "torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)",
    "patch-oracle": """
import torch.nn.utils.rnn

def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    return torch.zeros(2, 3, dtype=torch.long)

torch.nn.utils.rnn.pad_sequence = pad_sequence
""",
}


def ps00_submissions(released, solution) -> dict:
    """The tricks aimed at the course's own tests (ps00), each with wrong work otherwise."""
    wrong = course_fixture.replace_solutions(released, PS00_WRONG)
    found = {f"rig-{name}": with_cell(wrong, code) for name, code in PS00_RIG.items()}

    # The student function itself prints the hidden test cell that calls it.
    found["print-calling-cell"] = course_fixture.replace_solutions(
        released,
        {
            **PS00_WRONG,
            "impl_pieces_per_word": (
                "def pieces_per_word(word_ids):\n    print(get_ipython().user_ns['In'][-1])\n"
                "    return [1]\n"
            ),
        },
    )

    # The right answer, but the course package's object: the reference function is defined inside
    # the installed bertlab package at run time (as if the package shipped it) and imported from
    # there. Its tests would pass, and score 0 all the same (the course config's
    # answer_key_packages: the grader reads the submitted cell).
    reference = next(
        c.source
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "impl_pieces_per_word"
    )
    found["answer-key-import"] = course_fixture.replace_solutions(
        released,
        {
            **PS00_WRONG,
            "impl_pieces_per_word": (
                f"import bertlab\nexec({reference!r}, vars(bertlab))\n"
                f"from bertlab import pieces_per_word\n"
            ),
        },
    )
    return found


@pytest.fixture(scope="module")
def ps00(tmp_path_factory):
    """The tricks aimed at the course's own tests, graded on the course (ps00)."""
    course = course_fixture.make_course(tmp_path_factory.mktemp("hostile-ps00"))
    released = nbformat.read(course_fixture.release(course, PS00), as_version=4)
    found = ps00_submissions(released, course_fixture.solution_notebook(PS00))
    for student, notebook in found.items():
        course_fixture.submit(course, PS00, student, notebook)
    course_fixture.autograde(course, PS00)
    course_fixture.feedback(course, PS00)
    return course, sorted(found)


def test_tricks_aimed_at_the_course_s_own_tests_score_zero(ps00):
    path, names = ps00
    assert {
        "rig-patch-torch",
        "rig-patch-tensor-eq",
        "rig-patch-oracle",
        "answer-key-import",
    } <= set(names)
    no_points_stolen(path, PS00, names, PS00_FIRST_TESTS, PS00_POINTS)


def test_a_graded_function_from_the_course_package_is_named_in_the_feedback(ps00):
    path, _ = ps00
    html = (
        path / "autograder" / "feedback" / "answer-key-import" / PS00 / f"{PS00}.html"
    ).read_text()
    assert "pieces_per_word is the course package" in html and "bertlab.pieces_per_word" in html, (
        html[-3000:]
    )


def test_feedback_on_the_course_quotes_no_hidden_test(ps00):
    path, _ = ps00
    hidden_tests_not_in_feedback(
        path, PS00, course_fixture.solution_notebook(PS00), ("print-calling-cell",)
    )
    # the hidden test's source never reached the student's kernel: not even the graded copy holds it
    assert "BEGIN HIDDEN TESTS" not in graded_output_text(path, PS00, "print-calling-cell")

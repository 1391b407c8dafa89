"""Writes ``solutions/fx00-tiny/fx00-tiny.ipynb``, the grader test course's one assignment.

Two graded functions in plain Python (no torch, no model: a kernel grades it in a second), each
with a visible test cell (1 point) and a hidden test cell (2 points), 6 points in all; the cell
metadata is nbgrader's, as in the course's notebooks. Deterministic (fixed cell ids, no outputs):
run ``python tests/grader_course/make_notebook.py`` after an edit and commit the notebook.
"""

from pathlib import Path

import nbformat

ASSIGNMENT = "fx00-tiny"
PATH = Path(__file__).resolve().parent / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def meta(grade_id, *, grade=False, solution=False, points=None):
    m = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        m["points"] = points
    cell = {"nbgrader": m}
    if not solution:
        cell = {"deletable": False, "editable": False, **cell}
    return cell


def markdown(grade_id, source):
    return nbformat.v4.new_markdown_cell(source.strip(), id=grade_id, metadata=meta(grade_id))


def code(grade_id, source, **kwargs):
    return nbformat.v4.new_code_cell(source.strip(), id=grade_id, metadata=meta(grade_id, **kwargs))


CELLS = [
    markdown(
        "intro",
        """
# fx00-tiny: the grader's test assignment

Two small functions in plain Python. (A fixture of the grader's tests, not a part of the course.)
""",
    ),
    code("setup", 'VOWELS = set("aeiou")'),
    markdown("word_lengths_md", "## 1. Word lengths"),
    code(
        "impl_word_lengths",
        '''
def word_lengths(words):
    """The number of characters of each word, in order."""
    ### BEGIN SOLUTION
    return [len(word) for word in words]
    ### END SOLUTION
''',
        solution=True,
    ),
    code(
        "test_word_lengths",
        """
assert [int(n) for n in word_lengths(["a", "bb", ""])] == [1, 2, 0], "one length per word"
assert list(word_lengths([])) == [], "no words, no lengths"
""",
        grade=True,
        points=1,
    ),
    code(
        "test_word_lengths_hidden",
        """
# The grader runs hidden tests of word_lengths in this cell.
_ = word_lengths(["x"])
### BEGIN HIDDEN TESTS
import random as _random

_rng = _random.Random(1234)
for _trial in range(20):
    _words = ["".join(_rng.choice("abcxyz") for _ in range(_rng.randint(1, 9))) for _ in range(_rng.randint(2, 6))]
    assert [int(n) for n in word_lengths(_words)] == [len(w) for w in _words], f"wrong lengths for {_words}"
### END HIDDEN TESTS
""",
        grade=True,
        points=2,
    ),
    markdown("count_vowels_md", "## 2. Vowels"),
    code(
        "impl_count_vowels",
        '''
def count_vowels(word):
    """How many of the letters of ``word`` are vowels (a, e, i, o, u; lowercase)."""
    ### BEGIN SOLUTION
    return sum(letter in VOWELS for letter in word)
    ### END SOLUTION
''',
        solution=True,
    ),
    code(
        "test_count_vowels",
        """
assert int(count_vowels("banana")) == 3, "banana has three vowels"
assert int(count_vowels("rhythm")) == 0, "rhythm has none"
""",
        grade=True,
        points=1,
    ),
    code(
        "test_count_vowels_hidden",
        """
# The grader runs hidden tests of count_vowels in this cell.
_ = count_vowels("x")
### BEGIN HIDDEN TESTS
_cases = {"queueing": 5, "strengths": 1, "aeiou": 5, "": 0, "xyz": 0, "education": 5}
for _word, _expected in _cases.items():
    assert int(count_vowels(_word)) == _expected, f"wrong count for {_word!r}"
### END HIDDEN TESTS
""",
        grade=True,
        points=2,
    ),
]


def notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=CELLS)
    nb.metadata = {
        "kernelspec": {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


if __name__ == "__main__":
    PATH.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook(), PATH)
    print(PATH)

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


# Written answers graded by hand (nbgrader's "Manually graded answer"), for the tests of the class's
# rules (tests/grader/test_class_rules.py), which write ``notebook(written=True)`` into their scratch
# course: a markdown answer whose model answer and rubric sit in its solution region, as the course's
# do, and a code answer (a measurement) that runs in the student's kernel. After the hidden tests, as
# in the course's assignments. The committed fx00 has neither: its points stay 6.
WRITTEN = [
    markdown(
        "written_md",
        """
## 3. In your own words

**Question (2 points).** `count_vowels` looks each letter up in a set. What would change if
`VOWELS` were a list?
""",
    ),
    nbformat.v4.new_markdown_cell(
        """
### BEGIN SOLUTION
*Model answer.* Nothing in the result: `in` finds the same letters. A set looks a letter up by
its hash, a list compares it with each vowel in turn; with five vowels the time barely differs.

*Rubric (2 points).* 1 point: the counts stay the same. 1 point: a set is a hash lookup, a list
a scan (or: the difference only shows for long lists).
### END SOLUTION
""".strip(),
        id="written_vowels",
        metadata=meta("written_vowels", grade=True, solution=True, points=2),
    ),
    code(
        "written_measure",
        """
# Measure it: print how many vowels "onomatopoeia" has, in a sentence.
### BEGIN SOLUTION
print("onomatopoeia has", count_vowels("onomatopoeia"), "vowels")
### END SOLUTION
""",
        grade=True,
        solution=True,
        points=1,
    ),
]


def notebook(written: bool = False) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=CELLS + (WRITTEN if written else []))
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

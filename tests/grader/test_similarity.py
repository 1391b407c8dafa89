"""``python -m bertlab_grader similarity`` (``make similarity``) on a batch with known copies.

The grader's test course's fx00 (two small functions) handed in by three students who wrote their
own code, and by three who copied: one the whole notebook of an honest student, one the same with
every name changed and the two functions swapped into one cell, one the course's reference
solution. Every copy must rank above every pair of honest students and every honest student's
pair with the reference; the report is written (HTML and CSV) and the gradebook is untouched.
"""

from __future__ import annotations

import csv
import hashlib

import pytest

import course_fixture
from bertlab_grader import layout

pytestmark = pytest.mark.slow

ASSIGNMENT = "fx00-tiny"
DOC_LENGTHS = '    """The number of characters of each word, in order."""\n'
DOC_VOWELS = (
    '    """How many of the letters of ``word`` are vowels (a, e, i, o, u; lowercase)."""\n'
)


def functions(lengths_body: str, vowels_body: str) -> dict[str, str]:
    return {
        "impl_word_lengths": "def word_lengths(words):\n" + DOC_LENGTHS + lengths_body,
        "impl_count_vowels": "def count_vowels(word):\n" + DOC_VOWELS + vowels_body,
    }


HONEST = {
    "ada": functions(
        "    lengths = []\n    for w in words:\n        lengths.append(len(w))\n    return lengths\n",
        "    total = 0\n    for ch in word:\n        if ch in VOWELS:\n            total += 1\n"
        "    return total\n",
    ),
    "bo": functions(
        "    return list(map(len, words))\n",
        '    return len([c for c in word.lower() if c in "aeiou"])\n',
    ),
    "cy": functions(
        "    result = [0] * len(words)\n    i = 0\n    while i < len(words):\n"
        "        result[i] = len(words[i])\n        i = i + 1\n    return result\n",
        "    import re\n\n    found = re.findall(r'[aeiou]', word)\n    return len(found)\n",
    ),
}
RENAMED = (
    "def count_vowels(word):\n" + DOC_VOWELS + "    n = 0\n    for letter in word:\n"
    "        if letter in VOWELS:\n            n += 1\n    return n\n\n\n"
    "def word_lengths(words):\n" + DOC_LENGTHS + "    sizes = []\n    for token in words:\n"
    "        sizes.append(len(token))\n    return sizes\n"
)
COPIES = {"dee-identical": "ada", "eli-renamed": "ada", "fay-reference": "reference"}


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    course = course_fixture.make_course(
        tmp_path_factory.mktemp("similarity"), repo=course_fixture.GRADER_COURSE
    )
    course_fixture.grader(course, "release", ASSIGNMENT)
    solution = course_fixture.solution_notebook(ASSIGNMENT, course)
    for student, cells in HONEST.items():
        course_fixture.submit(
            course, ASSIGNMENT, student, course_fixture.replace_solutions(solution, cells)
        )
    course_fixture.submit(
        course,
        ASSIGNMENT,
        "dee-identical",
        course_fixture.replace_solutions(solution, HONEST["ada"]),
    )
    renamed = {"impl_word_lengths": RENAMED, "impl_count_vowels": "# both functions are above\n"}
    course_fixture.submit(
        course, ASSIGNMENT, "eli-renamed", course_fixture.replace_solutions(solution, renamed)
    )
    course_fixture.submit(course, ASSIGNMENT, "fay-reference", solution)
    gradebook = course / layout.GRADEBOOK
    before = hashlib.sha256(gradebook.read_bytes()).hexdigest()
    said = course_fixture.grader(course, "similarity", ASSIGNMENT).stdout
    after = hashlib.sha256(gradebook.read_bytes()).hexdigest()
    with (course / layout.SIMILARITY / ASSIGNMENT / "pairs.csv").open(newline="") as f:
        pairs = [r for r in csv.DictReader(f) if r["kind"] == "code"]
    return course, said, pairs, before == after


def test_every_copy_ranks_above_every_honest_pair(found):
    _, _, pairs, _ = found
    score = {(r["student"], r["other"]): float(r["similarity"]) for r in pairs}
    copies = [
        score[("ada", "dee-identical")],
        score[("ada", "eli-renamed")],
        score[("fay-reference", f"reference: solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")],
    ]
    honest = [
        s
        for (a, b), s in score.items()
        if a in HONEST and (b in HONEST or b.startswith("reference:"))
    ]
    print("copies", copies, "honest", sorted(honest, reverse=True)[:4])
    assert len(honest) == 6, score
    assert min(copies) > max(honest), (copies, sorted(honest, reverse=True))
    assert copies[0] == 1.0


def test_the_report_shows_the_copies_side_by_side_and_changes_no_score(found):
    course, said, _, unchanged = found
    assert unchanged, "the gradebook is untouched"
    page = (course / layout.SIMILARITY / ASSIGNMENT / "report.html").read_text()
    assert "eli-renamed" in page and "highlight-red" in page and "dee-identical" in page
    assert "http" not in page, "the page loads nothing from the network"
    assert "scores unchanged" in said and "report.html" in said


def test_the_same_batch_gives_the_same_numbers_in_another_process(found):
    """The command ran in a process of its own; run here again (Python salts ``hash`` per
    process, which copydetect's own fingerprints used), it writes the same pairs."""
    from bertlab_grader.similarity import report

    course, _, _, _ = found
    pairs = course / layout.SIMILARITY / ASSIGNMENT / "pairs.csv"
    before = pairs.read_text()
    report(course, ASSIGNMENT)
    assert pairs.read_text() == before

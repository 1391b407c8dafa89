"""A similarity report: every student's answers against every other student's and the public
reference code, with copydetect; it reads submissions and writes a report, and changes no score.

The course is public, reference code included, so an instructor asks two questions of a batch:
did two students hand in the same work, and did one hand in the course's own code. This module
answers with `copydetect <https://github.com/blingenf/copydetect>`_ (MIT), which implements
winnowing (Schleimer, Wilkerson and Aiken 2003, the algorithm of Stanford's MOSS): each text is
tokenised by Pygments with every name replaced by one letter (so renaming variables changes
nothing), its k-grams hashed, and a pair scores the share of one's fingerprints found in the other
(so reordering functions changes nothing either); its k-grams are hashed here with a hash that is
the same in every process (:func:`stable_kgrams`), so a batch always gives the same numbers. Two
passes:

- **code**: each student's answer cells (nbgrader's solution cells) and the code cells they added,
  against every other student's and against the references, the course's public code
  (``c.Similarity.references``: the solutions' answer cells, the book's code, the known-correct
  implementations of the tests' variants);
- **written**: the written answers (markdown answer cells), lower-cased with their white space
  collapsed, compared as text, against every other student's and the model answers.

What every student received is left out: the released stub's answer cells (the signature, the
docstring, ``raise NotImplementedError()``, ``YOUR ANSWER HERE``) are copydetect's boilerplate,
whose fingerprints never count. A pair's similarity is the larger of the two shares for two
students (one who copied a shorter answer into a longer one still shows) and the student's share
for a reference. Written into ``autograder/similarity/<assignment>/``: ``report.html`` (the pairs
at or above ``c.Similarity.threshold``, closest first, side by side with the shared stretches
marked), ``pairs.csv`` (every pair) and ``answers/`` (the texts compared). A high share is a reason
to read both, not a verdict: short answers to one small function can agree by themselves.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
from traitlets import Float, Integer, List, Unicode
from traitlets.config import Configurable

from bertlab_grader import layout
from bertlab_grader.similarity_report import render, write_csv

KINDS = {"code": "py", "written": "txt"}


class SimilarityError(ValueError):
    """Nothing to compare: the message says what to do."""


class Similarity(Configurable):
    """The similarity report's settings (``c.Similarity`` in the course's config)."""

    references = List(
        Unicode(),
        help="The public code to compare with: paths or globs relative to the course root, "
        "{assignment} replaced by the assignment's id; a notebook gives its solution cells, a Python "
        "file its code, and 'file.py:NAME' the sources held as strings in its literal NAME",
    ).tag(config=True)
    threshold = Float(0.5, help="The similarity from which a pair is shown in the HTML").tag(
        config=True
    )
    noise = Integer(
        25,
        help="copydetect's noise threshold: the shortest run of matching (tokenised) characters "
        "that counts",
    ).tag(config=True)
    guarantee = Integer(
        30, help="copydetect's guarantee threshold: a match this long is always found"
    ).tag(config=True)


@dataclass
class Pair:
    kind: str  # code or written
    student: str
    other: str  # a student, or "reference: <name>"
    similarity: float
    student_share: float
    other_share: float
    tokens: int


def answer_cells(notebook, release) -> dict[str, str]:
    """A submitted notebook's answers: ``code`` (its solution cells and the code cells it added)
    and ``written`` (its markdown solution cells), as the release's cell metadata names them."""
    meta = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c.metadata.get("nbgrader", {})
        for c in release.cells
    }
    code, written = [], []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        given = meta.get(grade_id) if grade_id else None
        if cell.cell_type == "code" and (given is None or given.get("solution")):
            code.append(cell.source)
        elif cell.cell_type == "markdown" and given is not None and given.get("solution"):
            written.append(cell.source)
    return {"code": "\n\n".join(code), "written": normalised("\n\n".join(written))}


def normalised(text: str) -> str:
    """Prose compared as words: lower case, white space collapsed (line breaks fall anywhere)."""
    return " ".join(text.lower().split())


def _sources_in(path: Path, name: str) -> list[str]:
    """The strings held in the literal assigned to ``name`` in a Python file (read, never run)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return [s for s in _strings(ast.literal_eval(node.value))]
    raise SimilarityError(f"{path}: no literal {name} to read references from")


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, (list, tuple)) else []


def references(course: Path, assignment: str, patterns: list[str]) -> dict[str, dict[str, str]]:
    """label -> {"code": ..., "written": ...} for each reference the patterns name."""
    found = {}
    for pattern in patterns:
        pattern, _, name = pattern.format(assignment=assignment).partition(":")
        for path in sorted(Path(course).glob(pattern)):
            label = str(path.relative_to(course)) + (f":{name}" if name else "")
            if name:
                found[label] = {"code": "\n\n".join(_sources_in(path, name)), "written": ""}
            elif path.suffix == ".ipynb":
                notebook = nbformat.read(path, as_version=4)
                found[label] = answer_cells(notebook, notebook)
            elif path.suffix == ".py":
                found[label] = {"code": path.read_text(), "written": ""}
    return found


def _write(folder: Path, texts: dict[str, str], suffix: str) -> dict[str, str]:
    """Each non-empty text into ``folder/<label>.<suffix>``; returns file path -> label."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for label, text in sorted(texts.items()):
        if text.strip():
            path = folder / (re.sub(r"[^\w.-]+", "_", label) + f".{suffix}")
            path.write_text(text + "\n")
            files[str(path)] = label
    return files


def stable_kgrams(string: str, k: int):
    """The hashes of every k-gram of ``string``, the same in every process: copydetect's own
    (``copydetect.utils.hashed_kgrams``) use Python's ``hash``, which is salted per process, so a
    report's shares moved from run to run (0.96 once, 0.89 the next, for the same pair)."""
    import numpy as np

    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(string[i : i + k].encode(), digest_size=8).digest(),
                "little",
                signed=True,
            )
            for i in range(len(string) - k + 1)
        ],
        dtype=np.int64,
    )


def compare(kind: str, folder: Path, students, refs, stub: str, settings: Similarity):
    """One pass of copydetect over ``folder/<kind>/``: the pairs, and the HTML of those at or
    above the threshold (test file's label, other's label) -> (marked student, marked other)."""
    import copydetect.utils
    from copydetect import CopyDetector

    copydetect.utils.hashed_kgrams = stable_kgrams  # one report, one answer: not salted per run

    suffix = KINDS[kind]
    where = {name: folder / kind / name for name in ("students", "references", "stub")}
    for path in where.values():
        shutil.rmtree(path, ignore_errors=True)
    labels = {
        **_write(where["students"], students, suffix),
        **_write(where["references"], refs, suffix),
    }
    _write(where["stub"], {"stub": stub}, suffix)
    if not any(Path(f).parent == where["students"] for f in labels):
        return [], {}
    detector = CopyDetector(
        test_dirs=[str(where["students"])],
        ref_dirs=[str(where["students"]), str(where["references"])],
        boilerplate_dirs=[str(where["stub"])],
        extensions=[suffix],
        noise_t=settings.noise,
        guarantee_t=settings.guarantee,
        display_t=settings.threshold,
        disable_filtering=kind == "written",
        autoopen=False,
        silent=True,
        out_file=str(folder / f"copydetect-{kind}.html"),
    )
    detector.run()
    pairs = {}
    for i, test in enumerate(detector.test_files):
        for j, other in enumerate(detector.ref_files):
            share, other_share = detector.similarity_matrix[i, j]
            if share < 0 or test not in labels or other not in labels:
                continue  # not compared: a file with itself, or one copydetect could not read
            student, against = labels[test], labels[other]
            is_reference = Path(other).parent == where["references"]
            key = (student, against) if is_reference else tuple(sorted((student, against)))
            if is_reference:
                shares = (float(share), float(other_share))
            else:  # both orders come: keep the pair once, its shares in its students' order
                shares = (float(share), float(other_share))[:: 1 if student == key[0] else -1]
            pair = Pair(
                kind,
                key[0],
                f"reference: {against}" if is_reference else key[1],
                shares[0] if is_reference else max(shares),
                *shares,
                int(detector.token_overlap_matrix[i, j]),
            )
            pairs[(pair.student, pair.other)] = pair
    marked = {}
    for _, _, test, other, test_html, other_html, _ in detector.get_copied_code_list():
        marked[(labels[test], labels[other])] = (test_html, other_html)
    return list(pairs.values()), marked


@dataclass
class Found:
    """A report's pairs (closest first) and where it was written."""

    pairs: list[Pair]
    threshold: float
    html: Path
    csv: Path


def report(course: Path, assignment: str, threshold: float | None = None) -> Found:
    """Compare every submission of ``assignment`` (``autograder/submitted``) with every other and
    with the references; write the report. Reads no gradebook and writes none."""
    from bertlab_grader.nbgrader_course import nbgrader_api

    course = Path(course).resolve()
    settings = Similarity(config=nbgrader_api(course).config)
    if threshold is not None:
        settings.threshold = threshold
    released = sorted((course / layout.RELEASE / assignment).glob("*.ipynb"))
    if not released:
        raise SimilarityError(
            f"{assignment} is not released in {layout.RELEASE}/: make release ASSIGNMENT={assignment}"
        )
    release = {p.name: nbformat.read(p, as_version=4) for p in released}
    students: dict[str, dict[str, str]] = {}
    for folder in sorted((course / layout.SUBMITTED).glob(f"*/{assignment}")):
        parts = [
            answer_cells(nbformat.read(folder / name, as_version=4), notebook)
            for name, notebook in release.items()
            if (folder / name).is_file()
        ]
        students[folder.parent.name] = {k: "\n\n".join(p[k] for p in parts) for k in KINDS}
    if len(students) < 1:
        raise SimilarityError(
            f"no submissions of {assignment} in {layout.SUBMITTED}/: collect them first"
        )
    stubs = [answer_cells(n, n) for n in release.values()]
    refs = references(course, assignment, settings.references)
    out = course / layout.SIMILARITY / assignment
    pairs, marked = [], {}
    for kind in KINDS:
        found, shown = compare(
            kind,
            out / "answers",
            {s: t[kind] for s, t in students.items()},
            {r: t[kind] for r, t in refs.items()},
            "\n\n".join(stub[kind] for stub in stubs),
            settings,
        )
        pairs += found
        marked.update({(kind, *k): v for k, v in shown.items()})
    pairs.sort(key=lambda p: (-p.similarity, p.kind, p.student, p.other))
    found = Found(pairs, settings.threshold, out / "report.html", out / "pairs.csv")
    write_csv(found.pairs, found.csv)
    found.html.write_text(render(assignment, found.pairs, found.threshold, marked, sorted(refs)))
    return found

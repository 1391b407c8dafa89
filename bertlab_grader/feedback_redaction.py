"""Feedback never shows hidden-test source, not even when a submission prints it, in any encoding.

nbgrader's ``ClearHiddenTests`` removes the ``### BEGIN HIDDEN TESTS`` region from each test
cell's source, but a cell's *outputs* go to the student as they are. A submission can put the
hidden tests there itself: read its caller's frame (``sys._getframe(1)``, IPython's ``In``)
from inside a function a hidden test calls, and print it, reversed or base64-encoded, then or
in any later cell. (The sandbox keeps the course's files out of its sight.)
:class:`RedactHiddenTests` runs in ``nbgrader generate_feedback`` before ``ClearHiddenTests``,
and keeps of the outputs only what is allowed, not what looks harmless:

- what ran before the first hidden test cell is shown as it is (nothing hidden had run yet);
- from the first hidden test cell on, every cell shows only its error, if it has one: the
  exception's name and its message (written for students), cut at :attr:`message_chars`
  characters and :attr:`message_lines` lines, never the source, a traceback or anything printed;
- and every output that still quotes a hidden-test line (or the marker) is replaced by a notice.

So what a submission can smuggle out is bounded by a few hundred characters per failing cell.

Configured in ``autograder/nbgrader_config.py``; tested with hostile submissions in
``tests/test_hostile.py``.
"""

from __future__ import annotations

import html
import json

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

NOTICE = "[output removed by the grader: it contained the source of hidden tests]\n"


def lines_between(cells, begin: str, end: str) -> list[str]:
    """Stripped, non-blank source lines between a ``begin`` and an ``end`` marker line, in order."""
    lines = []
    for cell in cells:
        inside = False
        for line in cell.source.splitlines():
            if begin in line:
                inside = True
            elif end in line:
                inside = False
            elif inside and line.strip():
                lines.append(line.strip())
    return lines


def hidden_lines(cells, begin: str, end: str, shortest: int) -> set[str]:
    """The hidden-test lines worth searching for: at least ``shortest`` characters long."""
    return {line for line in lines_between(cells, begin, end) if len(line) >= shortest}


def _texts(output: NotebookNode) -> list[str]:
    """Every piece of text an output can show."""
    texts = []
    if output.get("text"):
        texts.append(output["text"] if isinstance(output["text"], str) else "".join(output["text"]))
    for value in output.get("data", {}).values():
        texts.append(value if isinstance(value, str) else json.dumps(value))
    texts += [output.get("ename", ""), output.get("evalue", "")] + list(output.get("traceback", []))
    return texts


def spellings(text: str) -> list[str]:
    """The text as printed, and as it reads once JSON or HTML escaping is undone."""
    unjson = text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    return [text, unjson, html.unescape(text), html.unescape(unjson)]


def error_only(outputs, chars: int, lines: int) -> list[NotebookNode]:
    """The errors of ``outputs`` as name and message, the message cut to ``lines`` lines and
    ``chars`` characters; nothing else (no stream, display or traceback)."""
    kept = []
    for output in outputs:
        if output.get("output_type") != "error":
            continue
        ename = str(output.get("ename", "Error"))[:80]
        message = "\n".join(str(output.get("evalue", "")).splitlines()[:lines])
        if len(message) > chars:
            message = message[:chars] + " [cut]"
        kept.append(NotebookNode(output_type="error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"]))
    return kept


class RedactHiddenTests(NbGraderPreprocessor):
    """From the first hidden test cell on, only errors' names and messages; anything quoting a
    hidden test replaced by a notice (runs before ``ClearHiddenTests``).

    An nbgrader preprocessor, so it is enabled once listed (nbconvert's are off by default).
    """

    begin = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end = Unicode("END HIDDEN TESTS").tag(config=True)
    shortest = Integer(12, help="hidden-test lines shorter than this (``else:``) are not searched for").tag(config=True)
    message_chars = Integer(400, help=(
        "The longest error message shown from the first hidden test cell on (longer ones are cut)")).tag(config=True)
    message_lines = Integer(8, help="The most lines of an error message shown from the first hidden test cell on").tag(
        config=True)

    def preprocess(self, nb, resources):
        hidden_ran = False
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            hidden_ran = hidden_ran or self.begin in cell.source
            if hidden_ran:
                cell.outputs = error_only(cell.get("outputs", []), self.message_chars, self.message_lines)
        lines = hidden_lines(nb.cells, self.begin, self.end, self.shortest)
        needles = lines | {self.begin, self.end}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            redacted = []
            for output in cell.get("outputs", []):
                readings = [s for t in _texts(output) for s in spellings(t)]
                if any(n in s for s in readings for n in needles):
                    self.log.warning("Feedback: removed an output that quotes hidden tests")
                    redacted.append(NotebookNode(output_type="stream", name="stdout", text=NOTICE))
                else:
                    redacted.append(output)
            cell.outputs = redacted
        return nb, resources

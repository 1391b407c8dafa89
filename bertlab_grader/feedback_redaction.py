"""Feedback shows a hidden test's score and its assertion's message, never the hidden inputs.

Hidden tests run in the tests' kernel (:mod:`bertlab_grader.guarded_execute`): their source never
reaches the student's process, and their errors are written with a minimal traceback. But a
hidden test passes its inputs to the student's functions, and the student's code can keep them:
print them then, raise them as an error's message, or print them in any later cell of its own.
So :class:`RedactHiddenTests` (in ``nbgrader generate_feedback``, before nbgrader's
``ClearHiddenTests``, which removes the hidden region of each test cell's source) keeps of the
outputs only what is allowed, not what looks harmless:

- what ran before the first hidden test cell is shown as it is (no hidden input had crossed yet);
- from the first hidden test cell on, every cell shows only its error, if it has one, never a
  traceback or anything printed: a test cell's ``AssertionError`` with its message (written for
  students) only where that message is one the cell's own ``assert`` statements write
  (:func:`assertion_templates`) and the error was not raised by the submission's code (the
  tests' kernel marks those: ``FROM_SUBMISSION_KEY``), each value it shows cut at
  :attr:`slot_chars` characters; any other error as the name of its built-in type and a fixed
  line (a message of the submission's own, ``ValueError(repr(hidden_inputs))``, is never shown);
- what the submission printed while a hidden test called it is in the autograded notebook's cell
  metadata (``PRINTED_KEY``), for the instructor, never in an output.

So what a submission can smuggle out is what a failing assertion shows of its own values: at most
:attr:`slot_chars` characters in each of that message's ``{...}`` slots.

Configured in ``autograder/nbgrader_config.py``; tested with hostile submissions in
``tests/grader/test_hostile.py``.
"""

from __future__ import annotations

import ast
import builtins
import re

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Integer, Unicode

#: A cell's metadata key where :class:`bertlab_grader.guarded_execute.GuardedExecute` lists the
#: errors it wrote itself ("KernelDied: ...", "GradingIntegrityError: ..."): the feedback shows
#: those as they are.
NOTICES_KEY = "bertlab_grader_notices"
#: True where the test cell's error was raised by the submission's code (through a call).
FROM_SUBMISSION_KEY = "bertlab_grader_error_from_submission"
#: What the submission's code printed while the cell's tests called it (for the instructor).
PRINTED_KEY = "bertlab_grader_printed"
#: The keys only the grader writes: any a submission brings is removed before grading.
GRADER_KEYS = (NOTICES_KEY, FROM_SUBMISSION_KEY, PRINTED_KEY)
#: The line that opens a test cell's hidden region.
HIDDEN_MARKER = "BEGIN HIDDEN TESTS"


#: The line an error gets in place of a message that is not a test's own.
NOT_SHOWN = (
    "(raised by the submission's code while or after hidden tests ran: its message is not shown "
    "in the feedback; the visible tests show theirs)"
)
VALUE_LINES = 2  # the lines of values a message helper writes: expected, got
BUILTIN_ERRORS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
}


def _literal(text: str) -> str:
    """``text`` as a pattern whose spaces match any run of white space (a helper may wrap it)."""
    return r"\s+".join(re.escape(word) for word in text.split())


def _template(node: ast.expr | None) -> str:
    """A regular expression for the text an assert's message expression writes: its string
    constants as they are, each value it formats (``{...}``, a name, a call's result) a group."""
    slot = "(.*?)"
    if node is None:
        return ""
    if isinstance(node, ast.Constant):
        return re.escape(str(node.value))
    if isinstance(node, ast.JoinedStr):
        return "".join(_template(v) if isinstance(v, ast.Constant) else slot for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _template(node.left) + _template(node.right)
    return slot


def _call_literals(node: ast.Call) -> list[str]:
    """The string constants a message helper's call passes (``mistake("concept", ...)``)."""
    values = [*node.args, *(k.value for k in node.keywords)]
    return [
        str(v.value) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
    ]


class Template:
    """A message an ``assert`` of a test cell writes. A string or f-string message is a pattern
    whose ``{...}`` slots (values) are cut to ``slot_chars`` when shown. A helper's message
    (``mistake(concept, expected, got)``, which wraps and orders its parts itself) must hold each
    string the call passes; of its lines that are not those strings (the values), the first
    :data:`VALUE_LINES` are shown, cut."""

    def __init__(self, node: ast.expr | None):
        self.literals = _call_literals(node) if isinstance(node, ast.Call) else None
        if self.literals is not None:
            ahead = "".join(f"(?=.*?{_literal(t)})" for t in self.literals if t.strip())
            self.pattern = re.compile(ahead + ".*", re.DOTALL)
        else:
            self.pattern = re.compile(_template(node), re.DOTALL)

    def shown(self, message: str, slot_chars: int) -> str | None:
        """``message`` as the feedback shows it, or None if this assert does not write it."""
        match = self.pattern.fullmatch(message)
        if match is None:
            return None
        cut = lambda value: value if len(value) <= slot_chars else value[:slot_chars] + " [cut]"  # noqa: E731
        if self.literals is not None:
            words, kept, values = " ".join(" ".join(self.literals).split()), [], 0
            for line in message.splitlines():
                if line.strip() and " ".join(line.split()) in words:
                    kept.append(line)
                elif values < VALUE_LINES:  # a helper shows at most what was expected and what came
                    kept, values = kept + [cut(line)], values + 1
            return "\n".join(kept)
        text, end, pieces = match.string, 0, []
        for i in range(1, (match.re.groups or 0) + 1):
            start, stop = match.span(i)
            pieces += [text[end:start], cut(text[start:stop])]
            end = stop
        return "".join(pieces) + text[end:]


def assertion_templates(source: str) -> list[Template]:
    """The messages a test cell's own ``assert`` statements (and ``raise AssertionError(...)``)
    can write; [] where its source does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    messages = [n.msg for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    messages += [
        n.exc.args[0] if n.exc.args else None
        for n in ast.walk(tree)
        if isinstance(n, ast.Raise)
        and isinstance(n.exc, ast.Call)
        and getattr(n.exc.func, "id", None) == "AssertionError"
    ]
    return [Template(m) for m in messages]


def error_only(
    outputs,
    chars: int,
    lines: int,
    templates: list[Template] = (),
    slot_chars: int = 60,
    notices: list[str] = (),
    from_submission: bool = False,
) -> list[NotebookNode]:
    """The errors of ``outputs``, nothing else (no stream, display or traceback): an
    ``AssertionError`` whose message one of ``templates`` writes, with that message (its slots cut
    to ``slot_chars``, then to ``lines`` lines and ``chars`` characters), unless the submission's
    code raised it (``from_submission``); any other error as its built-in type's name and
    :data:`NOT_SHOWN`; the grader's own ``notices`` as they are."""
    kept = []
    for output in outputs:
        if output.get("output_type") != "error":
            continue
        ename = str(output.get("ename", ""))
        evalue = str(output.get("evalue", ""))
        if f"{ename}: {evalue}" in notices:
            kept.append(output)
            continue
        shown = (
            next(
                (m for t in templates for m in [t.shown(evalue, slot_chars)] if m is not None), None
            )
            if ename == "AssertionError" and not from_submission
            else None
        )
        if shown is not None:
            message = "\n".join(shown.splitlines()[:lines])
            if len(message) > chars:
                message = message[:chars] + " [cut]"
        else:
            ename = (
                ename if ename in BUILTIN_ERRORS else "an exception of the submission's own type"
            )
            message = NOT_SHOWN
        kept.append(
            NotebookNode(
                output_type="error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"]
            )
        )
    return kept


def is_test_cell(cell, begin: str) -> bool:
    """An nbgrader autograded test cell (graded, not a solution), or any cell with hidden tests."""
    return (
        cell.cell_type == "code"
        and is_grade(cell)
        and not is_solution(cell)
        or begin in cell.source
    )


class RedactHiddenTests(NbGraderPreprocessor):
    """From the first hidden test cell on, only errors' names and the tests' own messages (runs
    before ``ClearHiddenTests``).

    An nbgrader preprocessor, so it is enabled once listed (nbconvert's are off by default).
    """

    begin = Unicode(HIDDEN_MARKER).tag(config=True)
    message_chars = Integer(
        400,
        help=(
            "The longest error message shown from the first hidden test cell on (longer ones are cut)"
        ),
    ).tag(config=True)
    message_lines = Integer(
        8, help="The most lines of an error message shown from the first hidden test cell on"
    ).tag(config=True)
    slot_chars = Integer(
        60,
        help=(
            "The most characters of each value a test's assertion message shows (its {...} slots), from "
            "the first hidden test cell on"
        ),
    ).tag(config=True)

    def preprocess(self, nb, resources):
        hidden_ran = False
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            hidden_ran = hidden_ran or self.begin in cell.source
            if hidden_ran:
                templates = (
                    assertion_templates(cell.source) if is_test_cell(cell, self.begin) else []
                )
                cell.outputs = error_only(
                    cell.get("outputs", []),
                    self.message_chars,
                    self.message_lines,
                    templates,
                    self.slot_chars,
                    cell.metadata.get(NOTICES_KEY, []),
                    bool(cell.metadata.get(FROM_SUBMISSION_KEY)),
                )
        return nb, resources


def error_output(ename: str, why: str, cell: NotebookNode | None = None) -> NotebookNode:
    """An error output, as a failed cell has one (HTML feedback shows its traceback lines); the
    grader's own, listed in ``cell``'s metadata so the feedback shows it whole (NOTICES_KEY)."""
    if cell is not None:
        cell.metadata.setdefault(NOTICES_KEY, []).append(f"{ename}: {why}")
    return NotebookNode(output_type="error", ename=ename, evalue=why, traceback=[f"{ename}: {why}"])

"""A visible test's failure message, read as nbgrader's Validate shows it to a student.

nbgrader 0.9.6 shows a failing test cell's error line by line, each line cut at 87 characters
by ``nbgrader validate`` (``Validator._indent``) and at the dialog's edge by JupyterLab's
Validate button, which does not wrap (``bertlab/messages.py`` has the details). So for every
known-wrong implementation (``tests/variants/``) that fails a visible test, the message must:

- name the mistake on its first line, short enough to be seen whole after ``AssertionError: ``
  (for a CORE variant, the first line holds the concept its CORE entry names);
- put "expected" and "got" at the start of lines of their own, none of them cut.

The fast check reads the messages from ``tests/assignments/test_variants.py``'s in-process grading (shared,
not run twice, on the same xdist worker); the slow one runs ``make validate`` (nbgrader validate
and its exit status) on a released notebook with a known-wrong implementation written in.
"""

from __future__ import annotations

import re
import subprocess

import nbformat
import pytest
from nbgrader.validator import Validator
from test_variants import graded
from variant_runner import variants

import course_fixture

REPO = course_fixture.REPO
ASSIGNMENTS = course_fixture.assignments()
WIDTH = Validator().width - 3  # nbgrader validate cuts longer lines and writes "..."
INDENT = len(Validator().indent)


def _per_assignment() -> list:
    return [pytest.param(a, id=a, marks=pytest.mark.xdist_group(a)) for a in ASSIGNMENTS]


def as_validate_shows(message: str) -> list[str]:
    """The lines nbgrader validate prints for an AssertionError with this message."""
    return [INDENT * " " + line for line in f"AssertionError: {message}".split("\n")]


def problems(message: str, concept: str | None = None) -> list[str]:
    """What a student could not read of ``message`` in Validate (nothing: an empty list)."""
    lines = as_validate_shows(message)
    found = [f"cut at {WIDTH} characters: {line.strip()!r}" for line in lines if len(line) > WIDTH]
    if concept and concept.lower() not in lines[0].lower():
        found.append(f"the first line does not name {concept!r}: {lines[0].strip()!r}")
    for word in ("expected", "got"):
        for line in lines[1:] + [lines[0]]:
            if re.search(rf"\b{word}\b", line) and not re.match(rf"\s*{word}\b", line):
                found.append(f"{word!r} is not at the start of a line of its own: {line.strip()!r}")
                break
    return found


def test_the_reading_finds_what_validate_hides():
    assert not problems("the mask marks padding\n  expected: [1, 0]\n  got:      [0, 1]", "padding")
    assert problems("x" * 80)
    assert problems("attention mask: 1 on real tokens, expected [1, 0], got [0, 1]")
    assert problems("short\n  expected: [1]\n  got: [0]", "padding")


def assertion_messages(said: str) -> list[str]:
    """The message of the AssertionError a test cell raised (tests/variant_runner.py's record)."""
    head, sep, message = said.rpartition("\nAssertionError\n")
    return [message.strip("\n")] if sep else []


@pytest.mark.parametrize("assignment", _per_assignment())
def test_every_visible_failure_reads_whole_in_validate(assignment):
    report, core = graded(assignment), variants(assignment)["CORE"]
    unreadable, seen = [], 0
    for name, result in report["WRONG"].items():
        for cell, test in result.get("tests", {}).items():
            if test["passed"] or cell.endswith("_hidden"):
                continue
            for message in assertion_messages(test["said"]):
                seen += 1
                unreadable += [f"{name} [{cell}]: {p}" for p in problems(message, core.get(name))]
    assert seen, (
        f"{assignment}: no known-wrong implementation fails a visible test with an AssertionError"
    )
    assert not unreadable, f"{assignment}: messages Validate does not show whole:\n" + "\n".join(
        unreadable
    )


def website() -> str:
    """Where _config.yml says the website is published (``html.baseurl``), with a final slash."""
    import yaml

    url = yaml.safe_load((REPO / "_config.yml").read_text())["html"]["baseurl"]
    return url.rstrip("/") + "/"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_chapter_link_opens_the_website_page(assignment):
    """The chapter link opens the published page wherever the notebook runs (Colab and Binder
    included), and the first cell names the page of a local build, to open in a browser (as a link,
    JupyterLab would show it in its HTML viewer, without its styles)."""
    intro = course_fixture.solution_notebook(assignment).cells[0].source
    links = re.findall(r"\*\*Chapter:\*\* \[[^]]+\]\(([^)]+)\)", intro)
    assert links, f"{assignment}: the first cell links no chapter (**Chapter:** [title](link))"
    (link,) = links
    page = re.fullmatch(re.escape(website()) + r"(book/[\w-]+)\.html", link)
    assert page, (
        f"{assignment}: the chapter link {link} is not a page of the website _config.yml names, "
        f"{website()}book/<page>.html"
    )
    assert (REPO / f"{page[1]}.md").is_file() and page[1] in (REPO / "_toc.yml").read_text(), (
        f"{assignment}: {page[1]}.md is not a page of the book"
    )
    assert f"`_build/html/{page[1]}.html`" in intro, (
        f"{assignment}: the first cell does not name the local build's page _build/html/{page[1]}.html"
    )
    assert "](../" not in intro, f"{assignment}: the first cell links a file of the checkout"


def with_implementation(assignment: str, sources: dict[str, str], dest) -> str:
    """The released notebook of ``assignment`` in ``dest`` (a copy of its folder), its stubs
    replaced by the reference solution and then by ``sources`` (grade id -> source)."""
    folder = dest / assignment
    subprocess.run(["cp", "-r", str(REPO / "exercises" / assignment), str(folder)], check=True)
    name = course_fixture.notebook_name(assignment)
    reference = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in course_fixture.solution_notebook(assignment).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    released = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    for cell in released.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = sources.get(grade_id, reference[grade_id])
    nbformat.write(released, folder / f"{name}.ipynb")
    return str(folder / f"{name}.ipynb")


@pytest.mark.slow
def test_make_validate_fails_and_names_the_mistake(tmp_path):
    """ps00's padding mistake, through ``make validate``: a failing exit status, and the error's
    first line names the mistake, with expected and got below it, uncut."""
    assignment, name = "ps00-tokens", "pad_mask_marks_padding"
    notebook = with_implementation(assignment, variants(assignment)["WRONG"][name], tmp_path)
    done = subprocess.run(
        ["make", "-s", "validate", f"NOTEBOOK={notebook}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0, f"make validate passed a failing notebook:\n{done.stdout[-3000:]}"
    shown = done.stdout.split("The error was:\n\n", 1)[-1].split("\n\n")[0].split("\n")
    assert shown[0].strip().startswith("AssertionError: attention mask"), done.stdout[-3000:]
    assert any(line.strip().startswith("expected:") for line in shown), shown
    assert any(line.strip().startswith("got:") for line in shown), shown
    assert not any(line.endswith("...") for line in shown), shown


@pytest.mark.slow
def test_make_validate_passes_the_reference(tmp_path):
    notebook = with_implementation("ps00-tokens", {}, tmp_path)
    done = subprocess.run(
        ["make", "-s", "validate", f"NOTEBOOK={notebook}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Success! Your notebook passes all the tests" in done.stdout

"""Every learned score a page quotes stands beside a baseline (docs/contributing.md, "What a
page's evidence must include").

A score alone says little: fine-tuned BERT's 90% means one thing beside TF-IDF's 89% and another
beside chance. So a page that quotes a score declares, in one of its code cells, which of its
glued numbers are learned scores and which baselines stand beside each, as literal dicts:

    LEARNED_SCORES = {"tuned_f1": ["lookup_f1"], ...}   # learned score -> its baselines
    NOT_LEARNED = {"untrained_f1": "the untrained head: where the gain starts"}

This test reads the page's Markdown (everything outside its code cells), cut into blocks (a
paragraph, a list item, a table, a heading), and fails when

1. a name in ``LEARNED_SCORES`` (a learned score or a baseline) is quoted nowhere;
2. a block quotes a learned score and none of its baselines: the score stands alone there;
3. a quoted glue name that looks like a score (:data:`SCORE`: accuracy, F1, exact match, ROUGE,
   recall@k, BLEU) is declared in neither dict, so a new score cannot slip in undeclared.

The names are the glue names, ``{glue:text}`name``` in the Markdown, because that is where a
reader meets a number; the tables a cell prints are the cell's business.
"""

from __future__ import annotations

import ast
import re
import pytest

from test_page_verdicts import BOOK, PAGES, code_cells

#: A glue name that looks like a score: one of these words as a part of the name, between
#: underscores (``tuned_f1``, ``ch8_acc_rag``, ``ft_rougeL``, ``ch8_r1_tfidf``).
SCORE = re.compile(r"(?:^|_)(?:acc|accuracy|f1|em|rouge\w*|recall|r\d+|bleu)(?:_|$)", re.I)
#: Pages whose scores are not declared yet, with the reason; each is a debt, not an exemption.
PENDING: dict[str, str] = {}
QUOTE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")


def markdown_blocks(page_text: str) -> list[str]:
    """The page's Markdown outside code cells, cut at blank lines, directive fences, headings,
    list items and table edges: the units in which a reader sees numbers side by side."""
    text = re.sub(r"^```\{code-cell\}.*?^```[ \t]*$", "\n", page_text, flags=re.S | re.M)
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # the jupytext front matter
    blocks, current = [], []

    def close():
        if current:
            blocks.append("\n".join(current))
            current.clear()

    previous_table = False
    for line in text.splitlines():
        stripped = line.strip()
        table = stripped.startswith("|")
        if (
            not stripped
            or stripped.startswith(("```", "#", ":"))
            or re.match(r"^(?:[-*+]|\d+\.)\s", stripped)
            or table != previous_table
        ):
            close()
        if stripped and not stripped.startswith("```"):
            current.append(stripped)
        previous_table = table
    close()
    return blocks


def declared(sources: list[str], name: str) -> dict:
    """The literal dict assigned to ``name`` in a page's code cells ({} if none)."""
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                return ast.literal_eval(node.value)
    return {}


def evidence_problems(page_text: str) -> list[str]:
    """What the page's evidence lacks (the three rules of the module docstring), one line each."""
    sources = code_cells(page_text)
    learned = declared(sources, "LEARNED_SCORES")
    not_learned = declared(sources, "NOT_LEARNED")
    blocks = markdown_blocks(page_text)
    quoted = [set(QUOTE.findall(block)) for block in blocks]
    everywhere = set().union(*quoted)
    problems = []
    for score, baselines in learned.items():
        if not baselines:
            problems.append(f"{score}: LEARNED_SCORES names no baseline for it")
        for name in [score, *baselines]:
            if name not in everywhere:
                problems.append(f"{name}: declared in LEARNED_SCORES but quoted nowhere")
    for block, names in zip(blocks, quoted):
        for score in sorted(names & set(learned)):
            if not names & set(learned[score]):
                problems.append(
                    f"{score}: quoted without any of its baselines {learned[score]} in: "
                    f"{block[:160]!r}"
                )
    known = set(learned) | {b for bs in learned.values() for b in bs} | set(not_learned)
    for name in sorted(everywhere - known):
        if SCORE.search(name):
            problems.append(
                f"{name}: looks like a score; declare it in LEARNED_SCORES (with its "
                "baselines) or in NOT_LEARNED (with the reason)"
            )
    for name, why in not_learned.items():
        if not isinstance(why, str) or not why.strip():
            problems.append(f"{name}: NOT_LEARNED gives no reason")
    return problems


@pytest.mark.parametrize("name", [p for p in PAGES if p not in PENDING])
def test_every_learned_score_stands_beside_a_baseline(name):
    problems = evidence_problems((BOOK / f"{name}.md").read_text())
    assert not problems, (
        f"book/{name}.md: a learned score without its baseline (docs/contributing.md, "
        '"What a page\'s evidence must include"):\n' + "\n".join(problems)
    )


def test_pending_pages_exist():
    assert set(PENDING) <= set(PAGES)


PAGE = """\
Intro, with a chance level {glue:text}`chance`.

```{code-cell} ipython3
LEARNED_SCORES = {"tuned_f1": ["lookup_f1"]}
NOT_LEARNED = {"untrained_f1": "the untrained head"}
glue("tuned_f1", 0.8)
```

| tagger | F1 |
|---|---|
| lookup | {glue:text}`lookup_f1` |
| tuned | {glue:text}`tuned_f1` |

The tagger scores {glue:text}`tuned_f1`, from {glue:text}`untrained_f1`; the lookup
{glue:text}`lookup_f1`.

- Recap: the tagger scored {glue:text}`tuned_f1` and the lookup {glue:text}`lookup_f1`.
"""


def test_the_check_passes_a_page_that_sets_each_score_beside_its_baseline():
    assert evidence_problems(PAGE) == []


def test_the_check_fails_a_score_quoted_alone():
    broken = PAGE.replace(
        "- Recap: the tagger scored {glue:text}`tuned_f1` and the lookup {glue:text}`lookup_f1`.",
        "- Recap: the tagger scored {glue:text}`tuned_f1`.",
    )
    assert [p.split(":")[0] for p in evidence_problems(broken)] == ["tuned_f1"]


def test_the_check_fails_an_undeclared_score_and_a_baseline_never_quoted():
    broken = PAGE.replace("NOT_LEARNED = {", "NOT_DECLARED = {").replace(
        "the lookup\n{glue:text}`lookup_f1`", "the lookup\nscores less"
    )
    broken = broken.replace("| lookup | {glue:text}`lookup_f1` |\n", "").replace(
        " and the lookup {glue:text}`lookup_f1`", ""
    )
    found = {p.split(":")[0] for p in evidence_problems(broken)}
    assert found == {"tuned_f1", "lookup_f1", "untrained_f1"}, found


def test_the_check_fails_a_real_page_with_its_baseline_cut_out():
    page = (BOOK / "05b-tagging.md").read_text()
    assert evidence_problems(page) == []
    broken = re.sub(r"\{glue:text\}`lookup_unseen_f1`", "zero", page)
    assert any(p.startswith("tuned_unseen_f1: quoted without") for p in evidence_problems(broken))
    assert any(p.startswith("lookup_unseen_f1: declared") for p in evidence_problems(broken))

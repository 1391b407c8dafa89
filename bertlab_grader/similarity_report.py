"""The similarity report's files: the pairs as CSV, the page that shows them side by side, and the
command's summary (:mod:`bertlab_grader.similarity` finds the pairs)."""

from __future__ import annotations

import csv
import html
from pathlib import Path


def write_csv(pairs: list, path: Path) -> None:
    """Every pair, closest first, one row each."""
    fields = ["kind", "student", "other", "similarity", "student_share", "other_share", "tokens"]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for p in pairs:
            row = {k: getattr(p, k) for k in fields}
            writer.writerow(row | {k: round(row[k], 4) for k in fields[3:6]})


def render(assignment: str, pairs: list, threshold: float, marked: dict, refs: list[str]) -> str:
    """The HTML page (self-contained, offline): a table of the pairs at or above the threshold,
    closest first, then each side by side with copydetect's marks on the stretches they share
    (``marked``: (kind, student, other) -> the two sides' HTML)."""
    shown = [p for p in pairs if p.similarity >= threshold]
    rows, sections = [], []
    for n, p in enumerate(shown):
        other = p.other.removeprefix("reference: ")
        sides = marked.get((p.kind, p.student, other)) or marked.get((p.kind, other, p.student))
        if sides and (p.kind, p.student, other) not in marked:
            sides = sides[::-1]
        left, right = sides or ("(no stretch long enough to mark)",) * 2
        rows.append(
            f"<tr><td><a href='#pair{n}'>{p.similarity:.0%}</a></td><td>{p.kind}</td>"
            f"<td>{html.escape(p.student)}</td><td>{html.escape(p.other)}</td>"
            f"<td>{p.student_share:.0%} / {p.other_share:.0%}</td><td>{p.tokens}</td></tr>"
        )
        sections.append(
            f"<h2 id='pair{n}'>{p.similarity:.0%} ({p.kind}): {html.escape(p.student)} and "
            f"{html.escape(p.other)}</h2><div class='sides'><pre>{left}</pre><pre>{right}</pre></div>"
        )
    listed = "".join(f"<li>{html.escape(r)}</li>" for r in refs) or "<li>none</li>"
    return PAGE.format(
        assignment=html.escape(assignment),
        threshold=f"{threshold:.0%}",
        count=len(shown),
        total=len(pairs),
        rows="".join(rows) or "<tr><td colspan='6'>no pair at or above the threshold</td></tr>",
        sections="".join(sections),
        references=listed,
    )


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity: {assignment}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #999; padding: 0.2em 0.6em; }}
.sides {{ display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }}
pre {{ background: #f6f6f6; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; }}
.highlight-red {{ background: #fbb; }} .highlight-green {{ background: #bfb; }}
</style></head><body>
<h1>Similarity report: {assignment}</h1>
<p>{count} of {total} pairs share at least {threshold} of an answer (pairs.csv lists them all).
A share is the part of one side's answer (its tokens, names ignored, the released stub left out)
found in the other; a pair of students shows the larger. A high share is a reason to read both
answers, not a verdict: this report changes no score.</p>
<table><tr><th>similarity</th><th>kind</th><th>student</th><th>other</th>
<th>shares</th><th>tokens</th></tr>{rows}</table>
{sections}
<h2>References compared</h2><ul>{references}</ul>
</body></html>
"""


def summary(found, course: Path) -> list[str]:
    """What the command prints: the closest pairs and where the report is."""
    shown = [p for p in found.pairs if p.similarity >= found.threshold]
    lines = [f"{p.similarity:6.0%}  {p.kind:<7}  {p.student}  ~  {p.other}" for p in shown[:20]]
    more = [f"... and {len(shown) - 20} more pairs"] if len(shown) > 20 else []
    return [
        f"{len(shown)} pair(s) at or above {found.threshold:.0%} (scores unchanged):",
        *lines,
        *more,
        f"written: {found.html.relative_to(course)}, {found.csv.relative_to(course)}",
    ]

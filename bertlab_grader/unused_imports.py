"""What the grader's own processes never import: jsonschema's IRI format checker.

nbgrader imports nbformat, which imports jsonschema, whose format checkers import
``rfc3987_syntax`` where it is installed (jupyter-events, under the course's Jupyter server, asks
for ``jsonschema[format-nongpl]``). That module builds a Lark Earley grammar when it is imported:
about one CPU-second, half of what a grading worker spends importing nbgrader. Nothing the grader
runs checks a string against the ``iri`` format (nbformat validates notebooks without a format
checker), so its processes mark the module absent before they import nbgrader, and jsonschema
registers no IRI checker, as it does wherever the module is not installed
(``jsonschema/_format.py``). A Jupyter server or ``nbgrader`` command elsewhere is not changed.

:func:`leave_out` is called first by the grader's command line (:mod:`bertlab_grader.__main__`)
and by a Dask task's child (:mod:`bertlab_grader.grade_one`); importing this module calls it, so
that the fork server of the parallel grader's workers (:func:`bertlab_grader.parallel._worker_context`)
can name it first among the modules it preloads.
"""

from __future__ import annotations

import sys

#: Modules a grader process has no use for, whose import costs seconds (measured by
#: ``python -X importtime -c "import nbgrader.apps"``: rfc3987_syntax 1.0 of its 1.9 s).
UNUSED = ("rfc3987_syntax",)


def leave_out() -> None:
    """Make ``import`` of each of :data:`UNUSED` raise ImportError in this process (a ``None`` in
    ``sys.modules``, Python's own way to say a module is absent), unless one is already imported."""
    for name in UNUSED:
        sys.modules.setdefault(name, None)


leave_out()

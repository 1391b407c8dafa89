"""A graded cell pasted twice costs the student nothing.

Jupyter's copy and paste copies a cell's metadata, nbgrader's included: a student who copies a
test cell (to run it again, or to try an idea beside it) hands in two cells with one grade id.
nbgrader's own ``DeduplicateIds`` (nbgrader 0.9.6, ``nbgrader/preprocessors/deduplicateids.py``)
keeps the last copy's metadata and sets the others' to ``{}``; its ``CheckCellMetadata`` then
reads that empty dictionary as metadata of an old schema and refuses the whole notebook ("use an
old version of the nbgrader metadata format ... nbgrader update"): every score of that
submission is lost, for a slip.

:class:`DropDuplicateIds` does what ``DeduplicateIds`` means to do: the last cell with a grade id
keeps it (``OverwriteCells`` then restores a test cell's source and points from the gradebook),
and every earlier copy becomes an ordinary cell, with no nbgrader metadata at all. It replaces
``DeduplicateIds`` in ``Autograde.sanitize_preprocessors`` (``autograder/nbgrader_config.py``);
``tests/grader/test_hostile.py`` grades a submission with a pasted test cell.
"""

from __future__ import annotations

from nbgrader.preprocessors import DeduplicateIds


class DropDuplicateIds(DeduplicateIds):
    """nbgrader's ``DeduplicateIds``, with the earlier copies' nbgrader metadata removed, not emptied."""

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if (
            cell.metadata.get("nbgrader") == {}
        ):  # a copy DeduplicateIds emptied: an ordinary cell now
            del cell.metadata["nbgrader"]
        return cell, resources

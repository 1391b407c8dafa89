"""Merge a code cell's stream outputs as they were written, without editing the notebook.

myst-nb's ``nb_merge_streams`` (``myst_nb.core.utils.coalesce_streams``, myst-nb 1.4) strips each
chunk of a stream and appends a newline, so a line that the kernel happened to send in two
messages is broken in two on the page ("in this page's BERT:" / " []"); and it appends to the
first output in place, so the notebook the site offers for download stores the later chunks
twice. The kernel splits a stream wherever its flush timer fires, which a busy build machine
makes frequent. This extension puts in myst-nb's place a merge that joins the chunks exactly,
on copies, and otherwise does what myst-nb's does (backspaces and bare carriage returns
resolved, stdout kept before stderr).
"""

from __future__ import annotations

import copy
import re

from nbformat import NotebookNode

_CARRIAGE_RETURN = re.compile(".*\r(?=[^\n])")
_BACKSPACE = re.compile("[^\n]\x08")  # a character and the backspace that erases it


def merge_streams(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """One output per stream name, its text the chunks joined as the kernel sent them."""
    merged: list[NotebookNode] = []
    streams: dict[str, NotebookNode] = {}
    for output in outputs:
        if output["output_type"] != "stream":
            merged.append(output)
        elif output["name"] in streams:
            streams[output["name"]]["text"] += output["text"]
        else:
            streams[output["name"]] = copy.deepcopy(output)
            merged.append(streams[output["name"]])
    for output in streams.values():
        text = output["text"]
        while _BACKSPACE.search(text):
            text = _BACKSPACE.sub("", text)
        output["text"] = _CARRIAGE_RETURN.sub("", text)
    for i, output in enumerate(merged[:-1]):  # stdout before stderr, as myst-nb orders them
        after = merged[i + 1]
        if output.get("name") == "stderr" and after.get("name") == "stdout":
            merged[i], merged[i + 1] = after, output
    return merged


def setup(app):
    import myst_nb.core.render

    myst_nb.core.render.coalesce_streams = merge_streams
    return {"parallel_read_safe": True, "parallel_write_safe": True}

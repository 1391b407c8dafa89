"""The shipped masked diffusion model, assembled on first use into an ordinary Hugging Face folder.

What ships in ``bertlab/models/weights/diffusion/`` (``make diffusion`` writes it,
``recipes/diffusion/train.py``) is what training changed: every tensor of the course
checkpoint's ``BertForMaskedLM`` but the frozen word embeddings (and the output projection tied
to them), in fp16, with its sha256 in ``manifest.json``. :func:`diffusion_path` loads the course
checkpoint, puts the shipped tensors in and saves the result with ``save_pretrained``, so Chapter
6b loads it with ``AutoModelForMaskedLM.from_pretrained`` offline. The folder lives in the course
cache (:mod:`bertlab.models.shipped`), named by the manifest's hash, and is rebuilt if damaged.
``$BERTLAB_DIFFUSION`` names another folder or hub id instead.

The fixed-ratio control (``make diffusion-control``: the same trainer, pairs, steps and unfrozen
layers, every pair masked at 15%) ships the same way in ``weights/diffusion-fixed-15/``;
:func:`control_path` assembles it. Chapter 6b compares the two to separate what the ratio did
from what the task's training did.
"""

from __future__ import annotations

from pathlib import Path

from bertlab.models import shipped
from bertlab.models.cache import quiet_hub_bars
from bertlab.models.encoder import checkpoint_path
from bertlab.models.resolve import MODELS, is_folder, resolve

WEIGHTS_DIR = shipped.WEIGHTS / "diffusion"
CONTROL_DIR = shipped.WEIGHTS / "diffusion-fixed-15"  # the same run at a fixed 15% ratio
# what Chapter 6b's canvas writers wrote on Chapter 7's 300 held-out senses
# (recipes/diffusion/evaluate.py); the page scores it and re-writes a group itself
EVALUATION = WEIGHTS_DIR / "evaluation.json"
ENV_VAR = MODELS["diffusion"].env_var  # a folder or hub id to use instead of the shipped model


def is_shipped(weights_dir: Path | None = None) -> bool:
    """True when trained weights are in the package (``manifest.json``)."""
    return shipped.is_shipped(weights_dir or WEIGHTS_DIR)


def manifest(weights_dir: Path | None = None) -> dict:
    """The shipped manifest, after checking the weights' sha256 against it."""
    return shipped.manifest(weights_dir or WEIGHTS_DIR, "masked diffusion model", "diffusion")


def assemble(weights_dir: Path, dest: Path, record: dict) -> None:
    """Course checkpoint + shipped tensors -> ``save_pretrained`` into the (new) folder ``dest``."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = checkpoint_path()  # trained on the course checkpoint, whatever BERTLAB_MODEL says
    model = AutoModelForMaskedLM.from_pretrained(path)
    shipped.put_delta(model, weights_dir, record, "diffusion")
    with quiet_hub_bars():
        model.save_pretrained(dest)
        AutoTokenizer.from_pretrained(path).save_pretrained(dest)


def diffusion_path(weights_dir: Path | None = None, cache_dir: Path | None = None) -> str:
    """Folder of the assembled masked diffusion model (built on first use, then reused).

    Raises :class:`~bertlab.models.shipped.DamagedCheckpointError` when the shipped weights
    fail their sha256 check, ``FileNotFoundError`` (saying to run ``make diffusion``) when none ship.
    """
    weights_dir = Path(weights_dir or WEIGHTS_DIR)
    return shipped.assemble_once(
        weights_dir, manifest(weights_dir), assemble, "diffusion-", cache_dir
    )


def control_path(cache_dir: Path | None = None) -> str:
    """Folder of the assembled fixed-ratio control (Chapter 6b), built on first use like
    :func:`diffusion_path`; it is always the shipped one (no variable names another)."""
    record = shipped.manifest(CONTROL_DIR, "fixed-ratio control", "diffusion-control")
    return shipped.assemble_once(CONTROL_DIR, record, assemble, "diffusion-control-", cache_dir)


def diffusion_model_path(name: str | None = None) -> str:
    """The masked diffusion model Chapter 6b loads: ``name``, else ``$BERTLAB_DIFFUSION``, else the shipped one."""
    return resolve("diffusion", name, diffusion_path)


def is_course_diffusion(name: str | None = None) -> bool:
    """Whether the model :func:`diffusion_model_path` resolves (``name``, else
    ``$BERTLAB_DIFFUSION``) is the shipped masked diffusion model.

    Chapter 6b asserts what the shipped model learnt (it writes better definitions than the
    checkpoint, it holds up at high masking ratios) only when it runs on it, as the pages do with
    :func:`bertlab.models.encoder.is_course_checkpoint` for ``BERTLAB_MODEL``; with another model
    it shows that model's numbers and must still run to the end
    (``tests/course/test_model_switch.py``)."""
    if not is_shipped():
        return False
    return is_folder(diffusion_model_path(name), diffusion_path())

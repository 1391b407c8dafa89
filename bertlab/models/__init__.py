"""The models the course loads: which folder each comes from, and how the shipped ones are built.

- :mod:`bertlab.models.resolve`: one order for every model (an explicit name, its environment
  variable, the shipped default) and one error that says what to do;
- :mod:`bertlab.models.encoder`: the BERT every chapter reads with (``BERTLAB_MODEL``): the course
  checkpoint, assembled from its shipped delta on the pip-installed all-MiniLM-L6-v2;
- :mod:`bertlab.models.decoder`: the model built to write (``BERTLAB_DECODER``), SmolLM2
  converted from its GGUF (Chapter 6 on);
- :mod:`bertlab.models.bert2bert`: Chapter 7's fine-tuned BERT2BERT (``BERTLAB_BERT2BERT``);
- :mod:`bertlab.models.diffusion`: Chapter 6b's masked diffusion model (``BERTLAB_DIFFUSION``);
- :mod:`bertlab.models.shipped` and :mod:`bertlab.models.cache`: a shipped delta checked against
  its manifest's sha256 and assembled once into the course cache.

The weights that ship are in ``bertlab/models/weights/<model>/``; ``recipes/`` trains them.
"""

from bertlab.models.bert2bert import bert2bert_model_path
from bertlab.models.cache import cache_root, public_path
from bertlab.models.decoder import DECODER_ENV_VAR, decoder_path
from bertlab.models.diffusion import diffusion_model_path
from bertlab.models.encoder import (
    ENV_VAR,
    MINILM,
    checkpoint_path,
    default_model_path,
    describe,
    minilm_path,
    model_path,
)
from bertlab.models.resolve import ModelNotAvailableError, resolve_named
from bertlab.models.shipped import DamagedCheckpointError

__all__ = [
    "DECODER_ENV_VAR",
    "ENV_VAR",
    "MINILM",
    "DamagedCheckpointError",
    "ModelNotAvailableError",
    "bert2bert_model_path",
    "cache_root",
    "checkpoint_path",
    "decoder_path",
    "default_model_path",
    "describe",
    "diffusion_model_path",
    "kernel_folders",
    "minilm_path",
    "model_path",
    "prepare_all",
    "public_path",
    "resolve_named",
]


def prepare_all() -> None:
    """Resolve every model a notebook of the course loads (the encoder and the decoder), so that
    they are assembled, converted or downloaded into the cache now.

    The grader calls it (``c.GuardedExecute.prepare`` in ``autograder/nbgrader_config.py``)
    before it starts a sandboxed kernel, which cannot write the cache. A model that cannot be
    had is skipped: the notebook's own call then says what to do, in the feedback.
    """
    for resolve in (model_path, decoder_path):
        try:
            resolve()
        except ModelNotAvailableError:
            pass


def kernel_folders() -> list[str]:
    """The folders a grading kernel reads the course's models from, besides the Python environment
    (where the shipped weights and the pip-installed base models live): the course cache (which
    :func:`prepare_all` fills), every model folder a variable names, and the Hugging Face cache
    when a variable names a hub id.

    The grader binds exactly these into a kernel's sandbox, read-only
    (``c.Sandbox.readable`` in ``autograder/nbgrader_config.py``); nothing else of the machine.
    """
    import os

    from bertlab.models.resolve import MODELS

    folders = {str(cache_root())}
    for model in MODELS.values():
        name = os.environ.get(model.env_var, "").strip()
        if name and os.path.isdir(os.path.expanduser(name)):
            folders.add(os.path.abspath(os.path.expanduser(name)))
        elif name:  # a hub id, in the Hugging Face cache
            from huggingface_hub import constants

            folders.add(constants.HF_HUB_CACHE)
    return sorted(folders)

"""Chapter 6b's masked diffusion model: the course checkpoint trained at every masking ratio.

``make diffusion`` (the recipe ``book/reference/diffusion_training.py``) continues the course
checkpoint with the masked-diffusion objective on the definitions task and exports what training
changed into ``weights/``; :mod:`bertlab.diffusion.embedded` assembles it into an ordinary
``BertForMaskedLM`` folder on first use, offline. ``$BERTLAB_DIFFUSION`` names another folder or
hub id instead.
"""

from pathlib import Path

WEIGHTS_DIR = Path(__file__).with_name("weights")
ENV_VAR = "BERTLAB_DIFFUSION"  # a folder or hub id to use instead of the shipped model

"""The embedded course checkpoint: shipped weights assembled into a full HF folder on first use.

Placeholder until the checkpoint issue lands: nothing ships yet, so the MiniLM encoder is the
default (see bertlab.models.default_model_path).
"""

from pathlib import Path

WEIGHTS_DIR = Path(__file__).with_name("weights")


def is_shipped() -> bool:
    return (WEIGHTS_DIR / "manifest.json").is_file()


def checkpoint_path() -> str:
    raise NotImplementedError("the course checkpoint has not landed yet")

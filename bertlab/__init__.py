"""bertlab: the course package. Chapters, exercises, solutions, tests and the grader import it."""

from bertlab.launch_links import exercise_links
from bertlab.models import DECODER_ENV_VAR, decoder_path  # noqa: F401 (the generating model, Chapter 6)
from bertlab.models import ENV_VAR, MINILM, ModelNotAvailableError, describe, model_path

__all__ = ["ENV_VAR", "MINILM", "ModelNotAvailableError", "describe", "exercise_links", "model_path"]
__version__ = "0.1.0"

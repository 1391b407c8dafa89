"""bertlab: the course package. Chapters, exercises, solutions, tests and the grader import it."""

from bertlab.models import ENV_VAR, MINILM, ModelNotAvailableError, describe, model_path

__all__ = ["ENV_VAR", "MINILM", "ModelNotAvailableError", "describe", "model_path"]
__version__ = "0.1.0"

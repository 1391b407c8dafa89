"""``BERTLAB_MODEL``, ``BERTLAB_DECODER`` and ``BERTLAB_DIFFUSION`` run every page of the book on
another BERT, another decoder and another masked diffusion model, offline.

The introduction, the README and ``docs/model.md`` promise that one environment variable moves the
whole book to another BERT, one more to another decoder, and one Chapter 6b's diffusion model.
This test keeps those promises honest: it saves a second BERT made here (seeded, randomly
initialised, tiny: 2 layers, hidden 64, the course tokenizer and vocabulary, the weights laid out
as ``bert-base-uncased``'s are: encoder, pooler, MLM head and NSP head), a third one of another
seed as the diffusion model, and a second decoder (seeded, random, tiny, laid out as SmolLM2 is,
with its tokenizer and chat template), points the variables at their folders and executes each
page that resolves the encoder, in a temporary copy of ``book/`` (so ``book/reference`` imports
as in the build), one kernel at a time.

A random model has learnt nothing, so a page may show that (a claim about what the course
checkpoint learnt is measured on the course checkpoint by name, one about what SmolLM2 does on
SmolLM2, one about what the shipped diffusion model learnt on it: ``is_course_checkpoint``,
``is_embedded_decoder``, ``is_course_diffusion``); what it may not do is stop. The decoder and
the diffusion model switched too keep this test quick: SmolLM2's 135M parameters were most of
the time of Chapters 6 and 8 here, the shipped diffusion model half of Chapter 6b's. The pages
that never resolve ``BERTLAB_MODEL`` (the introduction and the model card, which always describe
the course checkpoint) are checked to be exactly those, not run.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

import course_fixture

REPO = Path(__file__).resolve().parents[2]
BOOK = REPO / "book"
CELL_TIMEOUT = 600  # seconds; the longest cell on the tiny model takes well under a minute

pytestmark = pytest.mark.slow


def toc_pages() -> list[str]:
    """Every page of ``_toc.yml`` in reading order, by its stem (``book/<stem>.md``)."""
    return [file.removeprefix("book/") for file in course_fixture.toc_files()]


def code(stem: str) -> str:
    """The source of every code cell of a page."""
    text = (BOOK / f"{stem}.md").read_text()
    return "\n".join(re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M))


def resolves_the_encoder(stem: str) -> bool:
    """Whether a page's code asks for ``BERTLAB_MODEL``'s model (``model_path()``, ``describe()``)."""
    return bool(re.search(r"\b(model_path|describe)\(\)", code(stem)))


PAGES = [stem for stem in toc_pages() if resolves_the_encoder(stem)]


def save_tiny_bert(folder: Path, seed: int = 0) -> Path:
    """A random BERT (``seed``) with the course tokenizer, saved as a hub checkpoint is: [L=2, H=64]."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForPreTraining

    from bertlab.models import checkpoint_path

    course = Path(checkpoint_path())
    tokenizer = AutoTokenizer.from_pretrained(course)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    # BertForPreTraining has bert-base-uncased's tensors (pooler and NSP head included); its config,
    # like bert-base-uncased's, names BertForMaskedLM as the architecture.
    BertForPreTraining(config).save_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**saved, "architectures": ["BertForMaskedLM"]}))
    tokenizer.save_pretrained(folder)
    shutil.copyfile(course / "vocab.txt", folder / "vocab.txt")  # save_pretrained leaves it out
    return folder


def save_tiny_decoder(folder: Path) -> Path:
    """A seeded random decoder laid out as the embedded SmolLM2 is (llama, tied embeddings), with
    its tokenizer, chat template and generation settings: [L=2, H=64]."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig, LlamaForCausalLM

    from bertlab.models.decoder import embedded_decoder_path

    shipped = embedded_decoder_path()
    config = AutoConfig.from_pretrained(shipped)
    config.update(
        {
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 32,
            "bertlab_name": "a random 2-layer llama decoder (tests/course/test_model_switch.py)",
        }
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(shipped).save_pretrained(folder)
    GenerationConfig.from_pretrained(shipped).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def tiny_diffusion(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-diffusion"), seed=1)


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory) -> Path:
    return save_tiny_decoder(tmp_path_factory.mktemp("tiny-decoder"))


@pytest.fixture(scope="module")
def book_copy(tmp_path_factory) -> Path:
    """A copy of the pages and ``book/reference`` (not ``_build``), where the pages run; beside it
    ``_config.yml`` and ``exercises/``, which each chapter's Exercise links are built from."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(BOOK, root / "book", ignore=shutil.ignore_patterns("_vendor", "__pycache__"))
    shutil.copyfile(REPO / "_config.yml", root / "_config.yml")
    (root / "exercises").symlink_to(REPO / "exercises", target_is_directory=True)
    return root / "book"


def test_the_pages_left_out_never_resolve_the_encoder():
    # a page of prose alone (no code cell, such as Chapter 6c's survey) runs no model
    left_out = [stem for stem in toc_pages() if stem not in PAGES and code(stem)]
    assert left_out == ["model-card"], left_out
    assert "checkpoint_path()" in code("model-card")


def test_the_tiny_bert_is_a_second_model(tiny_bert):
    from bertlab.models import checkpoint_path

    config = json.loads((tiny_bert / "config.json").read_text())
    course = json.loads((Path(checkpoint_path()) / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"]) == (2, 64)
    assert config["hidden_size"] != course["hidden_size"]
    assert config["vocab_size"] == course["vocab_size"]


def test_the_tiny_decoder_is_a_second_decoder(tiny_decoder):
    from bertlab.models.decoder import embedded_decoder_path, is_embedded_decoder

    config = json.loads((tiny_decoder / "config.json").read_text())
    shipped = json.loads((Path(embedded_decoder_path()) / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"]) == (2, 64)
    assert config["vocab_size"] == shipped["vocab_size"] and config["model_type"] == "llama"
    assert is_embedded_decoder() and not is_embedded_decoder(str(tiny_decoder))


def test_the_tiny_diffusion_model_is_a_second_diffusion_model(tiny_diffusion, tiny_bert):
    from bertlab.models.diffusion import is_course_diffusion

    assert is_course_diffusion() and not is_course_diffusion(str(tiny_diffusion))
    weights = "model.safetensors"
    assert (tiny_diffusion / weights).read_bytes() != (tiny_bert / weights).read_bytes()


@pytest.mark.parametrize("stem", [p for p in PAGES])
def test_page_runs_on_another_bert(
    stem, tiny_bert, tiny_decoder, tiny_diffusion, book_copy, monkeypatch, record_property
):
    import jupytext
    import nbclient
    import nbformat

    for name, value in {
        "BERTLAB_MODEL": str(tiny_bert),
        "BERTLAB_DECODER": str(tiny_decoder),
        "BERTLAB_DIFFUSION": str(tiny_diffusion),
        "HF_HUB_OFFLINE": "1",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "TRANSFORMERS_VERBOSITY": "error",
    }.items():
        monkeypatch.setenv(name, value)
    notebook = jupytext.read(book_copy / f"{stem}.md")
    started = time.perf_counter()
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(book_copy)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        nbformat.write(notebook, book_copy / f"{stem}.ipynb")
        pytest.fail(
            f"book/{stem}.md stops with BERTLAB_MODEL={tiny_bert}, BERTLAB_DECODER="
            f"{tiny_decoder} and BERTLAB_DIFFUSION={tiny_diffusion} (random 2-layer BERTs and "
            f"decoder); "
            f"a page may show that a model learnt nothing, but must not stop.\n"
            f"Executed notebook: {book_copy / f'{stem}.ipynb'}\n{err}"[-6000:]
        )
    record_property("seconds", round(time.perf_counter() - started, 1))

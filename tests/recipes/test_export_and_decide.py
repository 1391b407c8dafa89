"""From a run to what ships (recipes/checkpoint/export.py, decide.py, evaluate.py): the delta export
and its assembly into a Hugging Face folder (bertlab.models.encoder), the shipping rule, and the
load measurement. Everything under tmp_path: bertlab/models/weights/encoder/ is never touched."""

from __future__ import annotations

import json
import os

import pytest
import torch

from bertlab.models import encoder, minilm_path
from recipes.checkpoint import export


@pytest.fixture(scope="module")
def exported(tiny_run, tiny_corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("weights")
    manifest = export.export(tiny_run, out, corpora=[tiny_corpus])
    return out, manifest


def test_export_is_small_and_complete(exported):
    out, manifest = exported
    assert sum(p.stat().st_size for p in out.iterdir()) < export.MAX_BYTES
    assert manifest["base"]["sha256"].startswith(export.BASE_SHA256_PREFIX)
    assert manifest["training"]["steps"] == 3
    assert manifest["config"]["architectures"] == ["BertForMaskedLM"]
    from safetensors import safe_open

    keys = set(safe_open(out / manifest["delta_file"], "pt").keys())
    assert "bert.embeddings.word_embeddings.weight" not in keys
    assert {
        "cls.predictions.bias",
        "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.LayerNorm.weight",
        "bert.encoder.layer.5.output.dense.weight",
    } <= keys


def test_assembled_folder_round_trip(exported, tiny_run, tmp_path):
    from transformers import AutoModel, AutoTokenizer, BertForMaskedLM

    out, manifest = exported
    folder = encoder.checkpoint_path(out, cache_dir=tmp_path)
    assert encoder.checkpoint_path(out, cache_dir=tmp_path) == folder  # reused, not rebuilt
    model = BertForMaskedLM.from_pretrained(folder).eval()
    trained = torch.load(tiny_run / "checkpoint.pt", weights_only=False)["model"]
    w = "bert.encoder.layer.0.attention.self.query.weight"
    assert torch.allclose(model.state_dict()[w], trained[w], atol=1e-3)  # fp16 round trip
    tok = AutoTokenizer.from_pretrained(folder)
    assert len(tok) == 30522 and tok.tokenize("unaffable") != ["[UNK]"]
    bert = AutoModel.from_pretrained(folder)
    base = AutoModel.from_pretrained(str(minilm_path()))
    assert torch.equal(
        bert.pooler.dense.weight, base.pooler.dense.weight
    )  # the base's pooler, not random

    full = (tmp_path / os.path.basename(folder) / "model.safetensors").stat().st_size
    with open(os.path.join(folder, "model.safetensors"), "r+b") as f:
        f.truncate(1000)  # an interrupted copy or a damaged cache: rebuilt, not reused
    assert encoder.checkpoint_path(out, cache_dir=tmp_path) == folder
    assert os.path.getsize(os.path.join(folder, "model.safetensors")) == full


def test_damaged_file_is_rejected(exported, tmp_path):
    out, _ = exported
    broken = tmp_path / "weights"
    broken.mkdir()
    for f in out.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    data = bytearray((broken / export.DELTA_FILE).read_bytes())
    data[-10] ^= 0xFF
    (broken / export.DELTA_FILE).write_bytes(bytes(data))
    with pytest.raises(encoder.DamagedCheckpointError, match="damaged .sha256 mismatch"):
        encoder.checkpoint_path(broken, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_the_shipping_rule_keeps_the_shipped_checkpoint_against_itself():
    from recipes.checkpoint import decide

    shipped = json.loads((encoder.WEIGHTS_DIR / "evaluation.json").read_text())
    rows = decide.criteria(shipped, shipped)
    assert not next(holds for name, _, holds in rows if "copy rate" in name)  # lower, not equal
    assert decide.main([str(encoder.WEIGHTS_DIR / "evaluation.json")]) == 1  # KEEP
    better = json.loads(json.dumps(shipped))
    better["probes"].update(top1=0.5, top5=0.75)
    next(p for p in better["probes"]["per_probe"] if p["text"] == decide.FLAGSHIP)["top5"][0] = (
        "paris"
    )
    v4 = next(h for h in better["heldout_sets"] if h["mix"] == "v4")
    v4.update(accuracy=0.51, copy_rate=v4["copy_rate"] / 2)
    assert all(holds for *_, holds in decide.criteria(better, shipped, delta_bytes=22_000_000))


def test_deciding_a_run_says_what_is_missing(tmp_path, capsys):
    from recipes.checkpoint import decide

    with pytest.raises(SystemExit):  # neither a candidate nor a run
        decide.main([])
    capsys.readouterr()
    with pytest.raises(SystemExit, match="checkpoint.pt not found; train a stage"):
        decide.main(["--run", str(tmp_path)])
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    with pytest.raises(SystemExit, match="heldout.txt not found; build it with"):
        decide.main(["--run", str(tmp_path), "--corpus", str(tmp_path / "corpus")])


def test_measure_load_reports_a_forward_pass_and_its_peak():
    """The load measurement (the model card's figures, `make bench`) runs its script in a fresh
    interpreter: a mistake in that script is invisible to the linter, so run it."""
    from recipes.checkpoint.evaluate import measure_load

    result = measure_load(encoder.checkpoint_path())
    assert result["logits_shape"][:2] == [2, 16] and result["peak_rss_mb"] > 0

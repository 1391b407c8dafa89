"""The course's left-to-right writer (``make causal``, Chapter 6's "Who can write?" box): its
loss, its mask, its recipe and the shipped model, like for like with Chapter 6b's diffusion run."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import BertConfig, BertLMHeadModel

from bertlab.models import ModelNotAvailableError
from bertlab.models import causal as shipped_causal
from bertlab.models import diffusion as shipped_diffusion
from recipes.causal.train import causal_step_loss, targets
from reference import diffusion_training

SEP = 102


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=256,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        is_decoder=True,
    )
    return BertLMHeadModel(config).eval()


def batch() -> dict:
    """Two pairs, [CLS] source [SEP] definition [SEP], the second padded."""
    items = [
        {"input_ids": [101, 7, 8, SEP, 9, 10, 11, SEP], "token_type_ids": [0] * 4 + [1] * 4,
         "maskable": [False] * 4 + [True] * 3 + [False]},
        {"input_ids": [101, 7, SEP, 12, SEP], "token_type_ids": [0] * 3 + [1] * 2,
         "maskable": [False] * 3 + [True] + [False]},
    ]  # fmt: skip
    return diffusion_training.collate(items)


def test_the_writer_is_scored_on_the_definition_and_its_closing_sep_only():
    scored = targets(batch())
    assert scored.tolist() == [
        [False] * 4 + [True] * 4,
        [False] * 3 + [True] * 2 + [False] * 3,
    ]


def test_the_loss_is_bert_lm_head_models_own_with_the_prompt_unscored(tiny):
    b = batch()
    loss, n = causal_step_loss(tiny, b)
    labels = b["input_ids"].masked_fill(~targets(b), -100)
    own = tiny(
        input_ids=b["input_ids"],
        token_type_ids=b["token_type_ids"],
        attention_mask=b["attention_mask"],
        labels=labels,
    ).loss
    assert n == 6 and torch.allclose(loss, own, atol=1e-6)


def test_under_the_causal_mask_a_later_token_never_changes_an_earlier_prediction(tiny):
    ids = batch()["input_ids"][:1]  # [1, T]
    edited = ids.clone()
    edited[0, 6] = 40
    with torch.no_grad():
        a, b = tiny(input_ids=ids).logits, tiny(input_ids=edited).logits  # [1, T, V]
    assert torch.equal(a[0, :6], b[0, :6]) and not torch.allclose(a[0, 6:], b[0, 6:])


def test_the_switch_names_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("BERTLAB_CAUSAL", str(tmp_path / "nowhere"))
    with pytest.raises(ModelNotAvailableError, match="BERTLAB_CAUSAL"):
        shipped_causal.causal_model_path()


def test_the_shipped_writer_is_the_diffusion_run_under_a_causal_mask(tmp_path):
    """Chapter 6's box compares the writers like for like: the writer trained on the diffusion
    model's pairs with its trainer settings, and it loads offline as a causal BertLMHeadModel."""
    from transformers import AutoModelForCausalLM

    record = shipped_causal.manifest()
    diffusion = shipped_diffusion.manifest()
    same = ("max_steps", "batch_size", "lr", "warmup", "seed", "steps_done")
    assert {k: record["settings"].get(k) for k in same} == {
        k: diffusion["settings"][k] for k in same
    }, "the writer's training differs from the diffusion model's"
    assert (shipped_causal.WEIGHTS_DIR / record["weights_file"]).stat().st_size <= 30 * 2**20
    path = shipped_causal.causal_path(cache_dir=tmp_path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert type(model).__name__ == "BertLMHeadModel" and model.config.is_decoder
    assert model.config.bertlab_name == "bertlab-causal-definitions"
    assert json.loads((shipped_causal.WEIGHTS_DIR / "manifest.json").read_text())["curve"]


def test_the_recipe_trains_a_few_steps_and_exports_a_manifest(tmp_path, monkeypatch):
    from recipes.causal import train

    monkeypatch.setattr(
        train, "definition_pairs", lambda split: diffusion_training.definition_pairs(split)[:8]
    )
    train.main(
        ["--out", str(tmp_path / "run"), "--weights", str(tmp_path / "w"), "--max-steps", "2",
         "--batch-size", "2", "--log-steps", "1", "--save-steps", "0", "--minutes", "0"]
    )  # fmt: skip
    record = json.loads((tmp_path / "w" / "manifest.json").read_text())
    assert record["bertlab_name"] == "bertlab-causal-definitions"
    assert record["settings"]["steps_done"] == 2 and len(record["curve"]) == 2

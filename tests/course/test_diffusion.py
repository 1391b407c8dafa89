"""Chapter 6b's masked diffusion parts: the training text and loss of ``make diffusion``, the
canvas sampler, and the shipped model (assembled once, checked, switchable)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from bertlab.models import DamagedCheckpointError, ModelNotAvailableError
from bertlab.models import diffusion as shipped_diffusion
from bertlab.models.diffusion import WEIGHTS_DIR
from reference import diffusion_training
from reference.diffusion import diffusion_loss, diffusion_mask
from reference.diffusion_sampler import fill_canvas

MASK = 103


class Tokenizer:
    """The few tokenizer calls the recipe and the sampler make: one id per word, BERT's special ids."""

    cls_token_id, sep_token_id, pad_token_id, mask_token_id = 101, 102, 0, MASK

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": [200 + sum(map(ord, w)) % 50 for w in text.split()]}


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=256,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return BertForMaskedLM(config).eval()


def test_the_prompt_and_special_tokens_are_never_maskable():
    row = diffusion_training.encode(
        Tokenizer(), "bank : they sat on the bank", "sloping land by water"
    )
    assert row["input_ids"][0] == 101 and row["input_ids"].count(102) == 2
    assert row["maskable"] == [False] * 9 + [True] * 4 + [
        False
    ]  # [CLS] 7 words [SEP] | 4 words [SEP]
    assert row["token_type_ids"] == [0] * 9 + [1] * 5
    batch = diffusion_training.collate(
        [row, diffusion_training.encode(Tokenizer(), "a : b", "c d")]
    )
    assert batch["input_ids"].shape == (2, 14) and not batch["maskable"][1, 7:].any()


def test_the_training_loss_is_the_reference_loss_on_masked_positions_only(tiny):
    rows = [
        diffusion_training.encode(
            Tokenizer(), f"w{i} : a sentence {i}", "some words of a definition"
        )
        for i in range(6)
    ]
    batch = diffusion_training.collate(rows)
    loss, n_masked = diffusion_training.diffusion_step_loss(
        tiny, batch, MASK, torch.Generator().manual_seed(1)
    )
    noisy, masked, t = diffusion_mask(
        batch["input_ids"], batch["maskable"], MASK, torch.Generator().manual_seed(1)
    )
    logits = tiny(
        input_ids=noisy,
        token_type_ids=batch["token_type_ids"],
        attention_mask=batch["attention_mask"],
    ).logits
    expected = diffusion_loss(logits, batch["input_ids"], masked, t, batch["maskable"])
    assert n_masked == int(masked.sum()) > 0
    assert torch.allclose(loss, expected, atol=1e-5), (loss, expected)


def test_only_the_word_embeddings_and_the_tied_output_stay_frozen(tiny):
    model = BertForMaskedLM(tiny.config)
    trainable = diffusion_training.freeze_word_embeddings(model)
    assert (
        trainable
        == sum(p.numel() for p in model.parameters())
        - model.bert.embeddings.word_embeddings.weight.numel()
    )
    names = diffusion_training.trained_names(model)
    assert "bert.embeddings.word_embeddings.weight" not in names and "cls.predictions.bias" in names


def test_the_sampler_commits_every_mask_and_never_touches_the_prompt(tiny):
    written, history = fill_canvas(
        tiny, Tokenizer(), ["bank : the river bank", "a : b"], n_tokens=6, steps=3
    )
    assert history.shape[0] == 4 and all(len(w) == 6 and MASK not in w for w in written)
    masks_left = [(h == MASK).sum(dim=1).tolist() for h in history]
    assert masks_left == [[6, 6], [4, 4], [2, 2], [0, 0]], "two committed per step, every row"
    unmasked = history[0] != MASK
    assert all(torch.equal(h[unmasked], history[0][unmasked]) for h in history), (
        "the prompt never changes"
    )
    for before, after in zip(history, history[1:]):
        done = before != MASK
        assert torch.equal(after[done], before[done]), "a committed token stays"


def test_blocks_fill_the_canvas_from_the_left(tiny):
    _, history = fill_canvas(
        tiny, Tokenizer(), ["bank : the river bank"], n_tokens=8, steps=4, block=4
    )
    canvas = history[:, 0, 7:15]  # [steps + 1, 8]: the answer's positions
    assert (canvas[2, :4] != MASK).all() and (canvas[2, 4:] == MASK).all(), "the first block first"
    assert (canvas[-1] != MASK).all()


def test_random_order_is_seeded(tiny):
    runs = [
        fill_canvas(
            tiny,
            Tokenizer(),
            ["a : b c"],
            6,
            3,
            order="random",
            generator=torch.Generator().manual_seed(0),
        )[1]
        for _ in range(2)
    ]
    assert torch.equal(*runs)


def test_no_shipped_model_says_to_run_make_diffusion(tmp_path):
    with pytest.raises(FileNotFoundError, match="make diffusion"):
        shipped_diffusion.diffusion_path(weights_dir=tmp_path)


def test_a_damaged_weights_file_is_refused(tmp_path):
    if not shipped_diffusion.is_shipped():
        pytest.skip(
            "no masked diffusion model in bertlab/models/weights/diffusion (run make diffusion)"
        )
    damaged = tmp_path / "weights"
    shutil.copytree(WEIGHTS_DIR, damaged)
    record = json.loads((damaged / "manifest.json").read_text())
    with open(damaged / record["weights_file"], "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    with pytest.raises(DamagedCheckpointError, match="make diffusion"):
        shipped_diffusion.diffusion_path(weights_dir=damaged, cache_dir=tmp_path / "cache")


def test_the_switch_names_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("BERTLAB_DIFFUSION", str(tmp_path / "nowhere"))
    with pytest.raises(ModelNotAvailableError, match="BERTLAB_DIFFUSION"):
        shipped_diffusion.diffusion_model_path()
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    monkeypatch.setenv("BERTLAB_DIFFUSION", str(tmp_path / "model"))
    assert shipped_diffusion.diffusion_model_path() == str(tmp_path / "model")


def test_the_shipped_model_is_small_and_loads_offline_with_from_pretrained(tmp_path):
    if not shipped_diffusion.is_shipped():
        pytest.skip(
            "no masked diffusion model in bertlab/models/weights/diffusion (run make diffusion)"
        )
    from transformers import AutoModelForMaskedLM

    record = shipped_diffusion.manifest()
    assert (WEIGHTS_DIR / record["weights_file"]).stat().st_size <= 30 * 2**20, (
        "the delta's budget: 30 MB"
    )
    assert record["curve"] and record["settings"]["steps_done"] > 0
    path = shipped_diffusion.diffusion_path(cache_dir=tmp_path)
    model = AutoModelForMaskedLM.from_pretrained(path)
    assert model.config.bertlab_name == "bertlab-masked-diffusion-definitions"
    assert shipped_diffusion.diffusion_path(cache_dir=tmp_path) == path, (
        "assembled once, then reused"
    )


def test_the_shipped_control_is_the_diffusion_run_at_a_fixed_ratio(tmp_path):
    """Chapter 6b compares the writers like for like: the control's settings are the diffusion
    run's but for the ratio, and it assembles and loads offline as the diffusion model does."""
    from transformers import AutoModelForMaskedLM

    control = shipped_diffusion.CONTROL_DIR
    record = json.loads((control / "manifest.json").read_text())
    diffusion = shipped_diffusion.manifest()
    assert (control / record["weights_file"]).stat().st_size <= 30 * 2**20, (
        "the delta's budget: 30 MB"
    )
    assert (
        record["settings"]["fixed_ratio"] == 0.15
        and "fixed_ratio" not in diffusion["settings"]
        or diffusion["settings"].get("fixed_ratio") is None
    )
    same = ("max_steps", "steps_done", "batch_size", "lr", "warmup", "seed")
    assert {k: record["settings"][k] for k in same} == {k: diffusion["settings"][k] for k in same}
    assert record["trained_parameters"] == diffusion["trained_parameters"]
    model = AutoModelForMaskedLM.from_pretrained(shipped_diffusion.control_path(cache_dir=tmp_path))
    assert model.config.bertlab_name == "bertlab-fixed-ratio-15-definitions"


def test_the_fixed_ratio_control_masks_every_row_at_its_ratio_with_the_same_draws():
    ids = torch.arange(4 * 50).reshape(4, 50) % 200 + 200
    maskable = torch.ones(4, 50, dtype=torch.bool)
    maskable[:, :5] = False
    noisy, masked, t = diffusion_training.fixed_ratio_mask(
        ids, maskable, MASK, 0.15, torch.Generator().manual_seed(2)
    )
    assert (t == 0.15).all() and not masked[:, :5].any() and (noisy[masked] == MASK).all()
    # the same draws as diffusion_mask: a position is masked where its uniform draw is below t
    generator = torch.Generator().manual_seed(2)
    torch.rand(4, generator=generator)
    assert torch.equal(masked, (torch.rand(4, 50, generator=generator) < 0.15) & maskable)
    with pytest.raises(ValueError, match="fixed masking ratio"):
        diffusion_training.fixed_ratio_mask(ids, maskable, MASK, 0.0)


def test_the_control_recipe_trains_a_few_steps_and_exports_a_manifest(tmp_path):
    from recipes.diffusion import train

    args = train.parse_args(["--fixed-ratio", "0.15"])
    assert args.weights.name == "diffusion-fixed-15" and args.fixed_ratio == 0.15
    with pytest.raises(SystemExit):
        train.parse_args(["--fixed-ratio", "1.5"])
    train.main(
        [
            "--fixed-ratio",
            "0.15",
            "--out",
            str(tmp_path / "run"),
            "--weights",
            str(tmp_path / "w"),
            "--max-steps",
            "2",
            "--batch-size",
            "2",
            "--log-steps",
            "1",
            "--save-steps",
            "0",
            "--minutes",
            "0",
        ]
    )
    record = json.loads((tmp_path / "w" / "manifest.json").read_text())
    assert record["bertlab_name"] == "bertlab-fixed-ratio-15-definitions"
    assert record["settings"]["fixed_ratio"] == 0.15 and record["settings"]["steps_done"] == 2
    assert record["settings"]["total_seconds"] >= record["settings"]["last_session_seconds"] >= 0
    assert len(record["curve"]) == 2


def test_the_recorded_canvases_are_of_the_shipped_models_on_chapter_7s_senses():
    """``evaluation.json`` (``recipes/diffusion/evaluate.py``) is what Chapter 6b scores: every
    writer wrote every one of Chapter 7's 300 senses, and the weights that wrote them are the ones
    that ship (a retrained model without a new evaluation fails here; the page re-writes a group
    of senses and compares)."""
    from bertlab.bert2bert.scores import held_out_sample
    from bertlab.models.bert2bert import WEIGHTS_DIR as BERT2BERT_WEIGHTS

    record = json.loads(shipped_diffusion.EVALUATION.read_text())
    chapter7 = json.loads((BERT2BERT_WEIGHTS / "evaluation.json").read_text())
    assert record["synsets"] == chapter7["synsets"] == [r["synset"] for r in held_out_sample(300)]
    assert len(record["lengths"]) == record["n"] == 300
    for name, writer in record["writers"].items():
        assert len(writer["written"]) == 300 and all(writer["written"]), name
        assert writer["model"] in {"checkpoint", "diffusion", "control"}, name
    for model, folder in (
        ("diffusion", WEIGHTS_DIR),
        ("control", shipped_diffusion.CONTROL_DIR),
    ):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert record["sha256"][model] == manifest["sha256"], (
            f"the shipped {model} is not the one evaluation.json recorded: run"
            " `make diffusion-evaluate`"
        )

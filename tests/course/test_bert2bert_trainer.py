"""Chapter 7's trainer (bertlab.bert2bert.trainer), which ``make bert2bert`` and the chapter's live
run share, on a tiny seeded BERT2BERT of transformers' own classes and the course tokenizer:
the pairs are teacher forcing's labels, the loss is transformers' own cross-entropy on them, a
run logs every step to ``curve.jsonl``, trains only what is not frozen, and repeats itself under
the same seed."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, EncoderDecoderConfig, EncoderDecoderModel
from transformers.models.encoder_decoder.modeling_encoder_decoder import shift_tokens_right

from bertlab.bert2bert import definitions
from bertlab.bert2bert.model import freeze_encoder, special_ids
from bertlab.bert2bert.trainer import MAX_TARGET_TOKENS, CurveLog, Pairs, make_trainer
from bertlab.models import checkpoint_path

# The warning bertlab.bert2bert.trainer silences at import (pytest resets filters per test).
pytestmark = pytest.mark.filterwarnings("ignore:Version v4.12.0 introduces:FutureWarning")


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(checkpoint_path())


@pytest.fixture(scope="module")
def rows():
    return definitions.load("train")[::4000][:8]


def tiny_bert2bert(tokenizer, seed=0):
    """A BERT2BERT as :func:`bertlab.bert2bert.model.warm_start` builds it (a BertModel encoder, a
    BertLMHeadModel decoder with cross-attention, BERT's special ids), two layers of width 32."""
    small = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 37,
    }
    config = EncoderDecoderConfig.from_encoder_decoder_configs(
        BertConfig(**small), BertConfig(**small, is_decoder=True, add_cross_attention=True)
    )
    torch.manual_seed(seed)
    model = EncoderDecoderModel(config=config)
    ids = special_ids(tokenizer)
    model.config.update(ids)
    model.generation_config.update(**{k: v for k, v in ids.items() if k != "vocab_size"})
    return model


def test_the_labels_are_the_definition_the_decoder_reads_shifted_right(tokenizer, rows):
    pairs = Pairs(rows, tokenizer)
    assert len(pairs) == len(rows)
    for row, item in zip(rows, pairs):
        assert item["input_ids"] == tokenizer(definitions.source_text(row))["input_ids"]
        definition = tokenizer(row["definition"])["input_ids"]  # [CLS] ... [SEP]
        assert item["labels"] == definition[1:], "no [CLS]: the decoder starts from it"
        shifted = shift_tokens_right(
            torch.tensor([item["labels"]]), tokenizer.pad_token_id, tokenizer.cls_token_id
        )  # [1, L]: what EncoderDecoderModel reads
        assert shifted[0].tolist() == definition[:-1], "teacher forcing: [CLS] and the words before"
    long = Pairs([{**rows[0], "definition": "word " * 100}], tokenizer)[0]["labels"]
    assert len(long) == MAX_TARGET_TOKENS and long[-1] == tokenizer.sep_token_id


def test_the_loss_is_transformers_cross_entropy_on_the_labels(tokenizer, rows):
    from transformers import DataCollatorForSeq2Seq

    model = tiny_bert2bert(tokenizer).eval()
    collate = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)
    batch = collate([Pairs(rows, tokenizer)[i] for i in range(4)])
    with torch.no_grad():
        loss = model(**batch).loss
        decoder_input_ids = shift_tokens_right(
            batch["labels"], tokenizer.pad_token_id, tokenizer.cls_token_id
        )
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=decoder_input_ids,
        ).logits  # [B, L, V]
    expected = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100
    )
    torch.testing.assert_close(loss, expected)


def run(tokenizer, rows, out, seed=0):
    model = tiny_bert2bert(tokenizer)
    freeze_encoder(model)
    encoder = {k: v.clone() for k, v in model.encoder.state_dict().items()}
    decoder = {k: v.clone() for k, v in model.decoder.state_dict().items()}
    trainer = make_trainer(
        model,
        tokenizer,
        rows,
        out,
        max_steps=3,
        batch_size=4,
        lr=1e-3,
        warmup=1,
        log_steps=1,
        save_steps=None,
        seed=seed,
        callbacks=[CurveLog(out / "curve.jsonl")],
    )
    trainer.train()
    return trainer, model, encoder, decoder


def test_a_run_logs_every_step_trains_the_decoder_only_and_repeats_under_its_seed(
    tokenizer, rows, tmp_path
):
    trainer, model, encoder, decoder = run(tokenizer, rows, tmp_path / "a")
    args = trainer.args
    assert (args.learning_rate, args.warmup_steps, args.lr_scheduler_type) == (1e-3, 1, "linear")
    assert (args.seed, args.data_seed, args.save_strategy) == (0, 0, "no")
    curve = [json.loads(line) for line in (tmp_path / "a" / "curve.jsonl").read_text().splitlines()]
    losses = [row for row in curve if "loss" in row]
    assert [row["step"] for row in losses] == [1, 2, 3]
    assert all(torch.isfinite(torch.tensor(row["loss"])) for row in losses)
    assert not list((tmp_path / "a").glob("checkpoint-*")), "save_steps=None saves nothing"
    for name, value in model.encoder.state_dict().items():
        assert torch.equal(value, encoder[name]), f"the frozen encoder moved: {name}"
    moved = [n for n, v in model.decoder.state_dict().items() if not torch.equal(v, decoder[n])]
    assert any(".crossattention." in n for n in moved), "the new cross-attention trains"
    _, again, _, _ = run(tokenizer, rows, tmp_path / "b")
    repeat = [
        json.loads(line) for line in (tmp_path / "b" / "curve.jsonl").read_text().splitlines()
    ]
    assert [r.get("loss") for r in repeat] == [r.get("loss") for r in curve], "seeded: the same run"
    for name, value in model.decoder.state_dict().items():
        torch.testing.assert_close(again.decoder.state_dict()[name], value)


def test_the_curve_log_appends_a_row_per_log_and_ignores_other_events(tmp_path):
    log = CurveLog(tmp_path / "curve.jsonl")
    state = type("State", (), {"global_step": 7})()
    log.on_log(None, state, None, logs={"loss": 2.5})
    log.on_log(None, state, None)
    assert log.on_step_end(None, state, None) is None  # every other TrainerCallback event
    rows = [json.loads(line) for line in (tmp_path / "curve.jsonl").read_text().splitlines()]
    assert rows == [{"step": 7, "loss": 2.5}, {"step": 7}]

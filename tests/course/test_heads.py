"""Chapter 3's task heads (bertlab.heads) on a tiny seeded BERT saved the way a checkpoint is:
each head loads through transformers' own Auto class with the encoder's weights, the loading
report is caught as text, the head is told new or trained from transformers' own missing keys,
and the parameter split adds up to the model's parameters."""

from __future__ import annotations

import logging

import pytest
import torch
import transformers
from transformers import BertConfig, BertForMaskedLM

from bertlab.heads import (
    TASK_CLASSES,
    captured_transformers_log,
    load_head,
    parameter_split,
    shape_text,
)

HIDDEN, VOCAB = 32, 99


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A BertForMaskedLM (no pooler, as the course checkpoint and bert-base's MLM model) in a folder
    under $BERTLAB_CACHE, where the load report's path must not show the machine's folders."""
    cache = tmp_path_factory.mktemp("cache")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
    )
    model = BertForMaskedLM(config).eval()
    model.save_pretrained(cache / "tiny")
    return cache, str(cache / "tiny"), model


@pytest.fixture(scope="module")
def loaded(checkpoint):
    cache, path, _ = checkpoint
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BERTLAB_CACHE", str(cache))
        return {task: load_head(task, path) for task in TASK_CLASSES}


def test_every_head_is_transformers_own_class_on_the_same_encoder(checkpoint, loaded):
    _, _, saved = checkpoint
    expected = {
        "mlm": transformers.BertForMaskedLM,
        "sequence": transformers.BertForSequenceClassification,
        "token": transformers.BertForTokenClassification,
        "qa": transformers.BertForQuestionAnswering,
    }
    ids = torch.tensor([[2, 17, 41, 3]])  # [1, T]
    with torch.no_grad():
        reference = saved.bert(input_ids=ids).last_hidden_state  # [1, T, H]
    for task, head in loaded.items():
        assert type(head.model) is expected[task], task
        assert not head.model.training, f"{task}: load_head returns the model in eval mode"
        with torch.no_grad():
            hidden = head.model.bert(input_ids=ids).last_hidden_state  # [1, T, H]
        torch.testing.assert_close(
            hidden, reference, msg=f"{task}: the encoder is the checkpoint's"
        )


def test_a_new_head_is_told_from_transformers_missing_keys(loaded):
    assert loaded["mlm"].missing_keys == [] and not loaded["mlm"].head_is_new
    assert loaded["mlm"].head_modules == ["cls"]
    for task, module in (("sequence", "classifier"), ("token", "classifier"), ("qa", "qa_outputs")):
        head = loaded[task]
        assert head.head_is_new, f"{task}: its {module} is not in an MLM checkpoint"
        assert f"{module}.weight" in head.missing_keys and module in head.head_modules
        assert "cls.predictions.bias" in head.unexpected_keys, "the MLM head is left out"
    # The pooler is missing too (an MLM model has none), but it is the encoder's, not the head's.
    assert "bert.pooler.dense.weight" in loaded["sequence"].missing_keys
    assert "bert" not in loaded["sequence"].head_modules


def test_the_load_report_is_kept_as_text_without_the_machines_folders(checkpoint, loaded):
    cache, path, _ = checkpoint
    report = loaded["sequence"].log
    assert "MISSING" in report and "classifier.weight" in report, report
    assert "$BERTLAB_CACHE/tiny" in report and str(cache) not in report
    assert "\x1b[" not in report, "terminal colours are removed"
    assert loaded["mlm"].log == "", "nothing to report: every weight was in the checkpoint"


def test_the_split_adds_up_to_the_models_parameters(loaded):
    layer = HIDDEN * HIDDEN + HIDDEN  # one dense layer [H, H] and its bias
    mlm = parameter_split(loaded["mlm"].model)
    assert mlm["pooler"] == 0
    assert mlm["tied"] == VOCAB * HIDDEN, "the MLM decoder is the word embeddings"
    assert mlm["head"] == layer + 2 * HIDDEN + VOCAB  # transform dense, LayerNorm, output bias
    sequence = parameter_split(loaded["sequence"].model)
    assert sequence["pooler"] == layer and sequence["head"] == 2 * HIDDEN + 2  # 2 labels
    qa = parameter_split(loaded["qa"].model)
    assert qa["head"] == 2 * HIDDEN + 2 and qa["pooler"] == 0  # start and end logits
    for task, head in loaded.items():
        split = parameter_split(head.model)
        total = sum(p.numel() for p in head.model.parameters())  # a tied tensor counted once
        assert split["encoder"] + split["pooler"] + split["head"] == total, task
        assert split["encoder"] == mlm["encoder"], f"{task}: every head shares the same encoder"


def test_the_log_is_caught_and_the_loggers_state_restored():
    logger = logging.getLogger("transformers")
    handlers, level = list(logger.handlers), logger.level
    transformers.logging.set_verbosity_error()
    try:
        with captured_transformers_log() as text:
            transformers.logging.get_logger("transformers.modeling_utils").warning(
                "\x1b[31mheads up\x1b[0m"
            )
        assert text == ["heads up"]
        assert logger.handlers == handlers and logger.getEffectiveLevel() == logging.ERROR
    finally:
        transformers.logging.set_verbosity(level or logging.WARNING)


def test_shape_text_is_the_pages_notation():
    assert shape_text(torch.zeros(2, 16, 384)) == "[2, 16, 384]"

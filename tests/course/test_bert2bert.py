"""Chapter 7's BERT2BERT parts: the definitions task, the warm start, the shipped fine-tuned
model (assembled once, checked), and ROUGE."""

import json

import pytest
import torch

from bertlab.bert2bert import definitions, scores
from bertlab.bert2bert.model import freeze_encoder, special_ids, trained_names, warm_start
from bertlab.models import DamagedCheckpointError, ModelNotAvailableError, cache, checkpoint_path
from bertlab.models import bert2bert as shipped_bert2bert


def test_pairs_are_real_words_in_real_sentences_and_the_split_is_by_sense():
    rows = definitions.load()
    assert len(rows) > 40_000
    train = {r["synset"] for r in rows if r["split"] == "train"}
    held = {r["synset"] for r in rows if r["split"] == "heldout"}
    assert not train & held, "every example of a sense is on one side of the split"
    assert 0.07 < len(held) / len(train | held) < 0.13
    for row in rows[:500]:
        assert definitions.word_in(row["word"], row["sentence"]), row
        assert row["definition"] and row["sentence"] not in row["definition"], row
        assert row["split"] == (
            "heldout" if definitions.held_out(row["pos"], row["synset"][1:]) else "train"
        )
    bank = [r for r in rows if r["word"] == "bank" and "canoe" in r["sentence"]]
    assert bank and bank[0]["definition"].startswith("sloping land"), "Chapter 2's river bank"


def test_a_line_of_wordnet_gives_one_pair_per_example_that_uses_the_word():
    line = (
        "09213565 17 n 01 bank 0 000 | sloping land (especially the slope beside a body of water); "
        '"they pulled the canoe up on the bank"; "he sat on the banks of the river"; "a quiet river"'
    )
    pairs = definitions.pairs_of(line, "noun")
    assert [p["sentence"] for p in pairs] == [
        "they pulled the canoe up on the bank",
        "he sat on the banks of the river",
    ]
    assert {p["definition"] for p in pairs} == {
        "sloping land (especially the slope beside a body of water)"
    }
    assert definitions.source_text(pairs[0]) == "bank : they pulled the canoe up on the bank"


def test_missing_data_says_how_to_rebuild_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m bertlab.bert2bert.definitions"):
        definitions.load(path=tmp_path / "none.jsonl.gz")


def test_held_out_sample_is_fixed_and_one_pair_per_sense():
    sample = scores.held_out_sample(300)
    assert len(sample) == 300 and len({r["synset"] for r in sample}) == 300
    assert all(r["split"] == "heldout" for r in sample)
    assert sample == scores.held_out_sample(300)
    assert len({r["pos"] for r in sample}) == 4


def test_rouge_is_100_for_the_reference_and_0_for_unrelated_words():
    same = scores.rouge(["sloping land beside water"], ["sloping land beside water"])
    assert same["rouge1"] == same["rouge2"] == same["rougeL"] == 100 and same["exact"] == 100
    none = scores.rouge(["purple elephants"], ["sloping land beside water"])
    assert none["rouge1"] == none["rouge2"] == 0 and none["words"] == 2


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(checkpoint_path())


def test_commonest_opening_is_the_most_frequent_first_words():
    rows = [
        {"definition": "of or relating to music", "pos": "adj"},
        {"definition": "of or relating to art", "pos": "adj"},
        {"definition": "the act of running", "pos": "noun"},
    ]
    assert scores.commonest_opening(rows) == "of or relating"
    assert scores.commonest_opening(rows, pos="noun") == "the act of"
    assert scores.commonest_opening(rows, pos="noun", n_words=2) == "the act"
    with pytest.raises(ValueError, match="verb"):
        scores.commonest_opening(rows, pos="verb")


def test_warm_start_sets_the_ids_where_loss_and_generate_read_them(tokenizer):
    model = warm_start(checkpoint_path(), tokenizer)
    ids = special_ids(tokenizer)
    for config in (model.config, model.generation_config):
        assert config.decoder_start_token_id == tokenizer.cls_token_id
        assert (
            config.eos_token_id == tokenizer.sep_token_id
            and config.pad_token_id == tokenizer.pad_token_id
        )
    assert model.config.vocab_size == ids["vocab_size"] == 30522
    assert model.decoder.config.is_decoder and model.decoder.config.add_cross_attention
    again = warm_start(checkpoint_path(), tokenizer)
    name = "decoder.bert.encoder.layer.0.crossattention.self.query.weight"
    assert torch.equal(model.state_dict()[name], again.state_dict()[name]), (
        "seeded: the same random blocks"
    )
    trainable = freeze_encoder(model)
    assert trainable == sum(model.state_dict()[k].numel() for k in trained_names(model))
    assert not any(p.requires_grad for p in model.encoder.parameters())
    assert all(not k.startswith("encoder.") for k in trained_names(model))


def test_no_shipped_model_says_to_run_make_bert2bert(tmp_path):
    with pytest.raises(FileNotFoundError, match="make bert2bert"):
        shipped_bert2bert.bert2bert_path(weights_dir=tmp_path)


def test_a_damaged_weights_file_is_refused(tmp_path):
    (tmp_path / "decoder.safetensors").write_bytes(b"not weights")
    (tmp_path / "manifest.json").write_text(
        json.dumps({"weights_file": "decoder.safetensors", "sha256": "0" * 64})
    )
    with pytest.raises(DamagedCheckpointError, match="git checkout"):
        shipped_bert2bert.bert2bert_path(weights_dir=tmp_path)


def test_the_switch_names_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(shipped_bert2bert.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(ModelNotAvailableError, match=shipped_bert2bert.ENV_VAR):
        shipped_bert2bert.bert2bert_model_path()


def test_build_once_reuses_an_intact_folder_and_rebuilds_a_damaged_one(tmp_path):
    calls = []

    def build(folder):
        calls.append(folder)
        (folder / "weights.bin").write_bytes(b"1234")

    final = tmp_path / "model"
    assert cache.build_once(final, build, version=1) == str(final)
    assert cache.build_once(final, build, version=1) == str(final) and len(calls) == 1
    (final / "weights.bin").write_bytes(b"12")  # truncated
    cache.build_once(final, build, version=1)
    assert len(calls) == 2 and (final / "weights.bin").read_bytes() == b"1234"
    cache.build_once(final, build, version=2)  # the marker asks for another version
    assert len(calls) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["model"], "no temporary folder left behind"


def test_a_failed_build_leaves_nothing(tmp_path):
    def build(folder):
        (folder / "half.bin").write_bytes(b"1")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        cache.build_once(tmp_path / "model", build)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(
    not shipped_bert2bert.is_shipped(),
    reason="no trained BERT2BERT ships yet: run `make bert2bert`",
)
def test_the_shipped_model_loads_offline_and_writes_a_definition(tokenizer):
    from transformers import EncoderDecoderModel

    path = shipped_bert2bert.bert2bert_path()
    assert cache.is_intact(path)
    model = EncoderDecoderModel.from_pretrained(path)
    assert model.generation_config.decoder_start_token_id == tokenizer.cls_token_id
    written = scores.write_definitions(
        model, tokenizer, scores.held_out_sample(300)[:4], max_new_tokens=12
    )
    assert len(written) == 4 and all(w.split() for w in written)
    record = json.loads((shipped_bert2bert.WEIGHTS_DIR / "evaluation.json").read_text())["results"]
    for measure in scores.ROUGE_TYPES:
        assert record["fine-tuned, greedy"][measure] >= record["untrained"][measure] + 3, (
            measure
        )  # Chapter 7's margin
        assert record["BERTShare, greedy"][measure] >= record["untrained"][measure] + 3, measure


def test_bertshare_shares_every_decoder_weight_but_cross_attention(tokenizer):
    model = warm_start(checkpoint_path(), tokenizer, tie=True)
    encoder, decoder = model.encoder, model.decoder.bert
    layer = 0
    assert (
        decoder.encoder.layer[layer].attention.self.query.weight
        is encoder.encoder.layer[layer].attention.self.query.weight
    )
    assert decoder.embeddings.word_embeddings.weight is model.decoder.cls.predictions.decoder.weight
    assert decoder.encoder.layer[layer].attention.self.is_causal, (
        "the decoder keeps its causal mask"
    )
    cross = sum(p.numel() for n, p in model.decoder.named_parameters() if ".crossattention." in n)
    untied = warm_start(checkpoint_path(), tokenizer)
    assert sum(p.numel() for p in model.parameters()) < sum(p.numel() for p in untied.parameters())
    assert cross > 0
    ids = torch.tensor([[101, 2000, 2001, 102]])
    assert model(input_ids=ids, decoder_input_ids=ids).logits.shape == (1, 4, 30522)


def test_bertshare_trains_saves_and_loads_back_as_one_set_of_weights(tokenizer, tmp_path):
    from bertlab.bert2bert.model import freeze_word_embeddings, trainable_names
    from recipes.bert2bert.train import export

    model = warm_start(checkpoint_path(), tokenizer, tie=True)
    trainable = freeze_word_embeddings(model)
    names = trainable_names(model)
    assert trainable == sum(model.state_dict()[k].numel() for k in names)
    assert not any(k.startswith("decoder.bert.encoder.layer.0.attention.") for k in names), (
        "shared: once"
    )
    assert (
        any(".crossattention." in k for k in names)
        and "encoder.encoder.layer.0.output.dense.weight" in names
    )
    model.save_pretrained(
        tmp_path / "saved"
    )  # declared ties: each shared tensor stored once, no refusal
    with torch.no_grad():
        model.encoder.encoder.layer[0].output.dense.bias.add_(
            1.0
        )  # "training" moves a shared tensor
    (tmp_path / "curve.jsonl").write_text(json.dumps({"step": 1, "loss": 1.0}) + "\n")
    weights = export(model, tmp_path, {"max_steps": 1}, tmp_path / "weights", share=True)
    record = shipped_bert2bert.manifest(weights)
    assert record["shared"] and record["bertlab_name"] == "bertlab-bertshare-definitions"
    loaded, _ = shipped_bert2bert.load_trained(weights, record)
    bias = loaded.encoder.encoder.layer[0].output.dense.bias
    assert bias is loaded.decoder.bert.encoder.layer[0].output.dense.bias, (
        "the halves share it again"
    )
    assert torch.allclose(bias, model.encoder.encoder.layer[0].output.dense.bias.half().float())


def test_paired_bootstrap_centres_on_the_mean_difference_and_is_seeded():
    from bertlab.bert2bert.scores import paired_bootstrap, rouge_per_text

    a, b = [10.0, 12.0, 9.0, 11.0] * 5, [8.0, 12.0, 9.0, 7.0] * 5
    mean, low, high = paired_bootstrap(a, b)
    assert mean == 1.5 and low <= mean <= high and low >= 0
    assert paired_bootstrap(a, b) == (mean, low, high)
    assert paired_bootstrap(a, a) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same"):
        paired_bootstrap(a, b[:-1])
    assert rouge_per_text(["a river bank", "money"], ["the bank of a river", "money"])[1] == 100.0

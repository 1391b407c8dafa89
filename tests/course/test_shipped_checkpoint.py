"""The course checkpoint as it ships (bertlab.models.encoder): it loads offline and fills masks; the
probe sentences (bertlab.probes) are single tokens; the copy rate (bertlab.copying) the model card
reads. The shipped-model tests run only when the weights are in the package."""

from __future__ import annotations


import pytest
import torch

from bertlab import probes
from bertlab.models import encoder
from recipes.checkpoint import data as mlm_data

shipped = pytest.mark.skipif(
    not encoder.is_shipped(), reason="the course checkpoint is not in the package"
)


@pytest.fixture(scope="module")
def shipped_folder(tmp_path_factory):
    return encoder.checkpoint_path(cache_dir=tmp_path_factory.mktemp("bertlab-cache"))


@shipped
def test_shipped_checkpoint_loads_offline(shipped_folder):
    from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM

    manifest = encoder.verify()
    config = AutoConfig.from_pretrained(shipped_folder)
    assert config.architectures == ["BertForMaskedLM"]
    assert config.bertlab_name == manifest["bertlab_name"]
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        assert getattr(config, key) == manifest["config"][key]
    assert type(AutoModelForMaskedLM.from_pretrained(shipped_folder)).__name__ == "BertForMaskedLM"
    out = AutoModel.from_pretrained(shipped_folder)(input_ids=torch.tensor([[101, 7592, 102]]))
    assert out.pooler_output.shape == (1, 384)


@shipped
@pytest.mark.parametrize(
    "text, answers",
    [  # sanity checks; the full probe set is in evaluate.py
        ("Tokyo is the largest city in [MASK].", {"japan"}),
        ("She drinks a cup of [MASK] every morning.", {"coffee", "tea", "milk"}),
        ("We waited for the [MASK] at the bus stop.", {"bus"}),
    ],
)
def test_shipped_checkpoint_fills_masks(shipped_folder, text, answers):
    from transformers import pipeline

    fill = pipeline("fill-mask", model=shipped_folder, top_k=5)
    top5 = [r["token_str"].strip() for r in fill(text)]
    assert answers & set(top5), f"{text!r}: top-5 {top5}"


def test_probes_are_single_tokens():
    assert len(probes.PROBES) >= 60
    assert probes.check_probes(mlm_data.load_tokenizer()) == []


def _row(tokenizer, text: str) -> torch.Tensor:
    return tokenizer(text, return_tensors="pt")["input_ids"]  # [1, L] with [CLS] ... [SEP]


def test_copy_rate_counts_a_guess_seen_in_its_own_sentence_only():
    from bertlab.copying import copy_flags

    tok = mlm_data.load_tokenizer()
    ids = _row(tok, "the moon is bright . the moon orbits the sun .")  # the answer: sun
    pos = tok.convert_ids_to_tokens(ids[0]).index("sun")
    labels = torch.full_like(ids, -100)
    labels[0, pos] = ids[0, pos]
    masked = ids.clone()
    masked[0, pos] = tok.mask_token_id

    def copied(guess: str, answer_ids=labels, inputs=masked) -> bool:
        guesses = torch.full_like(ids, -1)
        guesses[0, pos] = tok.convert_tokens_to_ids(guess)
        return bool(copy_flags(inputs, answer_ids, guesses, tok).item())

    assert copied("moon")  # a word of its sentence, the answer is not there
    assert not copied("earth")  # not in the sentence
    assert not copied("bright")  # in the other sentence only
    assert not copied(".")  # punctuation is not a word
    assert not copied("sun")  # the answer itself
    other = _row(tok, "the sun and the moon orbit the sun .")  # the answer is also elsewhere
    pos2 = len(other[0]) - 3
    labels2 = torch.full_like(other, -100)
    labels2[0, pos2] = other[0, pos2]
    guesses2 = torch.full_like(other, -1)
    guesses2[0, pos2] = tok.convert_tokens_to_ids("moon")
    assert tok.convert_ids_to_tokens(int(other[0, pos2])) == "sun"
    assert not copy_flags(other, labels2, guesses2, tok).item()  # copying could have been right

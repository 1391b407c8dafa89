"""bertlab.pooler: the facts the pages glue about the course checkpoint's pooler."""

import pytest
import torch
from safetensors.torch import save_file

from bertlab.models import default_model_path, minilm_path
from bertlab.pooler import course_pooler_evidence, pooler_evidence


def test_the_course_pooler_was_never_trained():
    evidence = course_pooler_evidence()
    assert evidence["bias_zeros"] == evidence["bias_size"] > 0  # what Chapters 0 and 2 say
    assert 0 < evidence["weight_std"] < 0.02


def test_the_course_pooler_is_minilms():
    assert pooler_evidence(default_model_path(), minilm_folder=minilm_path())["same_as_minilm"]


def test_a_folder_without_a_pooler_is_an_error(tmp_path):
    save_file({"cls.predictions.bias": torch.zeros(3)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(KeyError, match="no pooler"):
        pooler_evidence(str(tmp_path))

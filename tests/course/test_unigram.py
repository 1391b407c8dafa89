"""The unigram baseline (bertlab.unigram) and the probes' constant guess (bertlab.probes): what the
model card and Chapters 3 and 4 put beside a fill-in-the-blank score."""

from __future__ import annotations

import torch
from transformers import AutoTokenizer

from bertlab import unigram
from bertlab.models import minilm_path
from bertlab.probes import PROBES, constant_guess_eval


def test_counts_are_the_course_vocabulary_and_probabilities_sum_to_one():
    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    counts = unigram.counts()
    assert len(counts) == len(tokenizer) and counts["the"] > counts["whale"] > 0
    log_p = unigram.log_probs(tokenizer)  # [V]
    assert log_p.shape == (len(tokenizer),)
    torch.testing.assert_close(log_p.exp().sum(), torch.tensor(1.0, dtype=torch.float64))
    assert int(log_p.argmax()) == tokenizer.convert_tokens_to_ids(unigram.most_frequent(1)[0])
    assert log_p[tokenizer.sep_token_id] == log_p.min()  # a blank is never [SEP]


def test_most_frequent_leaves_out_special_tokens_and_with_words_only_punctuation():
    anything = unigram.most_frequent(10)
    words = unigram.most_frequent(10, words_only=True)
    assert not any(t.startswith("[") for t in anything) and "." in anything
    assert all(w.isalpha() for w in words) and words[0] == "the"


def test_a_constant_guess_scores_the_probes_that_accept_it():
    accepted = PROBES[0].answers[0]
    found = constant_guess_eval([accepted, "zzz"])
    hits = sum(accepted in p.answers for p in PROBES)
    assert found["n"] == len(PROBES) and found["top1"] == found["top5"] == hits / len(PROBES)
    assert constant_guess_eval(["zzz"])["top5"] == 0

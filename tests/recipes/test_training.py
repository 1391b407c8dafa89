"""Training the checkpoint (recipes/checkpoint/train.py, data.py, model.py, threads.py): 3 steps on
a tiny generated corpus, resumed, continued on another corpus or from the shipped weights;
whole-word masking, the evaluation's mode, the device and the thread tuner. CPU, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bertlab.models import encoder, minilm_path
from recipes.checkpoint import data as mlm_data, export, model as mlm_model, train

from tiny_runs import TINY_ARGS, sentences

shipped = pytest.mark.skipif(
    not encoder.is_shipped(), reason="the course checkpoint is not in the package"
)


def test_train_three_steps_then_resume(tiny_run, tiny_corpus):
    ck = torch.load(tiny_run / "checkpoint.pt", weights_only=False)
    assert ck["state"]["step"] == 3
    curve = [json.loads(line) for line in (tiny_run / "curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in curve] == [0, 2, 3]
    assert all(0.0 <= r["eval_acc"] <= 1.0 for r in curve)
    words = ck["model"]["bert.embeddings.word_embeddings.weight"]
    base = Path(minilm_path())
    from safetensors.torch import load_file

    assert torch.equal(
        words, load_file(base / "model.safetensors")["embeddings.word_embeddings.weight"]
    )

    resumed = tiny_run.parent / (tiny_run.name + "-resumed")
    resumed.mkdir()
    for f in tiny_run.iterdir():
        (resumed / f.name).write_bytes(f.read_bytes())
    train.main(
        ["--corpus", str(tiny_corpus), "--out", str(resumed), "--max-steps", "5", *TINY_ARGS]
    )
    ck2 = torch.load(resumed / "checkpoint.pt", weights_only=False)
    assert ck2["state"]["step"] == 5  # the step counter continued from 3
    assert ck2["state"]["index"] == 5 * 4
    steps = [
        json.loads(line)["step"] for line in (resumed / "curve.jsonl").read_text().splitlines()
    ]
    assert steps == [0, 2, 3, 4, 5]


def test_second_stage_on_another_corpus(tiny_run, tiny_corpus, tmp_path):
    """A run continued on a new corpus marks the switch on its curve; export names both stages."""
    other = tmp_path / "corpus-v2"
    other.mkdir()
    (other / "train.txt").write_text("\n".join(sentences(150, 3)) + "\n")
    (other / "heldout.txt").write_text("\n".join(sentences(20, 4)) + "\n")
    (other / "manifest.json").write_text(
        json.dumps(
            {
                "mix": "v2",
                "sources": [
                    {
                        "name": "synthetic-2",
                        "package": "-",
                        "version": "-",
                        "licence": "test",
                        "train_chars": 7000,
                    }
                ],
            }
        )
    )
    run = tmp_path / "run"
    run.mkdir()
    for f in tiny_run.iterdir():
        (run / f.name).write_bytes(f.read_bytes())
    train.main(["--corpus", str(other), "--out", str(run), "--max-steps", "5", *TINY_ARGS])
    # stage 1 asked again for its 3 steps: nothing to do, the curve is untouched
    train.main(["--corpus", str(tiny_corpus), "--out", str(run), "--max-steps", "3", *TINY_ARGS])
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    assert [(r["step"], r["corpus"]) for r in curve] == [
        (0, mlm_data.corpus_id(tiny_corpus)),
        (2, mlm_data.corpus_id(tiny_corpus)),
        (3, mlm_data.corpus_id(tiny_corpus)),
        (3, mlm_data.corpus_id(other)),
        (4, mlm_data.corpus_id(other)),
        (5, mlm_data.corpus_id(other)),
    ]
    assert len(list(run.glob("data-*.pt"))) == 2  # one tokenized cache per corpus

    manifest = export.export(run, tmp_path / "weights", corpora=[tiny_corpus, other])
    assert [(s["mix"], s["from_step"], s["to_step"]) for s in manifest["stages"]] == [
        ("v1", 0, 3),
        ("v2", 3, 5),
    ]
    assert [s["name"] for s in manifest["stages"][1]["sources"]] == ["synthetic-2"]
    with pytest.raises(RuntimeError, match="pass its folder with --corpus"):
        export.export(run, tmp_path / "weights-2", corpora=[other])
    # the run's own last corpus is always found, so a stage trained on one mix and scored on
    # another's held-out split (decide --run --corpus) needs only the scoring corpus
    again = export.export(run, tmp_path / "weights-3", corpora=[tiny_corpus])
    assert [s["mix"] for s in again["stages"]] == ["v1", "v2"]


def test_evaluation_keeps_the_models_mode():
    """The held-out score runs without dropout and hands the model back as it found it:
    a probe run after it must not see dropout (that once cost the probes 3 points)."""
    from transformers import BertConfig, BertForMaskedLM

    model = BertForMaskedLM(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=16,
        )
    )
    ids = torch.randint(5, 50, (2, 8))
    labels = torch.full_like(ids, -100)
    labels[:, 3] = ids[:, 3]
    for mode in (False, True):
        model.train(mode)
        mlm_model.evaluate(model, {"input_ids": ids, "labels": labels})
        assert model.training is mode


def _row(tokenizer, text: str) -> torch.Tensor:
    return tokenizer(text, return_tensors="pt")["input_ids"]  # [1, L] with [CLS] ... [SEP]


def test_whole_word_masking_masks_every_piece_of_a_word():
    tok = mlm_data.load_tokenizer()
    text = "the unbelievably long tokenization of playgrounds is hilarious"
    rows = _row(tok, text).repeat(200, 1)  # [200, L]
    pieces = tok.convert_ids_to_tokens(rows[0])
    word_of = []  # word number of each position (special tokens: None)
    for p in pieces:
        word_of.append(
            None
            if p in tok.all_special_tokens
            else (
                word_of[-1]
                if p.startswith("##")
                else max([w for w in word_of if w is not None], default=-1) + 1
            )
        )
    batch = mlm_data.make_collator(tok, seed=0, whole_word=True)(mlm_data.word_examples(rows, tok))
    chosen = batch["labels"] != -100  # [200, L]
    assert chosen.any(dim=1).float().mean() > 0.5
    for row in chosen:
        for w in set(word_of) - {None}:
            span = row[[i for i, x in enumerate(word_of) if x == w]]
            assert span.all() or not span.any(), (
                f"word {w} of {pieces} partly masked: {row.tolist()}"
            )
    assert not chosen[
        :, [i for i, x in enumerate(word_of) if x is None]
    ].any()  # never [CLS] / [SEP]
    replaced = batch["input_ids"][chosen] == tok.mask_token_id
    assert 0.7 < replaced.float().mean() < 0.9  # 80-10-10 on the chosen words, as Google's WWM BERT


def test_cuda_is_refused_clearly_where_there_is_none():
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    assert mlm_model.pick_device("auto").type == "cpu"
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        mlm_model.pick_device("cuda")
    assert isinstance(mlm_model.bf16_is_fast(torch.device("cpu")), bool)


@shipped
def test_a_new_stage_starts_from_the_shipped_weights(tiny_corpus, tmp_path):
    """``--init-from``: the step count and curve go on from the shipped run's, and the export
    names the shipped stages and then the new one, with its masking."""
    manifest = encoder.verify()
    steps = manifest["training"]["steps"]
    run = tmp_path / "run"
    train.main(
        [
            "--corpus",
            str(tiny_corpus),
            "--out",
            str(run),
            "--init-from",
            str(encoder.WEIGHTS_DIR),
            "--whole-word",
            "--max-steps",
            str(steps + 2),
            *TINY_ARGS,
        ]
    )
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    assert ck["state"]["step"] == steps + 2 and ck["state"]["schedule_from_step"] == steps
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    shipped_rows = (encoder.WEIGHTS_DIR / "curve.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in shipped_rows] == curve[: len(shipped_rows)]
    assert [r["step"] for r in curve[len(shipped_rows) :]] == [steps, steps + 2]
    out = export.export(run, tmp_path / "weights", corpora=[tiny_corpus])
    assert out["stages"][:-1] == manifest["stages"]
    assert (out["stages"][-1]["from_step"], out["stages"][-1]["to_step"]) == (steps, steps + 2)
    assert "whole_word_mask=True" in out["stages"][-1]["masking"] == out["training"]["masking"]


def test_the_thread_tuner_probes_less_often_while_probes_lose_and_follows_a_busy_machine(
    monkeypatch,
):
    from recipes.checkpoint.threads import ThreadTuner

    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    tuner, used = ThreadTuner(2), []
    step_time = {2: 1.0, 1: 2.0}  # a quiet machine: two threads are faster
    for _ in range(1000):
        used.append(tuner.threads_for_next_step())
        tuner.record(step_time[used[-1]])
    probes = [i for i in range(1, len(used)) if used[i] == 1 and used[i - 1] == 2]
    gaps = [b - a for a, b in zip(probes, probes[1:])]
    assert gaps[:4] == [80, 160, 320, 320], gaps  # 40 -> 80 -> 160 -> 320 steps, then no longer
    assert used.count(1) / len(used) < 0.03, used.count(1)
    step_time = {2: 3.0, 1: 2.0}  # the machine gets busy: one thread is faster now
    for _ in range(10):
        used.append(tuner.threads_for_next_step())
        tuner.record(step_time[used[-1]])
    assert used[-5:] == [1] * 5, used[-10:]

"""Tests for the course checkpoint's recipe (recipes/checkpoint) and its assembly
(bertlab.models.encoder): CPU-only, offline, < 60 s.

The tiny-run tests train 3 steps on a generated corpus, resume, export a delta and assemble it
into a Hugging Face folder, all under tmp_path: they never touch bertlab/models/weights/encoder/.
The shipped-model tests run only when the weights are in the package.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct
import zlib
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from bertlab import probes  # noqa: E402
from bertlab.models import encoder  # noqa: E402
from recipes.checkpoint import data as mlm_data, export, model as mlm_model, train  # noqa: E402
from recipes.checkpoint.corpus import build, extract, mixes  # noqa: E402
from bertlab.models import minilm_path  # noqa: E402

SUBJECTS = ["the cat", "my sister", "the old man", "a small dog", "our teacher", "the farmer", "his friend"]
VERBS = ["walked to", "looked at", "cleaned", "painted", "visited", "found", "liked"]
OBJECTS = ["the house", "a red car", "the garden", "the school", "a big tree", "the river", "the kitchen"]


def _sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"on {rng.choice(['monday', 'friday', 'sunday'])} morning." for _ in range(n)]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "train.txt").write_text("\n".join(_sentences(120, 1)) + "\n")  # ~6 KB
    (folder / "heldout.txt").write_text("\n".join(_sentences(20, 2)) + "\n")
    (folder / "manifest.json").write_text(json.dumps({"sources": [
        {"name": "synthetic", "package": "-", "version": "-", "licence": "test", "train_chars": 6000}]}))
    return folder


TINY_ARGS = ["--batch-size", "4", "--seq-len", "32", "--eval-every", "2", "--eval-seqs", "4",
             "--save-every-minutes", "100"]


@pytest.fixture(scope="module")
def tiny_run(tiny_corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    train.main(["--corpus", str(tiny_corpus), "--out", str(out), "--max-steps", "3", *TINY_ARGS])
    return out


# ----------------------------------------------------------------------------- corpus


def test_split_is_deterministic_and_order_free():
    paragraphs = [f"Paragraph number {i} talks about the weather and the sea." for i in range(3000)]
    a = build.split_paragraphs(paragraphs)
    b = build.split_paragraphs(list(paragraphs))
    shuffled = paragraphs[:]
    random.Random(0).shuffle(shuffled)
    c = build.split_paragraphs(shuffled + paragraphs[:10])  # duplicates are dropped
    assert a == b
    assert set(a[0]) == set(c[0]) and set(a[1]) == set(c[1])
    assert not set(a[0]) & set(a[1])
    assert 0.01 < len(a[1]) / len(paragraphs) < 0.03  # ~2% held out
    assert build.weight(a[0], 10_000) == build.weight(a[0], 10_000)
    assert build.interleave(a[0]) == build.interleave(list(a[0]))


@pytest.mark.parametrize("mix", sorted(mixes.MIXES))
def test_sources_table_records_licences(mix):
    assert sum(s.share for s in mixes.MIXES[mix]) == pytest.approx(1.0)
    for s in mixes.MIXES[mix]:
        assert s.package and s.version and s.licence and callable(getattr(extract, s.extract))
    assert mixes.SOURCES is mixes.MIXES["v4"]
    assert {s.registry for s in mixes.MIXES[mix]} <= {"debian", "npm"}


def test_read_manifest_defaults_to_mix_v1(tmp_path):
    assert build.read_manifest(tmp_path) == {"mix": "v1"}  # built before manifests named their mix
    (tmp_path / "manifest.json").write_text(json.dumps({"mix": "v3", "train_chars": 7}))
    assert build.read_manifest(tmp_path) == {"mix": "v3", "train_chars": 7}


def test_ding_keeps_english_sentences_and_phrases(tmp_path):
    dictionary = tmp_path / "usr/share/trans/de-en"
    dictionary.parent.mkdir(parents=True)
    dictionary.write_text(
        "# Version :: 1.9\n"
        "Leidenschaft {f} | eine Leidenschaft für etw. haben | Es war purer Zufall. :: "
        "passion | to have a passion for sth. | It was pure chance.\n"
        "Tür {f} :: door\n"
        "Die Tür knallte mir ins Gesicht. :: The door banged / bashed me in the face [Br.].\n",
        encoding="utf-8")
    assert list(extract.extract_ding(tmp_path)) == [
        "To have a passion for something. It was pure chance.",
        "The door banged me in the face .",  # "face ." and "face." are the same WordPieces
    ]


def test_sotu_keeps_addresses_since_1900_without_stage_directions(tmp_path):
    data = tmp_path / "package/data"
    data.mkdir(parents=True)
    speech = ("Thank you all very much for coming tonight. (Applause.) Our families work hard every day. "
              "The schools are open—(laughter)—and the farms are green again. [Applause] We will build new "
              "roads and bridges across the country. ")
    (data / "1850_old_president_w.txt").write_text("The treasury of the Union is in good order this year. " * 9)
    (data / "1999_new_president_d.txt").write_text(speech * 3, encoding="utf-8")
    (data / "1999_new_president_d.json").write_text("{}")
    chunks = list(extract.extract_sotu(tmp_path))
    text = " ".join(chunks)
    assert chunks and "treasury" not in text  # 1850 is before SOTU_SINCE
    assert "pplause" not in text and "laughter" not in text
    assert all(len(re.findall(r"[.!?](?:\s|$)", c)) <= 6 for c in chunks)  # paragraphs of <= 6 sentences


def test_cataclysm_keeps_descriptions_and_dialogue_without_markup_or_profanity(tmp_path):
    data = tmp_path / "usr/share/games/cataclysm-dda/json/items"
    data.mkdir(parents=True)
    (data / "tools.json").write_text(json.dumps([
        {"type": "TOOL", "id": "knife_butter", "name": {"str": "butter knife"},
         "description": "A dull knife,  absolutely worthless in combat.\nExcellent for spreading soft things on bread."},
        {"type": "TOOL", "id": "key", "description": {"str": "A small brass key on a ring, for the <color_white>front door</color>."}},
        {"type": "talk_topic", "dynamic_line": {"u_male": "Hello there, <name_g>, what brings you here?",
                                                 "no": "Well, my mother kept chickens on the farm behind the house."},
         "responses": [{"text": "What the fuck are you doing out here?"}, {"text": "Bye."}]},
        {"type": "ARMOR", "id": "x", "name": "long name with many words in it but no description key"},
    ]), encoding="utf-8")
    (data / "broken.json").write_text("{ not json")
    assert sorted(extract.extract_cataclysm(tmp_path)) == [
        "A dull knife, absolutely worthless in combat. Excellent for spreading soft things on bread.",
        "A small brass key on a ring, for the front door.",  # colour markup keeps its words
        "Well, my mother kept chickens on the farm behind the house.",  # nested under dynamic_line
    ]  # a filled-in <name_g>, profanity, short lines and names are dropped


def test_moby_dick_paragraphs_skip_chapter_titles(tmp_path):
    data = tmp_path / "package/data"
    data.mkdir(parents=True)
    (data / "chapter_1.txt").write_text("CHAPTER 1. Loomings.\n\nCall me Ishmael. Some years ago I thought "
                                        "I would sail about a little and see the watery part of the world.\n",
                                        encoding="utf-8")
    (data / "chapter_2.txt").write_text("CHAPTER 2. The Carpet-Bag.\n\nI stuffed a shirt or two into my old "
                                        "carpet-bag, tucked it under my arm, and started for Cape Horn.\n")
    (data / "epilogue.txt").write_text("Epilogue\n\nThe drama's done. Why then here does any one step forth? "
                                       "Because one did survive the wreck.\n")
    paragraphs = list(extract.extract_moby_dick(tmp_path))
    assert [p[:12] for p in paragraphs] == ["Call me Ishm", "I stuffed a ", "The drama's "]


def r_serialized_strings(strings: list[str | None], version: int = 3) -> bytes:
    """One R character vector as ``serialize(x, NULL, xdr = TRUE)`` writes it (NA for None)."""
    out = b"X\n" + struct.pack(">iii", version, 0x040201, 0x030500)
    if version == 3:
        out += struct.pack(">i", 5) + b"UTF-8"
    out += struct.pack(">ii", 16, len(strings))  # STRSXP, no attributes
    for s in strings:
        if s is None:
            out += struct.pack(">ii", 9, -1)
        else:
            latin1 = not s.isascii()  # R's LATIN1_MASK (gp bit 2); plain ASCII gets ASCII_MASK (bit 6)
            raw = s.encode("latin-1" if latin1 else "ascii")
            out += struct.pack(">ii", 9 | ((1 << 2 if latin1 else 1 << 6) << 12), len(raw)) + raw
    return out


def test_austen_novels_read_from_the_r_package(tmp_path):
    novels = [["EMMA", "", "By Jane Austen", "", "CHAPTER I", "",
               "Emma Woodhouse, handsome, clever, and rich, with a comfortable home",
               "and happy disposition, seemed to unite some of the _best_ blessings.", "", None],
              ["PERSUASION", "", "Chapter 1", "", "Sir Walter Elliot, of Kellynch Hall, in Somersetshire,",
               "was a man who, for his own amusement, never took up any book but the Baronetage.", "",
               "Caf\u00e9 society was not yet known in the village where the family lived so long."]]
    rdb = b""
    for i, lines in enumerate(novels):
        packed = zlib.compress(r_serialized_strings(lines, version=2 + i))
        rdb += struct.pack(">i", len(packed)) + packed
    data = tmp_path / "usr/lib/R/site-library/janeaustenr/data"
    data.mkdir(parents=True)
    (data / "Rdata.rdb").write_bytes(rdb)
    assert [v[:1] for v in extract.r_character_vectors(rdb)] == [["EMMA"], ["PERSUASION"]]
    paragraphs = list(extract.extract_austen(tmp_path))
    assert [p[:10] for p in paragraphs] == ["Emma Woodh", "Sir Walter", "Caf\u00e9 socie"]
    assert "best blessings" in paragraphs[0]  # _italics_ lose their underscores
    with pytest.raises(ValueError, match="XDR"):
        list(extract.r_character_vectors(struct.pack(">i", 4) + zlib.compress(b"RDA2\n")))


def test_html_paragraphs_strip_markup(tmp_path):
    page = tmp_path / "page.en.html"
    page.write_text('<html><script>var x = 1;</script><p>The <b>quick</b> brown fox jumps over the lazy dog.</p>'
                    '<pre>def f(): pass</pre><div class="para">Debian is a free operating system for everyone.</div>'
                    "<p>Too short.</p></html>")
    assert list(extract.html_paragraphs(page)) == ["The quick brown fox jumps over the lazy dog.",
                                                   "Debian is a free operating system for everyone."]


def test_probes_are_single_tokens():
    assert len(probes.PROBES) >= 60
    assert probes.check_probes(mlm_data.load_tokenizer()) == []


# ----------------------------------------------------------------------------- training


def test_train_three_steps_then_resume(tiny_run, tiny_corpus):
    ck = torch.load(tiny_run / "checkpoint.pt", weights_only=False)
    assert ck["state"]["step"] == 3
    curve = [json.loads(line) for line in (tiny_run / "curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in curve] == [0, 2, 3]
    assert all(0.0 <= r["eval_acc"] <= 1.0 for r in curve)
    words = ck["model"]["bert.embeddings.word_embeddings.weight"]
    base = Path(minilm_path())
    from safetensors.torch import load_file

    assert torch.equal(words, load_file(base / "model.safetensors")["embeddings.word_embeddings.weight"])

    resumed = tiny_run.parent / (tiny_run.name + "-resumed")
    resumed.mkdir()
    for f in tiny_run.iterdir():
        (resumed / f.name).write_bytes(f.read_bytes())
    train.main(["--corpus", str(tiny_corpus), "--out", str(resumed), "--max-steps", "5", *TINY_ARGS])
    ck2 = torch.load(resumed / "checkpoint.pt", weights_only=False)
    assert ck2["state"]["step"] == 5  # the step counter continued from 3
    assert ck2["state"]["index"] == 5 * 4
    steps = [json.loads(line)["step"] for line in (resumed / "curve.jsonl").read_text().splitlines()]
    assert steps == [0, 2, 3, 4, 5]


def test_second_stage_on_another_corpus(tiny_run, tiny_corpus, tmp_path):
    """A run continued on a new corpus marks the switch on its curve; export names both stages."""
    other = tmp_path / "corpus-v2"
    other.mkdir()
    (other / "train.txt").write_text("\n".join(_sentences(150, 3)) + "\n")
    (other / "heldout.txt").write_text("\n".join(_sentences(20, 4)) + "\n")
    (other / "manifest.json").write_text(json.dumps({"mix": "v2", "sources": [
        {"name": "synthetic-2", "package": "-", "version": "-", "licence": "test", "train_chars": 7000}]}))
    run = tmp_path / "run"
    run.mkdir()
    for f in tiny_run.iterdir():
        (run / f.name).write_bytes(f.read_bytes())
    train.main(["--corpus", str(other), "--out", str(run), "--max-steps", "5", *TINY_ARGS])
    # stage 1 asked again for its 3 steps: nothing to do, the curve is untouched
    train.main(["--corpus", str(tiny_corpus), "--out", str(run), "--max-steps", "3", *TINY_ARGS])
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    assert [(r["step"], r["corpus"]) for r in curve] == [
        (0, mlm_data.corpus_id(tiny_corpus)), (2, mlm_data.corpus_id(tiny_corpus)), (3, mlm_data.corpus_id(tiny_corpus)),
        (3, mlm_data.corpus_id(other)), (4, mlm_data.corpus_id(other)), (5, mlm_data.corpus_id(other))]
    assert len(list(run.glob("data-*.pt"))) == 2  # one tokenized cache per corpus

    manifest = export.export(run, tmp_path / "weights", corpora=[tiny_corpus, other])
    assert [(s["mix"], s["from_step"], s["to_step"]) for s in manifest["stages"]] == [("v1", 0, 3), ("v2", 3, 5)]
    assert [s["name"] for s in manifest["stages"][1]["sources"]] == ["synthetic-2"]
    with pytest.raises(RuntimeError, match="pass its folder with --corpus"):
        export.export(run, tmp_path / "weights-2", corpora=[other])
    # the run's own last corpus is always found, so a stage trained on one mix and scored on
    # another's held-out split (decide --run --corpus) needs only the scoring corpus
    again = export.export(run, tmp_path / "weights-3", corpora=[tiny_corpus])
    assert [s["mix"] for s in again["stages"]] == ["v1", "v2"]


# ----------------------------------------------------------------------------- export & assembly


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
    assert {"cls.predictions.bias", "cls.predictions.transform.dense.weight",
            "cls.predictions.transform.LayerNorm.weight", "bert.encoder.layer.5.output.dense.weight"} <= keys


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
    assert torch.equal(bert.pooler.dense.weight, base.pooler.dense.weight)  # the base's pooler, not random

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


# ----------------------------------------------------------------------------- the shipped checkpoint

shipped = pytest.mark.skipif(not encoder.is_shipped(), reason="the course checkpoint is not in the package")


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
@pytest.mark.parametrize("text, answers", [  # sanity checks; the full probe set is in evaluate.py
    ("Tokyo is the largest city in [MASK].", {"japan"}),
    ("She drinks a cup of [MASK] every morning.", {"coffee", "tea", "milk"}),
    ("We waited for the [MASK] at the bus stop.", {"bus"}),
])
def test_shipped_checkpoint_fills_masks(shipped_folder, text, answers):
    from transformers import pipeline

    fill = pipeline("fill-mask", model=shipped_folder, top_k=5)
    top5 = [r["token_str"].strip() for r in fill(text)]
    assert answers & set(top5), f"{text!r}: top-5 {top5}"


def test_evaluation_keeps_the_models_mode():
    """The held-out score runs without dropout and hands the model back as it found it:
    a probe run after it must not see dropout (that once cost the probes 3 points)."""
    from transformers import BertConfig, BertForMaskedLM

    model = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=32, max_position_embeddings=16))
    ids = torch.randint(5, 50, (2, 8))
    labels = torch.full_like(ids, -100)
    labels[:, 3] = ids[:, 3]
    for mode in (False, True):
        model.train(mode)
        mlm_model.evaluate(model, {"input_ids": ids, "labels": labels})
        assert model.training is mode


# ----------------------------------------------------------------------------- next stage (issue 20)


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


def test_whole_word_masking_masks_every_piece_of_a_word():
    tok = mlm_data.load_tokenizer()
    text = "the unbelievably long tokenization of playgrounds is hilarious"
    rows = _row(tok, text).repeat(200, 1)  # [200, L]
    pieces = tok.convert_ids_to_tokens(rows[0])
    word_of = []  # word number of each position (special tokens: None)
    for p in pieces:
        word_of.append(None if p in tok.all_special_tokens else
                       (word_of[-1] if p.startswith("##") else max([w for w in word_of if w is not None], default=-1) + 1))
    batch = mlm_data.make_collator(tok, seed=0, whole_word=True)(mlm_data.word_examples(rows, tok))
    chosen = batch["labels"] != -100  # [200, L]
    assert chosen.any(dim=1).float().mean() > 0.5
    for row in chosen:
        for w in set(word_of) - {None}:
            span = row[[i for i, x in enumerate(word_of) if x == w]]
            assert span.all() or not span.any(), f"word {w} of {pieces} partly masked: {row.tolist()}"
    assert not chosen[:, [i for i, x in enumerate(word_of) if x is None]].any()  # never [CLS] / [SEP]
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
    train.main(["--corpus", str(tiny_corpus), "--out", str(run), "--init-from", str(encoder.WEIGHTS_DIR),
                "--whole-word", "--max-steps", str(steps + 2), *TINY_ARGS])
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    assert ck["state"]["step"] == steps + 2 and ck["state"]["schedule_from_step"] == steps
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    shipped_rows = (encoder.WEIGHTS_DIR / "curve.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in shipped_rows] == curve[: len(shipped_rows)]
    assert [r["step"] for r in curve[len(shipped_rows):]] == [steps, steps + 2]
    out = export.export(run, tmp_path / "weights", corpora=[tiny_corpus])
    assert out["stages"][:-1] == manifest["stages"]
    assert (out["stages"][-1]["from_step"], out["stages"][-1]["to_step"]) == (steps, steps + 2)
    assert "whole_word_mask=True" in out["stages"][-1]["masking"] == out["training"]["masking"]


def test_the_shipping_rule_keeps_the_shipped_checkpoint_against_itself():
    from recipes.checkpoint import decide

    shipped = json.loads((encoder.WEIGHTS_DIR / "evaluation.json").read_text())
    rows = decide.criteria(shipped, shipped)
    assert not next(holds for name, _, holds in rows if "copy rate" in name)  # lower, not equal
    assert decide.main([str(encoder.WEIGHTS_DIR / "evaluation.json")]) == 1  # KEEP
    better = json.loads(json.dumps(shipped))
    better["probes"].update(top1=0.5, top5=0.75)
    next(p for p in better["probes"]["per_probe"] if p["text"] == decide.FLAGSHIP)["top5"][0] = "paris"
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


def test_the_thread_tuner_probes_less_often_while_probes_lose_and_follows_a_busy_machine(monkeypatch):
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


def test_measure_load_reports_a_forward_pass_and_its_peak():
    """The load measurement (the model card's figures, `make bench`) runs its script in a fresh
    interpreter: a mistake in that script is invisible to the linter, so run it."""
    from recipes.checkpoint.evaluate import measure_load

    result = measure_load(encoder.checkpoint_path())
    assert result["logits_shape"][:2] == [2, 16] and result["peak_rss_mb"] > 0

"""The checkpoint's corpus (recipes/checkpoint/corpus): the split, the mixes and their licences,
and what each source's extractor keeps."""

from __future__ import annotations

import json
import random
import re
import struct
import zlib

import pytest

from recipes.checkpoint.corpus import build, extract, mixes, rdata


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
        encoding="utf-8",
    )
    assert list(extract.extract_ding(tmp_path)) == [
        "To have a passion for something. It was pure chance.",
        "The door banged me in the face .",  # "face ." and "face." are the same WordPieces
    ]


def test_sotu_keeps_addresses_since_1900_without_stage_directions(tmp_path):
    data = tmp_path / "package/data"
    data.mkdir(parents=True)
    speech = (
        "Thank you all very much for coming tonight. (Applause.) Our families work hard every day. "
        "The schools are open—(laughter)—and the farms are green again. [Applause] We will build new "
        "roads and bridges across the country. "
    )
    (data / "1850_old_president_w.txt").write_text(
        "The treasury of the Union is in good order this year. " * 9
    )
    (data / "1999_new_president_d.txt").write_text(speech * 3, encoding="utf-8")
    (data / "1999_new_president_d.json").write_text("{}")
    chunks = list(extract.extract_sotu(tmp_path))
    text = " ".join(chunks)
    assert chunks and "treasury" not in text  # 1850 is before SOTU_SINCE
    assert "pplause" not in text and "laughter" not in text
    assert all(
        len(re.findall(r"[.!?](?:\s|$)", c)) <= 6 for c in chunks
    )  # paragraphs of <= 6 sentences


def test_cataclysm_keeps_descriptions_and_dialogue_without_markup_or_profanity(tmp_path):
    data = tmp_path / "usr/share/games/cataclysm-dda/json/items"
    data.mkdir(parents=True)
    (data / "tools.json").write_text(
        json.dumps(
            [
                {
                    "type": "TOOL",
                    "id": "knife_butter",
                    "name": {"str": "butter knife"},
                    "description": (
                        "A dull knife,  absolutely worthless in combat.\n"
                        "Excellent for spreading soft things on bread."
                    ),
                },
                {
                    "type": "TOOL",
                    "id": "key",
                    "description": {
                        "str": "A small brass key on a ring, for the <color_white>front door</color>."
                    },
                },
                {
                    "type": "talk_topic",
                    "dynamic_line": {
                        "u_male": "Hello there, <name_g>, what brings you here?",
                        "no": "Well, my mother kept chickens on the farm behind the house.",
                    },
                    "responses": [
                        {"text": "What the fuck are you doing out here?"},
                        {"text": "Bye."},
                    ],
                },
                {
                    "type": "ARMOR",
                    "id": "x",
                    "name": "long name with many words in it but no description key",
                },
            ]
        ),
        encoding="utf-8",
    )
    (data / "broken.json").write_text("{ not json")
    assert sorted(extract.extract_cataclysm(tmp_path)) == [
        "A dull knife, absolutely worthless in combat. Excellent for spreading soft things on bread.",
        "A small brass key on a ring, for the front door.",  # colour markup keeps its words
        "Well, my mother kept chickens on the farm behind the house.",  # nested under dynamic_line
    ]  # a filled-in <name_g>, profanity, short lines and names are dropped


def test_moby_dick_paragraphs_skip_chapter_titles(tmp_path):
    data = tmp_path / "package/data"
    data.mkdir(parents=True)
    (data / "chapter_1.txt").write_text(
        "CHAPTER 1. Loomings.\n\nCall me Ishmael. Some years ago I thought "
        "I would sail about a little and see the watery part of the world.\n",
        encoding="utf-8",
    )
    (data / "chapter_2.txt").write_text(
        "CHAPTER 2. The Carpet-Bag.\n\nI stuffed a shirt or two into my old "
        "carpet-bag, tucked it under my arm, and started for Cape Horn.\n"
    )
    (data / "epilogue.txt").write_text(
        "Epilogue\n\nThe drama's done. Why then here does any one step forth? "
        "Because one did survive the wreck.\n"
    )
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
            latin1 = (
                not s.isascii()
            )  # R's LATIN1_MASK (gp bit 2); plain ASCII gets ASCII_MASK (bit 6)
            raw = s.encode("latin-1" if latin1 else "ascii")
            out += struct.pack(">ii", 9 | ((1 << 2 if latin1 else 1 << 6) << 12), len(raw)) + raw
    return out


def test_austen_novels_read_from_the_r_package(tmp_path):
    novels = [
        [
            "EMMA",
            "",
            "By Jane Austen",
            "",
            "CHAPTER I",
            "",
            "Emma Woodhouse, handsome, clever, and rich, with a comfortable home",
            "and happy disposition, seemed to unite some of the _best_ blessings.",
            "",
            None,
        ],
        [
            "PERSUASION",
            "",
            "Chapter 1",
            "",
            "Sir Walter Elliot, of Kellynch Hall, in Somersetshire,",
            "was a man who, for his own amusement, never took up any book but the Baronetage.",
            "",
            "Caf\u00e9 society was not yet known in the village where the family lived so long.",
        ],
    ]
    rdb = b""
    for i, lines in enumerate(novels):
        packed = zlib.compress(r_serialized_strings(lines, version=2 + i))
        rdb += struct.pack(">i", len(packed)) + packed
    data = tmp_path / "usr/lib/R/site-library/janeaustenr/data"
    data.mkdir(parents=True)
    (data / "Rdata.rdb").write_bytes(rdb)
    assert [v[:1] for v in rdata.r_character_vectors(rdb)] == [["EMMA"], ["PERSUASION"]]
    paragraphs = list(extract.extract_austen(tmp_path))
    assert [p[:10] for p in paragraphs] == ["Emma Woodh", "Sir Walter", "Caf\u00e9 socie"]
    assert "best blessings" in paragraphs[0]  # _italics_ lose their underscores
    with pytest.raises(ValueError, match="XDR"):
        list(rdata.r_character_vectors(struct.pack(">i", 4) + zlib.compress(b"RDA2\n")))


def test_html_paragraphs_strip_markup(tmp_path):
    page = tmp_path / "page.en.html"
    page.write_text(
        "<html><script>var x = 1;</script><p>The <b>quick</b> brown fox jumps over the lazy dog.</p>"
        '<pre>def f(): pass</pre><div class="para">Debian is a free operating system for everyone.</div>'
        "<p>Too short.</p></html>"
    )
    assert list(extract.html_paragraphs(page)) == [
        "The quick brown fox jumps over the lazy dog.",
        "Debian is a free operating system for everyone.",
    ]

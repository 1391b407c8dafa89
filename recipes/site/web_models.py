"""The website's live models: the shipped checkpoints as ONNX, checked, for ``make book``.

``PYTHONPATH=book python -m recipes.site.web_models OUT`` writes what the pages' "Try it" boxes load (Chapter 4's
fill-mask, Chapter 6b's canvas, Chapter 6's writers, Chapter 1's attention; ``book/live/README.md``)
into ``OUT`` (``make book`` copies it to ``_build/html/_static/live``):

- ``models/<name>-<manifest hash>/model_<dtype>.onnx`` for the course checkpoint (``mlm``) and
  the masked diffusion model (``diffusion``): ``torch.onnx.export`` of the ``BertForMaskedLM``
  (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output ``logits``), then
  onnxruntime's ``quantize_dynamic`` to int8 (transformers.js's ``scripts/quantize.py`` recipe,
  per channel). Where int8 changes too many answers (these models' top two are often within
  0.001 of each other), the weights are stored in fp16 instead and computed in fp32. Named by
  the manifest's hash like the course cache (:func:`bertlab.models.shipped.assemble_once`), so
  a retrained model gets a new URL; skipped when already built;
- the same for the left-to-right writer (``causal``, a ``BertLMHeadModel``: same inputs, logits
  whose row t predicts token t + 1) and for the course checkpoint's encoder (``attention``, keyed
  by the course checkpoint's manifest: inputs ``input_ids``, ``token_type_ids`` and an additive
  ``attention_bias`` [1, 1, T, T]; outputs every layer's ``attentions`` [L, H, T, T] and
  ``hidden`` [T, Hd]; :data:`recipes.site.web_checks.IO`);
- ``models/vocab.txt``, the WordPiece vocabulary ``wordpiece.mjs`` reads;
- ``models/models.json``: which files, their sizes, the agreement figures, the boxes' examples;
- ``models/reference.json``: onnxruntime-Python's answers on the pages' examples
  (:mod:`reference.web_sampler`), which the browser tests hold the pages to;
- ``ort/`` and the pages' modules: onnxruntime-web from ``book/live/node_modules`` (``npm ci``) and
  ``book/live/*.mjs``.

It fails when a shipped file agrees with PyTorch on fewer than 95% of the probe
sentences (:mod:`bertlab.probes`): the top-1 at the ``[MASK]``, the writer's next-token top-1 at
every position (also at lengths other than the export's), every head's argmax key; or when an
attention weight is more than 2e-3 from PyTorch's.
The ONNX steps are :mod:`recipes.site.web_onnx`'s and :mod:`recipes.site.web_attention`'s, the
checks :mod:`recipes.site.web_checks`', the examples and their answers
:mod:`recipes.site.web_references`'.
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
from recipes.site.web_checks import IO, KINDS, failure
from recipes.site.web_onnx import OPSET, embedding_copies, quantize_int8, session, store_fp16
from recipes.site.web_references import (
    ATTENTION_EXAMPLES,
    CANVAS_EXAMPLES,
    CANVAS_K,
    CANVAS_N,
    CANVAS_SEED,
    WRITER_EXAMPLES,
    WRITERS,
    references,
)
from reference.web_sampler import FILL_EXAMPLES

REPO = Path(__file__).resolve().parents[2]  # recipes/site/web_models.py
PAGES_JS = REPO / "book" / "live"
ORT_DIST = PAGES_JS / "node_modules" / "onnxruntime-web" / "dist"
#: onnxruntime-web's wasm-only ES module (its glue inside) and the plain, single-thread-capable binary.
ORT_FILES = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.wasm")


def manifest_key(weights_dir: Path) -> str:
    """The first 16 hex digits of the manifest's sha256: the course cache's folder name."""
    return hashlib.sha256((Path(weights_dir) / "manifest.json").read_bytes()).hexdigest()[:16]


def build_model(
    name: str, path: str, weights_dir: Path, models_dir: Path, tokenizer, kind: str = "mlm"
) -> dict:
    """``models_dir/<name>-<key>/model_<dtype>.onnx`` and its record; reused when already built."""
    how = KINDS[kind]
    folder = models_dir / f"{name}-{manifest_key(weights_dir)}"
    record_file = folder / "export.json"
    if record_file.is_file():
        record = json.loads(record_file.read_text())
        print(
            f"web_models: {folder.name} already built ({record['dtype']}, agreement {record['agreement']:.1%})"
        )
        return record
    started = time.perf_counter()
    model = how.load(path)
    want = how.answers(model, tokenizer)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model.onnx"
        how.export(model, fp32)
        copies = embedding_copies(fp32, model.config.vocab_size, model.config.hidden_size)
        tmp_folder = Path(tmp) / folder.name
        tmp_folder.mkdir()
        quantize_int8(fp32, Path(tmp) / "model_int8.onnx")
        int8 = how.check(want, session(Path(tmp) / "model_int8.onnx"), tokenizer)
        print(f"web_models: {name}: int8 {how.measure} agrees with PyTorch: {figures_line(int8)}")
        dtype = "int8"
        if failure(int8):
            dtype = "fp16"
            store_fp16(fp32, Path(tmp) / "model_fp16.onnx")
        onnx_file = f"model_{dtype}.onnx"
        shutil.move(str(Path(tmp) / onnx_file), tmp_folder / onnx_file)
        figures = (
            int8 if dtype == "int8" else how.check(want, session(tmp_folder / onnx_file), tokenizer)
        )
        print(
            f"web_models: {name}: {dtype} {how.measure} agrees with PyTorch: {figures_line(figures)}"
        )
        why = failure(figures)
        if why:
            raise SystemExit(
                f"web_models: {name}'s {dtype} model {why}: the site would show other answers than the book"
            )
        record = {
            "name": name,
            "bertlab_name": getattr(model.config, "bertlab_name", name),
            "dtype": dtype,
            "file": f"{folder.name}/{onnx_file}",
            "bytes": (tmp_folder / onnx_file).stat().st_size,
            "fp32_bytes": fp32.stat().st_size,
            "agreement": figures["agreement"],
            "int8_agreement": int8["agreement"],
            "probes": len(PROBES),
            "opset": OPSET,
            "word_embedding_copies_exported": copies,
            "seconds": round(time.perf_counter() - started, 1),
        }
        if kind != "mlm":  # the mlm records stay as they were
            record |= {"kind": kind, "measure": how.measure, "checks": figures} | IO[kind]
        (tmp_folder / "export.json").write_text(json.dumps(record, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        shutil.move(str(tmp_folder), folder)
    return record


def figures_line(figures: dict) -> str:
    """``agreement`` first, then the other checks, for the build log."""

    def short(value):
        if isinstance(value, dict):
            return "{" + ", ".join(f"T={k}: {short(v)}" for k, v in value.items()) + "}"
        return f"{value:.3g}"

    rest = ", ".join(f"{k} {short(v)}" for k, v in figures.items() if k != "agreement")
    return f"{figures['agreement']:.1%}" + (f" ({rest})" if rest else "")


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
    from transformers import AutoConfig, AutoTokenizer

    from bertlab.models.causal import WEIGHTS_DIR as CAUSAL_WEIGHTS, causal_path
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
        "causal": build_model(
            "causal", causal_path(), CAUSAL_WEIGHTS, models_dir, tokenizer, "causal"
        ),
        # the course checkpoint's encoder, keyed by its manifest like mlm, in its own folder
        "attention": build_model(
            "attention", mlm_path, ENCODER_WEIGHTS, models_dir, tokenizer, "attention"
        ),
    }
    encoder = AutoConfig.from_pretrained(mlm_path)  # the attention box's layer and head selects
    records["attention"] |= {
        "layers": encoder.num_hidden_layers,
        "heads": encoder.num_attention_heads,
    }
    started = time.perf_counter()
    sessions = {name: session(models_dir / r["file"]) for name, r in records.items()}
    reference = references(tokenizer, **sessions)
    print(f"web_models: reference.json computed in {time.perf_counter() - started:.1f} s")
    (models_dir / "reference.json").write_text(json.dumps(reference) + "\n")
    size = (models_dir / "reference.json").stat().st_size
    print(f"web_models: reference.json: {size / 1e3:.0f} kB")
    runtime = sum((out / "ort" / name).stat().st_size for name in ORT_FILES)
    index = {
        "models": records,
        "vocab": "vocab.txt",
        "runtime_bytes": runtime,
        "fill_examples": list(FILL_EXAMPLES),
        "canvas_examples": [list(e) for e in CANVAS_EXAMPLES],
        "canvas": {"n": CANVAS_N, "k": CANVAS_K, "seed": CANVAS_SEED},
        "writer_examples": [list(e) for e in WRITER_EXAMPLES],
        "attention_examples": list(ATTENTION_EXAMPLES),
        "writers": WRITERS,
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
            f"{r.get('measure', 'top-1')} agreement with PyTorch {r['agreement']:.1%} "
            f"(int8: {r['int8_agreement']:.1%})"
        )
    print(f"web_models: {args.out}: {total / 1e6:.1f} MB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Continue masked-language-model pretraining of the MiniLM encoder as a ``BertForMaskedLM``.

The data and BERT's masking are in ``data.py``, the model (a head on MiniLM, the word
embeddings frozen) and its optimizer in ``model.py``, the run's folder and its learning-rate
schedule in ``run_folder.py``; this module is the loop.

A plain torch loop, resumable: ``runs/train/checkpoint.pt`` holds model, optimizer, schedule,
RNG states, step and data position; it is written atomically every few minutes, so a kill -9
loses at most that much. Running the same command again resumes.

    python -m recipes.checkpoint.train --corpus runs/corpus --out runs/train --minutes 90

The same code runs on a CPU or a CUDA GPU (``--device auto``, the default, picks the GPU when
there is one): masking is drawn on the CPU by the collator's own seeded generator, so both see
the same batches, and checkpoints load on either. ``--init-from bertlab/models/weights/encoder``
starts a new stage from the shipped checkpoint on a machine that has no ``runs/train`` (the
step count, wall time and curve continue from the shipped ones; the optimizer and the
learning-rate schedule start afresh), and ``--whole-word`` masks whole words (transformers'
``DataCollatorForLanguageModeling(whole_word_mask=True)``, with 80-10-10 on the chosen words).
What a stage tries and the rule for shipping it are in ``RUNS.md``, beside this file.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch
from tqdm import tqdm

from recipes.checkpoint.data import (
    continuation_mask,
    corpus_id,
    fixed_eval_set,
    load_data,
    load_tokenizer,
    make_collator,
    masking_description,
    word_examples,
)
from recipes.checkpoint.model import (
    bf16_is_fast,
    build_model,
    evaluate,
    make_optimizer,
    masked_logits,
    pick_device,
)
from recipes.checkpoint.run_folder import lr_factor, save, seed_from_shipped
from recipes.checkpoint.threads import ThreadTuner


class Curve:
    """``curve.jsonl``: a row per held-out evaluation (step, wall time, mean training loss since
    the row before, held-out loss and accuracy, corpus), as ``decide.py`` and the card read it."""

    def __init__(self, path: Path, corpus: str, model, eval_set):
        self.path, self.corpus, self.model, self.eval_set = path, corpus, model, eval_set

    def row(self, st: dict, train_loss: float | None, wall_s: float | None = None) -> tuple:
        """Evaluate, append the row for ``st``'s step; the held-out (loss, accuracy)."""
        ev_loss, ev_acc = evaluate(self.model, self.eval_set)
        row = {
            "step": st["step"],
            "wall_s": round(st["wall"], 1) if wall_s is None else wall_s,
            "train_loss": train_loss,
            "eval_loss": ev_loss,
            "eval_acc": ev_acc,
            "corpus": self.corpus,
        }
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        return ev_loss, ev_acc


def resume(args, ckpt_path: Path, model, collator, curve: Curve) -> tuple[dict, dict | None, bool]:
    """The run's state and optimizer state from ``checkpoint.pt`` (model and masking RNG loaded in
    place), the curve cut back to its step, a row where a new stage starts (another corpus, or a
    run seeded from the shipped weights), and whether ``--max-steps`` is already reached."""
    ck = torch.load(ckpt_path, weights_only=False, map_location="cpu")  # saved on either device
    model.load_state_dict(ck["model"])
    opt_state = ck.get("optimizer")  # None right after seed_from_shipped
    if "collator_rng" in ck:
        collator.generator.set_state(ck["collator_rng"])
        torch.set_rng_state(ck["torch_rng"])
    st = ck["state"]
    st["budget_s"] = st["wall"] + args.minutes * 60 if args.minutes else st["budget_s"]
    rows = (
        [json.loads(line) for line in curve.path.read_text().splitlines()]
        if curve.path.is_file()
        else []
    )
    curve.path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["step"] <= st["step"]))
    print(f"resumed from step {st['step']} ({st['wall'] / 60:.1f} min trained)")
    if args.max_steps and st["step"] >= args.max_steps:
        print(f"already at step {st['step']} >= --max-steps {args.max_steps}: nothing to do")
        return st, opt_state, True
    if rows and (rows[-1].get("corpus", curve.corpus) != curve.corpus or opt_state is None):
        ev_loss, ev_acc = curve.row(st, None)  # a new stage starts here
        print(
            f"new corpus {curve.corpus} at step {st['step']}: eval loss {ev_loss:.3f} "
            f"acc {ev_acc:.4f}"
        )
    return st, opt_state, False


def lr_now(args, st: dict, trained_s: float) -> float:
    """The learning-rate factor for the next step: :func:`lr_factor` of the steps and the share
    of the budget (minutes, else steps) used since the schedule started."""
    s0, w0 = st.get("schedule_from_step", 0), st.get("schedule_from_wall", 0.0)
    if st["budget_s"]:
        progress = (trained_s - w0) / max(st["budget_s"] - w0, 1e-9)
    else:
        progress = (st["step"] - s0) / max(args.max_steps - s0, 1) if args.max_steps else 0.0
    return lr_factor(st["step"] - s0, progress) * args.lr_scale


def train(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the new MLM head's initialisation
    device = pick_device(args.device)
    bf16 = bf16_is_fast(device) if args.bf16 == "auto" else args.bf16 == "on"
    print(f"training on {device} ({'bf16 autocast' if bf16 else 'fp32'})")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.init_from and not (out / "checkpoint.pt").is_file():
        seed_from_shipped(args.init_from, out)
    tokenizer = load_tokenizer()
    train_rows, heldout_rows = load_data(args.corpus, out, tokenizer, args.seq_len)  # [N, L] int16
    eval_set = fixed_eval_set(heldout_rows, tokenizer, args.eval_seqs)  # of THIS corpus
    model = build_model(train_rows)
    model.train()
    collator = make_collator(tokenizer, args.seed, args.whole_word)
    collator.create_rng("pt")
    continuation = continuation_mask(tokenizer) if args.whole_word else None  # once, not per batch
    ckpt_path = out / "checkpoint.pt"
    curve = Curve(out / "curve.jsonl", corpus_id(args.corpus), model, eval_set)
    st = {"step": 0, "epoch": 0, "index": 0, "wall": 0.0, "budget_s": 0.0}
    opt_state = None
    if ckpt_path.is_file() and not args.no_resume:
        st, opt_state, done = resume(args, ckpt_path, model, collator, curve)
        if done:
            return st
    else:
        torch.manual_seed(args.seed)
        st["budget_s"] = args.minutes * 60
        curve.path.write_text("")

    model.to(device)
    opt = make_optimizer(model)  # after .to(device): its state lives where the parameters do
    if opt_state is not None:
        opt.load_state_dict(opt_state)
    if st["step"] == 0:
        ev_loss, ev_acc = curve.row(st, None, wall_s=0.0)
        print(f"step 0: eval loss {ev_loss:.3f} acc {ev_acc:.4f}")

    def checkpoint() -> None:
        save(
            ckpt_path,
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "state": dict(st),
                "collator_rng": collator.generator.get_state(),
                "torch_rng": torch.get_rng_state(),
                "args": {k: str(v) for k, v in vars(args).items()},
                "seq_len": args.seq_len,
                "device": str(device),
                "bf16": bf16,
                "masking": masking_description(args.whole_word),
            },
        )

    losses = run_steps(args, model, opt, collator, tokenizer, train_rows, continuation, st, curve,
                       device, bf16, checkpoint)  # fmt: skip
    if losses:  # final point on the curve
        ev_loss, ev_acc = curve.row(st, sum(losses) / len(losses))
        print(f"final step {st['step']}: eval loss {ev_loss:.3f} acc {ev_acc:.4f}")
    checkpoint()
    return st


def run_steps(args, model, opt, collator, tokenizer, train_rows, continuation, st: dict,
              curve: Curve, device, bf16: bool, checkpoint) -> list[float]:  # fmt: skip
    """Train until ``--max-steps`` or ``--minutes``: a row on the curve every ``--eval-every``
    steps, a checkpoint every ``--save-every-minutes``. ``st`` goes on in place; returns the
    training losses since the curve's last row."""
    start = last_save = time.time()
    wall0 = st["wall"]
    deadline = start + args.minutes * 60 if args.minutes else math.inf
    n_rows = len(train_rows)
    order = torch.randperm(n_rows, generator=torch.Generator().manual_seed(args.seed + st["epoch"]))
    bar = tqdm(
        initial=st["step"],
        total=args.max_steps or None,
        desc="mlm",
        dynamic_ncols=True,
        mininterval=5,
    )
    losses: list[float] = []
    tuner = ThreadTuner(args.threads) if args.adaptive_threads and args.threads > 1 else None
    while (not args.max_steps or st["step"] < args.max_steps) and time.time() < deadline:
        t_step = time.time()
        if tuner:
            tuner.threads_for_next_step()
        if st["index"] + args.batch_size > n_rows:  # next epoch, new deterministic order
            st["epoch"], st["index"] = st["epoch"] + 1, 0
            order = torch.randperm(
                n_rows, generator=torch.Generator().manual_seed(args.seed + st["epoch"])
            )
        idx = order[st["index"] : st["index"] + args.batch_size]
        rows = train_rows[idx]  # [B, L]
        batch = collator(
            word_examples(rows, tokenizer, continuation)
            if args.whole_word
            else [r.long() for r in rows]
        )
        factor = lr_now(args, st, wall0 + time.time() - start)
        for g in opt.param_groups:
            g["lr"] = g["base_lr"] * factor
        ids, labels = (
            batch["input_ids"].to(device),
            batch["labels"].to(device),
        )  # [B, L] each, masked on the CPU
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):  # fp32 master weights
            logits, target = masked_logits(model, ids, labels)  # [n, V], [n]
        loss = torch.nn.functional.cross_entropy(logits.float(), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        st["step"] += 1
        st["index"] += args.batch_size
        st["wall"] = wall0 + time.time() - start
        losses.append(loss.item())
        if tuner:
            tuner.record(time.time() - t_step)
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.3f}", lr=f"{factor:.2f}", thr=torch.get_num_threads())
        if st["step"] % args.eval_every == 0:
            ev_loss, ev_acc = curve.row(st, sum(losses) / len(losses))
            tqdm.write(
                f"step {st['step']}: train {sum(losses) / len(losses):.3f} eval {ev_loss:.3f} "
                f"acc {ev_acc:.4f}"
            )
            losses = []
        if time.time() - last_save > args.save_every_minutes * 60:
            checkpoint()
            last_save = time.time()
    bar.close()
    return losses


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path("runs/corpus"))
    ap.add_argument("--out", type=Path, default=Path("runs/train"))
    ap.add_argument(
        "--max-steps", type=int, default=0, help="stop at this global step (0: no limit)"
    )
    ap.add_argument(
        "--minutes", type=float, default=0, help="stop after this many minutes (this invocation)"
    )
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-seqs", type=int, default=256)
    ap.add_argument("--save-every-minutes", type=float, default=8)
    ap.add_argument("--threads", type=int, default=2, help="intra-op threads (at most)")
    ap.add_argument(
        "--fixed-threads",
        dest="adaptive_threads",
        action="store_false",
        help="always use --threads (default: switch to 1 thread when that is faster)",
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--device", default="auto", help="auto (CUDA when there is a GPU), cpu or cuda")
    ap.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="a shipped weights folder to start from when OUT has no checkpoint yet",
    )
    ap.add_argument(
        "--whole-word",
        action="store_true",
        help="mask whole words (every piece of a chosen word; 80-10-10)",
    )
    ap.add_argument("--lr-scale", type=float, default=1.0, help="multiply both peak learning rates")
    ap.add_argument(
        "--bf16",
        choices=("auto", "on", "off"),
        default="auto",
        help="bf16 autocast (auto: where the hardware runs it natively; fp32 master weights)",
    )
    ap.add_argument(
        "--no-bf16", dest="bf16", action="store_const", const="off", help="the same as --bf16 off"
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="(the default) resume from OUT/checkpoint.pt if present",
    )
    ap.add_argument(
        "--no-resume", action="store_true", help="start over even if a checkpoint exists"
    )
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    train(parse_args(argv))


if __name__ == "__main__":
    main()

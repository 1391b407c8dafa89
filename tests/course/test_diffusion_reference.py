"""The masked-diffusion reference functions (book/reference/diffusion.py), on inputs small enough to print."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from reference.diffusion import (
    MIN_RATIO,
    diffusion_loss,
    diffusion_mask,
    tokens_per_step,
    unmask_step,
)

MASK = 103


def test_mask_never_touches_what_is_not_maskable_and_leaves_the_input():
    ids = torch.arange(1000, 1000 + 4 * 12).reshape(4, 12)
    maskable = torch.ones(4, 12, dtype=torch.bool)
    maskable[:, :3] = False  # a prompt prefix
    maskable[:, -1] = False  # [SEP]
    before = ids.clone()
    noisy, masked, t = diffusion_mask(ids, maskable, MASK, torch.Generator().manual_seed(0))
    assert torch.equal(ids, before)
    assert not masked[~maskable].any()
    assert torch.equal(noisy[masked], torch.full((int(masked.sum()),), MASK))
    assert torch.equal(noisy[~masked], ids[~masked])
    assert t.shape == (4,) and ((t >= MIN_RATIO) & (t <= 1)).all()


def test_mask_is_seeded_and_one_ratio_per_row():
    ids = torch.zeros(2000, 50, dtype=torch.long)
    maskable = torch.ones_like(ids, dtype=torch.bool)
    a = diffusion_mask(ids, maskable, MASK, torch.Generator().manual_seed(3))
    b = diffusion_mask(ids, maskable, MASK, torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    _, masked, t = a
    share = masked.float().mean(1)  # [2000]: each row's masked share follows its own t
    assert (share - t).abs().mean() < 0.06
    assert abs(t.mean().item() - 0.5) < 0.03  # t ~ U(0, 1)


def test_loss_weights_each_masked_token_by_one_over_its_rows_ratio():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 7)
    targets = torch.tensor([[1, 2, 3], [4, 5, 6]])
    masked = torch.tensor([[True, False, True], [False, True, False]])
    maskable = torch.tensor([[True, True, True], [True, True, False]])
    t = torch.tensor([0.5, 0.25])
    ce = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), reduction="none").reshape(2, 3)
    expected = (ce[0, 0] / 0.5 + ce[0, 2] / 0.5 + ce[1, 1] / 0.25) / 5  # 5 maskable positions
    assert torch.allclose(diffusion_loss(logits, targets, masked, t, maskable), expected)


def test_schedule_commits_every_position_by_the_last_step():
    assert tokens_per_step(10, 4) == [3, 3, 2, 2]
    assert tokens_per_step(3, 5) == [1, 1, 1, 0, 0]
    for n, steps in [(0, 3), (16, 16), (17, 5), (100, 7)]:
        plan = tokens_per_step(n, steps)
        assert len(plan) == steps and sum(plan) == n and max(plan) - min(plan) <= 1
    with pytest.raises(ValueError, match="steps"):
        tokens_per_step(5, 0)


def test_step_commits_the_most_confident_masked_positions_only():
    canvas = torch.tensor([[5, MASK, MASK, MASK, 6]])
    logits = torch.full((1, 5, 8), -5.0)
    logits[0, 0, 1] = 9.0  # position 0 is already written: its confidence must not count
    logits[0, 1, 2] = 1.0  # masked, unsure
    logits[0, 2, 3] = 6.0  # masked, most sure
    logits[0, 3, 4] = 3.0  # masked, second
    out = unmask_step(canvas, logits, 2, MASK)
    assert out.tolist() == [[5, MASK, 3, 4, 6]]
    assert canvas.tolist() == [[5, MASK, MASK, MASK, 6]]  # a new canvas
    assert unmask_step(out, logits, 5, MASK).tolist() == [[5, 2, 3, 4, 6]]  # fewer left than asked

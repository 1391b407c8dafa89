"""Switch between one and two OpenMP threads by measured step time, on a CPU shared with other jobs."""

from __future__ import annotations

import torch


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
        self.base_period, self.period, self.max_period, self.probe = (
            period,
            period,
            max_period,
            probe,
        )
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

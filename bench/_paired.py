"""Shared timing helper for the paired benchmarks: both libraries at one thread, interleaved.

``paired_us(ours, theirs)`` times two zero-argument callables in turns (ours, torch, ours, ...)
with ``time.process_time`` (CPU time of this process, so other processes on a shared machine
count less), and returns the best microseconds per call of each. Turns are short so that a
burst of load hits both alike.
"""

from __future__ import annotations

import os

# one BLAS thread for numpy, set before numpy is first imported (torch gets set_num_threads(1))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402


def load_torch():
    """torch at one thread, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def _calls_per_turn(fn, target_s=0.02):
    t0 = time.process_time()
    fn()
    took = max(time.process_time() - t0, 1e-6)
    return max(1, int(target_s / took))


def paired_us(ours, theirs, turns=15):
    """Best microseconds per call of ``ours`` and ``theirs`` (``theirs`` may be None)."""
    fns = [f for f in (ours, theirs) if f is not None]
    counts = [_calls_per_turn(f) for f in fns]
    best = [float("inf")] * len(fns)
    for _ in range(turns):
        for i, (f, n) in enumerate(zip(fns, counts)):
            t0 = time.process_time()
            for _ in range(n):
                f()
            best[i] = min(best[i], (time.process_time() - t0) / n)
    us = [b * 1e6 for b in best]
    return (us[0], us[1]) if theirs is not None else (us[0], None)


def row(name, ours_us, theirs_us):
    """One printed line: name, both times, and the ratio ours/torch."""
    if theirs_us is None:
        return f"{name:44s} {ours_us:11.1f} {'-':>11s} {'-':>7s}"
    return f"{name:44s} {ours_us:11.1f} {theirs_us:11.1f} {ours_us / theirs_us:6.2f}x"


HEADER = f"{'case':44s} {'ours (us)':>11s} {'torch (us)':>11s} {'ratio':>7s}"

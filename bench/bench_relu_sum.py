"""``x.relu()`` and ``x.sum()`` on cache-sized row-major tensors, side by side with PyTorch
(run: ``python bench/bench_relu_sum.py``).

On these sizes the work is the arithmetic, not the per-op overhead: the twins of relu and sum
(``_ext/twins/backends/cpu/activations.pyx``, ``reduction.pyx``) run C loops that give numpy's
bits (``np.maximum(x, 0)``, numpy's pairwise summation) where numpy itself was 2x to 5x slower
than torch. Each line prints minitorch_nn's microseconds, torch's, and their ratio; the target is
a ratio of at most 1.5. Times are CPU time, both libraries in turn at one thread (``_paired.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _paired import HEADER, load_torch, paired_us, row  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402


def main():
    torch = load_torch()
    print(HEADER)
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        for side in (64, 256, 512):
            x = rng.standard_normal((side, side)).astype(dtype)
            ours = mt.tensor(x)
            theirs = None if torch is None else torch.from_numpy(x.copy())
            for name in ("relu", "sum"):
                getattr(ours, name)()   # (warm-up: the twins' one-time check of numpy, outside the timing)
                ours_us, theirs_us = paired_us(getattr(ours, name),
                                               None if theirs is None else getattr(theirs, name), turns=7)
                print(row(f"x.{name}() {side}x{side} {dtype}", ours_us, theirs_us), flush=True)


if __name__ == "__main__":
    main()

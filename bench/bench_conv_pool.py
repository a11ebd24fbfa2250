"""Benchmark: the LeNet-5 convolution and pooling kernels against PyTorch.

Run ``python bench/bench_conv_pool.py`` from the repository root. One thread, the two libraries
interleaved, CPU time (see ``_paired.py``). Shapes are LeNet-5's on 28x28 digits at batch 64:
conv1 (1->6, 5x5, padding 2) on 64x1x28x28, conv2 (6->16, 5x5) on 64x6x14x14, and 2x2 max
pooling on 64x6x28x28; each timed forward only (inference) and forward + backward.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _paired import HEADER, load_torch, paired_us, row  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402


def cases(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(0)

    def t(*shape, grad=False):
        x = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        return x.requires_grad_() if grad else x

    x1, w1, b1 = t(64, 1, 28, 28), t(6, 1, 5, 5), t(6)
    x2, w2, b2 = t(64, 6, 14, 14), t(16, 6, 5, 5), t(16)
    xp = t(64, 6, 28, 28)
    x1g, w1g, b1g = t(64, 1, 28, 28, grad=True), t(6, 1, 5, 5, grad=True), t(6, grad=True)
    x2g, w2g, b2g = t(64, 6, 14, 14, grad=True), t(16, 6, 5, 5, grad=True), t(16, grad=True)
    xpg = t(64, 6, 28, 28, grad=True)

    def backward(y):
        y.sum().backward()

    return {
        "conv1 forward": lambda: F.conv2d(x1, w1, b1, padding=2),
        "conv1 forward+backward": lambda: backward(F.conv2d(x1g, w1g, b1g, padding=2)),
        "conv2 forward": lambda: F.conv2d(x2, w2, b2),
        "conv2 forward+backward": lambda: backward(F.conv2d(x2g, w2g, b2g)),
        "max_pool2d 2x2 forward (no grad)": lambda: F.max_pool2d(xp, 2),
        "max_pool2d 2x2 forward+backward": lambda: backward(F.max_pool2d(xpg, 2)),
    }


def main():
    torch = load_torch()
    ours = cases(mt)
    theirs = cases(torch) if torch is not None else {}
    print(HEADER)
    for name, fn in ours.items():
        a, b = paired_us(fn, theirs.get(name))
        print(row(name, a, b))


if __name__ == "__main__":
    main()

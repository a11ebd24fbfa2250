"""Autograd overhead, side by side with PyTorch (run: ``python bench/bench_autograd.py``).

Two measurements:

1. **Per-op cost with ``requires_grad=True``** on tiny tensors, where the time is all bookkeeping:
   the autograd layer (``autograd/recording.py``) making a node, saving tensors and wiring the
   output, on top of the op itself. The same ops without grad are timed too, so the difference
   is the price of recording. Each row prints minitorch_nn's and torch's microseconds per call and
   their ratio.
2. **Forward + backward of a small MLP** (two ``addmm`` layers with ``relu`` and a softmax
   cross-entropy built from ``log_softmax`` and indexing), the loop every training step runs.

torch is optional: without it only minitorch_nn's numbers are printed.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import minitorch_nn as mt

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def _per_call_us(fn, number):
    fn()  # warm up
    best = min(timeit.repeat(fn, number=number, repeat=5))
    return best / number * 1e6


def _ops(L, requires_grad):
    a = L.tensor(np.random.default_rng(0).standard_normal((4, 4)), dtype=L.float32, requires_grad=requires_grad)
    b = L.tensor(np.random.default_rng(1).standard_normal((4, 4)), dtype=L.float32, requires_grad=requires_grad)
    return {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "exp": lambda: a.exp(),
        "sum": lambda: a.sum(),
        "matmul": lambda: a @ b,
        "view": lambda: a.view(16),
        "transpose": lambda: a.t(),
        "getitem": lambda: a[1:3],
        "relu": lambda: a.relu(),
        "softmax": lambda: L.softmax(a, 1),
    }


def bench_ops(number):
    print(f"{'op':<12}{'grad':>6}{'minitorch us':>15}{'torch us':>11}{'ratio':>8}")
    for requires_grad in (False, True):
        mine = _ops(mt, requires_grad)
        theirs = _ops(torch, requires_grad) if torch is not None else {}
        for name, fn in mine.items():
            m = _per_call_us(fn, number)
            if name in theirs:
                t = _per_call_us(theirs[name], number)
                print(f"{name:<12}{str(requires_grad):>6}{m:>15.2f}{t:>11.2f}{m / t:>8.1f}")
            else:
                print(f"{name:<12}{str(requires_grad):>6}{m:>15.2f}")


def _mlp(L, batch, d_in, hidden, d_out):
    rng = np.random.default_rng(0)

    def param(*shape):
        return L.tensor(rng.standard_normal(shape) * 0.1, dtype=L.float32, requires_grad=True)

    w1, b1, w2, b2 = param(d_in, hidden), param(hidden), param(hidden, d_out), param(d_out)
    x = L.tensor(rng.standard_normal((batch, d_in)), dtype=L.float32)
    y = L.tensor(rng.integers(0, d_out, batch), dtype=L.int64)
    rows = L.arange(batch)
    params = (w1, b1, w2, b2)

    def step():
        h = L.addmm(b1, x, w1).relu()
        logits = L.addmm(b2, h, w2)
        loss = -L.log_softmax(logits, 1)[rows, y].mean()
        loss.backward()
        for p in params:
            p.grad = None
        return loss

    return step


def bench_mlp(number, batch=32, d_in=64, hidden=128, d_out=10):
    m = _per_call_us(_mlp(mt, batch, d_in, hidden, d_out), number)
    line = f"MLP {batch}x{d_in}->{hidden}->{d_out} forward+backward: minitorch {m:.1f} us"
    if torch is not None:
        t = _per_call_us(_mlp(torch, batch, d_in, hidden, d_out), number)
        line += f", torch {t:.1f} us, ratio {m / t:.1f}"
    print(line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing of one op")
    parser.add_argument("--mlp-number", type=int, default=100, help="steps per timing of the MLP")
    args = parser.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(1)
    bench_ops(args.number)
    bench_mlp(args.mlp_number)


if __name__ == "__main__":
    main()

"""Benchmark: one training step of an MLP in minitorch_nn against PyTorch.

Run ``python bench/bench_mlp.py [steps]`` from the repository root. The model is the classic
MNIST MLP, 784-256-10 with ReLU, batch 128, cross-entropy loss and SGD with momentum (or Adam
with ``--optim adam``); both
libraries start from the same weights (``manual_seed(0)``) and see the same batch. One step is
``zero_grad`` + forward + ``backward`` + ``step``. It prints the best and median milliseconds
per step, the ratio ours/torch, and the loss after the timed steps in both libraries (they agree,
since every op is the same op).

Both libraries run with one thread by default (``torch.set_num_threads`` and, for numpy's
BLAS, ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` set before numpy is imported), so the
comparison is per core; pass ``--threads N`` to change that. On a busy machine a multithreaded
BLAS can be many times slower than a single thread, which is why the default is one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def make(lib, x, y, optim="sgd"):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    kw = {"foreach": False} if lib.__name__ == "torch" else {}
    if optim == "adam":
        opt = lib.optim.Adam(model.parameters(), lr=1e-3, **kw)
    else:
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, **kw)
    X, Y = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        return loss

    return step


def timeit(step, n):
    step()  # warm up (first-use allocations, lazy imports)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3, statistics.median(times) * 1e3, loss.item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="?", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--optim", choices=("sgd", "adam"), default="sgd")
    args = parser.parse_args()
    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(args.threads))
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128).astype(np.int64)

    import minitorch_nn as mt
    import minitorch_nn.optim  # noqa: F401

    rows = [("minitorch_nn", *timeit(make(mt, x, y, args.optim), args.steps))]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        rows.append(("torch", *timeit(make(torch, x, y, args.optim), args.steps)))

    opt_name = "Adam(lr=1e-3)" if args.optim == "adam" else "SGD(momentum=0.9)"
    print(f"MLP 784-256-10, batch 128, {opt_name}: {args.steps} steps")
    print(f"{'library':<14}{'best ms':>10}{'median ms':>12}{'final loss':>14}")
    for name, best, med, loss in rows:
        print(f"{name:<14}{best:>10.3f}{med:>12.3f}{loss:>14.6f}")
    if len(rows) == 2:
        print(f"ratio ours/torch (best): {rows[0][1] / rows[1][1]:.2f}x, (median): {rows[0][2] / rows[1][2]:.2f}x")


if __name__ == "__main__":
    main()

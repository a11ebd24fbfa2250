"""Benchmark: one training step of an MLP in minitorch_nn against PyTorch.

Run ``python bench/bench_mlp.py [steps]`` from the repository root. The model is the classic
MNIST MLP, 784-256-10 with ReLU, batch 128, cross-entropy loss and SGD with momentum (or Adam
with ``--optim adam``); both
libraries start from the same weights (``manual_seed(0)``) and see the same batch. One step is
``zero_grad`` + forward + ``backward`` + ``step``. It prints the best and median milliseconds
per step, the ratio ours/torch, and the loss after the timed steps in both libraries (they agree,
since every op is the same op). ``--parts`` also times the five parts of a step separately
(best of the steps for each part, so the parts need not add up to the best step), which shows
where the difference between the libraries lies.

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
    cross_entropy = nn.functional.cross_entropy

    def step():
        opt.zero_grad()
        loss = cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        return loss

    def parts(n):
        """Best microseconds of each part of a step over ``n`` steps (after one warm-up step)."""
        step()
        clock = time.perf_counter
        best = dict.fromkeys(PARTS, float("inf"))
        for _ in range(n):
            t0 = clock()
            opt.zero_grad()
            t1 = clock()
            out = model(X)
            t2 = clock()
            loss = cross_entropy(out, Y)
            t3 = clock()
            loss.backward()
            t4 = clock()
            opt.step()
            t5 = clock()
            for name, took in zip(PARTS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                best[name] = min(best[name], took * 1e6)
        return best

    step.parts = parts
    return step


PARTS = ("zero_grad", "forward", "loss", "backward", "step")


def timeit(steps, n, block=10):
    """Best and median milliseconds per step of each library's ``step``, and its final loss.

    The libraries take turns in blocks of ``block`` steps (ours, torch, ours, ...), so that a
    burst of load on a shared machine hits both alike, while each step still finds its own
    model in the caches as it would in a training loop.
    """
    for step in steps:
        step()  # warm up (first-use allocations, lazy imports)
    times = [[] for _ in steps]
    losses = [None] * len(steps)
    for start in range(0, n, block):
        for i, step in enumerate(steps):
            step()  # (back in the caches after the other library's turn)
            for _ in range(min(block, n - start)):
                t0 = time.perf_counter()
                losses[i] = step()
                times[i].append(time.perf_counter() - t0)
    return [(min(t) * 1e3, statistics.median(t) * 1e3, loss.item()) for t, loss in zip(times, losses)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="?", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--optim", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--parts", action="store_true", help="also time zero_grad, forward, loss, backward, step")
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

    steps, names = [make(mt, x, y, args.optim)], ["minitorch_nn"]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        steps.append(make(torch, x, y, args.optim))
        names.append("torch")
    rows = [(name, *timed) for name, timed in zip(names, timeit(steps, args.steps))]

    opt_name = "Adam(lr=1e-3)" if args.optim == "adam" else "SGD(momentum=0.9)"
    print(f"MLP 784-256-10, batch 128, {opt_name}: {args.steps} steps")
    print(f"{'library':<14}{'best ms':>10}{'median ms':>12}{'final loss':>14}")
    for name, best, med, loss in rows:
        print(f"{name:<14}{best:>10.3f}{med:>12.3f}{loss:>14.6f}")
    if len(rows) == 2:
        print(f"ratio ours/torch (best): {rows[0][1] / rows[1][1]:.2f}x, (median): {rows[0][2] / rows[1][2]:.2f}x")
    if args.parts:
        best = [s.parts(args.steps) for s in steps]
        print(f"\nparts of a step, best us of {args.steps}:")
        print(f"{'part':<12}{'minitorch_nn':>14}" + (f"{'torch':>10}{'ratio':>8}{'diff us':>10}" if len(best) == 2 else ""))
        for name in PARTS:
            line = f"{name:<12}{best[0][name]:>14.1f}"
            if len(best) == 2:
                ours, theirs = best[0][name], best[1][name]
                line += f"{theirs:>10.1f}{ours / theirs:>8.2f}{ours - theirs:>10.1f}"
            print(line)


if __name__ == "__main__":
    main()

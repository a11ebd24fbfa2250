"""Benchmark: tensor ops in minitorch_nn, numpy and PyTorch, side by side in one run.

Run ``python bench/bench_tensor.py [--quick] [--threads N]`` from the repository root. Two
tables:

* **tiny ops** (``add``, ``mul``, ``relu``, ``sum`` on shape ``(4,)`` float32): what one op costs
  when the data is negligible, i.e. the per-op overhead of the Python layers (public function,
  ``__torch_function__`` check, dispatch, kernel, wrapping the result). Target: at or below
  PyTorch's.
* **big ops** (``add``/``mul`` on 4M float32, float32 ``matmul`` at 512 and 2048): where the
  time is numpy's/BLAS's own. Target: within 1.1x of numpy.

Times are the best of several repeats (the least disturbed by other work on the machine), in
microseconds per call; ratios are minitorch_nn's time over the other library's. All libraries
use one thread by default (set before numpy is imported), so the comparison is per core.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit


def _set_threads(n):
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


def best_us(fn, number, repeat):
    """Best time of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    fn()  # warm up (first-call imports and caches)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def tiny_cases(mt, np, torch):
    a, b = mt.ones(4), mt.full((4,), 2.0)
    na, nb = np.ones(4, np.float32), np.full(4, 2.0, np.float32)
    cases = {
        "add": (lambda: a + b, lambda: na + nb),
        "mul": (lambda: a * b, lambda: na * nb),
        "relu": (lambda: a.relu(), lambda: np.maximum(na, 0)),
        "sum": (lambda: a.sum(), lambda: na.sum()),
    }
    if torch is not None:
        ta, tb = torch.ones(4), torch.full((4,), 2.0)
        torch_fns = {"add": lambda: ta + tb, "mul": lambda: ta * tb, "relu": lambda: ta.relu(), "sum": lambda: ta.sum()}
    else:
        torch_fns = {}
    return [(name, m, n, torch_fns.get(name)) for name, (m, n) in cases.items()]


def big_cases(mt, np, torch, quick):
    rng = np.random.default_rng(0)
    n = 4 * 1024 * 1024
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    mx, my = mt.from_numpy(x), mt.from_numpy(y)
    out = []
    out.append(("add 4M f32", lambda: mx + my, lambda: x + y, None))
    out.append(("mul 4M f32", lambda: mx * my, lambda: x * y, None))
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        out[0] = out[0][:3] + (lambda: tx + ty,)
        out[1] = out[1][:3] + (lambda: tx * ty,)
    for size in ((512,) if quick else (512, 2048)):
        p, q = rng.standard_normal((size, size), dtype=np.float32), rng.standard_normal((size, size), dtype=np.float32)
        mp, mq = mt.from_numpy(p), mt.from_numpy(q)
        tfn = None
        if torch is not None:
            tp, tq = torch.from_numpy(p), torch.from_numpy(q)
            tfn = (lambda tp=tp, tq=tq: tp @ tq)
        out.append((f"matmul {size} f32", (lambda mp=mp, mq=mq: mp @ mq), (lambda p=p, q=q: p @ q), tfn))
    return out


def table(title, rows, number, repeat):
    print(f"\n{title}")
    print(f"{'op':<18}{'minitorch_nn':>14}{'numpy':>11}{'torch':>11}{'vs numpy':>10}{'vs torch':>10}")
    results = []
    for name, m, n, t in rows:
        tm, tn = best_us(m, number, repeat), best_us(n, number, repeat)
        tt = best_us(t, number, repeat) if t is not None else float("nan")
        results.append((name, tm, tn, tt))
        print(f"{name:<18}{tm:>12.2f}us{tn:>9.2f}us{tt:>9.2f}us{tm / tn:>9.2f}x{tm / tt:>9.2f}x")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 2048 matmul")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    _set_threads(args.threads)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import numpy as np

    import minitorch_nn as mt

    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
        print("(torch is not installed: its column is nan)")
    repeat = 3 if args.quick else 7
    print(f"minitorch_nn {mt.__version__}, numpy {np.__version__}, torch {torch.__version__ if torch else '-'}, "
          f"{args.threads} thread(s); best of {repeat} repeats")
    table("tiny ops, shape (4,) float32 (per-op overhead)", tiny_cases(mt, np, torch), 2000 if args.quick else 20000, repeat)
    table("big ops (numpy/BLAS bound)", big_cases(mt, np, torch, args.quick), 3 if args.quick else 10, repeat)


if __name__ == "__main__":
    main()

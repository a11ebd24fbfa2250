"""xlogy, hypot, copysign, fmax, float_power, the shifts and ``7 % x``, side by side with numpy and
PyTorch (run: ``python bench/bench_binary_math.py [--quick]``).

For each op, on a small tensor (per-op overhead: dispatch, dtype rules, wrapping) and a large one
(the kernel: ``backends/cpu/binary_math.py``, ``bit_shifts.py``), the best microseconds per call
of minitorch_nn, of the bare numpy expression that computes the same values, and of torch, and
the ratios ours/numpy and ours/torch. Times are CPU time of this process (``time.process_time``),
the best of several repeats, each repeat timing the three in turn so a load change hits all
alike. torch runs on one thread; it is optional.
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np

import minitorch_nn as mt

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def _xlogy_np(x, y):
    return np.where(np.isnan(y), y, np.where(x == 0, 0.0, x * np.log(y)))


def _lshift_np(x, s):
    # the plain numpy shift (no rule for negative or over-wide shifts): a lower bound
    return np.left_shift(x, s)


# name -> (lib -> callable over (a, b, i, s)), numpy callable over the arrays
CASES = {
    "xlogy(a, b)": (lambda L, a, b, i, s: L.xlogy(a, b), lambda a, b, i, s: _xlogy_np(a, b)),
    "xlogy(a, 2.0)": (lambda L, a, b, i, s: L.xlogy(a, 2.0), lambda a, b, i, s: _xlogy_np(a, np.float32(2.0))),
    "hypot(a, b)": (lambda L, a, b, i, s: L.hypot(a, b), lambda a, b, i, s: np.hypot(a, b)),
    "copysign(a, -1.0)": (lambda L, a, b, i, s: L.copysign(a, -1.0), lambda a, b, i, s: np.copysign(a, np.float32(-1))),
    "fmax(a, b)": (lambda L, a, b, i, s: L.fmax(a, b), lambda a, b, i, s: np.fmax(a, b)),
    "float_power(a, 2)": (lambda L, a, b, i, s: L.float_power(a, 2), lambda a, b, i, s: np.power(a.astype(np.float64), 2.0)),
    "i << s": (lambda L, a, b, i, s: i << s, lambda a, b, i, s: _lshift_np(i, s)),
    "i >> 3": (lambda L, a, b, i, s: i >> 3, lambda a, b, i, s: np.right_shift(i, 3)),
    "7 % i": (lambda L, a, b, i, s: 7 % i, lambda a, b, i, s: np.remainder(7, i)),
}


def _inputs(L, n, rng):
    a = rng.standard_normal(n).astype(np.float32)
    b = np.abs(rng.standard_normal(n)).astype(np.float32) + 0.1
    i = rng.integers(1, 100, n)
    s = rng.integers(0, 8, n)
    if L is None:
        return a, b, i, s
    return tuple(L.from_numpy(x.copy()) for x in (a, b, i, s))


def _best_us(fns, number, repeat):
    for fn in fns:
        fn()  # warm up
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], timeit.timeit(fn, number=number, timer=time.process_time))
    return [b / number * 1e6 for b in best]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    if torch is not None:
        torch.set_num_threads(1)
    for n, number in ((16, 2000), (100_000, 20)):
        rng = np.random.default_rng(0)
        arrays = _inputs(None, n, rng)
        ours = _inputs(mt, n, np.random.default_rng(0))
        theirs = _inputs(torch, n, np.random.default_rng(0)) if torch is not None else None
        print(f"\n{n} elements (us per call)")
        print(f"{'op':<20}{'minitorch_nn':>14}{'numpy':>10}{'torch':>10}{'ours/numpy':>12}{'ours/torch':>12}")
        for name, (fn, np_fn) in CASES.items():
            fns = [lambda fn=fn, ours=ours: fn(mt, *ours), lambda np_fn=np_fn, arrays=arrays: np_fn(*arrays)]
            if theirs is not None:
                fns.append(lambda fn=fn, theirs=theirs: fn(torch, *theirs))
            t = _best_us(fns, number, repeat)
            torch_cols = f"{t[2]:>10.2f}{t[0] / t[2]:>12.2f}" if theirs is not None else f"{'-':>10}{'-':>12}"
            print(f"{name:<20}{t[0]:>14.2f}{t[1]:>10.2f}{torch_cols[:10]}{t[0] / t[1]:>12.2f}{torch_cols[10:]}")


if __name__ == "__main__":
    main()

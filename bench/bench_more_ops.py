"""Per-op cost of more ops with ``requires_grad=True``, side by side with PyTorch
(run: ``python bench/bench_more_ops.py``).

The ops of ``bench/bench_autograd.py``'s table 1 are the hottest ones; this table times the next
tier that small models call all the time -- ``flatten``, ``sum(dim)``, ``F.linear``,
``F.mse_loss``, ``where``, ``clamp``, ``clone``, ``chunk``, ``unbind``, ``F.silu``,
``F.leaky_relu``, ``masked_fill``, ``var``/``std``, ``F.layer_norm``, ``bmm``, ``cumsum`` -- on
4x4 float32 tensors that require grad, where the time is all per-op overhead (argument parsing,
dispatch, recording the graph node), not arithmetic. Each line prints minitorch_nn's
microseconds, torch's, and their ratio; the target is a ratio of at most 1.5.

Times are CPU time of this process (``time.process_time``), the best of several repeats, each
repeat timing ours and torch's in turn so that a load change on a busy machine hits both alike.
torch runs on one thread; it is optional (without it only minitorch_nn's numbers are printed).
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


def _ops(L):
    """The timed calls, by name, for library ``L`` (minitorch_nn or torch)."""
    F = L.nn.functional
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return L.tensor(rng.standard_normal(shape), dtype=L.float32, requires_grad=True)

    a, b, w, bias = leaf(4, 4), leaf(4, 4), leaf(4, 4), leaf(4)
    a3, b3 = leaf(2, 4, 4), leaf(2, 4, 4)
    return {
        "a.flatten()": lambda: a.flatten(),
        "a.sum(1, keepdim=True)": lambda: a.sum(1, keepdim=True),
        "a.sum(1)": lambda: a.sum(1),
        "F.linear(a, w, bias)": lambda: F.linear(a, w, bias),
        "F.linear(a, w)": lambda: F.linear(a, w),
        "F.mse_loss(a, b)": lambda: F.mse_loss(a, b),
        "where(a > 0, a, b)": lambda: L.where(a > 0, a, b),
        "a.clamp(0.1, 0.5)": lambda: a.clamp(0.1, 0.5),
        "a.clone()": lambda: a.clone(),
        "a.chunk(2)": lambda: a.chunk(2),
        "a.unbind(0)": lambda: a.unbind(0),
        "F.silu(a)": lambda: F.silu(a),
        "F.leaky_relu(a)": lambda: F.leaky_relu(a),
        "a.masked_fill(a > 0.5, 0.)": lambda: a.masked_fill(a > 0.5, 0.0),
        "a.var()": lambda: a.var(),
        "a.std(1)": lambda: a.std(1),
        "F.layer_norm(a, (4,))": lambda: F.layer_norm(a, (4,)),
        "bmm(a3, b3)": lambda: L.bmm(a3, b3),
        "a.cumsum(1)": lambda: a.cumsum(1),
    }


def _interleaved_us(fns, number, repeat):
    """Best microseconds per call of each function in ``fns``, timed in turn within each repeat."""
    for fn in fns:
        fn()  # warm up
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=number, timer=time.process_time))
    return [t / number * 1e6 for t in best]


def bench(number, repeat, only=None):
    """Print and return {op: (ours_us, torch_us or 0.0)}."""
    print("per-op cost with requires_grad=True, 4x4 float32 (us)")
    print(f"{'op':<24}{'ours':>8}{'torch':>8}{'ratio':>7}")
    mine = _ops(mt)
    theirs = _ops(torch) if torch is not None else {}
    results = {}
    for name, fn in mine.items():
        if only and not any(o in name for o in only):
            continue
        other = theirs.get(name)
        times = _interleaved_us([fn] + ([other] if other is not None else []), number, repeat)
        m, t = times[0], (times[1] if other is not None else 0.0)
        results[name] = (m, t)
        ratio = f"{m / t:>7.2f}" if t else f"{'':>7}"
        print(f"{name:<24}{m:>8.2f}{t:>8.2f}{ratio}")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing of one op")
    parser.add_argument("--repeat", type=int, default=7, help="timings per op (the best is kept)")
    parser.add_argument("--only", nargs="*", help="time only the ops whose name contains one of these")
    args = parser.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(1)
    bench(args.number, args.repeat, args.only)


if __name__ == "__main__":
    main()

"""Benchmark: minitorch_nn's PyTorch-compatible generator against PyTorch itself (and numpy).

Run ``python bench/bench_random.py [N]`` from the repository root. Times the numpy-level samplers
(``Generator._normal`` etc., what ``randn``/``rand`` call underneath) for N float32 values (default
1,000,000), the same draws in torch when it is installed, and prints the ratio. The outputs of both
are also compared, so the benchmark doubles as a quick bit-for-bit check.
"""

from __future__ import annotations

import importlib
import pathlib
import sys
import time
import types

import numpy as np


def _load_random():
    try:
        return importlib.import_module("minitorch_nn.random")
    except Exception:  # noqa: BLE001 - package not built yet, or mid-edit: load the module on its own
        root = pathlib.Path(__file__).resolve().parents[1] / "minitorch_nn"
        name = "_minitorch_nn_random_standalone"
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(root)]
        sys.modules[name] = pkg
        return importlib.import_module(name + ".random")


def best_ms(fn, repeat=7):
    fn()  # warm up (first-call checks, allocations)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main(n: int = 1_000_000) -> None:
    R = _load_random()
    try:
        import torch
    except ImportError:
        torch = None
    g = R.Generator().manual_seed(0)
    cases = [
        ("randn float32", lambda: g._normal((n,), np.float32), lambda: torch.randn(n)),
        ("rand float32", lambda: g._uniform((n,), np.float32), lambda: torch.rand(n)),
        (
            "randn float64",
            lambda: g._normal((n,), np.float64),
            lambda: torch.randn(n, dtype=torch.float64),
        ),
        (
            "uniform_(-1, 1) float32",
            lambda: g._uniform((n,), np.float32, -1, 1),
            lambda: torch.empty(n).uniform_(-1, 1),
        ),
        (
            "randint(0, 10)",
            lambda: g._randint((n,), np.int64, 0, 10),
            lambda: torch.randint(0, 10, (n,)),
        ),
        (
            "bernoulli_(0.5)",
            lambda: g._bernoulli((n,), np.float32, 0.5),
            lambda: torch.empty(n).bernoulli_(0.5),
        ),
        (
            "randperm(n // 10)",
            lambda: g._randperm(n // 10, np.int64),
            lambda: torch.randperm(n // 10),
        ),
    ]
    print(
        f"{n:,} values; best of 7 runs; {'torch ' + torch.__version__ if torch else 'torch not installed'}"
    )
    print(f"{'op':26s} {'minitorch_nn':>13s} {'torch':>9s} {'ratio':>7s}  same bits")
    for name, ours, theirs in cases:
        t_ours = best_ms(ours)
        if torch is None:
            print(f"{name:26s} {t_ours:10.2f} ms")
            continue
        t_torch = best_ms(theirs)
        g.manual_seed(1)
        torch.manual_seed(1)
        a, b = ours(), theirs().numpy()
        same = a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
        print(f"{name:26s} {t_ours:10.2f} ms {t_torch:6.2f} ms {t_ours / t_torch:6.1f}x  {same}")
    rng = np.random.default_rng(0)
    print(
        f"{'numpy default_rng normal':26s} {best_ms(lambda: rng.standard_normal(n, dtype=np.float32)):10.2f} ms  (different stream)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)

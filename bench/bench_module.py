"""Benchmark: ``nn.Module`` bookkeeping in minitorch_nn against PyTorch.

Run ``python bench/bench_module.py [N]`` from the repository root. Builds a ``ModuleList`` of N
small Linear-like layers (default 1,000; weight 8x8, bias 8, one buffer) in both libraries and
times, best of several runs:

* ``state_dict()``;
* ``load_state_dict(sd)`` (in-place copies; ours also logs undo information so a failed load
  changes nothing);
* ``.to(float64)`` and back, on the default ``.data`` path and with the ``__future__`` swap flag;
* ``utils.swap_tensors`` on one pair of 8x8 parameters, N times (so the figure over N is the
  cost of one swap, what a conversion pays per tensor on the swap path).

It prints milliseconds per call and the ratio ours/torch. This measures Python overhead per
tensor, which is what users feel on models with many small layers.
"""

from __future__ import annotations

import sys
import time

REPEAT = 7


def best_ms(fns, repeat=REPEAT):
    """Best milliseconds per call of each function in ``fns``, their runs interleaved (ours,
    torch, ours, ...) so that a burst of load on a shared machine hits both alike."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return [b * 1e3 for b in best]


def build(lib, n):
    nn = lib.nn

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.zeros(8, 8))
            self.bias = nn.Parameter(lib.zeros(8))
            self.register_buffer("steps", lib.zeros(1))

        def forward(self, x):
            return x

    return nn.ModuleList([Small() for _ in range(n)])


def cases(lib, n):
    m = build(lib, n)
    sd = {k: v.clone() for k, v in m.state_dict().items()}

    def to_and_back():
        m.to(lib.float64)
        m.to(lib.float32)

    def swapped():
        lib.__future__.set_swap_module_params_on_conversion(True)
        try:
            to_and_back()
        finally:
            lib.__future__.set_swap_module_params_on_conversion(False)

    a = lib.nn.Parameter(lib.zeros(8, 8))
    b = lib.nn.Parameter(lib.zeros(8, 8))
    swap_tensors = lib.utils.swap_tensors

    def swaps():
        for _ in range(n):
            swap_tensors(a, b)

    return {
        "state_dict()": m.state_dict,
        "load_state_dict(sd)": lambda: m.load_state_dict(sd),
        ".to(float64) + back": to_and_back,
        ".to(float64) + back, swap flag": swapped,
        f"swap_tensors x {n}": swaps,
    }


def main(n=1000):
    import minitorch_nn

    try:
        import torch
    except ImportError:
        torch = None
    ours_cases = cases(minitorch_nn, n)
    theirs_cases = cases(torch, n) if torch is not None else {}
    ours, theirs = {}, {}
    for k, f in ours_cases.items():
        if k in theirs_cases:
            ours[k], theirs[k] = best_ms([f, theirs_cases[k]])
        else:
            (ours[k],) = best_ms([f])
    print(f"nn.Module bookkeeping on {n} small layers (ms per call, best of {REPEAT})")
    print(f"{'operation':34s} {'minitorch_nn':>13s} {'torch':>10s} {'ratio':>7s}")
    for k, v in ours.items():
        t = theirs.get(k)
        ratio = f"{v / t:7.2f}" if t else "      -"
        t_str = f"{t:10.2f}" if t else "         -"
        print(f"{k:34s} {v:13.2f} {t_str} {ratio}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)

"""Forward-mode AD cost, side by side with PyTorch (run: ``python bench/bench_forward_ad.py``).

Three measurements:

1. **Per-op cost on a dual tensor** (4x4 float32): the op, plus the forward-AD step of the
   dispatch chain (``autograd/forward_ad.py``) running the op's JVP formula
   (``autograd/derivatives_forward.py``). Printed next to the same op on a plain tensor, and next
   to torch's dual-tensor time, with the ratio minitorch_nn / torch.
2. **A plain op while a dual level is open**: what every op pays for the level being active (the
   tangent check; the no-grad fast path steps aside while a level is open).
3. **One Jacobian-vector product of a small MLP**: forward AD (one pass) against
   ``autograd.functional.jvp`` (the double-vjp trick: a forward and two backward passes).

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


def _ops(L, a, b):
    return {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "exp": lambda: a.exp(),
        "sum": lambda: a.sum(),
        "matmul": lambda: a @ b,
        "view": lambda: a.view(16),
        "getitem": lambda: a[1:3],
        "relu": lambda: a.relu(),
        "softmax": lambda: L.softmax(a, 1),
    }


def _data(L):
    rng = np.random.default_rng(0)
    return [L.tensor(rng.standard_normal((4, 4)), dtype=L.float32) for _ in range(3)]


def _timings(L, fw, number):
    """{op: (plain us, plain-inside-a-level us, dual us)} for library L."""
    a, b, t = _data(L)
    plain = {name: _per_call_us(fn, number) for name, fn in _ops(L, a, b).items()}
    with fw.dual_level():
        in_level = {name: _per_call_us(fn, number) for name, fn in _ops(L, a, b).items()}
        d = fw.make_dual(a, t)
        dual = {name: _per_call_us(fn, number) for name, fn in _ops(L, d, b).items()}
    return {name: (plain[name], in_level[name], dual[name]) for name in plain}


def bench_ops(number):
    mine = _timings(mt, mt.autograd.forward_ad, number)
    theirs = _timings(torch, torch.autograd.forward_ad, number) if torch is not None else {}
    print(f"{'op':<10}{'plain us':>10}{'in level':>10}{'dual us':>10}{'torch dual':>12}{'ratio':>8}")
    for name, (p, lvl, d) in mine.items():
        row = f"{name:<10}{p:>10.1f}{lvl:>10.1f}{d:>10.1f}"
        if name in theirs:
            td = theirs[name][2]
            row += f"{td:>12.1f}{d / td:>8.1f}"
        print(row)


def _mlp(L):
    rng = np.random.default_rng(1)
    w1 = L.tensor(rng.standard_normal((32, 16)) * 0.2, dtype=L.float32)
    w2 = L.tensor(rng.standard_normal((8, 32)) * 0.2, dtype=L.float32)
    x = L.tensor(rng.standard_normal((4, 16)), dtype=L.float32)
    v = L.tensor(rng.standard_normal((4, 16)), dtype=L.float32)

    def f(inp):
        return L.log_softmax((inp @ w1.t()).tanh() @ w2.t(), 1)

    return f, x, v


def _jvp_fns(L):
    """One MLP jvp by forward AD, and the same by ``autograd.functional.jvp``, in library L."""
    fw = L.autograd.forward_ad
    f, x, v = _mlp(L)

    def forward_mode():
        with fw.dual_level():
            return fw.unpack_dual(f(fw.make_dual(x, v))).tangent

    def double_vjp():
        return L.autograd.functional.jvp(f, x, v)[1]

    return forward_mode, double_vjp


def bench_jvp(number):
    rows = []
    for L in (mt, torch) if torch is not None else (mt,):
        forward_mode, double_vjp = _jvp_fns(L)
        np.testing.assert_allclose(np.asarray(forward_mode().tolist()), np.asarray(double_vjp().tolist()),
                                   rtol=1e-4, atol=1e-5)
        rows.append((L.__name__, _per_call_us(forward_mode, number), _per_call_us(double_vjp, number)))
    print(f"\n{'MLP jvp':<14}{'forward AD us':>15}{'double vjp us':>15}{'speedup':>9}")
    for name, fwd, dv in rows:
        print(f"{name:<14}{fwd:>15.1f}{dv:>15.1f}{dv / fwd:>9.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200, help="calls per timing repeat")
    args = parser.parse_args()
    bench_ops(args.number)
    bench_jvp(max(args.number // 10, 5))


if __name__ == "__main__":
    main()

"""The general dispatch path, per call, side by side with PyTorch and numpy (``python bench/bench_dispatch.py``).

Every op that has no compiled fast path goes the whole way: Tensor method or public function
(``_tensor_methods.py``, ``_functions/``, with the ``__torch_function__`` check of
``overrides.public`` and the ``out=`` layer of ``_functions/_out.py``) -> ``OpOverload``
(``_ops.py``) -> ``_dispatch.dispatch`` (forward AD, autograd, python dispatch, backend) -> the
cpu kernel (``backends/cpu/``). On tiny tensors the time is all that bookkeeping, so these rows
measure it: ours, torch, and the bare numpy expression doing the same arithmetic (the floor we
cannot go under, since our cpu kernels call numpy).

Some rows have a compiled fast path at the top (``_ext/twins/``: ``x.exp()``, ``a / b``,
views, matmul...), which skips this chain for plain tensors; the ``aten.*`` rows call the op
overload directly (the chain without the public layer, what autograd's backward formulas and the
composite functions call), and softmax, indexing, reductions with ``dim``, ``clamp``, ``max(dim)``,
``addmm`` and the losses go the whole way.

Rows run without grad (``no_grad()`` does not change their path: plain tensors that do not
require grad leave the autograd layer at once), except the ``grad`` rows at the end, where the
inputs require grad and the autograd layer records a node.

Times are CPU time of this process (``time.process_time``), the best of several repeats; torch
runs on one thread. torch is optional: without it only ours and numpy are printed.
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np

import minitorch_nn as mt
import minitorch_nn.nn.functional as mF

try:
    import torch
    import torch.nn.functional as tF

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - torch is optional
    torch = tF = None


def _per_call_us(fn, number, repeat=7):
    fn()  # warm up
    best = min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time))
    return best / number * 1e6


def _cases(L, F, grad=False):
    """name -> a call on tiny tensors of library ``L`` (minitorch_nn or torch) and its ``F``."""
    rng = np.random.default_rng(0)
    a = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=grad)
    b = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=grad)
    bias = L.tensor(rng.standard_normal(4), dtype=L.float32, requires_grad=grad)
    target = L.tensor(rng.integers(0, 4, 4), dtype=L.int64)
    rows = L.arange(4)
    cases = {
        "add(a, b)": lambda: L.add(a, b),
        "exp(a)": lambda: L.exp(a),
        "a.exp()": lambda: a.exp(),
        "a.neg()": lambda: a.neg(),
        "a / b": lambda: a / b,
        "a.sum(1)": lambda: a.sum(1),
        "a.mean(1)": lambda: a.mean(1),
        "a.amax(1)": lambda: a.amax(1),
        "softmax(a, 1)": lambda: L.softmax(a, 1),
        "F.softmax": lambda: F.softmax(a, 1),
        "F.log_softmax": lambda: F.log_softmax(a, 1),
        "a[0]": lambda: a[0],
        "a[1:3]": lambda: a[1:3],
        "a[rows, tgt]": lambda: a[rows, target],
        "a.view(16)": lambda: a.view(16),
        "a.view(2, 8)": lambda: a.view(2, 8),
        "a.reshape(16)": lambda: a.reshape(16),
        "a.unsqueeze(0)": lambda: a.unsqueeze(0),
        "a.t()": lambda: a.t(),
        "a @ b": lambda: a @ b,
        "F.linear": lambda: F.linear(a, b, bias),
        "addmm": lambda: L.addmm(bias, a, b),
        "cross_entropy": lambda: F.cross_entropy(a, target),
    }
    aten = L.ops.aten
    cases.update({
        # the chain below the public layer, for ops a compiled fast path may take at the top:
        # what autograd's backward formulas and the composite functions call
        "aten.add.Tensor": lambda: aten.add.Tensor(a, b),
        "aten.mul.Tensor scalar": lambda: aten.mul.Tensor(a, 2.0),
        "aten.exp.default": lambda: aten.exp.default(a),
        "aten.sum.dim_IntList": lambda: aten.sum.dim_IntList(a, [1]),
        "aten.t.default": lambda: aten.t.default(a),
        "aten.view.default": lambda: aten.view.default(a, [16]),
        "aten.mm.default": lambda: aten.mm.default(a, b),
        "a.clamp(0, 1)": lambda: a.clamp(0, 1),
        "a.max(1)": lambda: a.max(1),
        "a.flatten()": lambda: a.flatten(),
        "a.permute(1, 0)": lambda: a.permute(1, 0),
    })
    if grad:
        keep = ("exp(a)", "a.sum(1)", "F.softmax", "a[0]", "a.view(16)", "F.linear", "cross_entropy")
        cases = {k + " grad": v for k, v in cases.items() if k in keep}
    return cases


def _numpy_cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    target = rng.integers(0, 4, 4)
    rows = np.arange(4)

    def softmax(x):
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def log_softmax(x):
        s = x - x.max(1, keepdims=True)
        return s - np.log(np.exp(s).sum(1, keepdims=True))

    return {
        "add(a, b)": lambda: np.add(a, b),
        "exp(a)": lambda: np.exp(a),
        "a.exp()": lambda: np.exp(a),
        "a.neg()": lambda: np.negative(a),
        "a / b": lambda: a / b,
        "a.sum(1)": lambda: a.sum(1),
        "a.mean(1)": lambda: a.mean(1),
        "a.amax(1)": lambda: a.max(1),
        "softmax(a, 1)": lambda: softmax(a),
        "F.softmax": lambda: softmax(a),
        "F.log_softmax": lambda: log_softmax(a),
        "a[0]": lambda: a[0],
        "a[1:3]": lambda: a[1:3],
        "a[rows, tgt]": lambda: a[rows, target],
        "a.view(16)": lambda: a.reshape(16),
        "a.view(2, 8)": lambda: a.reshape(2, 8),
        "a.reshape(16)": lambda: a.reshape(16),
        "a.unsqueeze(0)": lambda: a[None],
        "a.t()": lambda: a.T,
        "a @ b": lambda: a @ b,
        "F.linear": lambda: a @ b.T + bias,
        "addmm": lambda: bias + a @ b,
        "cross_entropy": lambda: -log_softmax(a)[rows, target].mean(),
        "aten.add.Tensor": lambda: np.add(a, b),
        "aten.mul.Tensor scalar": lambda: np.multiply(a, np.float32(2.0)),
        "aten.exp.default": lambda: np.exp(a),
        "aten.sum.dim_IntList": lambda: np.add.reduce(a, 1),
        "aten.t.default": lambda: a.T,
        "aten.view.default": lambda: a.reshape(16),
        "aten.mm.default": lambda: a @ b,
        "a.clamp(0, 1)": lambda: np.clip(a, 0, 1),
        "a.max(1)": lambda: (a.max(1), a.argmax(1)),
        "a.flatten()": lambda: a.reshape(-1),
        "a.permute(1, 0)": lambda: a.transpose(1, 0),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing of one op")
    parser.add_argument("--quick", action="store_true", help="fewer calls per timing")
    parser.add_argument("--only", default="", help="run only the rows whose name contains this text")
    args = parser.parse_args(argv)
    number = 300 if args.quick else args.number
    print("per call on 4x4 float32 tensors (us); ratio = ours / torch; numpy = the bare numpy expression")
    print(f"{'op':<22}{'ours':>8}{'torch':>8}{'ratio':>7}{'numpy':>8}")
    mine = {**_cases(mt, mF), **_cases(mt, mF, grad=True)}
    theirs = {**_cases(torch, tF), **_cases(torch, tF, grad=True)} if torch is not None else {}
    nps = _numpy_cases()
    ratios = []
    for name, fn in mine.items():
        if args.only not in name:
            continue
        m = _per_call_us(fn, number)
        t = _per_call_us(theirs[name], number) if name in theirs else 0.0
        n = nps.get(name)
        n = _per_call_us(n, number) if n is not None else 0.0
        ratio = f"{m / t:>7.1f}" if t else f"{'':>7}"
        if t:
            ratios.append(m / t)
        print(f"{name:<22}{m:>8.2f}{t:>8.2f}{ratio}{n:>8.2f}" if n else f"{name:<22}{m:>8.2f}{t:>8.2f}{ratio}")
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"{'geometric mean ratio':<22}{'':>16}{geo:>7.1f}")


if __name__ == "__main__":
    main()

"""Autograd overhead, side by side with PyTorch (run: ``python bench/bench_autograd.py``).

Three measurements, each printed as minitorch_nn's microseconds, torch's, and their ratio:

1. **Recording, per op**, on tiny tensors that require grad, where the time is all bookkeeping:
   the autograd layer (``autograd/recording.py``, compiled in ``_ext/twins/autograd/recording.pyx``) making
   a node, saving tensors and wiring the output, on top of the op itself. ``grad`` is the op with
   recording; ``no-rec`` is the same op on the same tensors under ``no_grad()`` (nothing
   recorded), so ``grad - no-rec`` is the price of recording, printed as ``rec`` with its own
   ratio. Ops with a compiled fast path (``+``, ``*``, ``relu``, ``sum``...) take it in both
   columns; table 1b times aten ops called directly, which go through the whole dispatch chain
   (and the compiled autograd layer) either way.
2. **Backward of a small chain** (``tanh(x * w)`` five times, then ``sum``): the forward pass, and
   forward + backward, so the difference is what the engine (``autograd/engine.py``) costs.
3. **Forward + backward of a small MLP** (two ``addmm`` layers with ``relu`` and a softmax
   cross-entropy built from ``log_softmax`` and indexing), the loop every training step runs.

Times are CPU time of this process (``time.process_time``), the best of several repeats, so
other processes on a busy machine disturb them less than wall-clock time would; in tables 1 and
1b each repeat times ours and torch's in turn, so a load change hits both alike. torch runs on
one thread. torch is optional: without it only minitorch_nn's numbers are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import timeit

import numpy as np

import minitorch_nn as mt

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def _per_call_us(fn, number, repeat=7):
    fn()  # warm up
    best = min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time))
    return best / number * 1e6


def _interleaved_us(cases, number, repeat=7):
    """Best microseconds per call of each ``(fn, context)`` in ``cases``, timed in turn within
    each repeat, so that a load change on a busy machine hits ours and torch's alike."""
    for fn, context in cases:
        with context():
            fn()  # warm up
    best = [float("inf")] * len(cases)
    for _ in range(repeat):
        for i, (fn, context) in enumerate(cases):
            with context():
                best[i] = min(best[i], timeit.timeit(fn, number=number, timer=time.process_time))
    return [b / number * 1e6 for b in best]


def _grad_and_no_grad(fn, other, L_no_grad, T_no_grad, number):
    """(ours, ours under no_grad, torch, torch under no_grad), torch's 0.0 when it has no such op."""
    cases = [(fn, contextlib.nullcontext), (fn, L_no_grad)]
    if other is not None:
        cases += [(other, contextlib.nullcontext), (other, T_no_grad)]
    times = _interleaved_us(cases, number)
    return tuple(times) if other is not None else (times[0], times[1], 0.0, 0.0)


def _ratio(m, t):
    return f"{m / t:>7.1f}" if t else f"{'':>7}"


# -- 1. recording ---------------------------------------------------------------------------------


def _ops(L):
    a = L.tensor(np.random.default_rng(0).standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    b = L.tensor(np.random.default_rng(1).standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    return {
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "mul scalar": lambda: a * 2.0,
        "exp": lambda: a.exp(),
        "tanh": lambda: a.tanh(),
        "sum": lambda: a.sum(),
        "matmul": lambda: a @ b,
        "view": lambda: a.view(16),
        "transpose": lambda: a.t(),
        "getitem": lambda: a[1:3],
        "relu": lambda: a.relu(),
        "softmax": lambda: L.softmax(a, 1),
        "cat": lambda: L.cat([a, b]),                 # a Tensor[] input
        "stack": lambda: L.stack([a, b]),             # likewise
        "mul, add_": lambda: (a * 2.0).add_(b),       # an in-place op on a node's output
    }


def bench_recording(number):
    """Returns {op: (ours_grad, ours_norec, torch_grad, torch_norec)}."""
    print("1. per-op cost with requires_grad=True (us); rec = grad - no-rec, the cost of recording")
    print(f"{'op':<12}{'grad':>8}{'torch':>8}{'ratio':>7} |{'rec':>7}{'torch':>7}{'ratio':>7} |{'no-rec':>8}{'torch':>8}")
    mine = _ops(mt)
    theirs = _ops(torch) if torch is not None else {}
    results = {}
    for name, fn in mine.items():
        m, m0, t, t0 = _grad_and_no_grad(fn, theirs.get(name), mt.no_grad,
                                         torch.no_grad if torch is not None else None, number)
        results[name] = (m, m0, t, t0)
        rec, trec = max(m - m0, 0.0), max(t - t0, 0.0)
        print(f"{name:<12}{m:>8.2f}{t:>8.2f}{_ratio(m, t)} |{rec:>7.2f}{trec:>7.2f}{_ratio(rec, trec if trec > 0.05 else 0)} |"
              f"{m0:>8.2f}{t0:>8.2f}")
    return results


def _aten_ops(L):
    aten = L.ops.aten
    a = L.tensor(np.random.default_rng(0).standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    b = L.tensor(np.random.default_rng(1).standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    return {
        "mul": lambda: aten.mul.Tensor(a, b),
        "mul scalar": lambda: aten.mul.Tensor(a, 2.0),
        "exp": lambda: aten.exp.default(a),
        "sum": lambda: aten.sum.default(a),
        "mm": lambda: aten.mm.default(a, b),
    }


def bench_recording_aten(number):
    """Recording alone: the same aten op with and without grad mode. Calling the op directly
    keeps every other step the same: the whole dispatch chain runs either way (the compiled
    methods' fast paths are not on this route), so ``rec`` is the autograd layer's own cost."""
    print("1b. recording alone, on aten ops called directly (us): grad - no_grad")
    print(f"{'op':<12}{'rec':>8}{'torch':>8}{'ratio':>7} |{'grad':>8}{'torch':>8}{'ratio':>7}")
    mine = _aten_ops(mt)
    theirs = _aten_ops(torch) if torch is not None else {}
    for name, fn in mine.items():
        m, m0, t, t0 = _grad_and_no_grad(fn, theirs.get(name), mt.no_grad,
                                         torch.no_grad if torch is not None else None, number)
        rec, trec = max(m - m0, 0.0), max(t - t0, 0.0)
        print(f"{name:<12}{rec:>8.2f}{trec:>8.2f}{_ratio(rec, trec if trec > 0.05 else 0)} |{m:>8.2f}{t:>8.2f}{_ratio(m, t)}")


# -- 2. backward of a small chain -----------------------------------------------------------------


def _chain(L, depth=5):
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    w = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=True)

    def forward():
        h = x
        for _ in range(depth):
            h = (h * w).tanh()
        return h.sum()

    def forward_backward():
        forward().backward()
        x.grad = None
        w.grad = None

    return forward, forward_backward


def bench_backward(number):
    print("2. a chain of 5 x (tanh(h * w)), then sum, on 4x4 tensors (us)")
    f, fb = _chain(mt)
    mf, mfb = _per_call_us(f, number), _per_call_us(fb, number)
    line = f"   minitorch: forward {mf:.1f}, forward+backward {mfb:.1f}, backward {mfb - mf:.1f}"
    if torch is not None:
        tf_, tfb = _chain(torch)
        tf, tb = _per_call_us(tf_, number), _per_call_us(tfb, number)
        line += (f"\n   torch:     forward {tf:.1f}, forward+backward {tb:.1f}, backward {tb - tf:.1f}"
                 f"\n   ratio:     forward {mf / tf:.1f}, forward+backward {mfb / tb:.1f}, backward {(mfb - mf) / (tb - tf):.1f}")
    print(line)


# -- 3. a small MLP -------------------------------------------------------------------------------


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
    print("3. MLP training step")
    m = _per_call_us(_mlp(mt, batch, d_in, hidden, d_out), number, repeat=5)
    line = f"   MLP {batch}x{d_in}->{hidden}->{d_out} forward+backward: minitorch {m:.1f} us"
    if torch is not None:
        t = _per_call_us(_mlp(torch, batch, d_in, hidden, d_out), number, repeat=5)
        line += f", torch {t:.1f} us, ratio {m / t:.1f}"
    print(line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing of one op")
    parser.add_argument("--chain-number", type=int, default=300, help="calls per timing of the chain")
    parser.add_argument("--mlp-number", type=int, default=100, help="steps per timing of the MLP")
    parser.add_argument("--sections", default="1,1b,2,3", help="which tables to print, e.g. 1,1b")
    args = parser.parse_args(argv)
    sections = set(args.sections.split(","))
    if torch is not None:
        torch.set_num_threads(1)
    if "1" in sections:
        bench_recording(args.number)
    if "1b" in sections:
        bench_recording_aten(args.number)
    if "2" in sections:
        bench_backward(args.chain_number)
    if "3" in sections:
        bench_mlp(args.mlp_number)


if __name__ == "__main__":
    main()

"""The backward engine alone, side by side with PyTorch (run: ``python bench/bench_backward.py``).

Each row times ``loss.backward()`` only: the graphs are built beforehand (outside the timer), so
what is measured is the engine (``autograd/engine.py``) plus the derivative formulas and their
kernels. Rows:

* ``chain``: ``tanh(h * w)`` five times on 4x4 tensors, then ``sum`` (``bench_autograd.py``'s
  section 2, backward only);
* ``adds``: twenty ``h = h + y`` on 4x4 tensors, then ``sum``: nodes whose formula is the
  identity, so the time per node is the engine's own bookkeeping;
* ``mlp``: ``bench_mlp.py``'s model (784-256-10, batch 128, cross-entropy), backward only.

A second table (skip it with ``--no-kernels``) times the backward kernels these graphs call,
each as an aten op called from Python in both libraries (``aten.tanh_backward.default(g, y)``
against ``torch.ops.aten.tanh_backward.default(g, y)``), so both sides pay a Python-level op call.

``ours`` is ``backward()`` as it runs by default: ``engine.run_backward`` handing over to its
compiled twin (``_ext/twins/autograd/engine.pyx``); ``readable`` is the same with the switch
``minitorch_nn.backends.compiled`` off, so ``run_backward``'s own loop runs (what reading mode
costs). Times are CPU time of this process (``time.process_time``), the best of several repeats;
torch runs on one thread.
"""

from __future__ import annotations

import argparse
import gc
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def _chain(L):
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=True)
    w = L.tensor(rng.standard_normal((4, 4)), dtype=L.float32, requires_grad=True)

    def build():
        h = x
        for _ in range(5):
            h = (h * w).tanh()
        return h.sum()

    return build, (x, w)


def _adds(L):
    x = L.ones(4, 4, requires_grad=True)
    y = L.ones(4, 4)

    def build():
        h = x
        for _ in range(20):
            h = h + y
        return h.sum()

    return build, (x,)


def _mlp(L):
    L.manual_seed(0)
    nn = L.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    rng = np.random.default_rng(0)
    X = L.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    Y = L.tensor(rng.integers(0, 10, 128).astype(np.int64))
    return (lambda: nn.functional.cross_entropy(model(X), Y)), tuple(model.parameters())


CASES = {"chain": (_chain, 200), "adds": (_adds, 200), "mlp": (_mlp, 20)}


def _backward_us(make, L, number, repeat=7):
    """Best over ``repeat`` runs of the mean CPU time of ``number`` backward passes."""
    build, leaves = make(L)
    build().backward()   # warm up
    best = float("inf")
    for _ in range(repeat):
        losses = [build() for _ in range(number)]
        for t in leaves:
            t.grad = None
        gc.disable()
        total = 0.0
        for loss in losses:
            t0 = time.process_time()
            loss.backward()
            total += time.process_time() - t0
            for t in leaves:   # every pass starts from .grad = None, as a training step does
                t.grad = None
        gc.enable()
        best = min(best, total / number)
    return best * 1e6


def _kernel_cases(L):
    """name -> (op call) for the backward kernels, on the shapes the graphs above use."""
    rng = np.random.default_rng(0)
    aten = L.ops.aten
    g, y = (L.tensor(rng.standard_normal((4, 4)).astype(np.float32)) for _ in range(2))
    y = y.tanh()
    G, H = (L.tensor(rng.standard_normal((128, 256)).astype(np.float32)) for _ in range(2))
    logp = L.tensor(rng.standard_normal((128, 10)).astype(np.float32)).log_softmax(1)
    target = L.tensor(rng.integers(0, 10, 128))
    one, total = L.tensor(1.0), L.tensor(128.0)
    return {
        "tanh_backward 4x4": lambda: aten.tanh_backward.default(g, y),
        "sigmoid_backward 4x4": lambda: aten.sigmoid_backward.default(g, y),
        "threshold_backward 4x4": lambda: aten.threshold_backward.default(g, y, 0),
        "threshold_backward 128x256": lambda: aten.threshold_backward.default(G, H, 0),
        "nll_loss_backward 128x10": lambda: aten.nll_loss_backward.default(one, logp, target, None, 1, -100, total),
        "ones_like 0-d": lambda: aten.ones_like.default(one, pin_memory=False),
    }


def _kernels():
    ours = _kernel_cases(mt)
    theirs = _kernel_cases(torch) if torch is not None else {}
    print("\nbackward kernels as aten ops, microseconds per call (best of 7)")
    print(f"{'kernel':<28}{'ours':>10}{'torch':>10}{'ours/torch':>12}")
    for name, fn in ours.items():
        number = 200 if "128" in name else 2000
        a = _call_us(fn, number)
        b = _call_us(theirs[name], number) if theirs else float("nan")
        print(f"{name:<28}{a:>10.2f}{b:>10.2f}{a / b:>12.2f}")


def _call_us(fn, number, repeat=7):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, time.process_time() - t0)
    return best / number * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="rows to run (default: all)")
    parser.add_argument("--no-kernels", action="store_true", help="skip the table of backward kernels")
    args = parser.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(1)
    print("backward() only, microseconds (best of 7); ours = compiled twins on (the default), "
          "readable = switch off")
    print(f"{'graph':<8}{'ours':>10}{'readable':>10}{'torch':>10}{'ours/torch':>12}{'readable/torch':>16}")
    for name in args.only or CASES:
        make, number = CASES[name]
        with mt.backends.compiled.flags(enabled=True):
            ours = _backward_us(make, mt, number)
        with mt.backends.compiled.flags(enabled=False):
            readable = _backward_us(make, mt, number)
        theirs = _backward_us(make, torch, number) if torch is not None else float("nan")
        print(f"{name:<8}{ours:>10.1f}{readable:>10.1f}{theirs:>10.1f}{ours / theirs:>12.2f}{readable / theirs:>16.2f}")
    if not args.no_kernels:
        _kernels()


if __name__ == "__main__":
    main()

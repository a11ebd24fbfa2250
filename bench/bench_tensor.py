"""Benchmark: tensor ops in minitorch_nn, numpy and PyTorch, side by side in one run.

Run ``python bench/bench_tensor.py [--quick] [--threads N]`` from the repository root. Three
tables:

* **tiny ops** (``add``, ``sub``, ``mul``, ``+ 1``, ``relu``, ``sum`` on shape ``(4,)``
  float32): what one op costs when the data is negligible, i.e. the per-op overhead. Plain cpu
  tensors take the compiled fast path (``_ext/twins/backends/cpu/pointwise.pyx``...); the ``mt.add (full path)`` row
  is the function form, which always runs the whole chain (public function,
  ``__torch_function__`` check, op, dispatch, kernel), for comparison. Target (issue 2): at or
  below PyTorch's.
* **more tiny ops** (``exp``, ``tanh``, ``sigmoid``, ``-x``, ``/``, ``** 2``, ``@``, ``t``, ``transpose``,
  ``view``, ``reshape``, ``unsqueeze`` on shape ``(4, 4)`` float32; ``cat`` and ``stack`` of two
  of them, ``_ext/twins/backends/cpu/factories.pyx``), without and with
  ``requires_grad=True`` (then the op is recorded: issue 3's target is within 1.5x of PyTorch).
  Plain cpu tensors take the compiled twins under ``_ext/twins/backends/``.
* **big ops** (``add``/``mul`` on 4M float32, float32 ``matmul`` at 512 and 2048): where the
  time is numpy's/BLAS's own. Target: within 1.1x of numpy.
* **import time** of ``import minitorch_nn`` (next to ``import numpy``, which it includes, and
  ``import torch``), each in a fresh interpreter: *cached* with Python's bytecode cache as a
  normal install has it, *uncached* compiling every module from source (what a checkout run
  with ``PYTHONDONTWRITEBYTECODE=1`` pays). Wall time, and the process's CPU time, which other
  work on the machine disturbs less. Target (issue 2): at most 0.3 s.

Times are the best of several repeats (the least disturbed by other work on the machine), in
microseconds per call; ratios are minitorch_nn's time over the other library's. All libraries
use one thread by default (set before numpy is imported), so the comparison is per core.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import timeit


def _set_threads(n):
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


def best_us(fn, number, repeat):
    """Best time of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    fn()  # warm up (first-call imports and caches)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def _no_grad_add(lib, x, y):
    with lib.no_grad():
        return x + y


def tiny_cases(mt, np, torch):
    a, b = mt.ones(4), mt.full((4,), 2.0)
    na, nb = np.ones(4, np.float32), np.full(4, 2.0, np.float32)
    zero = np.zeros((), np.float32)
    cases = {
        "add": (lambda: a + b, lambda: na + nb),
        "sub": (lambda: a - b, lambda: na - nb),
        "mul": (lambda: a * b, lambda: na * nb),
        "add scalar": (lambda: a + 1, lambda: na + 1),
        "relu": (lambda: a.relu(), lambda: np.maximum(na, zero)),
        "sum": (lambda: a.sum(), lambda: np.add.reduce(na, None)),
        "mt.add (full path)": (lambda: mt.add(a, b), lambda: na + nb),
        # state_dict() and Module.to(dtype) call these once per tensor (issue 4); numpy's
        # counterparts are a view and astype
        "detach": (lambda: a.detach(), lambda: na.view()),
        "to(float64)": (lambda: a.to(mt.float64), lambda: na.astype(np.float64)),
        # backward formulas and optimizer steps run under no_grad on tensors that require grad
        "add, no_grad, grad": (lambda: _no_grad_add(mt, ga, gb), lambda: na + nb),
    }
    ga, gb = mt.ones(4, requires_grad=True), mt.full((4,), 2.0, requires_grad=True)
    if torch is not None:
        ta, tb = torch.ones(4), torch.full((4,), 2.0)
        tga, tgb = torch.ones(4, requires_grad=True), torch.full((4,), 2.0, requires_grad=True)
        torch_fns = {"add": lambda: ta + tb, "sub": lambda: ta - tb, "mul": lambda: ta * tb, "add scalar": lambda: ta + 1,
                     "relu": lambda: ta.relu(), "sum": lambda: ta.sum(), "mt.add (full path)": lambda: torch.add(ta, tb),
                     "detach": lambda: ta.detach(), "to(float64)": lambda: ta.to(torch.float64),
                     "add, no_grad, grad": lambda: _no_grad_add(torch, tga, tgb)}
    else:
        torch_fns = {}
    return [(name, m, n, torch_fns.get(name)) for name, (m, n) in cases.items()]


def op_cases(mt, np, torch, grad):
    """More tiny ops on (4, 4) float32: unary math, division, matmul and views
    (``_ext/twins/backends/``), on tensors that require grad (``grad``: the op is recorded) or not.
    numpy's column is the same computation on arrays (a view for the view ops)."""
    rng = np.random.default_rng(0)
    na, nb = rng.standard_normal((4, 4), dtype=np.float32), rng.standard_normal((4, 4), dtype=np.float32)

    def ops(lib, a, b):
        return {
            "exp": lambda: a.exp(), "tanh": lambda: a.tanh(), "sigmoid": lambda: a.sigmoid(), "neg": lambda: -a,
            "div": lambda: a / b, "div scalar": lambda: a / 2.0, "pow 2": lambda: a ** 2, "matmul": lambda: a @ b,
            "t": lambda: a.t(), "transpose": lambda: a.transpose(0, 1), "view": lambda: a.view(16),
            "reshape": lambda: a.reshape(2, 8), "unsqueeze": lambda: a.unsqueeze(0),
            "cat": lambda: lib.cat([a, b]), "stack": lambda: lib.stack([a, b]),
        }

    one = np.ones((), np.float32)
    numpy_fns = {
        "exp": lambda: np.exp(na), "tanh": lambda: np.tanh(na), "sigmoid": lambda: one / (one + np.exp(-na)),
        "neg": lambda: -na, "div": lambda: na / nb, "div scalar": lambda: na / one, "pow 2": lambda: na ** 2,
        "matmul": lambda: na @ nb,
        "t": lambda: na.T, "transpose": lambda: na.swapaxes(0, 1), "view": lambda: na.reshape(16),
        "reshape": lambda: na.reshape(2, 8), "unsqueeze": lambda: na[None],
        "cat": lambda: np.concatenate([na, nb]), "stack": lambda: np.stack([na, nb]),
    }
    mine = ops(mt, mt.tensor(na, requires_grad=grad), mt.tensor(nb, requires_grad=grad))
    theirs = ops(torch, torch.tensor(na, requires_grad=grad), torch.tensor(nb, requires_grad=grad)) if torch else {}
    suffix = ", grad" if grad else ""
    return [(name + suffix, fn, numpy_fns[name], theirs.get(name)) for name, fn in mine.items()]


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
    print(f"{'op':<20}{'minitorch_nn':>14}{'numpy':>11}{'torch':>11}{'vs numpy':>10}{'vs torch':>10}")
    results = []
    for name, m, n, t in rows:
        # interleave the libraries' repeats, so a burst of load on the machine hits all of them
        tm = tn = tt = float("inf")
        for _ in range(repeat):
            tm = min(tm, best_us(m, number, 1))
            tn = min(tn, best_us(n, number, 1))
            tt = min(tt, best_us(t, number, 1)) if t is not None else float("nan")
        results.append((name, tm, tn, tt))
        print(f"{name:<20}{tm:>12.2f}us{tn:>9.2f}us{tt:>9.2f}us{tm / tn:>9.2f}x{tm / tt:>9.2f}x")
    return results


_IMPORT_PROBE = (
    "import resource, time\n"
    "r0 = resource.getrusage(resource.RUSAGE_SELF); w0 = time.perf_counter()\n"
    "import {module}\n"
    "w1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(w1 - w0, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime))\n"
)


def import_seconds(module, repeat, *, cached):
    """Best (wall, cpu) seconds of ``import module`` in a fresh interpreter.

    The bytecode cache lives in a temporary directory (``-X pycache_prefix``), primed by one
    import, so the checkout is never written to. *uncached* then deletes the package's part of
    it and stops Python writing it back (``-B``): minitorch_nn's modules are compiled from source
    on every run, while numpy and the standard library stay cached.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as prefix:
        cmd = [sys.executable, "-X", f"pycache_prefix={prefix}", "-c", _IMPORT_PROBE.format(module=module)]
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
        if not cached:
            shutil.rmtree(os.path.join(prefix, root.lstrip(os.sep), "minitorch_nn"), ignore_errors=True)
            cmd.insert(1, "-B")
        runs = []
        for _ in range(repeat):
            out = subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, text=True).stdout
            runs.append(tuple(float(v) for v in out.split()))
    return min(w for w, _ in runs), min(c for _, c in runs)


def import_table(repeat, have_torch):
    print(f"\nimport time (fresh interpreter; best of {repeat})")
    print(f"{'module':<26}{'wall':>9}{'cpu':>9}")
    rows = [("minitorch_nn", True), ("minitorch_nn", False), ("numpy", True)]
    if have_torch:
        rows.append(("torch", True))
    for module, cached in rows:
        wall, cpu = import_seconds(module, repeat, cached=cached)
        label = f"{module} ({'cached' if cached else 'uncached'})"
        print(f"{label:<26}{wall:>8.3f}s{cpu:>8.3f}s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 2048 matmul")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", choices=["tiny", "ops", "big", "import"], help="run one table")
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
    if args.only in (None, "tiny"):
        table("tiny ops, shape (4,) float32 (per-op overhead)", tiny_cases(mt, np, torch),
              2000 if args.quick else 20000, repeat)
    if args.only in (None, "ops"):
        for grad in (False, True):
            title = "more tiny ops, shape (4, 4) float32" + (", requiring grad (recorded)" if grad else "")
            table(title, op_cases(mt, np, torch, grad), 2000 if args.quick else 20000, repeat)
    if args.only in (None, "big"):
        table("big ops (numpy/BLAS bound)", big_cases(mt, np, torch, args.quick), 3 if args.quick else 10, repeat)
    if args.only in (None, "import"):
        import_table(3 if args.quick else 10, torch is not None)


if __name__ == "__main__":
    main()

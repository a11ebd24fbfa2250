"""Benchmark the cuda backend on a real GPU, against the device's own limits and the cpu backend.

    python bench/gpu.py [--section NAME ...] [--json PATH] [--tiny]

Sections, each measured on the same GPU in the same run:

* ``bandwidth``: a device-to-device copy's bandwidth (bytes read + written per second, the most an
  elementwise kernel can move), then elementwise ``add``, ``mul`` by a number and ``exp`` over the
  same bytes;  goal: each >= 80 % of the copy's bandwidth;
* ``matmul``: float32 ``a @ b`` at 1024 and 4096 in GFLOP/s (cuBLAS through PyTorch or CuPy
  alongside, when either is installed with CUDA);  goal at 4096: >= 25 % of the device's float32
  peak (``PEAK_F32``, looked up from the device name);
* ``lenet``: one LeNet-5 training step (conv, pooling, linear, cross-entropy, SGD), cuda vs the
  cpu backend;  goal: faster on the GPU;
* ``transformer``: one training step of a small transformer encoder (embedding, attention, layer
  norm, Adam), cuda vs cpu;  goal: faster on the GPU.

Each section runs on its own: one that fails is reported and the others still run. ``--json``
writes the rows (``tools/gpu_check.py`` runs each section in its own process, with a time limit,
and gathers them into one report). ``--tiny`` uses toy sizes, so that the script itself can be
checked on the simulator (``MINITORCH_NN_CUDA=sim``); its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# float32 peak (TFLOP/s, without tensor cores) from NVIDIA's data sheets; the first name that is part
# of the device's name wins, so the more specific come first
PEAK_F32 = [
    ("H200 NVL", 60.0),
    ("H200", 67.0),
    ("H100 NVL", 60.0),
    ("H100 PCIe", 51.0),
    ("H100", 67.0),    # SXM
    ("A100", 19.5),
]

GOAL_BANDWIDTH = 0.80
GOAL_MATMUL_PEAK = 0.25


def peak_f32_tflops(device_name: str):
    for key, tflops in PEAK_F32:
        if key.lower() in device_name.lower():
            return tflops
    return None


def _best(fn, sync, repeat, warmup=True):
    """The fastest of ``repeat`` timed calls, after one untimed call (numba compiles on first use)."""
    if warmup:
        fn()
        sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return min(times)


def row(section, what, value, unit, reference=None, ratio=None, goal=None, met=None, note=""):
    return {"section": section, "what": what, "value": value, "unit": unit, "reference": reference,
            "ratio": ratio, "goal": goal, "met": met, "note": note}


class Bench:
    def __init__(self, tiny: bool):
        import minitorch_nn as mt

        self.mt = mt
        self.tiny = tiny
        self.sync = mt.cuda.synchronize
        self.repeat = 1 if tiny else 5
        self.warmup = not tiny  # (on the simulator every call is as slow as the first)

    def time(self, fn, sync=None, repeat=None):
        return _best(fn, sync or self.sync, repeat or self.repeat, self.warmup)

    # -- bandwidth ------------------------------------------------------------------------------------

    def bandwidth(self):
        mt = self.mt
        from minitorch_nn.backends.cuda import storage

        n = 2048 if self.tiny else 64 * 2 ** 20  # float32 elements: 256 MiB per operand on a GPU
        x, y = mt.rand(n, device="cuda"), mt.rand(n, device="cuda")
        src = x._impl.storage
        dst = storage.device_array(n, src.dtype)
        t_copy = self.time(lambda: dst.copy_to_device(src))
        bw_copy = 2 * 4 * n / t_copy  # read + write
        rows = [row("bandwidth", f"device-to-device copy, {n * 4 / 2 ** 20:g} MiB", bw_copy / 1e9, "GB/s",
                    note="the reference: the most an elementwise kernel can move")]
        for what, fn, moved in (("add x + y", lambda: x + y, 3), ("mul x * 2.0", lambda: x * 2.0, 2),
                                ("exp(x)", lambda: x.exp(), 2)):
            bw = moved * 4 * n / self.time(fn)
            rows.append(row("bandwidth", f"{what}, float32, {n / 2 ** 20:g}M elements", bw / 1e9, "GB/s",
                            reference=bw_copy / 1e9, ratio=bw / bw_copy, goal=f">= {GOAL_BANDWIDTH:.0%} of copy",
                            met=bw / bw_copy >= GOAL_BANDWIDTH))
        return rows

    # -- matmul ------------------------------------------------------------------------------------------

    def matmul(self):
        mt = self.mt
        name = mt.cuda.get_device_name()
        peak = peak_f32_tflops(name)
        cublas = _cublas()
        rows = []
        for n in ((8, 16) if self.tiny else (1024, 4096)):
            a, b = mt.randn(n, n, device="cuda"), mt.randn(n, n, device="cuda")
            t = self.time(lambda a=a, b=b: a @ b, repeat=1 if self.tiny else 3)
            gflops = 2 * n ** 3 / t / 1e9
            ref = None
            if cublas is not None and not self.tiny:
                ref = 2 * n ** 3 / cublas(n) / 1e9
            big = n == (16 if self.tiny else 4096)
            ratio = gflops / (peak * 1e3) if peak else None
            rows.append(row("matmul", f"float32 matmul {n}x{n}", gflops, "GFLOP/s",
                            reference=peak * 1e3 if peak else None, ratio=ratio,
                            goal=f">= {GOAL_MATMUL_PEAK:.0%} of f32 peak" if big else None,
                            met=(ratio >= GOAL_MATMUL_PEAK if ratio is not None else None) if big else None,
                            note=(f"peak {peak} TFLOP/s ({name})" if peak else f"no f32 peak known for {name!r}")
                            + (f"; cuBLAS {ref:.0f} GFLOP/s" if ref else "")))
        return rows

    # -- training steps ----------------------------------------------------------------------------------

    def _step_rows(self, section, what, make):
        """Time one training step built by ``make(device)`` on cuda and on cpu."""
        from minitorch_nn.backends.cuda.fallback import HOST_CALLS

        mt = self.mt
        step_gpu = make("cuda")
        before = sum(HOST_CALLS.values())
        t_gpu = self.time(step_gpu, repeat=1 if self.tiny else 3)
        host = sum(HOST_CALLS.values()) - before
        step_cpu = make("cpu")
        t_cpu = _best(step_cpu, lambda: None, 1 if self.tiny else 3, warmup=not self.tiny)
        mt.cuda.synchronize()
        return [row(section, f"{what}: cuda step", t_gpu * 1e3, "ms", reference=t_cpu * 1e3, ratio=t_cpu / t_gpu,
                    goal="faster than cpu", met=t_gpu < t_cpu,
                    note=f"cpu step {t_cpu * 1e3:.1f} ms; {host} host-path calls on cuda")]

    def lenet(self):
        mt = self.mt
        nn = mt.nn
        batch, side, c1, c2, h1, h2 = (2, 16, 2, 3, 8, 8) if self.tiny else (64, 32, 6, 16, 120, 84)
        final = ((side - 4) // 2 - 4) // 2  # the side after conv 5x5, pool 2, conv 5x5, pool 2
        flat = c2 * final * final

        def make(dev):
            mt.manual_seed(0)
            model = nn.Sequential(nn.Conv2d(1, c1, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(c1, c2, 5), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Flatten(), nn.Linear(flat, h1), nn.ReLU(), nn.Linear(h1, h2),
                                  nn.ReLU(), nn.Linear(h2, 10)).to(dev)
            opt = mt.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            xb, yb = mt.randn(batch, 1, side, side).to(dev), mt.randint(0, 10, (batch,)).to(dev)

            def step():
                opt.zero_grad()
                nn.functional.cross_entropy(model(xb), yb).backward()
                opt.step()

            return step

        return self._step_rows("lenet", f"LeNet-5, batch {batch}, {side}x{side}", make)

    def transformer(self):
        mt = self.mt
        nn = mt.nn
        batch, seq, d, heads, ff, layers, vocab = (2, 4, 8, 2, 16, 1, 11) if self.tiny else (16, 64, 128, 4, 256, 2, 1000)

        def make(dev):
            mt.manual_seed(0)
            layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.0, batch_first=True)
            model = nn.ModuleDict({"embed": nn.Embedding(vocab, d), "encoder": nn.TransformerEncoder(layer, layers),
                                   "head": nn.Linear(d, vocab)}).to(dev)
            opt = mt.optim.Adam(model.parameters(), lr=1e-3)
            tokens = mt.randint(0, vocab, (batch, seq)).to(dev)
            targets = mt.randint(0, vocab, (batch * seq,)).to(dev)

            def step():
                opt.zero_grad()
                h = model["encoder"](model["embed"](tokens))
                nn.functional.cross_entropy(model["head"](h).reshape(batch * seq, vocab), targets).backward()
                opt.step()

            return step

        return self._step_rows("transformer", f"transformer encoder, {layers} layers, d={d}, batch {batch}x{seq}", make)


def _cublas():
    """``n -> seconds`` of one float32 n x n cuBLAS matmul, through PyTorch or CuPy; None without."""
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False  # float32 against float32

            def run(n):
                a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
                return _best(lambda: a @ b, torch.cuda.synchronize, 3)

            return run
    except ImportError:
        pass
    try:
        import cupy

        def run(n):
            a = cupy.random.randn(n, n, dtype=cupy.float32)
            b = cupy.random.randn(n, n, dtype=cupy.float32)
            return _best(lambda: a @ b, cupy.cuda.Device().synchronize, 3)

        return run
    except ImportError:
        return None


SECTIONS = ("bandwidth", "matmul", "lenet", "transformer")


def run_sections(names, tiny):
    """[{name, status, seconds, rows, error}] for each section, one failing not stopping the rest."""
    import minitorch_nn as mt

    results = []
    if not mt.cuda.is_available():
        return [{"name": n, "status": "failed", "seconds": 0.0, "rows": [],
                 "error": "no CUDA device (and the simulator is off)"} for n in names]
    bench = Bench(tiny)
    for name in names:
        start = time.perf_counter()
        try:
            rows = getattr(bench, name)()
            results.append({"name": name, "status": "ok", "seconds": time.perf_counter() - start, "rows": rows, "error": None})
        except Exception:
            results.append({"name": name, "status": "failed", "seconds": time.perf_counter() - start, "rows": [],
                            "error": traceback.format_exc(limit=6)})
    return results


def format_table(rows) -> list:
    """Markdown lines: one row per figure, with its reference, ratio and goal."""
    lines = ["| section | what | value | reference | ratio | goal | met |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        ref = "" if r["reference"] is None else f"{r['reference']:.4g}"
        ratio = "" if r["ratio"] is None else (f"{r['ratio']:.0%}" if r["unit"] != "ms" else f"{r['ratio']:.2f}x")
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        note = f" ({r['note']})" if r["note"] else ""
        lines.append(f"| {r['section']} | {r['what']}{note} | {r['value']:.4g} {r['unit']} | {ref} | {ratio} | "
                     f"{r['goal'] or ''} | {met} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", action="append", choices=SECTIONS, help="run only these (repeatable)")
    parser.add_argument("--json", help="write the sections' results here")
    parser.add_argument("--tiny", action="store_true", help="toy sizes (for the simulator)")
    args = parser.parse_args(argv)
    results = run_sections(args.section or list(SECTIONS), args.tiny)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    rows = [r for s in results for r in s["rows"]]
    print("\n".join(format_table(rows)))
    for s in results:
        if s["status"] != "ok":
            print(f"\nsection {s['name']} failed:\n{s['error']}")
    return 0 if all(s["status"] == "ok" for s in results) else 1


if __name__ == "__main__":
    sys.exit(main())

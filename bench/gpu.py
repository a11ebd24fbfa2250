"""Benchmark the cuda backend's kernels on a real GPU (issue 8's targets).

    python bench/gpu.py [--quick]

Measures, on the same GPU:

* float32 matmul 4096 x 4096: our tiled shared-memory kernel vs cuBLAS (through PyTorch or CuPy,
  whichever is installed);  target: >= 25 % of cuBLAS;
* elementwise add of 256M float32 (1 GiB per operand) vs a device-to-device copy's bandwidth
  (bytes moved per second);  target: >= 80 % of copy bandwidth;
* one MLP training step (Linear-ReLU-Linear, cross-entropy, SGD) vs PyTorch on the GPU;
  target: within 3x;
* one small CNN training step (conv, batch/group/layer norm, max/avg pooling, Adam) vs PyTorch,
  with the number of host-path calls (``fallback.py``) it made, which should be 0.

and prints a table of ratios. Without a GPU (the simulator is far too slow for these sizes) it
exits with a message. ``--quick`` uses smaller sizes; ``--tiny`` runs toy sizes, also on the
simulator, only to check that the script itself works.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _best(fn, sync, repeat=5):
    fn()  # warm up (includes numba's compilation on the first call)
    sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv):
    quick = "--quick" in argv
    tiny = "--tiny" in argv
    simulated = os.environ.get("MINITORCH_NN_CUDA") == "sim" or os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if simulated and not tiny:
        print("bench/gpu.py needs a real GPU: unset MINITORCH_NN_CUDA / NUMBA_ENABLE_CUDASIM (the simulator is far too slow).")
        return 2
    import minitorch_nn as mt

    if not mt.cuda.is_available():
        print("bench/gpu.py: no CUDA GPU found (the CUDA driver reports no device); nothing to measure.")
        return 2
    sync = mt.cuda.synchronize
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        torch, have_torch = None, False
    try:
        import cupy
    except ImportError:
        cupy = None

    print(f"device: {mt.cuda.get_device_name()}")
    rows = []

    # -- matmul -------------------------------------------------------------------------------
    n = 16 if tiny else 1024 if quick else 4096
    a, b = mt.randn(n, n).cuda(), mt.randn(n, n).cuda()
    t_ours = _best(lambda: a @ b, sync, repeat=3)
    flops = 2 * n ** 3
    ref_name, t_ref = None, None
    if have_torch:
        ta, tb = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False  # compare float32 with float32
        t_ref, ref_name = _best(lambda: ta @ tb, torch.cuda.synchronize), "cuBLAS (torch)"
    elif cupy is not None:
        ca, cb = cupy.random.randn(n, n, dtype=cupy.float32), cupy.random.randn(n, n, dtype=cupy.float32)
        t_ref, ref_name = _best(lambda: ca @ cb, cupy.cuda.Device().synchronize), "cuBLAS (cupy)"
    rows.append((f"matmul {n}x{n} float32", f"{flops / t_ours / 1e12:.2f} TFLOP/s",
                 f"{flops / t_ref / 1e12:.2f} TFLOP/s {ref_name}" if t_ref else "no torch/cupy",
                 f"{t_ref / t_ours:.0%}" if t_ref else "-", ">= 25%"))

    # -- elementwise add vs device-to-device copy --------------------------------------------------
    m = 1024 if tiny else (16 if quick else 256) * 2 ** 20
    x, y = mt.ones(m, device="cuda"), mt.ones(m, device="cuda")
    t_add = _best(lambda: x + y, sync)
    from minitorch_nn.backends.cuda import storage

    src = x._impl.storage
    dst = storage.device_array(m, src.dtype)
    t_copy = _best(lambda: dst.copy_to_device(src), sync)
    bw_add = 3 * 4 * m / t_add      # read x, read y, write out
    bw_copy = 2 * 4 * m / t_copy    # read src, write dst
    rows.append((f"add {m / 2 ** 20:g}M float32", f"{bw_add / 1e9:.0f} GB/s", f"{bw_copy / 1e9:.0f} GB/s d2d copy",
                 f"{bw_add / bw_copy:.0%}", ">= 80%"))

    # -- one MLP training step ------------------------------------------------------------------------
    batch, d_in, hidden, classes = (4, 8, 8, 3) if tiny else (512, 1024, 2048, 10)

    def make(lib, dev):
        model = lib.nn.Sequential(lib.nn.Linear(d_in, hidden), lib.nn.ReLU(), lib.nn.Linear(hidden, classes)).to(dev)
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        xb = lib.randn(batch, d_in).to(dev)
        yb = lib.randint(0, classes, (batch,)).to(dev)

        def step():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()

        return step

    t_mlp = _best(make(mt, "cuda"), sync)
    if have_torch:
        t_tmlp = _best(make(torch, "cuda"), torch.cuda.synchronize)
        rows.append((f"MLP step ({batch}x{d_in}-{hidden}-{classes})", f"{t_mlp * 1e3:.1f} ms", f"{t_tmlp * 1e3:.1f} ms torch",
                     f"{t_mlp / t_tmlp:.1f}x slower", "<= 3x"))
    else:
        rows.append((f"MLP step ({batch}x{d_in}-{hidden}-{classes})", f"{t_mlp * 1e3:.1f} ms", "no torch", "-", "<= 3x"))

    # -- one small CNN training step: conv, batch norm, pooling, layer norm, Adam ---------------------
    # (the kernels of conv.py, norms.py, pooling.py; none of its ops may take the host path)
    batch, ch, side = (2, 2, 8) if tiny else (64, 32, 32)

    def make_cnn(lib, dev):
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(ch, ch, 3, padding=1), nn.GroupNorm(2, ch), nn.ReLU(), nn.AvgPool2d(2),
                              nn.Flatten(), nn.LayerNorm(ch * (side // 4) ** 2), nn.Linear(ch * (side // 4) ** 2, 10)).to(dev)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        xb = lib.randn(batch, 3, side, side).to(dev)
        yb = lib.randint(0, 10, (batch,)).to(dev)

        def step():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()

        return step

    from minitorch_nn.backends.cuda.fallback import HOST_CALLS

    cnn = make_cnn(mt, "cuda")
    before = sum(HOST_CALLS.values())
    t_cnn = _best(cnn, sync)
    host = sum(HOST_CALLS.values()) - before
    what = f"CNN step ({batch}x3x{side}x{side}, {host} host-path calls)"
    if have_torch:
        t_tcnn = _best(make_cnn(torch, "cuda"), torch.cuda.synchronize)
        rows.append((what, f"{t_cnn * 1e3:.1f} ms", f"{t_tcnn * 1e3:.1f} ms torch", f"{t_cnn / t_tcnn:.1f}x slower", "-"))
    else:
        rows.append((what, f"{t_cnn * 1e3:.1f} ms", "no torch", "-", "-"))

    widths = [max(len(str(r[i])) for r in rows + [("what", "ours", "reference", "ratio", "target")]) for i in range(5)]
    for r in [("what", "ours", "reference", "ratio", "target")] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

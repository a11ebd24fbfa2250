"""Save and load of a ~100 MB state dict: minitorch_nn vs PyTorch (same file format).

Run: .venv/bin/python bench/bench_serialization.py [--mb 100] [--repeat 5]
Prints the best of ``repeat`` wall times and our/torch ratios. Both sides write to and read
from files in one temporary directory (the OS page cache makes this mostly a memory test).
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time

import numpy as np

import minitorch_nn as mt


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    n_tensors = args.mb // 4  # 1024 x 1024 float32 = 4 MiB each, plus small biases
    rng = np.random.default_rng(0)
    arrays = {
        f"layer{i}.weight": rng.standard_normal((1024, 1024), dtype=np.float32)
        for i in range(n_tensors)
    }
    arrays.update(
        {f"layer{i}.bias": rng.standard_normal(1024, dtype=np.float32) for i in range(n_tensors)}
    )
    ours_sd = collections.OrderedDict((k, mt.from_numpy(v)) for k, v in arrays.items())
    total = sum(v.nbytes for v in arrays.values()) / 2**20
    print(f"state dict: {len(arrays)} tensors, {total:.1f} MiB")

    try:
        import torch
    except ImportError:
        torch = None
    with tempfile.TemporaryDirectory() as tmp:
        ours_path, torch_path = os.path.join(tmp, "ours.pt"), os.path.join(tmp, "torch.pt")
        rows = [("save", best(lambda: mt.save(ours_sd, ours_path), args.repeat))]
        rows.append(("load", best(lambda: mt.load(ours_path), args.repeat)))
        rows.append(("load mmap", best(lambda: mt.load(ours_path, mmap=True), args.repeat)))
        if torch is not None:
            torch_sd = collections.OrderedDict((k, torch.from_numpy(v)) for k, v in arrays.items())
            theirs = [
                best(lambda: torch.save(torch_sd, torch_path), args.repeat),
                best(lambda: torch.load(torch_path, weights_only=True), args.repeat),
                best(lambda: torch.load(torch_path, weights_only=True, mmap=True), args.repeat),
            ]
            print(f"{'':10s} {'minitorch_nn':>14s} {'torch':>10s} {'ratio':>8s}")
            for (name, ours), t in zip(rows, theirs):
                print(f"{name:10s} {ours * 1e3:11.1f} ms {t * 1e3:7.1f} ms {ours / t:7.2f}x")
            # the files are interchangeable
            assert (
                mt.load(torch_path)["layer0.bias"].tolist()[:3]
                == arrays["layer0.bias"][:3].tolist()
            )
            assert (
                torch.load(ours_path, weights_only=True)["layer0.bias"][:3].tolist()
                == arrays["layer0.bias"][:3].tolist()
            )
        else:
            for name, ours in rows:
                print(f"{name:10s} {ours * 1e3:11.1f} ms  (torch not installed)")


if __name__ == "__main__":
    main()

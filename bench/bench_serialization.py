"""Save and load of a ~100 MB state dict: minitorch_nn vs PyTorch (same file format).

Run: .venv/bin/python bench/bench_serialization.py [--mb 100] [--repeat 5]
Prints the best of ``repeat`` wall times and our/torch ratios. Both sides write to and read
from files in one temporary directory (the OS page cache makes this mostly a memory test).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
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
    parser.add_argument("--repeat", type=int, default=9)
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
        cases = [
            ("save", lambda: mt.save(ours_sd, ours_path)),
            ("load", lambda: mt.load(ours_path)),
            ("load mmap", lambda: mt.load(ours_path, mmap=True)),
        ]
        if torch is None:
            for name, fn in cases:
                print(f"{name:10s} {best(fn, args.repeat) * 1e3:11.1f} ms  (torch not installed)")
            return
        torch_sd = collections.OrderedDict((k, torch.from_numpy(v)) for k, v in arrays.items())
        theirs = [
            lambda: torch.save(torch_sd, torch_path),
            lambda: torch.load(torch_path, weights_only=True),
            lambda: torch.load(torch_path, weights_only=True, mmap=True),
        ]
        print(f"{'':10s} {'minitorch_nn':>14s} {'torch':>10s} {'ratio':>8s}")
        for (name, fn), tfn in zip(cases, theirs):
            # alternate the two so that both see the same machine load; keep the best of each
            ours_t, torch_t = [], []
            for _ in range(args.repeat):
                ours_t.append(best(fn, 1))
                torch_t.append(best(tfn, 1))
            o, t = min(ours_t), min(torch_t)
            print(f"{name:10s} {o * 1e3:11.1f} ms {t * 1e3:7.1f} ms {o / t:7.2f}x")
        # A warm process reuses memory freed by the previous load (PyTorch's allocator does this
        # well); a script that loads a checkpoint once pays for fresh pages. Time that too.
        print("first load in a fresh process (best of 5):")
        code = (
            "import sys, time, minitorch_nn as mt, torch; f = sys.argv[1]; t = time.perf_counter(); "
            "(mt.load(f) if sys.argv[2] == 'mt' else torch.load(f, weights_only=True)); "
            "print(time.perf_counter() - t)"
        )
        fresh = {}
        for who, path in (("mt", ours_path), ("torch", torch_path)):
            runs = [
                float(
                    subprocess.run(
                        [sys.executable, "-W", "ignore", "-c", code, path, who],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(5)
            ]
            fresh[who] = min(runs)
        print(
            f"{'load':10s} {fresh['mt'] * 1e3:11.1f} ms {fresh['torch'] * 1e3:7.1f} ms "
            f"{fresh['mt'] / fresh['torch']:7.2f}x"
        )
        # the files are interchangeable
        head = arrays["layer0.bias"][:3].tolist()
        assert mt.load(torch_path)["layer0.bias"].tolist()[:3] == head
        assert torch.load(ours_path, weights_only=True)["layer0.bias"][:3].tolist() == head


if __name__ == "__main__":
    main()

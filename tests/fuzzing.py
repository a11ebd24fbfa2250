"""Crash fuzzers: geometry/op chains, mutated checkpoints and safetensors headers, run in a
pool of subprocesses so that a crash (a signal) or a hang is *counted* instead of killing the run.

Three kinds of case, each a small JSON-able spec that a worker turns into work:

* ``chain``: a tensor (cpu or meta, compiled twins on or off) put through a chain of geometry ops
  -- ``as_strided(_)``, indexing with huge steps, ``view``/``reshape``/``expand``/``narrow``/
  ``select``/``unfold``/``transpose``/``resize_``/``set_`` -- fed adversarial integers (negative,
  2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, -2**63), ending in ops that read the memory
  (the compiled fast paths: ``sum``, ``add``, ``mul_``, ``fill_``, ``contiguous``, ``relu``...).
  Any Python exception is fine; only crashes and hangs count.
* ``checkpoint``: a real checkpoint (saved by ``minitorch_nn.save``, and by ``torch.save`` in the
  legacy format when torch is installed) mutated by byte flips, truncation, or a mutated
  ``data.pkl`` re-zipped with valid CRCs (stored or deflated), then loaded. The worker measures
  the load's peak Python/numpy allocation (``tracemalloc``) against the file's size.
* ``safetensors``: a real safetensors file whose JSON header is mutated (shapes, dtypes and
  offsets set to adversarial integers, keys dropped or duplicated, garbage) or whose bytes are
  flipped or truncated, then loaded.

Use: ``python -m tests.fuzzing`` (the CI-sized profile), ``python -m tests.fuzzing --long``
(>= 100,000 chains, >= 10,000 checkpoints, 3,000 safetensors files), or ``--chains N
--checkpoints N --safetensors N --workers N``. It prints the figures: cases, crashes, hangs over
the time limit, the slowest case, and the largest allocation relative to the file size.
``tests/test_fuzz.py`` runs a CI-sized profile with hypothesis generating the specs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import select
import subprocess
import sys
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ADVERSARIAL = [0, 1, 2, 3, 5, -1, -2, -3, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64,
               -(2**63), -(2**63) + 1, -(2**62), 7, 16]


def adversarial_int(rng: random.Random) -> int:
    return rng.choice(ADVERSARIAL) if rng.random() < 0.5 else rng.randint(-4, 12)


# -- case generators (plain functions of a Random: hypothesis drives them through st.randoms) -----

SHAPE_OPS = ["as_strided", "as_strided_", "getitem", "view", "reshape", "expand", "narrow", "select",
             "unfold", "transpose", "permute", "resize_", "set_", "squeeze", "unsqueeze", "flatten", "t"]
READ_OPS = ["sum", "add", "mul_", "fill_", "contiguous", "relu", "clone", "tolist", "repr", "mean",
            "matmul", "cat", "index_select", "neg", "to_double", "getitem_int"]


def generate_chain(rng: random.Random) -> dict:
    ndim = rng.randint(0, 3)
    shape = [rng.randint(0, 5) for _ in range(ndim)]
    ops = []
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(SHAPE_OPS) if rng.random() < 0.7 else rng.choice(READ_OPS)
        k = rng.randint(0, 3)
        ops.append([name, [adversarial_int(rng) for _ in range(k)], [adversarial_int(rng) for _ in range(k)],
                    adversarial_int(rng), rng.random() < 0.5])
    ops.append([rng.choice(READ_OPS), [], [], adversarial_int(rng), False])
    return {
        "kind": "chain",
        "shape": shape,
        "dtype": rng.choice(["float32", "float64", "int64", "uint8", "float16", "bool"]),
        "meta": rng.random() < 0.15,
        "compiled": rng.random() < 0.7,
        "grad": rng.random() < 0.2,
        "ops": ops,
    }


MUTATIONS = ["flip", "flip", "truncate", "rezip", "rezip", "rezip_deflate", "splice", "valid"]


def generate_checkpoint(rng: random.Random, corpus_size: int) -> dict:
    return {"kind": "checkpoint", "source": rng.randrange(corpus_size), "seed": rng.getrandbits(32),
            "mutation": rng.choice(MUTATIONS)}


def generate_safetensors(rng: random.Random) -> dict:
    return {"kind": "safetensors", "seed": rng.getrandbits(32),
            "mutation": rng.choice(["header", "header", "header", "flip", "truncate", "valid"])}


# -- the worker: runs one case at a time, read as a JSON line on stdin -------------------------------

def _worker_main() -> None:
    import tracemalloc
    import warnings

    warnings.simplefilter("ignore")
    import numpy as np  # noqa: F401

    import minitorch_nn as torch
    from minitorch_nn.backends import compiled

    corpus = json.loads(sys.stdin.readline())["corpus"]
    corpus_bytes = [open(p, "rb").read() for p in corpus]
    # warm up: the first load imports modules and fills caches, which is not the file's doing
    from minitorch_nn import safetensors_io as _st

    for data in corpus_bytes:
        torch.load(io.BytesIO(data))
    _st.load(_st.save({"x": torch.zeros(2)}))

    def run_chain(case):
        dtype = getattr(torch, case["dtype"])
        n = 1
        for s in case["shape"]:
            n *= s
        base = torch.arange(n, dtype=torch.float64).reshape(case["shape"]).to(dtype)
        if case["meta"]:
            base = base.to("meta")
        if case["grad"] and dtype.is_floating_point:
            base = base.requires_grad_()
            base = base * 1
        with compiled.flags(enabled=case["compiled"]):
            t = base
            for name, a, b, c, flag in case["ops"]:
                try:
                    t = _chain_step(torch, t, base, name, a, b, c, flag)
                except (Exception, MemoryError):
                    continue
        return {}

    def run_checkpoint(case):
        data = mutate_checkpoint(corpus_bytes[case["source"] % len(corpus_bytes)], case["seed"], case["mutation"])
        tracemalloc.start()
        try:
            torch.load(io.BytesIO(data))
            outcome = "loaded"
        except (RuntimeError, Exception) as e:   # (a clean error; anything but a crash is counted fine)
            outcome = type(e).__name__
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        return {"size": len(data), "peak": peak, "outcome": outcome}

    def run_safetensors(case):
        from minitorch_nn import safetensors_io

        data = mutate_safetensors(safetensors_io, torch, case["seed"], case["mutation"])
        tracemalloc.start()
        try:
            safetensors_io.load(data)
            outcome = "loaded"
        except Exception as e:
            outcome = type(e).__name__
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        return {"size": len(data), "peak": peak, "outcome": outcome}

    runners = {"chain": run_chain, "checkpoint": run_checkpoint, "safetensors": run_safetensors}
    out = sys.stdout
    for line in sys.stdin:
        case = json.loads(line)
        start = time.perf_counter()
        try:
            result = runners[case["kind"]](case)
        except Exception as e:   # a bug of the harness itself (a mutation it cannot build)
            result = {"harness_error": f"{type(e).__name__}: {e}"[:300]}
        result["seconds"] = time.perf_counter() - start
        out.write(json.dumps(result) + "\n")
        out.flush()


_MAX_MATERIALISE = 10**6   # elements: a fuzz case may build huge *views*, never huge buffers


def _small(t) -> bool:
    """Whether reading or copying ``t`` is cheap: at most ``_MAX_MATERIALISE`` elements, counting
    a size-0 dimension as 1 (``tolist`` of a (2**31, 3, 0) tensor builds 2**31 lists). A huge
    expanded view is a valid tensor, and copying it is a legitimate (and slow) request, in PyTorch
    too: the fuzzer builds such views but never asks for their copy."""
    n = 1
    for s in t.shape:
        n *= max(s, 1)
    return n <= _MAX_MATERIALISE


def _chain_step(torch, t, base, name, a, b, c, flag):
    if name == "as_strided":
        return t.as_strided(a, b, c if flag else None)
    if name == "as_strided_":
        return t.as_strided_(a, b, c if flag else None)
    if name == "getitem":
        index = tuple(slice(x if flag else None, y if not flag else None, abs(c) or 1) for x, y in zip(a, b)) or c
        return t[index]
    if name == "getitem_int":
        return t[c]
    if name == "view":
        return t.view(*a) if a else t.view(-1)
    if name == "reshape" and _small(t):   # (a reshape may copy)
        return t.reshape(*a) if a else t.reshape(-1)
    if name == "expand":
        return t.expand(*a)
    if name == "narrow":
        return t.narrow(c % 4 - 2, a[0] if a else c, b[0] if b else 1)
    if name == "select":
        return t.select(c % 4 - 2, a[0] if a else c)
    if name == "unfold":
        return t.unfold(c % 4 - 2, a[0] if a else 1, b[0] if b else 1)
    if name == "transpose":
        return t.transpose(c % 4 - 2, (a[0] if a else 0) % 4 - 2)
    if name == "permute":
        return t.permute(*[x % 4 for x in a])
    if name == "resize_":
        n = 1
        for x in a:
            n *= x if x > 0 else 1
        if 0 < n <= _MAX_MATERIALISE or any(x < 0 for x in a) or n >= 2**63:
            return t.resize_(*a)
        return t
    if name == "set_":
        return t.set_(base if flag else base[::2])
    if name == "squeeze":
        return t.squeeze(c) if flag else t.squeeze()
    if name == "unsqueeze":
        return t.unsqueeze(c)
    if name == "flatten" and _small(t):
        return t.flatten()
    if name == "t":
        return t.t()
    if not _small(t):
        return t
    if name == "sum":
        t.sum()
    elif name == "mean":
        t.float().mean()
    elif name == "add":
        t + t
    elif name == "mul_":
        t.mul_(2)
    elif name == "fill_":
        t.fill_(7)
    elif name == "contiguous":
        t.contiguous()
    elif name == "relu":
        t.relu()
    elif name == "neg":
        t.neg()
    elif name == "clone":
        t.clone()
    elif name == "tolist":
        t.tolist()
    elif name == "repr":
        repr(t)
    elif name == "matmul":
        t @ t.t() if t.dim() == 2 else t @ t
    elif name == "cat":
        torch.cat([t, t])
    elif name == "index_select":
        t.index_select(c % 4 - 2, torch.tensor([0, c % 3]))
    elif name == "to_double":
        t.double()
    return t


# -- mutations ------------------------------------------------------------------------------------

def mutate_checkpoint(data: bytes, seed: int, mutation: str) -> bytes:
    rng = random.Random(seed)
    if mutation == "valid":
        return data
    if mutation == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if mutation == "truncate":
        return data[: rng.randrange(len(data))]
    if not data.startswith(b"PK"):
        return mutate_checkpoint(data, seed, "flip")   # the legacy format is one pickle stream
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        records = {info.filename: z.read(info.filename) for info in z.infolist()}
    pkl_name = next(n for n in records if n.endswith("/data.pkl"))
    pkl = bytearray(records[pkl_name])
    if mutation == "splice":
        # repeat or drop a region, or plant a declared size (a BINBYTES8/BINUNICODE8/LONG4 length)
        i, j = sorted(rng.randrange(len(pkl) + 1) for _ in range(2))
        choice = rng.random()
        if choice < 0.3:
            pkl[i:i] = pkl[i:j] * rng.randint(1, 50)
        elif choice < 0.6:
            del pkl[i:j]
        else:
            opcode = rng.choice([b"\x8e", b"\x8d", b"\x8a", b"\x96", b"B", b"X"])
            width = 8 if opcode in (b"\x8e", b"\x8d", b"\x96") else 4
            pkl[i:i] = opcode + rng.choice([2**31, 2**32 - 1, 2**40, 10**6]).to_bytes(8, "little")[:width]
    else:
        for _ in range(rng.randint(1, 6)):
            pkl[rng.randrange(len(pkl))] = rng.randrange(256)
    records[pkl_name] = bytes(pkl)
    compression = zipfile.ZIP_DEFLATED if mutation == "rezip_deflate" else zipfile.ZIP_STORED
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        for name, value in records.items():
            z.writestr(name, value)
    return out.getvalue()


def mutate_safetensors(safetensors_io, torch, seed: int, mutation: str) -> bytes:
    rng = random.Random(seed)
    tensors = {f"t{i}": torch.arange(rng.randint(0, 12), dtype=torch.float32).reshape(-1)
               for i in range(rng.randint(1, 3))}
    data = safetensors_io.save(tensors)
    if mutation == "valid":
        return data
    if mutation == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if mutation == "truncate":
        return data[: rng.randrange(len(data))]
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    keys = [k for k in header if k != "__metadata__" and isinstance(header[k], dict)]
    for _ in range(rng.randint(1, 3)):
        if not keys:
            break
        key = rng.choice(keys)
        field = rng.choice(["shape", "dtype", "data_offsets", "drop", "garbage"])
        if field == "shape":
            header[key]["shape"] = [adversarial_int(rng) for _ in range(rng.randint(0, 3))]
        elif field == "data_offsets":
            header[key]["data_offsets"] = [adversarial_int(rng), adversarial_int(rng)]
        elif field == "dtype":
            header[key]["dtype"] = rng.choice(["F64", "BF16", "I8", "BOOL", "C64", "X", "U64", 3])
        elif field == "drop":
            del header[key]
            keys.remove(key)
        else:
            header[key] = rng.choice([None, 1, "x", [], {"dtype": "F32"}])
            keys.remove(key)
    raw = json.dumps(header).encode()
    declared = len(raw) if rng.random() < 0.8 else adversarial_int(rng) % 2**64
    return declared.to_bytes(8, "little") + raw + body


# -- the pool ---------------------------------------------------------------------------------------

class Pool:
    """``workers`` subprocesses, each running one case at a time. A worker that dies (a signal)
    or overruns ``timeout`` seconds on a case is counted and replaced."""

    def __init__(self, workers: int, corpus: list[str], timeout: float = 10.0):
        self.size, self.corpus, self.timeout = workers, corpus, timeout
        self.procs = [self._spawn() for _ in range(workers)]

    def _spawn(self):
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   MINITORCH_NN_FUZZ_WORKER="1")
        proc = subprocess.Popen([sys.executable, "-c", "from tests.fuzzing import _worker_main; _worker_main()"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=ROOT, env=env, text=True, bufsize=1)
        proc.stdin.write(json.dumps({"corpus": self.corpus}) + "\n")
        proc.stdin.flush()
        return proc

    def close(self):
        for proc in self.procs:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except Exception:
                proc.kill()

    def run(self, cases, report=None):
        """Run every case; returns a Stats. ``report(stats)`` is called now and then."""
        stats = Stats()
        pending = list(reversed(cases))
        busy = {}   # worker index -> (case, start time)
        last_report = time.monotonic()
        while pending or busy:
            for i, proc in enumerate(self.procs):
                if i not in busy and pending:
                    case = pending.pop()
                    proc.stdin.write(json.dumps(case) + "\n")
                    proc.stdin.flush()
                    busy[i] = (case, time.monotonic())
            fds = {self.procs[i].stdout.fileno(): i for i in busy}
            ready, _, _ = select.select(list(fds), [], [], 0.5)
            for fd in ready:
                i = fds[fd]
                case, start = busy.pop(i)
                line = self.procs[i].stdout.readline()
                if line:
                    stats.add(case, json.loads(line))
                else:   # the worker died on this case
                    code = self.procs[i].wait()
                    stats.crash(case, code)
                    self.procs[i] = self._spawn()
            now = time.monotonic()
            for i, (case, start) in list(busy.items()):
                if now - start > self.timeout:
                    self.procs[i].kill()
                    self.procs[i].wait()
                    stats.hang(case)
                    busy.pop(i)
                    self.procs[i] = self._spawn()
            if report is not None and now - last_report > 30:
                report(stats)
                last_report = now
        return stats


class Stats:
    def __init__(self):
        self.cases = {}
        self.crashes = []
        self.hangs = []
        self.slowest = (0.0, None)
        self.worst_ratio = (0.0, None)
        self.worst_ratio_4k = (0.0, None)   # among files of at least 4 KiB (no fixed overheads)
        self.max_peak = 0
        self.peak_over_4x = []
        self.outcomes = {}
        self.harness_errors = []

    def add(self, case, result):
        kind = case["kind"]
        self.cases[kind] = self.cases.get(kind, 0) + 1
        if "harness_error" in result:
            self.harness_errors.append((result["harness_error"], case))
            return
        if result["seconds"] > self.slowest[0]:
            self.slowest = (result["seconds"], case)
        if "peak" in result:
            size = max(result["size"], 1)
            ratio = result["peak"] / size
            if ratio > self.worst_ratio[0]:
                self.worst_ratio = (ratio, dict(case, size=result["size"], peak=result["peak"]))
            if size >= 4096 and ratio > self.worst_ratio_4k[0]:
                self.worst_ratio_4k = (ratio, dict(case, size=result["size"], peak=result["peak"]))
            self.max_peak = max(self.max_peak, result["peak"])
            if result["peak"] > 4 * size + (1 << 20):
                self.peak_over_4x.append(dict(case, size=result["size"], peak=result["peak"]))
            key = (kind, result["outcome"])
            self.outcomes[key] = self.outcomes.get(key, 0) + 1

    def crash(self, case, code):
        self.cases[case["kind"]] = self.cases.get(case["kind"], 0) + 1
        self.crashes.append((code, case))

    def hang(self, case):
        self.cases[case["kind"]] = self.cases.get(case["kind"], 0) + 1
        self.hangs.append(case)

    def summary(self) -> str:
        lines = [f"cases: {self.cases}",
                 f"crashes: {len(self.crashes)}",
                 f"hangs (over the time limit): {len(self.hangs)}",
                 f"slowest case: {self.slowest[0]:.2f} s ({(self.slowest[1] or {}).get('kind')})",
                 f"largest load allocation / file size: {self.worst_ratio[0]:.1f}x "
                 f"(file {(self.worst_ratio[1] or {}).get('size')} B, peak {(self.worst_ratio[1] or {}).get('peak')} B)",
                 f"  among files of at least 4 KiB: {self.worst_ratio_4k[0]:.2f}x; largest peak of any load: "
                 f"{self.max_peak} B",
                 f"loads whose peak allocation exceeded 4x the file size + 1 MiB: {len(self.peak_over_4x)}",
                 f"harness errors (cases the fuzzer could not build): {len(self.harness_errors)}",
                 "outcomes: " + ", ".join(f"{k[0]}/{k[1]}={v}" for k, v in sorted(self.outcomes.items()))]
        for code, case in self.crashes[:5]:
            lines.append(f"  crash (exit {code}): {json.dumps(case)[:400]}")
        for case in self.hangs[:5]:
            lines.append(f"  hang: {json.dumps(case)[:400]}")
        for error, case in self.harness_errors[:3]:
            lines.append(f"  harness error {error}: {json.dumps(case)[:200]}")
        if self.worst_ratio[1] is not None:
            lines.append(f"  largest allocation: {json.dumps(self.worst_ratio[1])[:300]}")
        return "\n".join(lines)


def build_corpus(directory: str) -> list[str]:
    """Real checkpoints to mutate: several saved here, and legacy ones when torch is installed."""
    import minitorch_nn as torch
    from minitorch_nn import nn

    paths = []
    torch.manual_seed(0)
    objects = [
        nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).state_dict(),
        {"w": torch.arange(12.0).reshape(3, 4), "v": torch.arange(12.0)[2:7], "i": torch.ones(2, dtype=torch.int64),
         "list": [1, 2.5, "x", (3, 4)], "h": torch.zeros(3, dtype=torch.float16)},
        {"p": nn.Parameter(torch.randn(2, 2)), "t": torch.randn(4).t(), "b": torch.tensor([True, False])},
    ]
    for i, obj in enumerate(objects):
        path = os.path.join(directory, f"seed{i}.pt")
        torch.save(obj, path)
        paths.append(path)
    try:
        import torch as real_torch
    except ImportError:
        return paths
    real_torch.manual_seed(0)
    for i, obj in enumerate([{"w": real_torch.randn(3, 4), "v": real_torch.arange(10)[2:6]},
                             real_torch.nn.Linear(4, 3).state_dict()]):
        path = os.path.join(directory, f"legacy{i}.pt")
        real_torch.save(obj, path, _use_new_zipfile_serialization=False)
        paths.append(path)
    return paths


PROFILES = {
    "ci": {"chains": 2000, "checkpoints": 600, "safetensors": 300},
    "long": {"chains": 100_000, "checkpoints": 10_000, "safetensors": 3_000},
}


def main(argv=None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="the long profile")
    parser.add_argument("--chains", type=int)
    parser.add_argument("--checkpoints", type=int)
    parser.add_argument("--safetensors", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    profile = dict(PROFILES["long" if args.long else "ci"])
    for key in profile:
        if getattr(args, key) is not None:
            profile[key] = getattr(args, key)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as directory:
        corpus = build_corpus(directory)
        cases = ([generate_checkpoint(rng, len(corpus)) for _ in range(profile["checkpoints"])]
                 + [generate_safetensors(rng) for _ in range(profile["safetensors"])]
                 + [generate_chain(rng) for _ in range(profile["chains"])])
        print(f"profile {profile}, corpus of {len(corpus)} checkpoints, {args.workers} workers", flush=True)
        start = time.monotonic()
        pool = Pool(args.workers, corpus, timeout=args.timeout)
        try:
            stats = pool.run(cases, report=lambda s: print(f"[{time.monotonic() - start:.0f} s] {s.cases} "
                                                           f"crashes={len(s.crashes)} hangs={len(s.hangs)}", flush=True))
        finally:
            pool.close()
        print(f"done in {time.monotonic() - start:.0f} s")
        print(stats.summary(), flush=True)
    return 1 if stats.crashes or stats.hangs else 0


if __name__ == "__main__":
    sys.exit(main())

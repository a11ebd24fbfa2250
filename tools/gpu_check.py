"""``make gpu-check``: everything worth a GPU's time, in one run, into one report.

Device time is short and starts cold, so this is the one script to run first on a machine with a
GPU. Each part runs in its own process with a time limit; a part that fails, crashes the process
(a CUDA error poisons its context) or runs out of time is recorded in the report, and the next runs:

1. ``bench/gpu.py``'s sections, one process each: bandwidth (elementwise ops against the device's
   own copy bandwidth), float32 matmul GFLOP/s at 1024 and 4096 against the device's peak, and a
   LeNet and a small transformer training step, cuda against the cpu backend; each with its goal;
2. ``tests/cuda`` on the device (``MINITORCH_NN_CUDA=gpu``): every kernel's result compared with
   the cpu backend's, as on the simulator; the failures are listed.

The report goes to ``bench/results/gpu-<UTC time>.json`` and ``.md`` (``gpu-sim-...`` for a
simulator run). Its limits add up to about 8 minutes; ``--budget`` scales them. numba compiles the
kernels with NVVM: the wheels ``make cuda-check`` caches in ``.cache/cuda-check`` when they are
there or pip can fetch them, else the machine's CUDA toolkit. A goal not met is a finding, not a
failure: the exit status is non-zero only when a part did not complete.

    python tools/gpu_check.py [--sim] [--budget SECONDS] [--only bandwidth,matmul,lenet,transformer,tests]

``--sim`` runs it all on numba's CUDA simulator with toy sizes and a few of the tests, to check the
script itself on a machine without a GPU (its figures mean nothing).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, ROOT)

import gpu as bench_gpu  # noqa: E402  (bench/gpu.py: the sections, the peak table, the table format)

# seconds each part may take on a GPU (their sum is the default budget, ~8 minutes)
LIMITS = {"device": 60, "bandwidth": 45, "matmul": 75, "lenet": 60, "transformer": 90, "tests": 150}
# on the simulator: toy sizes, and a few test files (every test there takes minutes)
SIM_TESTS = ["tests/cuda/test_cuda_elementwise.py", "tests/cuda/test_cuda_kernel_signatures.py"]


def use_compiler_libraries() -> str:
    """Point numba at NVVM/NVRTC: the wheels ``make cuda-check`` caches (installed now if pip can reach
    them), else whatever CUDA toolkit the machine has. Returns which, for the report."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cuda_check", os.path.join(ROOT, "tools", "cuda_check.py"))
    cuda_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cuda_check)
    try:
        target, kit = cuda_check.ensure_toolkit()
    except (Exception, SystemExit) as e:  # no network, no numba-cuda...: the machine's own toolkit
        return f"the machine's CUDA toolkit (the pip wheels could not be installed: {e})"
    cuda_check.use_toolkit(target, kit)
    return os.path.relpath(target, ROOT)


def _env(sim: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if sim:
        env["MINITORCH_NN_CUDA"] = "sim"
    else:
        env["MINITORCH_NN_CUDA"] = "gpu"
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env


def _run(cmd, limit, env):
    """(return code or None on timeout, output, seconds), the process group killed on timeout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            code = None
        out.seek(0)
        return code, out.read(), time.perf_counter() - start


DEVICE_PROBE = """
import json, minitorch_nn as mt
info = {"available": mt.cuda.is_available(), "simulator": False}
if info["available"]:
    from minitorch_nn.backends.cuda import _numba
    cuda = _numba.cuda()
    info["simulator"] = _numba.simulator()
    info["name"] = mt.cuda.get_device_name()
    if not info["simulator"]:
        dev = cuda.get_current_device()
        info["compute_capability"] = list(dev.compute_capability)
        try:
            info["memory_gib"] = round(cuda.current_context().get_memory_info()[1] / 2 ** 30, 1)
            info["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
        except Exception as e:  # (details only: the device itself answered)
            info["note"] = repr(e)
import numba, numba_cuda
info["numba"] = numba.__version__
info["numba_cuda"] = numba_cuda.__version__
print("DEVICE=" + json.dumps(info))
"""


def device_section(sim, limit):
    code, out, secs = _run([sys.executable, "-c", DEVICE_PROBE], limit, _env(sim))
    m = re.search(r"^DEVICE=(.*)$", out, re.M)
    info = json.loads(m.group(1)) if m else {}
    ok = code == 0 and info.get("available")
    error = None
    if not ok:
        error = out[-3000:]
        if info and not info.get("available"):
            error = ("no CUDA device: the driver reports none, so nothing was measured "
                     "(`make gpu-check SIM=1` checks the script on the simulator)\n" + error)
    return {"name": "device", "status": "ok" if ok else ("timeout" if code is None else "failed"), "seconds": secs,
            "rows": [], "info": info, "error": error}


def bench_section(name, sim, limit):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        cmd = [sys.executable, os.path.join(ROOT, "bench", "gpu.py"), "--section", name, "--json", path]
        code, out, secs = _run(cmd + (["--tiny"] if sim else []), limit, _env(sim))
        if code is None:
            return {"name": name, "status": "timeout", "seconds": secs, "rows": [],
                    "error": f"no result within {limit} s\n" + out[-3000:]}
        try:
            with open(path) as f:
                (result,) = json.load(f)
        except (OSError, ValueError):  # the process died before writing (a crash, a CUDA error)
            return {"name": name, "status": "failed", "seconds": secs, "rows": [],
                    "error": f"exit status {code}, no result written\n" + out[-3000:]}
        result["seconds"] = secs
        return result
    finally:
        os.unlink(path)


_RESULT = re.compile(r"^(tests/\S+::\S+.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", re.M)


def tests_section(sim, limit):
    paths = SIM_TESTS if sim else ["tests/cuda"]
    cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-rfE", "--tb=line", *paths]
    code, out, secs = _run(cmd, limit, _env(sim))
    counts, failed = {}, []
    for test, outcome in _RESULT.findall(out):
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("FAILED", "ERROR"):
            failed.append(test)
    if code is None:
        status = "timeout"
    elif code == 0:
        status = "ok"
    else:
        status = "failed"
    tail = out[-4000:] if status != "ok" else None
    summary = ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())) or "no test ran"
    return {"name": "tests", "status": status, "seconds": secs, "rows": [], "counts": counts, "failed": failed,
            "error": None if status == "ok" else f"{summary}" + (f" (stopped after {limit} s)" if code is None else "")
            + ("\n" + tail if tail else "")}


def write_report(report, stem):
    os.makedirs(os.path.dirname(stem), exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump(report, f, indent=1)
    info = report["device"]
    lines = [f"# gpu-check {report['started']}", "",
             f"- device: {info.get('name', 'none')}"
             + (f", compute capability {'.'.join(map(str, info['compute_capability']))}" if "compute_capability" in info else "")
             + (f", {info['memory_gib']} GiB" if "memory_gib" in info else "")
             + (f", driver {info['driver']}" if "driver" in info else ""),
             f"- numba {info.get('numba', '?')}, numba-cuda {info.get('numba_cuda', '?')}, Python {platform.python_version()}",
             f"- NVVM/NVRTC: {info.get('compiler_libraries', '?')}",
             f"- mode: {'simulator, toy sizes (the figures mean nothing)' if report['simulator'] else 'GPU'}",
             f"- total: {report['seconds']:.0f} s", "", "## Parts", "", "| part | status | seconds |", "|---|---|---|"]
    for s in report["sections"]:
        lines.append(f"| {s['name']} | {s['status']} | {s['seconds']:.1f} |")
    rows = [r for s in report["sections"] for r in s.get("rows", [])]
    lines += ["", "## Figures and goals", ""] + (bench_gpu.format_table(rows) if rows else ["(none)"])
    tests = next((s for s in report["sections"] if s["name"] == "tests"), None)
    if tests is not None:
        counts = ", ".join(f"{v} {k.lower()}" for k, v in sorted(tests.get("counts", {}).items())) or "none ran"
        lines += ["", "## tests/cuda on the device", "", f"{counts}; {tests['status']}"]
        lines += [f"- {t}" for t in tests.get("failed", [])]
    problems = [s for s in report["sections"] if s["status"] != "ok"]
    if problems:
        lines += ["", "## What went wrong", ""]
        for s in problems:
            lines += [f"### {s['name']}: {s['status']}", "", "```", (s.get("error") or "").strip()[-3000:], "```", ""]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", action="store_true", help="the simulator, toy sizes, a few tests")
    parser.add_argument("--budget", type=float, default=sum(LIMITS.values()),
                        help=f"seconds for everything (default {sum(LIMITS.values())}); each part's limit scales with it")
    parser.add_argument("--only", help="comma-separated parts: " + ",".join(list(bench_gpu.SECTIONS) + ["tests"]))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"), help="folder for the report")
    args = parser.parse_args(argv)
    scale = args.budget / sum(LIMITS.values())
    limits = {k: v * scale * (4 if args.sim else 1) for k, v in LIMITS.items()}  # the simulator is slow
    parts = args.only.split(",") if args.only else list(bench_gpu.SECTIONS) + ["tests"]
    started = datetime.datetime.now(datetime.UTC)
    start = time.perf_counter()

    print(f"gpu-check: {'simulator' if args.sim else 'GPU'}; parts: {', '.join(parts)}", flush=True)
    toolkit = "none (the simulator)" if args.sim else use_compiler_libraries()
    device = device_section(args.sim, limits["device"])
    info = device["info"]
    info["compiler_libraries"] = toolkit
    print(f"  device: {info.get('name', 'none')} ({device['status']}, {device['seconds']:.0f} s)", flush=True)
    sections = [device]
    if device["status"] == "ok":
        for name in parts:
            if name == "tests":
                s = tests_section(args.sim, limits["tests"])
            else:
                s = bench_section(name, args.sim, limits[name])
            sections.append(s)
            print(f"  {name}: {s['status']} ({s['seconds']:.0f} s)", flush=True)

    stamp = started.strftime("%Y%m%d-%H%M%S")
    stem = os.path.join(args.out, f"gpu-{'sim-' if args.sim else ''}{stamp}")
    report = {"started": started.isoformat(timespec="seconds"), "simulator": bool(info.get("simulator", args.sim)),
              "device": info, "seconds": time.perf_counter() - start, "sections": sections,
              "goals": [r for s in sections for r in s.get("rows", []) if r.get("goal")]}
    write_report(report, stem)
    print(f"gpu-check: report in {os.path.relpath(stem, ROOT)}.md and .json ({report['seconds']:.0f} s)")
    print(open(stem + ".md").read())
    failed = [s["name"] for s in sections if s["status"] != "ok"]
    if failed:
        print(f"gpu-check: these parts did not complete: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

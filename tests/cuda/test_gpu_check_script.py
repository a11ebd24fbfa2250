"""``tools/gpu_check.py`` keeps going when a part fails, crashes or runs out of time, and says so.

(The whole script runs on the simulator with ``make gpu-check SIM=1``; these tests check its
robustness with stand-in parts that fail on purpose, in a second or two.)
"""

import importlib.util
import json
import os
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def gpu_check(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    return _load("gpu_check", "tools/gpu_check.py")


@pytest.mark.parametrize("name, peak", [
    ("NVIDIA H100 80GB HBM3", 67.0), ("NVIDIA H100 PCIe", 51.0), ("NVIDIA H100 NVL", 60.0),
    ("NVIDIA H200", 67.0), ("NVIDIA H200 NVL", 60.0), ("NVIDIA A100-SXM4-80GB", 19.5),
    ("NVIDIA A100 80GB PCIe", 19.5), ("Tesla T4", None), ("numba CUDA simulator", None),
])
def test_the_float32_peak_comes_from_the_device_name(name, peak):
    bench = _load("bench_gpu", "bench/gpu.py")
    assert bench.peak_f32_tflops(name) == peak


def _fake_bench(tmp_path, body):
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "gpu.py").write_text(body)
    return str(tmp_path)


def test_a_part_that_crashes_is_reported_as_failed(gpu_check, monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_check, "ROOT", _fake_bench(tmp_path, "import os\nprint('CUDA error: an illegal memory access')\nos._exit(3)\n"))
    result = gpu_check.bench_section("matmul", sim=True, limit=60)
    assert result["status"] == "failed"
    assert "exit status 3, no result written" in result["error"]
    assert "illegal memory access" in result["error"]


def test_a_part_that_runs_too_long_is_stopped_and_reported(gpu_check, monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_check, "ROOT", _fake_bench(tmp_path, "import time\nprint('started', flush=True)\ntime.sleep(60)\n"))
    result = gpu_check.bench_section("lenet", sim=True, limit=1)
    assert result["status"] == "timeout"
    assert result["seconds"] < 30
    assert "no result within 1 s" in result["error"] and "started" in result["error"]


def test_a_part_that_completes_gives_its_rows(gpu_check, monkeypatch, tmp_path):
    body = ("import json, sys\npath = sys.argv[sys.argv.index('--json') + 1]\n"
            "json.dump([{'name': 'matmul', 'status': 'ok', 'seconds': 0, 'error': None, 'rows': [{'x': 1}]}], open(path, 'w'))\n")
    monkeypatch.setattr(gpu_check, "ROOT", _fake_bench(tmp_path, body))
    result = gpu_check.bench_section("matmul", sim=True, limit=60)
    assert result["status"] == "ok" and result["rows"] == [{"x": 1}]


def test_the_run_goes_on_after_a_failed_part_and_reports_everything(gpu_check, monkeypatch, tmp_path):
    bench = gpu_check.bench_gpu
    good_row = bench.row("matmul", "float32 matmul 16x16", 1.0, "GFLOP/s", goal=">= 25% of f32 peak", met=False)
    ran = []

    def fake_bench_section(name, sim, limit):
        ran.append(name)
        if name == "bandwidth":
            return {"name": name, "status": "failed", "seconds": 0.1, "rows": [], "error": "RuntimeError: boom"}
        return {"name": name, "status": "ok", "seconds": 0.1, "rows": [good_row] if name == "matmul" else [], "error": None}

    monkeypatch.setattr(gpu_check, "device_section", lambda sim, limit: {
        "name": "device", "status": "ok", "seconds": 0.1, "rows": [], "error": None,
        "info": {"available": True, "simulator": True, "name": "numba CUDA simulator"}})
    monkeypatch.setattr(gpu_check, "bench_section", fake_bench_section)
    monkeypatch.setattr(gpu_check, "tests_section", lambda sim, limit: {
        "name": "tests", "status": "failed", "seconds": 0.1, "rows": [], "counts": {"PASSED": 3, "FAILED": 1},
        "failed": ["tests/cuda/test_x.py::test_y"], "error": "1 failed, 3 passed"})
    code = gpu_check.main(["--sim", "--out", str(tmp_path)])
    assert code == 1
    assert ran == list(bench.SECTIONS)  # every part after the failed one still ran
    (md,) = tmp_path.glob("gpu-sim-*.md")
    (js,) = tmp_path.glob("gpu-sim-*.json")
    report = json.loads(js.read_text())
    assert [s["name"] for s in report["sections"]] == ["device", *bench.SECTIONS, "tests"]
    assert report["goals"] == [good_row]
    text = md.read_text()
    assert "| bandwidth | failed |" in text and "RuntimeError: boom" in text
    assert "tests/cuda/test_x.py::test_y" in text
    assert "| matmul | float32 matmul 16x16 | 1 GFLOP/s |" in text and "**no**" in text


def test_the_tests_part_counts_outcomes_from_pytests_verbose_lines(gpu_check, monkeypatch):
    out = ("tests/cuda/test_a.py::test_one PASSED [ 50%]\n"
           "tests/cuda/test_a.py::test_two[f4] FAILED [100%]\n"
           "tests/cuda/test_b.py::test_three ERROR\n")
    monkeypatch.setattr(gpu_check, "_run", lambda cmd, limit, env: (None, out, 5.0))
    result = gpu_check.tests_section(sim=True, limit=5)
    assert result["status"] == "timeout"
    assert result["counts"] == {"PASSED": 1, "FAILED": 1, "ERROR": 1}
    assert result["failed"] == ["tests/cuda/test_a.py::test_two[f4]", "tests/cuda/test_b.py::test_three"]
    assert "stopped after 5 s" in result["error"]


def test_the_tests_part_runs_the_suite_on_the_device_not_the_simulator(gpu_check, monkeypatch):
    seen = {}

    def fake_run(cmd, limit, env):
        seen.update(cmd=cmd, env=env)
        return 0, "tests/cuda/test_a.py::test_one PASSED\n", 1.0

    monkeypatch.setattr(gpu_check, "_run", fake_run)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert gpu_check.tests_section(sim=False, limit=100)["status"] == "ok"
    assert seen["env"]["MINITORCH_NN_CUDA"] == "gpu" and "NUMBA_ENABLE_CUDASIM" not in seen["env"]
    assert "tests/cuda" in seen["cmd"] and sys.executable == seen["cmd"][0]

"""Fixtures and the grading recorder for the course tests (see minitorch_nn/course/grade.py).

* ``mt``: the implementation under test, imported by name at test time: the student's copy when
  ``grade --impl`` put it first on ``sys.path``. Tests use this fixture rather than a top-level
  import, so an import error in a student's file fails that task's tests instead of collection.
* ``ref``: calls a *probe* (a module-level function ``probe(torch_like, *args)`` returning
  plain data) on the reference implementation, in a separate Python process, so the student's
  and the reference's packages never mix. Differential tests compare ``probe(mt, ...)`` with
  ``ref(probe, ...)``.
* ``assert_close``: the grader's own copy of ``minitorch_nn.testing.assert_close``, loaded from
  the reference by file path (so a change in a student's copy cannot weaken the check).
* ``_course_strategies``: the reference's ``minitorch_nn/testing/strategies.py``, for hidden tests.
* ``--task ID``: run only that task's tests (students: ``pytest course/tests --task views-transpose``).

Every test outcome goes into the JSON report named by ``MINITORCH_COURSE_REPORT``: a failure in
setup (a fixture error) or a skip counts as a failed test of its task.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

# the time limit of each test (``grade`` sets it from ``[grading] test_timeout``)
TEST_TIMEOUT = float(os.environ.get("MINITORCH_COURSE_TEST_TIMEOUT", "60"))

COURSE_TESTS = Path(__file__).resolve().parent
REFERENCE = Path(os.environ.get("MINITORCH_COURSE_REFERENCE", COURSE_TESTS.parents[1]))

try:
    from hypothesis import Phase, settings

    # Repeatable grading: the same examples every run, no example database, no deadlines, and one
    # failure per test (no exception groups in the student's output).
    settings.register_profile("grading", derandomize=True, database=None, deadline=None,
                              report_multiple_bugs=False, max_examples=20,
                              phases=[p for p in Phase if p.name != "explain"])
    settings.register_profile("quick", parent=settings.get_profile("grading"), max_examples=4,
                              phases=[Phase.explicit, Phase.generate])  # harness tests
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "grading"))
except ImportError:  # pragma: no cover
    pass


def _load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The grader's own copy of the hypothesis strategies, for hidden tests: `import _course_strategies`
# gets the reference's file, whatever a student changed in minitorch_nn/testing of their copy.
if (REFERENCE / "minitorch_nn" / "testing" / "strategies.py").exists():
    _load_by_path("_course_strategies", REFERENCE / "minitorch_nn" / "testing" / "strategies.py")


def pytest_addoption(parser):
    parser.addoption("--task", action="append", default=[], help="run only the tests of this task id")


def pytest_configure(config):
    config._course_records = {}
    config._course_collect_errors = []


def _task_of(item):
    mark = item.get_closest_marker("task")
    return mark.args[0] if mark and mark.args else None


def pytest_collection_modifyitems(config, items):
    wanted = set(config.getoption("--task")) | {t for t in os.environ.get("MINITORCH_COURSE_TASKS", "").split(",") if t}
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        (keep if _task_of(item) in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class TestTimeout(BaseException):
    """Raised in a test that runs past its time limit. A BaseException, so that neither the test's
    code nor hypothesis (which would retry the example) can catch it: the test fails at once."""


def _on_alarm(signum, frame):
    raise TestTimeout(f"this test ran for more than {TEST_TIMEOUT:g} s (an endless loop?) and was stopped")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    # SIGALRM interrupts Python code, endless loops included; the grader's overall time limit
    # catches anything stuck inside C code.
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TEST_TIMEOUT)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    rec = item.config._course_records.setdefault(item.nodeid, {
        "name": item.nodeid.split("::", 1)[-1],
        "file": Path(str(item.fspath)).name,
        "task": _task_of(item),
        "hidden": "hidden" in Path(str(item.fspath)).parts,
        "status": "passed",
        "output": "",
    })
    if rep.failed or (rep.skipped and rep.when != "teardown"):
        rec["status"] = "failed"
        where = {"setup": "in a fixture (setup)", "call": "", "teardown": "in teardown"}[rep.when]
        if call.excinfo is not None and not rep.skipped:
            text = call.excinfo.exconly()
            crash = getattr(rep.longrepr, "reprcrash", None)
            loc = f"\n  at {Path(crash.path).name}:{crash.lineno}" if crash else ""
            rec["output"] += f"{'Error ' + where + ': ' if where else ''}{text[:3000]}{loc}\n"
            notes = [s for s in rep.longreprtext.splitlines() if s.startswith(("Falsifying example", "E   "))]
            if notes and "Falsifying" in "".join(notes):
                rec["output"] += "\n".join(n for n in notes if n.startswith("Falsifying"))[:1000] + "\n"
        else:
            rec["output"] += f"skipped: {rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else rep.longreprtext}\n"
    if rep.when == "teardown":
        _write_report(item.config)
    return rep


def pytest_collectreport(report):
    if report.failed:
        pytest_collectreport.errors.append({"path": str(report.nodeid), "output": report.longreprtext[-3000:]})


pytest_collectreport.errors = []


def _write_report(config):
    """Write the outcomes so far (after every test: a run stopped by the grader's time limit
    still counts what finished)."""
    path = os.environ.get("MINITORCH_COURSE_REPORT")
    if path:
        data = {"tests": list(config._course_records.values()), "collect_errors": pytest_collectreport.errors}
        tmp = Path(path + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)


def pytest_sessionfinish(session):
    _write_report(session.config)


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def mt():
    """The implementation under test (``import minitorch_nn``)."""
    module = importlib.import_module("minitorch_nn")
    tree = os.environ.get("MINITORCH_COURSE_TREE")
    if tree and Path(tree).resolve() not in Path(module.__file__).resolve().parents:
        raise RuntimeError(f"the grader meant to test the package in {tree}, but Python imported {module.__file__}")
    return module


@pytest.fixture(scope="session")
def assert_close():
    """The reference's ``assert_close`` (PyTorch's tolerances and messages)."""
    return _load_by_path("_course_comparison", REFERENCE / "minitorch_nn" / "testing" / "_comparison.py").assert_close


_WORKER = r"""
import importlib.util, pickle, struct, sys, traceback
sys.path.insert(0, sys.argv[1])
import minitorch_nn
modules = {}
def read(n):
    data = b""
    while len(data) < n:
        chunk = sys.stdin.buffer.read(n - len(data))
        if not chunk:
            raise SystemExit(0)
        data += chunk
    return data
while True:
    path, name, args = pickle.loads(read(struct.unpack("<Q", read(8))[0]))
    try:
        if path not in modules:
            spec = importlib.util.spec_from_file_location(f"_probe{len(modules)}", path)
            modules[path] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(modules[path])
        reply = ("ok", getattr(modules[path], name)(minitorch_nn, *args))
    except Exception as err:
        reply = ("error", f"{type(err).__name__}: {err}")
    out = pickle.dumps(reply)
    sys.stdout.buffer.write(struct.pack("<Q", len(out)) + out)
    sys.stdout.buffer.flush()
"""


class Reference:
    """Runs probes on the reference implementation in a worker process."""

    def __init__(self, root: Path):
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(root)], cwd=root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __call__(self, probe, *args):
        path = sys.modules[probe.__module__].__file__
        data = pickle.dumps((path, probe.__name__, args))
        self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
        self.proc.stdin.flush()
        size = self.proc.stdout.read(8)
        if len(size) < 8:
            raise RuntimeError("the reference worker stopped")
        status, value = pickle.loads(self.proc.stdout.read(struct.unpack("<Q", size)[0]))
        if status == "error":
            raise RuntimeError(f"the reference implementation raised {value}")
        return value

    def close(self):
        self.proc.stdin.close()
        self.proc.kill()  # it may still be importing; nothing it does now matters
        self.proc.wait(timeout=10)


@pytest.fixture(scope="session")
def ref():
    """``ref(probe, *args)``: ``probe(reference_minitorch_nn, *args)``, run in the worker."""
    worker = Reference(REFERENCE)
    yield worker
    worker.close()

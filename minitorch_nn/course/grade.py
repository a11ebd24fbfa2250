"""``python -m minitorch_nn.course grade [--impl PATH] [--results results.json]``: run the
graded tests against an implementation and score them per task.

The tests are this course's (``course/tests/public`` and, when present, ``course/tests/hidden``
of the repository the command runs from: the instructor's). They run in a fresh ``pytest``
process whose ``import minitorch_nn`` finds the implementation at ``--impl`` (a student copy,
or the reference itself); ``course/tests/conftest.py`` records every test's outcome. A test
that fails, errors in a fixture or is skipped scores 0; a task whose tests could not even be
collected gets one failed entry worth all its points, so points never vanish.

A task's points are split evenly over its tests. The command prints one row per task and
writes Gradescope's ``results.json`` (tests with name, score, max_score, status, output,
visibility and tags; the total score). Hidden tests get the ``[grading] hidden_visibility`` of
``course/tasks.toml`` (default ``after_due_date``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minitorch_nn.course.tasks import assigned_tasks, load_course

REPORT_ENV = "MINITORCH_COURSE_REPORT"
TASKS_ENV = "MINITORCH_COURSE_TASKS"
REFERENCE_ENV = "MINITORCH_COURSE_REFERENCE"


def run_tests(root: Path, impl: Path, task_ids, *, hidden=True, timeout=600, verbose=False) -> dict:
    """Run the graded tests in a subprocess; returns the conftest's raw report."""
    tests = root / "course" / "tests"
    paths = [str(tests / "public")] + ([str(tests / "hidden")] if hidden and (tests / "hidden").is_dir() else [])
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(impl)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env[REPORT_ENV] = str(report)
        env[TASKS_ENV] = ",".join(task_ids)
        env[REFERENCE_ENV] = str(root)
        env.setdefault("HYPOTHESIS_PROFILE", "grading")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", "--continue-on-collection-errors",
               "--rootdir", str(tests), "-c", str(tests / "pytest.ini"), *paths]
        # cwd=impl: `python -m` puts the working directory first on sys.path
        proc = subprocess.run(cmd, cwd=impl, env=env, capture_output=True, text=True, timeout=timeout)
        if verbose:
            print(proc.stdout[-20000:], proc.stderr[-5000:], sep="\n")
        if not report.exists():
            raise SystemExit(f"the graded tests did not run (pytest exit code {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        data = json.loads(report.read_text())
    data["pytest_output"] = proc.stdout
    return data


def score(course, tasks, report) -> tuple[list[dict], list[dict]]:
    """Gradescope test entries and per-task rows from a raw report."""
    by_task: dict[str, list[dict]] = {t.id: [] for t in tasks}
    for rec in report["tests"]:
        if rec["task"] in by_task:
            by_task[rec["task"]].append(rec)
    entries, rows = [], []
    for task in tasks:
        recs = by_task[task.id]
        if not recs:  # collection failed (or the task has no tests): count it, don't drop it
            errors = [e for e in report.get("collect_errors", []) if _mentions(e["path"], task)]
            detail = "\n".join(e["output"] for e in errors) or "no test of this task ran"
            recs = [{"name": f"{task.id} (collection)", "status": "failed", "hidden": False,
                     "output": f"The tests of this task could not run.\n{detail}"}]
        each = task.points / len(recs)
        passed = sum(r["status"] == "passed" for r in recs)
        for r in recs:
            ok = r["status"] == "passed"
            output = "" if ok else (
                f"Task {task.id}: {task.description}\nTest: {r['name']}\n\n{r['output'].strip()}\n\n"
                f"Read the tutorial {task.tutorial} and the function in {task.source}."
            )
            entries.append({
                "name": f"[{task.id}] {r['name']}",
                "score": round(each if ok else 0.0, 4),
                "max_score": round(each, 4),
                "status": "passed" if ok else "failed",
                "output": output,
                "tags": [task.id],
                "visibility": course.hidden_visibility if r.get("hidden") else "visible",
            })
        rows.append({"task": task.id, "tests": len(recs), "passed": passed, "failed": len(recs) - passed,
                     "points": round(task.points * passed / len(recs), 2), "max_points": task.points,
                     "tutorial": task.tutorial})
    return entries, rows


def _mentions(path, task):
    return any(path.endswith(Path(t).name) for t in task.tests)


def format_table(rows) -> str:
    """The per-task table a student reads first."""
    w = max([len("task")] + [len(r["task"]) for r in rows])
    lines = [f"{'task':<{w}}  {'passed':>6}  {'failed':>6}  {'points':>11}  tutorial"]
    for r in rows:
        pts = f"{r['points']:g}/{r['max_points']:g}"
        lines.append(f"{r['task']:<{w}}  {r['passed']:>6}  {r['failed']:>6}  {pts:>11}  {r['tutorial']}")
    total = sum(r["points"] for r in rows)
    most = sum(r["max_points"] for r in rows)
    lines.append(f"{'total':<{w}}  {'':>6}  {'':>6}  {f'{total:g}/{most:g}':>11}")
    return "\n".join(lines)


def first_failures(entries, limit=5) -> str:
    """The first failures, shortened: which task, which test, what differed."""
    out = []
    for e in [e for e in entries if e["status"] == "failed" and e["visibility"] == "visible"][:limit]:
        text = e["output"].strip().splitlines()
        out.append("\n".join("  " + line for line in text[:14]))
    return "\n\n".join(out)


def grade(root, impl=None, results=None, task_ids=None, *, hidden=True, verbose=False) -> dict:
    """Grade ``impl`` (default: ``root`` itself) with ``root``'s course tests; returns the
    results dict (also written to ``results`` when given)."""
    root = Path(root).resolve()
    impl = Path(impl).resolve() if impl else root
    course = load_course(root)
    tasks = course.select(task_ids or assigned_tasks(impl))
    start = time.time()
    report = run_tests(root, impl, [t.id for t in tasks], hidden=hidden, verbose=verbose)
    entries, rows = score(course, tasks, report)
    table = format_table(rows)
    result = {
        "score": round(sum(r["points"] for r in rows), 4),
        "execution_time": round(time.time() - start, 2),
        "output": table,
        "output_format": "text",
        "tests": entries,
    }
    if results:
        Path(results).parent.mkdir(parents=True, exist_ok=True)
        Path(results).write_text(json.dumps(result, indent=2))
    result["_rows"] = rows
    return result

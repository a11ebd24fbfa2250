"""``python -m minitorch_nn.course grade --submission DIR --results FILE``: score a submission.

Grading happens on the instructor's side only. Everything that decides a score comes from the
instructor's repository (``root``): the task list and points (``course/tasks.toml``), the assignment,
the tests (``course/tests/public`` and ``hidden``), their visibility, and every line of code except
the student's own. The submission contributes exactly one thing: the bodies of the solution blocks
(``# BEGIN SOLUTION <task>`` ... ``# END SOLUTION``) of the tasks assigned to the student.

Each assigned task is graded on its own:

1. its blocks are read from the submission's copy of the task's source file(s); a block that is
   missing, duplicated or does not parse scores 0 for that task, with a message saying which;
2. they are spliced into a fresh copy of the reference package, in place of the reference's blocks
   of that task and nothing else;
3. that task's tests run in a subprocess on that copy, each under a time limit.

So a stub, a syntax error or an infinite loop costs only the task it is in; a task that calls
another task's code is graded against the reference of the other; edits outside the blocks, extra
or edited test files and an edited task list in the submission are never read.

Points: a task's ``points`` are split between its public tests (``points - hidden_points``, evenly)
and its hidden tests (``hidden_points``, evenly), so the visible maximum scores say nothing about how
many hidden tests there are. A test file that could not be collected counts as one failed test of
its task, so points never vanish.

What a student sees (Gradescope's ``results.json``): ``output`` (the per-task table over the
visible tests only), the visible tests with their output, and, once released, the hidden ones.
The pytest output and anything the grader prints go to stdout, which is hidden from students
(``stdout_visibility``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minitorch_nn.course.markers import MarkerError, find_blocks, starter_alternative
from minitorch_nn.course.tasks import Course, Task, load_course

REPORT_ENV = "MINITORCH_COURSE_REPORT"
TASKS_ENV = "MINITORCH_COURSE_TASKS"
REFERENCE_ENV = "MINITORCH_COURSE_REFERENCE"
TREE_ENV = "MINITORCH_COURSE_TREE"
TIMEOUT_ENV = "MINITORCH_COURSE_TEST_TIMEOUT"
PACKAGE = "minitorch_nn"


class SpliceError(Exception):
    """The submission's blocks for a task could not be used (missing, duplicated, unparsable)."""


# -- taking the student's blocks -----------------------------------------------------------------

def _block_bodies(text: str, path: str, task_id: str) -> list[list[str]]:
    lines = text.splitlines(keepends=True)
    return [lines[b.begin + 1:b.end] for b in find_blocks(text, path) if b.task == task_id]


def splice(reference_text: str, submission_text: str | None, task_id: str, path: str) -> str:
    """The reference file with its blocks of ``task_id`` holding the submission's bodies instead.

    A block with a ``# STARTER`` section belongs to a compiled or numpy twin of the task's code:
    the student's copy holds only the twin's stand-in there, and the reference's twin is kept.

    Raises :class:`SpliceError` when the submission has no such file, a different number of blocks
    for the task than the reference, malformed markers, or when the spliced file does not parse."""
    if submission_text is None:
        raise SpliceError(f"{path} is missing from the submission")
    try:
        theirs = _block_bodies(submission_text, path, task_id)
    except MarkerError as err:
        raise SpliceError(f"the solution markers in {path} are malformed: {err}") from None
    ours = [b for b in find_blocks(reference_text, path) if b.task == task_id]
    if len(theirs) != len(ours):
        found = "no" if not theirs else str(len(theirs))
        raise SpliceError(
            f"{path} has {found} '# BEGIN SOLUTION {task_id}' block(s) where {len(ours)} are expected: "
            "keep the marker lines of the starter as they are and write your code between them")
    lines = reference_text.splitlines(keepends=True)
    for block, body in zip(reversed(ours), reversed(theirs)):
        if starter_alternative(lines[block.begin + 1:block.end]) is not None:
            continue   # a twin's block (it has a '# STARTER' section): the reference's code stays
        if body and not body[-1].endswith("\n"):
            body = body[:-1] + [body[-1] + "\n"]
        lines[block.begin + 1:block.end] = body
    text = "".join(lines)
    try:
        compile(text, path, "exec")
    except SyntaxError as err:
        raise SpliceError(f"{path} does not parse with your block of {task_id}: "
                          f"{err.msg} (line {err.lineno})") from None
    return text


def spliced_sources(root: Path, submission: Path, task: Task) -> dict[str, str]:
    """``{relative path: text}`` of the task's source files with the submission's blocks in them."""
    out = {}
    for rel in task.sources:
        if not rel.startswith(PACKAGE + "/"):
            raise SystemExit(f"task {task.id}: source {rel} is outside the {PACKAGE} package")
        sub = submission / rel
        try:
            sub_text = sub.read_text(encoding="utf-8") if sub.is_file() else None
        except (UnicodeDecodeError, OSError) as err:
            raise SpliceError(f"{rel} could not be read: {err}") from None
        out[rel] = splice((root / rel).read_text(encoding="utf-8"), sub_text, task.id, rel)
    return out


# -- running one task ----------------------------------------------------------------------------

def make_tree(root: Path, dest: Path, files: dict[str, str]) -> Path:
    """A copy of the reference package under ``dest``, with ``files`` written over it."""
    shutil.copytree(root / PACKAGE, dest / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, text in files.items():
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def run_tests(root: Path, tree: Path, task_ids, test_files, *, timeout: float = 60.0,
              total_timeout: float = 600.0, verbose=False) -> dict:
    """Run ``test_files`` (paths under ``root/course/tests``) on the package in ``tree``, in a
    subprocess; returns the conftest's raw report (``tests``, ``collect_errors``) plus the output."""
    tests = root / "course" / "tests"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = str(tree)
        env[REPORT_ENV] = str(report)
        env[TASKS_ENV] = ",".join(task_ids)
        env[REFERENCE_ENV] = str(root)
        env[TREE_ENV] = str(tree)
        env[TIMEOUT_ENV] = str(timeout)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.setdefault("HYPOTHESIS_PROFILE", "grading")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short",
               "--continue-on-collection-errors", "--rootdir", str(tests), "-c", str(tests / "pytest.ini")]
        cmd += [str(tests / t) for t in test_files]
        try:
            # cwd=tree: `python -m` puts the working directory first on sys.path
            proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=total_timeout)
            stdout, stderr, timed_out = proc.stdout, proc.stderr, False
        except subprocess.TimeoutExpired as err:
            stdout = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
            stderr, timed_out = "", True
        if verbose:
            print(stdout[-20000:], stderr[-5000:], sep="\n")
        data = json.loads(report.read_text()) if report.exists() else {"tests": [], "collect_errors": []}
    data["pytest_output"] = stdout + stderr
    data["timed_out"] = timed_out
    return data


@dataclass
class TaskResult:
    task: Task
    entries: list[dict]
    message: str = ""


def _entry(task: Task, name: str, ok: bool, each: float, output: str, visibility: str) -> dict:
    return {"name": f"[{task.id}] {name}", "score": each if ok else 0.0, "max_score": each,
            "status": "passed" if ok else "failed", "output": output, "tags": [task.id], "visibility": visibility}


def _failure_text(task: Task, test_name: str, detail: str) -> str:
    return (f"Task {task.id}: {task.description}\nTest: {test_name}\n\n{detail.strip()}\n\n"
            f"Read the tutorial {task.tutorial} and the code in {', '.join(task.sources)}.")


def score_task(course: Course, task: Task, report: dict) -> list[dict]:
    """Gradescope entries for one task from its raw report (public tests first, then hidden)."""
    entries = []
    for hidden, files, points in ((False, task.public_tests, task.public_points),
                                  (True, task.hidden_tests, task.hidden_points)):
        if not files:
            continue
        visibility = course.hidden_visibility if hidden else "visible"
        names = {Path(f).name for f in files}
        recs = [r for r in report["tests"] if r["task"] == task.id and r["file"] in names]
        # a file with no recorded test did not collect (or ran past the time limit)
        for f in files:
            if any(r["file"] == Path(f).name for r in recs):
                continue
            errors = [e["output"] for e in report.get("collect_errors", []) if e["path"].endswith(Path(f).name)]
            if report.get("timed_out") and not errors:
                detail = "The tests did not finish within the time limit."
            else:
                detail = "\n".join(errors) or "no test of this task ran"
            label = f"{Path(f).stem} (could not run)" if not hidden else "hidden tests (could not run)"
            recs.append({"name": label, "status": "failed", "output": f"The tests could not run.\n{detail}"})
        each = points / len(recs)
        for r in recs:
            ok = r["status"] == "passed"
            entries.append(_entry(task, r["name"], ok, each, "" if ok else _failure_text(task, r["name"], r["output"]),
                                  visibility))
    return entries


def grade_task(course: Course, task: Task, submission: Path, workdir: Path, *, test_timeout=None,
               verbose=False) -> TaskResult:
    """Splice the submission's blocks of ``task`` into a reference copy and run its tests."""
    root = course.root
    try:
        files = spliced_sources(root, submission, task)
    except SpliceError as err:
        message = f"Task {task.id} scored 0: {err}"
        entries = []
        for hidden, points in ((False, task.public_points), (True, task.hidden_points)):
            if points or (not hidden and not task.hidden_points):
                entries.append(_entry(task, "solution block" if not hidden else "hidden tests", False, points,
                                      message, course.hidden_visibility if hidden else "visible"))
        return TaskResult(task, entries, message)
    tree = make_tree(root, workdir / task.id, files)
    timeout = test_timeout or course.test_timeout
    report = run_tests(root, tree, [task.id], task.tests, timeout=timeout,
                       total_timeout=max(120.0, 20 * timeout), verbose=verbose)
    return TaskResult(task, score_task(course, task, report))


# -- the table and results.json ------------------------------------------------------------------

def task_rows(entries, tasks, *, visible_only: bool) -> list[dict]:
    rows = []
    for task in tasks:
        mine = [e for e in entries if e["tags"][0] == task.id and (not visible_only or e["visibility"] == "visible")]
        passed = sum(e["status"] == "passed" for e in mine)
        rows.append({"task": task.id, "tests": len(mine), "passed": passed, "failed": len(mine) - passed,
                     "points": round(sum(e["score"] for e in mine), 2),
                     "max_points": round(sum(e["max_score"] for e in mine), 2), "tutorial": task.tutorial})
    return rows


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
    """The first visible failures, shortened: which task, which test, what differed."""
    out = []
    for e in [e for e in entries if e["status"] == "failed" and e["visibility"] == "visible"][:limit]:
        text = e["output"].strip().splitlines()
        out.append("\n".join("  " + line for line in text[:14]))
    return "\n\n".join(out)


def student_output(entries, tasks, course: Course) -> str:
    """The text a student sees before release: visible tests only."""
    text = format_table(task_rows(entries, tasks, visible_only=True))
    if any(e["visibility"] != "visible" for e in entries):
        when = {"hidden": "never shown", "after_due_date": "shown after the due date",
                "after_published": "shown once grades are published"}[course.hidden_visibility]
        text += f"\n\nHidden tests were run as well; their results are {when}."
    failures = first_failures(entries)
    if failures:
        text += "\n\nFirst failures:\n" + failures
    return text


def grade(root, submission=None, results=None, task_ids=None, *, student=None, jobs=None,
          test_timeout=None, verbose=False) -> dict:
    """Grade ``submission`` (default: the reference itself) with ``root``'s course; returns the
    results dict (also written to ``results`` when given). ``test_timeout`` overrides the
    course's time limit per test."""
    root = Path(root).resolve()
    submission = Path(submission).resolve() if submission else root
    course = load_course(root)
    tasks = course.select(task_ids) if task_ids else course.assigned(student)
    jobs = jobs or max(1, min(2, os.cpu_count() or 1))
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="minitorch-grade-") as tmp:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(lambda t: grade_task(course, t, submission, Path(tmp), test_timeout=test_timeout,
                                                             verbose=verbose), tasks))
    entries = [e for outcome in outcomes for e in outcome.entries]
    for i, e in enumerate(entries, 1):
        e["number"] = str(i)
    result = {
        "score": round(sum(e["score"] for e in entries), 4),
        "execution_time": round(time.time() - start, 2),
        "output": student_output(entries, tasks, course),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": entries,
    }
    if results:
        Path(results).parent.mkdir(parents=True, exist_ok=True)
        Path(results).write_text(json.dumps(result, indent=2))
    result["_rows"] = task_rows(entries, tasks, visible_only=False)
    result["_tasks"] = tasks
    return result


def check(copy_root, task_ids=None, *, verbose=False) -> dict:
    """A student's local run: the public tests of ``task_ids`` on their own copy, as it is."""
    from minitorch_nn.course.tasks import assigned_tasks

    copy_root = Path(copy_root).resolve()
    course = load_course(copy_root)
    tasks = course.select(task_ids or assigned_tasks(copy_root))
    files = sorted({f for t in tasks for f in t.public_tests})
    report = run_tests(copy_root, copy_root, [t.id for t in tasks], files, timeout=course.test_timeout,
                       total_timeout=max(300.0, 30 * course.test_timeout), verbose=verbose)
    entries = [e for t in tasks for e in score_task(course, Task(t.id, t.description, t.tutorial, t.public_points,
                                                                  t.sources, t.public_tests), report)]
    return {"entries": entries, "rows": task_rows(entries, tasks, visible_only=True)}

"""The whole course, task by task: the reference scores full points, an untouched student copy
scores nothing, and no file of a student copy holds a stubbed task's answer.

Grading all 24 tasks twice takes a minute or two; it runs the real grader on the real course.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from minitorch_nn.course.grade import grade
from minitorch_nn.course.markers import find_blocks
from minitorch_nn.course.starter import write_starter
from minitorch_nn.course.tasks import load_course

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="the starter copies git-tracked files")
COURSE = load_course(ROOT)


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    copy = tmp_path_factory.mktemp("starter") / "student"
    write_starter(ROOT, copy)
    return copy


def _by_task(result):
    out = {}
    for e in result["tests"]:
        out.setdefault(e["tags"][0], []).append(e)
    return out


def test_the_course_covers_every_tutorial():
    tutorials = {p.stem for p in (ROOT / "tutorials").glob("plot_*.py")}
    covered = {t.tutorial for t in COURSE.tasks.values()}
    assert len(COURSE.tasks) >= 24
    assert tutorials <= covered, f"tutorials without a task: {sorted(tutorials - covered)}"


def test_the_reference_scores_full_points_on_every_task():
    result = grade(ROOT, ROOT)
    for task_id, entries in _by_task(result).items():
        failed = [e["name"] + "\n" + e["output"] for e in entries if e["status"] != "passed"]
        assert not failed, "\n\n".join(failed)
        assert sum(e["score"] for e in entries) == pytest.approx(COURSE.tasks[task_id].points)
    assert result["score"] == pytest.approx(sum(t.points for t in COURSE.tasks.values()))


def test_the_untouched_starter_scores_zero_on_every_task(starter):
    result = grade(ROOT, starter)
    passing = [e["name"] for e in result["tests"] if e["status"] == "passed"]
    assert not passing, f"tests that pass on the stubs (their task's code is not what they test): {passing}"
    assert set(_by_task(result)) == set(COURSE.tasks)
    assert result["score"] == 0


def _significant(lines):
    """The lines of a block that carry its logic, without whitespace (comments and short lines
    such as ``return x`` say nothing about whose code it is)."""
    out = []
    for line in lines:
        code = line.split("#", 1)[0].strip()
        if len(code) >= 12:
            out.append(re.sub(r"\s+", "", code))
    return out


def test_no_starter_file_holds_a_stubbed_answer(starter):
    files = {}
    for path in starter.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".pyx", ".pxi", ".pxd", ".rst", ".md", ".txt", ".toml", ".ipynb", ".c"}:
            files[path.relative_to(starter).as_posix()] = re.sub(r"\s+", "", path.read_text(errors="replace"))
    for task in COURSE.tasks.values():
        for rel in task.sources:
            text = (ROOT / rel).read_text()
            lines = text.splitlines()
            for block in (b for b in find_blocks(text, rel) if b.task == task.id):
                sig = _significant(lines[block.begin + 1:block.end])
                # any three consecutive logic lines of the answer, anywhere in the copy (two lines
                # can be an idiom the project repeats, such as reading a view's geometry)
                windows = ["".join(sig[i:i + 3]) for i in range(len(sig) - 2)] or ["".join(sig)]
                for window in windows:
                    holders = [f for f, body in files.items() if window in body]
                    assert not holders, f"{task.id}: {holders} hold its answer ({window[:80]}...)"

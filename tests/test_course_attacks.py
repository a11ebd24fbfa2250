"""The grader holds up against what a student could try (minitorch_nn/course/grade.py).

Every test starts from one untouched student copy (every task stubbed) and a baseline submission in
which two tasks carry the reference's answer. It then changes the submission the way a student
might -- edits the task list, the tests, code outside the blocks, another task's file -- and checks
that no score moves except that of the task whose block changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from minitorch_nn.course.grade import grade, splice
from minitorch_nn.course.markers import find_blocks
from minitorch_nn.course.starter import write_starter
from minitorch_nn.course.tasks import load_course

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="the starter copies git-tracked files")

SOLVED = ["views-transpose", "swap-tensors"]          # the baseline submission answers these
GRADED = ["views-transpose", "swap-tensors", "lazy-infer"]   # lazy-infer: left as the stub


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    copy = tmp_path_factory.mktemp("starter") / "student"
    write_starter(ROOT, copy)
    return copy


def solve(copy: Path, task_id: str) -> None:
    """Put the reference's answer to ``task_id`` between the copy's markers (what a student who
    solved it would submit)."""
    task = load_course(ROOT).tasks[task_id]
    for rel in task.sources:
        (copy / rel).write_text(splice((copy / rel).read_text(), (ROOT / rel).read_text(), task_id, rel))


@pytest.fixture
def submission(starter, tmp_path):
    copy = tmp_path / "submission"
    shutil.copytree(starter, copy)
    for task_id in SOLVED:
        solve(copy, task_id)
    return copy


def scores(copy: Path, tasks=GRADED, **kw) -> dict[str, float]:
    return totals(grade(ROOT, copy, None, tasks, **kw))


def totals(result) -> dict[str, float]:
    out = {}
    for e in result["tests"]:
        out[e["tags"][0]] = out.get(e["tags"][0], 0.0) + e["score"]
    return {k: round(v, 3) for k, v in out.items()}


@pytest.fixture(scope="module")
def baseline(starter, tmp_path_factory):
    copy = tmp_path_factory.mktemp("baseline") / "submission"
    shutil.copytree(starter, copy)
    for task_id in SOLVED:
        solve(copy, task_id)
    return scores(copy)


def test_baseline_scores_the_solved_tasks_only(baseline):
    course = load_course(ROOT)
    assert baseline == {"views-transpose": course.tasks["views-transpose"].points,
                        "swap-tensors": course.tasks["swap-tensors"].points, "lazy-infer": 0.0}


def test_edited_task_list_in_the_copy_changes_nothing(submission, baseline):
    (submission / "course" / "assignment.toml").write_text('tasks = ["lazy-infer", "module-to", "autograd-toposort"]\n')
    tasks_toml = submission / "course" / "tasks.toml"
    tasks_toml.write_text(tasks_toml.read_text().replace("points = 2", "points = 200"))
    result = grade(ROOT, submission, None, None)   # the instructor's assignment: every task
    assert {e["tags"][0] for e in result["tests"]} == set(load_course(ROOT).tasks)
    assert scores(submission) == baseline
    (submission / "course" / "assignment.toml").unlink()
    assert scores(submission) == baseline


def test_added_or_edited_tests_in_the_copy_change_nothing(submission, baseline):
    public = submission / "course" / "tests" / "public"
    for path in public.glob("test_*.py"):
        path.write_text("import pytest\n\n@pytest.mark.task('lazy-infer')\ndef test_free(mt):\n    assert True\n")
    (public / "test_extra.py").write_text(
        "import pytest\n\n@pytest.mark.task('lazy-infer')\ndef test_more(mt):\n    assert True\n")
    (submission / "course" / "tests" / "conftest.py").write_text("raise SystemExit(0)\n")
    assert scores(submission) == baseline


def test_code_outside_the_blocks_is_ignored(submission, baseline):
    lazy = submission / "minitorch_nn" / "nn" / "modules" / "lazy.py"
    reference = (ROOT / "minitorch_nn" / "nn" / "modules" / "lazy.py").read_text()
    # the reference's answer pasted outside the block, as a helper the stub never calls, and a
    # module-level patch: neither is read by the grader
    (block,) = [b for b in find_blocks(reference) if b.task == "lazy-infer"]
    body = "".join(reference.splitlines(keepends=True)[block.begin + 1:block.end])
    lazy.write_text(lazy.read_text() + "\n\ndef _helper(self, module, args):\n" + body
                    + "\nimport minitorch_nn\nminitorch_nn._answer = 1\n")
    (submission / "minitorch_nn" / "__init__.py").write_text("raise ImportError('broken on purpose')\n")
    assert scores(submission) == baseline


def test_a_syntax_error_costs_only_its_task(submission, baseline):
    # in another task's block...
    engine = submission / "minitorch_nn" / "autograd" / "engine.py"
    engine.write_text(engine.read_text().replace(
        "    # BEGIN SOLUTION autograd-toposort\n", "    # BEGIN SOLUTION autograd-toposort\n    this is not python (\n", 1))
    # ...and outside any block of a graded task's file
    views = submission / "minitorch_nn" / "backends" / "views.py"
    views.write_text("def broken(:\n" + views.read_text())
    result = scores(submission, GRADED + ["autograd-toposort"])
    assert result == {**baseline, "autograd-toposort": 0.0}
    entries = grade(ROOT, submission, None, ["autograd-toposort"])["tests"]
    assert any("does not parse" in e["output"] for e in entries), entries


def test_an_endless_loop_costs_only_its_task(submission, baseline):
    lazy = submission / "minitorch_nn" / "nn" / "modules" / "lazy.py"
    lazy.write_text(lazy.read_text().replace(
        "# BEGIN SOLUTION lazy-infer\n", "# BEGIN SOLUTION lazy-infer\n        while True:\n            pass\n", 1))
    result = grade(ROOT, submission, None, GRADED, test_timeout=3)
    got = totals(result)
    assert got == baseline
    loop = [e for e in result["tests"] if e["tags"][0] == "lazy-infer" and e["visibility"] == "visible"]
    assert loop and all("more than 3 s" in e["output"] for e in loop), loop


def test_a_stubbed_dependency_does_not_cost_the_task_that_calls_it(starter, tmp_path):
    # lazy-infer, parametrize-forward and export-replay build nn.Linear, which calls .t()
    # (views-transpose); with views-transpose left as the stub they still get full points.
    copy = tmp_path / "submission"
    shutil.copytree(starter, copy)
    tasks = ["lazy-infer", "parametrize-forward", "export-replay"]
    for task_id in tasks:
        solve(copy, task_id)
    course = load_course(ROOT)
    assert scores(copy, tasks + ["views-transpose"]) == {
        **{t: course.tasks[t].points for t in tasks}, "views-transpose": 0.0}


@pytest.mark.parametrize("damage", ["missing", "duplicated", "malformed", "file deleted"])
def test_a_broken_block_scores_zero_with_a_clear_message(submission, baseline, damage):
    swap = submission / "minitorch_nn" / "utils" / "_swap.py"
    text = swap.read_text()
    begin, end = "    # BEGIN SOLUTION swap-tensors\n", "    # END SOLUTION\n"
    if damage == "missing":
        text = text.replace(begin, "", 1)
    elif damage == "duplicated":
        text += "\n\ndef again():\n" + begin + "    pass\n" + end
    elif damage == "malformed":
        text = text.replace(end, "", 1)
    if damage == "file deleted":
        swap.unlink()
    else:
        swap.write_text(text)
    result = grade(ROOT, submission, None, GRADED)
    got = totals(result)
    assert got == {**baseline, "swap-tensors": 0.0}
    message = next(e["output"] for e in result["tests"] if e["tags"][0] == "swap-tensors")
    assert "scored 0" in message and "_swap.py" in message


def test_hidden_tests_do_not_leak_into_what_students_see(submission, tmp_path):
    result = grade(ROOT, submission, tmp_path / "results.json", ["views-transpose", "views-strides"])
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["stdout_visibility"] == "hidden"
    assert {"score", "execution_time", "output", "output_format", "tests"} <= set(data)
    for e in data["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output", "tags", "visibility"} <= set(e)
    hidden = [e for e in data["tests"] if e["visibility"] != "visible"]
    visible = [e for e in data["tests"] if e["visibility"] == "visible"]
    assert hidden and visible
    hidden_files = [Path(f).stem for t in ("views-transpose", "views-strides")
                    for f in load_course(ROOT).tasks[t].hidden_tests]
    for e in hidden:
        name = e["name"].split("] ", 1)[1]
        assert name not in data["output"]
    for stem in hidden_files:
        assert stem not in data["output"] and all(stem not in e["output"] for e in visible)
    # the visible maximum of a task is its public share, whatever the number of hidden tests
    course = load_course(ROOT)
    for task_id in ("views-transpose", "views-strides"):
        shown = sum(e["max_score"] for e in visible if e["tags"][0] == task_id)
        assert shown == pytest.approx(course.tasks[task_id].public_points, abs=1e-3)
    assert result["score"] == pytest.approx(sum(e["score"] for e in data["tests"]))

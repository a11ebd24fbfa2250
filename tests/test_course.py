"""End to end: the course harness (minitorch_nn/course, course/) on a real student copy.

Generates a starter copy with two tasks left out, runs the student's `check` in it, grades the
untouched copy (0 points), puts the reference solution back for one task, grades again, and checks
the tables and Gradescope's results.json. The copy is not pip-installed: the extension built here is
copied in (a student's `make check` builds it). The attacks on the grader are in
test_course_attacks.py; the course's full-points/zero-points sweep is in test_course_tasks.py.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minitorch_nn.course.markers import MarkerError, find_blocks, replace_blocks, stub_line
from minitorch_nn.course.tasks import load_course

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["views-transpose", "swap-tensors"]

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="the starter copies git-tracked files")


def _course(*args, cwd=ROOT):
    env = dict(os.environ, HYPOTHESIS_PROFILE="quick")  # few examples: this tests the harness
    proc = subprocess.run([sys.executable, "-m", "minitorch_nn.course", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_markers_replace_with_indented_stub():
    src = "def f(x):\n    '''doc'''\n    # BEGIN SOLUTION t1\n    y = x + 1\n    return y\n    # END SOLUTION\n"
    (block,) = find_blocks(src)
    assert (block.task, block.begin, block.end, block.indent) == ("t1", 2, 5, "    ")
    out, replaced = replace_blocks(src, {"t1": stub_line("", "t1", 'add "one"', "plot_01")})
    assert replaced == ["t1"]
    assert out == "def f(x):\n    '''doc'''\n    # BEGIN SOLUTION t1\n    raise NotImplementedError(\"t1: add \\\"one\\\"; see tutorial plot_01\")\n    # END SOLUTION\n"
    ns = {}
    exec(out, ns)
    with pytest.raises(NotImplementedError, match='t1: add "one"; see tutorial plot_01'):
        ns["f"](1)
    with pytest.raises(MarkerError, match="never closed"):
        find_blocks("# BEGIN SOLUTION a\nx = 1\n")
    with pytest.raises(MarkerError, match="without a BEGIN"):
        find_blocks("x = 1\n# END SOLUTION\n")


def test_every_task_is_marked_and_listed():
    out = _course("markers")
    assert "NO SOLUTION BLOCK" not in out
    course = load_course(ROOT)
    for task in course.tasks.values():
        assert (ROOT / "tutorials" / f"{task.tutorial}.py").exists(), f"{task.id}: no tutorial {task.tutorial}"
        for source in task.sources:
            assert (ROOT / source).exists(), source
        assert task.public_tests and task.hidden_tests, f"{task.id}: needs public and hidden tests"
        for test in task.tests:
            text = (ROOT / "course" / "tests" / test).read_text()
            assert f'@pytest.mark.task("{task.id}")' in text, f"{test} has no test of {task.id}"


def _copy_extension(copy):
    # the built modules: the tensor object and kernels, and the twins under minitorch_nn/_twins/
    for so in ROOT.glob("minitorch_nn/**/*.so"):
        target = copy / so.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(so, target)


def test_starter_check_and_grade_end_to_end(tmp_path):
    from minitorch_nn.course.grade import splice

    copy = tmp_path / "student"
    out = _course("starter", str(copy), "--tasks", *TASKS)
    assert "views-transpose: minitorch_nn/backends/views.py" in out
    # the copy: stubs between kept markers, hidden tests and the project's own suite left out
    views = (copy / "minitorch_nn/backends/views.py").read_text()
    assert ('    # BEGIN SOLUTION views-transpose\n    raise NotImplementedError("views-transpose: return a view '
            'with two dims') in views
    assert "# BEGIN SOLUTION views-strides" in views  # unchosen task: its code stays
    assert not (copy / "course/tests/hidden").exists() and not (copy / "course/gradescope").exists()
    assert not (copy / "tests").exists() and not (copy / "bench").exists()
    assert (copy / "course/tests/public/test_views.py").exists()
    readme = (copy / "README.md").read_text()
    assert "| `views-transpose` |" in readme and "| `swap-tensors` |" in readme and "make check" in readme
    assert "| `module-to` |" not in readme
    _copy_extension(copy)

    # the stub raises its message in the copy
    probe = subprocess.run([sys.executable, "-c", "import minitorch_nn as t; t.zeros(2, 3).transpose(0, 1)"],
                           cwd=copy, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(copy)))
    assert "NotImplementedError: views-transpose: return a view with two dims" in probe.stderr
    assert "see tutorial plot_01_tensor_object" in probe.stderr

    # the student's own check: their public tests, the grader's table
    env = dict(os.environ, HYPOTHESIS_PROFILE="quick", PYTHONPATH=str(copy))
    check = subprocess.run([sys.executable, "-m", "minitorch_nn.course", "check"], cwd=copy, env=env,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    rows = {line.split()[0]: line.split() for line in check.stdout.splitlines()[1:] if line.strip()}
    assert set(rows) >= set(TASKS) and rows["views-transpose"][1] == "0" and rows["swap-tensors"][1] == "0"
    assert "module-to" not in rows, "check runs the student's own tasks"

    # grade the untouched starter: both tasks score 0, with the stub's message in each output
    results = tmp_path / "results.json"
    _course("grade", "--submission", str(copy), "--results", str(results), "--tasks", *TASKS)
    data = json.loads(results.read_text())
    assert {e["tags"][0] for e in data["tests"]} == set(TASKS)
    assert data["score"] == 0
    visible = [e for e in data["tests"] if e["visibility"] == "visible"]
    for entry in visible:
        assert entry["status"] == "failed" and entry["score"] == 0 and entry["max_score"] > 0
        assert entry["tags"][0] + ": " in entry["output"] and "see tutorial plot_0" in entry["output"], entry["output"]
        assert "Read the tutorial" in entry["output"]
    assert [e for e in data["tests"] if e["visibility"] == "after_due_date"], "hidden tests run at grading"
    assert "views-transpose" in data["output"]

    # put the reference solution back for one task (between the markers), grade again
    rel = "minitorch_nn/backends/views.py"
    (copy / rel).write_text(splice((copy / rel).read_text(), (ROOT / rel).read_text(), "views-transpose", rel))
    out = _course("grade", "--submission", str(copy), "--results", str(results), "--tasks", *TASKS)
    data = json.loads(results.read_text())
    by_task = {}
    for e in data["tests"]:
        by_task.setdefault(e["tags"][0], []).append(e)
    assert all(e["status"] == "passed" and e["score"] == e["max_score"] for e in by_task["views-transpose"])
    assert all(e["status"] == "failed" for e in by_task["swap-tensors"])
    course = load_course(ROOT)
    assert data["score"] == pytest.approx(course.tasks["views-transpose"].points)
    assert sum(e["max_score"] for e in data["tests"]) == pytest.approx(sum(course.tasks[t].points for t in TASKS))
    assert "First failures:" in data["output"] and "Test: test_swap" in data["output"]
    assert "What the student sees" in out


def test_fixture_errors_and_collection_errors_count(tmp_path):
    """A test whose fixture errors, and a task whose test file does not import, still lose points."""
    from minitorch_nn.course.grade import grade

    tests = tmp_path / "course" / "tests"
    (tests / "public").mkdir(parents=True)
    (tmp_path / "minitorch_nn").symlink_to(ROOT / "minitorch_nn")
    shutil.copy2(ROOT / "course/tests/conftest.py", tests / "conftest.py")
    shutil.copy2(ROOT / "course/tests/pytest.ini", tests / "pytest.ini")
    (tmp_path / "course" / "tasks.toml").write_text(
        '[[task]]\nid = "a"\ndescription = "task a"\ntutorial = "plot_01_tensor_object"\npoints = 4\n'
        'source = "minitorch_nn/__init__.py"\ntests = ["public/test_a.py"]\n\n'
        '[[task]]\nid = "b"\ndescription = "task b"\ntutorial = "plot_02_swap_tensors"\npoints = 1\n'
        'source = "minitorch_nn/__init__.py"\ntests = ["public/test_b.py"]\n'
    )
    (tests / "public" / "test_a.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef broken(mt):\n    raise ValueError('setup went wrong')\n\n"
        "@pytest.mark.task('a')\ndef test_ok(mt):\n    assert mt.ones(2).sum().item() == 2\n\n"
        "@pytest.mark.task('a')\ndef test_broken(broken):\n    pass\n"
    )
    (tests / "public" / "test_b.py").write_text("import does_not_exist_anywhere\n")
    result = grade(tmp_path, ROOT, tmp_path / "results.json")
    entries = {e["name"]: e for e in json.loads((tmp_path / "results.json").read_text())["tests"]}
    assert entries["[a] test_ok"]["score"] == 2.0
    broken = entries["[a] test_broken"]
    assert broken["score"] == 0 and broken["max_score"] == 2.0
    assert "in a fixture" in broken["output"] and "setup went wrong" in broken["output"]
    collected = entries["[b] test_b (could not run)"]
    assert collected["max_score"] == 1.0 and collected["score"] == 0
    assert "does_not_exist_anywhere" in collected["output"]
    assert result["score"] == 2.0


def test_a_compiled_twins_block_gets_its_starter_alternative():
    src = ("cdef tuple _twin(list a):\n    # BEGIN SOLUTION t1\n    return tuple(a)\n    # STARTER\n"
           "    # return None  # decline: the Python code runs\n    # END SOLUTION\n")
    out, replaced = replace_blocks(src, {"t1": stub_line("", "t1", "d", "plot_01")})
    assert replaced == ["t1"]
    assert out == ("cdef tuple _twin(list a):\n    # BEGIN SOLUTION t1\n"
                   "    return None  # decline: the Python code runs\n    # END SOLUTION\n")
    assert "tuple(a)" not in out and "NotImplementedError" not in out


def test_splicing_keeps_the_references_twin_blocks():
    from minitorch_nn.course.grade import splice

    reference = ("def f(x):\n    # BEGIN SOLUTION t1\n    return x + 1\n    # END SOLUTION\n\n\n"
                 "def f_twin(x):\n    # BEGIN SOLUTION t1\n    return x + 1\n    # STARTER\n"
                 "    # raise RuntimeError('not in a copy')\n    # END SOLUTION\n")
    copy, _ = replace_blocks(reference, {"t1": stub_line("", "t1", "d", "plot_01")})
    assert "raise RuntimeError('not in a copy')" in copy and "NotImplementedError" in copy
    submission = copy.replace('    raise NotImplementedError("t1: d; see tutorial plot_01")\n', "    return x + 2\n")
    spliced = splice(reference, submission, "t1", "f.py")
    ns = {}
    exec(spliced, ns)
    assert ns["f"](1) == 3, "the student's block is used"
    assert ns["f_twin"](1) == 2, "the twin keeps the reference's code, not the copy's stand-in"

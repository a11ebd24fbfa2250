"""``python -m minitorch_nn.course starter OUTDIR [--tasks ID ...]``: write a student copy.

The copy holds the repository's git-tracked files (as they are in the working tree), minus the
``[starter] exclude`` paths of ``course/tasks.toml`` (hidden tests, answer material). In it,
each solution block of a chosen task becomes::

    raise NotImplementedError("views-transpose: <description>; see tutorial <tutorial>")

Blocks of other tasks stay as they are (their code is the working implementation), so the
tests of unchosen tasks pass in the copy. The project's own test suite (``tests/``) and
benchmarks stay out of the copy: students run the course's public tests with ``make check``.
``README.md`` becomes the student README (``course/STUDENT_README.md`` with the task list), and
``course/assignment.toml`` records the chosen tasks for ``check``; grading never reads it (the
assignment is the instructor's, in ``course/tasks.toml``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from minitorch_nn.course.markers import find_blocks, replace_blocks, starter_alternative, stub_line
from minitorch_nn.course.tasks import ASSIGNMENT_FILE, load_course


def tracked_files(root: Path) -> list[str]:
    """Paths git tracks under ``root`` (relative, POSIX style)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise SystemExit(f"cannot list the files of {root} with git ({err}); the starter copies git-tracked files only") from None
    return [p for p in out.decode().split("\0") if p]


def _excluded(path: str, exclude) -> bool:
    return any(path == e.rstrip("/") or path.startswith(e.rstrip("/") + "/") for e in exclude)


def write_starter(root, outdir, task_ids=None) -> dict:
    """Write the student copy of ``root`` into ``outdir`` (new or empty) for ``task_ids``
    (all tasks when None). Returns ``{"files": n, "tasks": {id: [paths]}}``."""
    root, outdir = Path(root).resolve(), Path(outdir).resolve()
    course = load_course(root)
    chosen = course.select(task_ids)
    if outdir.exists() and any(outdir.iterdir()):
        raise SystemExit(f"{outdir} is not empty: choose a new folder for the student copy")
    if outdir == root or root in outdir.parents:
        raise SystemExit("write the student copy outside the repository")
    stubs = {t.id: stub_line("", t.id, t.description, t.tutorial) for t in chosen}
    where: dict[str, list[str]] = {t.id: [] for t in chosen}
    sources = {s for t in course.tasks.values() for s in t.sources}
    count = 0
    for rel in tracked_files(root):
        src = root / rel
        if _excluded(rel, course.exclude + ALWAYS_EXCLUDED) or not src.is_file():
            continue
        dst = outdir / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        twin = rel.startswith("_ext/") and rel.endswith((".pyx", ".pxi", ".pxd"))
        if rel in sources or twin:  # the course's source files, and the compiled twins of their code
            text = src.read_text()
            if twin:
                _check_twin_blocks(text, rel, stubs)
            text, replaced = replace_blocks(text, stubs, rel)
            for task_id in replaced:
                if rel in sources:
                    where[task_id].append(rel)
            dst.write_text(text)
            shutil.copymode(src, dst)
            count += 1
            continue
        shutil.copy2(src, dst)
        count += 1
    missing = [t for t, paths in where.items() if not paths]
    if missing:
        raise SystemExit(f"no solution block found for task(s) {', '.join(missing)}: "
                         "check the '# BEGIN SOLUTION <id>' markers and that their files are tracked by git")
    (outdir / "README.md").write_text(student_readme(root, chosen, where))
    (outdir / ASSIGNMENT_FILE).parent.mkdir(parents=True, exist_ok=True)
    (outdir / ASSIGNMENT_FILE).write_text(
        "# The tasks of this assignment (written by `python -m minitorch_nn.course starter`).\n"
        f"tasks = [{', '.join(repr(t.id).replace(chr(39), chr(34)) for t in chosen)}]\n"
    )
    return {"files": count + 1, "tasks": where}


def _check_twin_blocks(text: str, rel: str, stubs) -> None:
    """A compiled twin's block needs its own ``# STARTER`` alternative (a Cython function cannot
    just raise NotImplementedError)."""
    lines = text.splitlines()
    for block in find_blocks(text, rel):
        if block.task in stubs and starter_alternative(lines[block.begin + 1:block.end]) is None:
            raise SystemExit(f"{rel}:{block.begin + 1}: the compiled twin's block of {block.task} has no "
                             "'# STARTER' section saying how the twin declines in a student copy")


ALWAYS_EXCLUDED = ("tests", "bench", ".ci")  # the project's own suite and tools: not course material


def student_readme(root: Path, chosen, where) -> str:
    """The copy's README.md: the template in ``course/STUDENT_README.md`` with the task table."""
    rows = ["| task | points | where | tutorial | what to write |", "|---|---|---|---|---|"]
    for t in chosen:
        rows.append(f"| `{t.id}` | {t.points:g} | `{', '.join(where[t.id])}` | `tutorials/{t.tutorial}.py` | {t.description} |")
    return (root / "course" / "STUDENT_README.md").read_text().replace("{tasks_table}", "\n".join(rows))


def check_markers(root) -> dict[str, list[str]]:
    """Every task id that has a block in a tracked ``.py`` file of ``root``, with its files."""
    root = Path(root)
    found: dict[str, list[str]] = {}
    for rel in tracked_files(root):
        if rel.endswith(".py") and not rel.startswith("minitorch_nn/course/") and (root / rel).is_file():
            text = (root / rel).read_text()
            if "# BEGIN SOLUTION" in text:
                for block in find_blocks(text, rel):
                    found.setdefault(block.task, []).append(rel)
    return found

"""The course file ``course/tasks.toml``: one ``[[task]]`` table per task.

Fields: ``id`` (the marker's task id and the pytest marker argument), ``description`` (one
line, shown in the stub and in grading output), ``tutorial`` (the tutorial to read), ``points``,
``source`` (the file with the solution block) and ``tests`` (the test files under
``course/tests/`` that hold its tests). A ``[starter]`` table lists ``exclude``: paths (files or
folders) that never go into a student copy, such as the hidden tests.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

COURSE_FILE = Path("course") / "tasks.toml"
ASSIGNMENT_FILE = Path("course") / "assignment.toml"  # written into a student copy


@dataclass(frozen=True)
class Task:
    id: str
    description: str
    tutorial: str
    points: float
    source: str
    tests: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Course:
    root: Path
    tasks: dict[str, Task]
    exclude: tuple[str, ...]
    hidden_visibility: str

    def select(self, ids=None) -> list[Task]:
        """The tasks with these ids (all when None), in course order; unknown ids raise."""
        if not ids:
            return list(self.tasks.values())
        unknown = [i for i in ids if i not in self.tasks]
        if unknown:
            raise SystemExit(f"unknown task id(s): {', '.join(unknown)}; the course has: {', '.join(self.tasks)}")
        return [t for t in self.tasks.values() if t.id in ids]


def load_course(root) -> Course:
    """Read ``root/course/tasks.toml``."""
    root = Path(root)
    path = root / COURSE_FILE
    if not path.exists():
        raise SystemExit(f"{path} not found: run this from a repository with a course definition")
    data = tomllib.loads(path.read_text())
    tasks = {}
    for entry in data.get("task", []):
        task = Task(entry["id"], entry["description"], entry["tutorial"], float(entry["points"]),
                    entry["source"], tuple(entry.get("tests", ())))
        if task.id in tasks:
            raise SystemExit(f"{path}: task {task.id!r} is listed twice")
        tasks[task.id] = task
    starter = data.get("starter", {})
    grading = data.get("grading", {})
    return Course(root, tasks, tuple(starter.get("exclude", ())), grading.get("hidden_visibility", "after_due_date"))


def assigned_tasks(impl_root) -> list[str] | None:
    """The task ids a student copy was made for (from its ``course/assignment.toml``), or None."""
    path = Path(impl_root) / ASSIGNMENT_FILE
    if not path.exists():
        return None
    return list(tomllib.loads(path.read_text()).get("tasks", []))

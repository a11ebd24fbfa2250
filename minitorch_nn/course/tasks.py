"""The course file ``course/tasks.toml``: one ``[[task]]`` table per task.

Fields of a task: ``id`` (the marker's task id and the pytest marker argument), ``description``
(one line, shown in the stub and in grading output), ``tutorial`` (the tutorial to read),
``points``, ``source`` (the file, or list of files, with the solution blocks), ``tests`` (the
test files under ``course/tests/`` that hold its tests), optionally ``hidden_points`` (the part of
``points`` that the hidden tests carry; default ``[grading] hidden_share`` of the points when the
task has hidden tests) and ``depends`` (the tasks whose code this one calls; informational, since
each task is graded against the reference of every other task).

Other tables: ``[starter] exclude`` lists paths that never go into a student copy (hidden tests,
answer material); ``[grading]`` sets ``hidden_visibility`` (Gradescope's ``hidden``,
``after_due_date`` or ``after_published``), ``hidden_share`` and ``test_timeout`` (seconds per
test); ``[assignment] tasks`` fixes which tasks are graded (default: all), and
``[assignment.students]`` can give one student (by e-mail or id) their own list.

The assignment is read only from the instructor's course file: a student copy's
``course/assignment.toml`` is a convenience for ``check`` and never decides what is graded.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

COURSE_FILE = Path("course") / "tasks.toml"
ASSIGNMENT_FILE = Path("course") / "assignment.toml"  # written into a student copy, for `check`
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


@dataclass(frozen=True)
class Task:
    id: str
    description: str
    tutorial: str
    points: float
    sources: tuple[str, ...]
    tests: tuple[str, ...] = field(default=())
    hidden_points: float = 0.0
    depends: tuple[str, ...] = field(default=())

    @property
    def source(self) -> str:
        """The first (usually the only) file with this task's solution blocks."""
        return self.sources[0]

    @property
    def public_tests(self) -> tuple[str, ...]:
        return tuple(t for t in self.tests if not _is_hidden(t))

    @property
    def hidden_tests(self) -> tuple[str, ...]:
        return tuple(t for t in self.tests if _is_hidden(t))

    @property
    def public_points(self) -> float:
        return self.points - self.hidden_points


def _is_hidden(test_path: str) -> bool:
    return Path(test_path).parts[0] == "hidden"


@dataclass(frozen=True)
class Course:
    root: Path
    tasks: dict[str, Task]
    exclude: tuple[str, ...]
    hidden_visibility: str
    test_timeout: float = 60.0
    assignment: tuple[str, ...] | None = None
    students: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def select(self, ids=None) -> list[Task]:
        """The tasks with these ids (all when None), in course order; unknown ids raise."""
        if not ids:
            return list(self.tasks.values())
        unknown = [i for i in ids if i not in self.tasks]
        if unknown:
            raise SystemExit(f"unknown task id(s): {', '.join(unknown)}; the course has: {', '.join(self.tasks)}")
        return [t for t in self.tasks.values() if t.id in ids]

    def assigned(self, student: str | None = None) -> list[Task]:
        """The graded tasks: the student's own list when the course gives one, else the course's
        ``[assignment] tasks``, else every task."""
        if student and student in self.students:
            return self.select(self.students[student])
        return self.select(self.assignment)


def load_course(root) -> Course:
    """Read ``root/course/tasks.toml``."""
    root = Path(root)
    path = root / COURSE_FILE
    if not path.exists():
        raise SystemExit(f"{path} not found: run this from a repository with a course definition")
    data = tomllib.loads(path.read_text())
    grading = data.get("grading", {})
    share = float(grading.get("hidden_share", 0.5))
    tasks = {}
    for entry in data.get("task", []):
        sources = entry["source"]
        sources = (sources,) if isinstance(sources, str) else tuple(sources)
        tests = tuple(entry.get("tests", ()))
        has_hidden = any(_is_hidden(t) for t in tests)
        points = float(entry["points"])
        hidden_points = float(entry.get("hidden_points", round(points * share, 4) if has_hidden else 0.0))
        if not 0 <= hidden_points <= points or (hidden_points and not has_hidden):
            raise SystemExit(f"{path}: task {entry['id']!r}: hidden_points must be between 0 and points, "
                             "and needs a hidden test file")
        task = Task(entry["id"], entry["description"], entry["tutorial"], points, sources, tests,
                    hidden_points, tuple(entry.get("depends", ())))
        if task.id in tasks:
            raise SystemExit(f"{path}: task {task.id!r} is listed twice")
        tasks[task.id] = task
    visibility = grading.get("hidden_visibility", "after_due_date")
    if visibility not in VISIBILITIES:
        raise SystemExit(f"{path}: [grading] hidden_visibility must be one of {', '.join(VISIBILITIES)}")
    assignment = data.get("assignment", {})
    students = {str(k): tuple(v) for k, v in assignment.get("students", {}).items()}
    course = Course(root, tasks, tuple(data.get("starter", {}).get("exclude", ())), visibility,
                    float(grading.get("test_timeout", 60)), tuple(assignment["tasks"]) if "tasks" in assignment else None,
                    students)
    for ids in [course.assignment or (), *students.values()]:
        course.select(ids)  # unknown ids fail here, not at grading time
    return course


def assigned_tasks(impl_root) -> list[str] | None:
    """The task ids a student copy was made for (its ``course/assignment.toml``), or None.

    Only ``check`` (a student's local run) reads this; grading never does."""
    path = Path(impl_root) / ASSIGNMENT_FILE
    if not path.exists():
        return None
    return list(tomllib.loads(path.read_text()).get("tasks", []))

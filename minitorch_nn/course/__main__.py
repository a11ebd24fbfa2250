"""Command line: ``python -m minitorch_nn.course {starter,grade,check,markers} ...``.

* ``starter OUTDIR [--tasks ID ...]``: write a student copy (instructor);
* ``grade --submission DIR --results FILE``: score a submission, from the instructor's checkout
  or the autograder image built from it (instructor);
* ``check [--tasks ID ...]``: run the public tests of your tasks on your copy and print the same
  table the grader prints (student; ``make check`` runs it);
* ``markers``: list the tasks and the files holding their solution blocks (instructor).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _repo_root() -> Path:
    # the repository this package lives in (its course/ folder defines the course)
    return Path(__file__).resolve().parents[2]


def _student_from_metadata(path) -> str | None:
    """The submitter's e-mail from Gradescope's submission_metadata.json, if there is one."""
    try:
        users = json.loads(Path(path).read_text()).get("users", [])
    except (OSError, ValueError):
        return None
    return users[0].get("email") if users else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitorch_nn.course",
                                     description="Make student copies of minitorch_nn, check them and grade them.")
    parser.add_argument("--root", default=None, help="repository with course/tasks.toml (default: this one)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("starter", help="write a student copy with the chosen tasks left to implement")
    p.add_argument("outdir")
    p.add_argument("--tasks", nargs="+", default=None, help="task ids (default: every task)")
    g = sub.add_parser("grade", help="score a submission with this repository's course (instructor side)")
    g.add_argument("--submission", "--impl", dest="submission", default=None,
                   help="the student's copy to take the solution blocks from (default: this repository)")
    g.add_argument("--results", default=None, help="where to write Gradescope's results.json")
    g.add_argument("--tasks", nargs="+", default=None, help="grade these tasks (default: the course's assignment)")
    g.add_argument("--student", default=None, help="grade the tasks [assignment.students] gives this student")
    g.add_argument("--metadata", default=None, help="Gradescope's submission_metadata.json (gives --student)")
    g.add_argument("--jobs", type=int, default=None, help="tasks graded at once (default: up to 2)")
    g.add_argument("-v", "--verbose", action="store_true", help="also print pytest's output")
    c = sub.add_parser("check", help="run the public tests of your tasks on your copy (students)")
    c.add_argument("--tasks", nargs="+", default=None, help="task ids (default: those of your assignment)")
    c.add_argument("-v", "--verbose", action="store_true", help="also print pytest's output")
    sub.add_parser("markers", help="list the tasks and where their solution blocks are")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve() if args.root else _repo_root()

    if args.command == "starter":
        from minitorch_nn.course.starter import write_starter

        info = write_starter(root, args.outdir, args.tasks)
        print(f"wrote {info['files']} files to {args.outdir}")
        for task_id, paths in info["tasks"].items():
            print(f"  {task_id}: {', '.join(paths)}")
        print("Students read README.md in their copy and run their public tests with `make check`.")
        return 0
    if args.command == "grade":
        from minitorch_nn.course.grade import format_table, grade

        student = args.student or (_student_from_metadata(args.metadata) if args.metadata else None)
        result = grade(root, args.submission, args.results, args.tasks, student=student, jobs=args.jobs,
                       verbose=args.verbose)
        print("All tests (this output is the instructor's; students see results.json's output):")
        print(format_table(result["_rows"]))
        print("\nWhat the student sees:\n" + result["output"])
        if args.results:
            print(f"\nwrote {args.results}")
        return 0
    if args.command == "check":
        from minitorch_nn.course.grade import check, first_failures, format_table

        outcome = check(root, args.tasks, verbose=args.verbose)
        print(format_table(outcome["rows"]))
        failures = first_failures(outcome["entries"])
        if failures:
            print("\nFirst failures:\n" + failures)
        return 0
    from minitorch_nn.course.starter import check_markers
    from minitorch_nn.course.tasks import load_course

    found = check_markers(root)
    course = load_course(root)
    ok = True
    for task in course.tasks.values():
        files = found.get(task.id, [])
        ok &= bool(files)
        print(f"{task.id:<22} {task.points:>4g} pts  {', '.join(files) or 'NO SOLUTION BLOCK'}")
    for task_id in sorted(set(found) - set(course.tasks)):
        print(f"{task_id:<22} marked in {', '.join(found[task_id])} but not listed in course/tasks.toml")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

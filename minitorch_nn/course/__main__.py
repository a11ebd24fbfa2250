"""Command line: ``python -m minitorch_nn.course {starter,grade,check} ...`` (see the package)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _repo_root() -> Path:
    # the repository this package lives in (its course/ folder defines the course)
    return Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitorch_nn.course",
                                     description="Make student copies of minitorch_nn and grade them.")
    parser.add_argument("--root", default=None, help="repository with course/tasks.toml (default: this one)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("starter", help="write a student copy with the chosen tasks left to implement")
    p.add_argument("outdir")
    p.add_argument("--tasks", nargs="+", default=None, help="task ids (default: every task)")
    g = sub.add_parser("grade", help="run the graded tests and score them per task")
    g.add_argument("--impl", default=None, help="the implementation to grade (default: this repository)")
    g.add_argument("--results", default=None, help="where to write Gradescope's results.json")
    g.add_argument("--tasks", nargs="+", default=None, help="grade only these tasks")
    g.add_argument("--no-hidden", action="store_true", help="leave out course/tests/hidden")
    g.add_argument("-v", "--verbose", action="store_true", help="also print pytest's output")
    sub.add_parser("check", help="list the tasks and where their solution blocks are")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve() if args.root else _repo_root()

    if args.command == "starter":
        from minitorch_nn.course.starter import write_starter

        info = write_starter(root, args.outdir, args.tasks)
        print(f"wrote {info['files']} files to {args.outdir}")
        for task_id, paths in info["tasks"].items():
            print(f"  {task_id}: {', '.join(paths)}")
        print("Students build the extension and run the tests with `make test`; "
              "`python -m minitorch_nn.course grade` scores their public tests.")
        return 0
    if args.command == "grade":
        from minitorch_nn.course.grade import first_failures, format_table, grade

        result = grade(root, args.impl, args.results, args.tasks, hidden=not args.no_hidden, verbose=args.verbose)
        print(format_table(result["_rows"]))
        failures = first_failures(result["tests"])
        if failures:
            print("\nFirst failures:\n" + failures)
        if args.results:
            print(f"\nwrote {args.results}")
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

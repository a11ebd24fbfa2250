"""Record what PyTorch prints for each tutorial's "Compare with PyTorch" story.

Every tutorial ends by calling ``compare_with_pytorch(story, "<tutorial>")`` (or ``pytorch_lines``)
(``minitorch_nn/testing/pytorch_side.py``). Where PyTorch is not installed, the site shows the
lines this script stored in ``tutorials/torch_reference/<tutorial>.json``, so they must come
from the same story run with torch 2.13.

The script does not run the whole tutorial: it reads the tutorial's source, takes the story
function, the top-level functions, classes and assignments it uses (and those they use) and
the tutorial's imports, runs them in a fresh namespace, and calls the story with ``torch``.

Usage (with ``torch==2.13.0`` installed)::

    python tools/record_torch_outputs.py            # record every tutorial
    python tools/record_torch_outputs.py --check    # compare with the stored files, write nothing
    python tools/record_torch_outputs.py plot_04_autograd
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
REFERENCES = TUTORIALS / "torch_reference"
EXPECTED_TORCH = "2.13.0"


def find_story(tree: ast.Module) -> tuple[str, str] | None:
    """(story function name, reference name) from the tutorial's ``compare_with_pytorch`` (or
    ``pytorch_lines``) call."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None))
            in ("compare_with_pytorch", "pytorch_lines")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and isinstance(node.args[1], ast.Constant)
        ):
            return node.args[0].id, node.args[1].value
    return None


def _defined_names(node) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _free_names(node) -> set[str]:
    """Names ``node`` reads but does not bind itself (a rough scope rule: enough for stories)."""
    loads, bound = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not node:
            bound.add(n.name)
    return loads - bound


def story_source(path: Path) -> tuple[str, str, str] | None:
    """(code to exec, story name, reference name) for a tutorial, or None if it has no story."""
    source = path.read_text()
    tree = ast.parse(source)
    found = find_story(tree)
    if found is None:
        return None
    story, name = found
    definitions = {}
    for node in tree.body:
        for defined in _defined_names(node):
            definitions.setdefault(defined, node)
    needed, todo = set(), [story]
    while todo:
        wanted = todo.pop()
        node = definitions.get(wanted)
        if node is None or id(node) in needed:
            continue
        needed.add(id(node))
        todo += sorted(_free_names(node))
    kept = [
        node for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in needed
    ]
    code = "\n\n".join(ast.get_source_segment(source, node) for node in kept)
    return code, story, name


def run_story(path: Path, torch) -> tuple[str, list[str]] | None:
    """(reference name, the story's lines with ``torch``) for a tutorial, or None."""
    found = story_source(path)
    if found is None:
        return None
    code, story, name = found
    namespace = {"__name__": f"story_of_{path.stem}", "__file__": str(path)}
    exec(compile(code, str(path), "exec"), namespace)  # noqa: S102 (our own tutorial's code)
    return name, [str(line) for line in namespace[story](torch)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tutorials", nargs="*", help="tutorial names (default: all)")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("record_torch_outputs: PyTorch is not installed; `pip install torch==2.13.0` first.")
        return 1
    if not torch.__version__.startswith(EXPECTED_TORCH):
        print(f"record_torch_outputs: torch {torch.__version__} is installed; the references are "
              f"PyTorch {EXPECTED_TORCH}'s output. Install torch=={EXPECTED_TORCH}.")
        return 1
    paths = sorted(TUTORIALS.glob("plot_*.py"))
    if args.tutorials:
        paths = [p for p in paths if p.stem in args.tutorials]
    REFERENCES.mkdir(exist_ok=True)
    stale = 0
    sys.path.insert(0, str(ROOT))
    for path in paths:
        result = run_story(path, torch)
        if result is None:
            print(f"{path.stem}: no compare_with_pytorch story")
            continue
        name, lines = result
        target = REFERENCES / f"{name}.json"
        if args.check:
            stored = json.loads(target.read_text())["lines"] if target.is_file() else None
            ok = stored == lines
            stale += not ok
            print(f"{name}: {'matches' if ok else 'STALE'} ({len(lines)} lines)")
            continue
        record = {"tutorial": name, "torch_version": torch.__version__.split("+")[0],
                  "recorded_with": "tools/record_torch_outputs.py", "lines": lines}
        target.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"{name}: wrote {len(lines)} lines to {target.relative_to(ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

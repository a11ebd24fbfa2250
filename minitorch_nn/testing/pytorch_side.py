"""PyTorch's output beside ours, in the tutorials' "Compare with PyTorch" sections (no PyTorch equivalent).

A tutorial writes the lines it wants compared as a *story*: a function that takes a library
(``minitorch_nn`` or ``torch``), runs the same steps with it and returns what it would print, one
string per line. Then::

    compare_with_pytorch(story, "plot_04_autograd")

prints each line twice, ours then PyTorch's, and marks the ones that differ; it raises
``AssertionError`` if any line differs, because every tutorial promises PyTorch's behaviour.

Where PyTorch's lines come from:

* when ``torch`` can be imported, the story runs with it now;
* otherwise from ``tutorials/torch_reference/<name>.json``, the lines the same story printed
  with torch 2.13, recorded by ``tools/record_torch_outputs.py``. A test
  (``tests/test_torch_reference.py``) runs the stories with torch again whenever it is installed
  and fails when a recording has gone stale.

A story must run on its own: it may use its argument, the tutorial's imports and the tutorial's
top-level functions and classes, which is what the recorder gives it.
"""

from __future__ import annotations

import json
from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "tutorials" / "torch_reference"
RECORDED_VERSION = "2.13.0"


def reference_path(name: str) -> Path:
    return REFERENCE_DIR / f"{name}.json"


def load_reference(name: str) -> dict | None:
    """The recorded lines of a tutorial's story (``None`` when there is no recording)."""
    path = reference_path(name)
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def pytorch_lines(story, name: str) -> tuple[list[str] | None, str]:
    """PyTorch's lines for ``story`` and where they came from."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        return [str(line) for line in story(torch)], f"PyTorch {torch.__version__}, run now"
    recorded = load_reference(name)
    if recorded is None:
        return None, "PyTorch is not installed and no recording exists"
    return recorded["lines"], (
        f"PyTorch {recorded['torch_version']}, recorded by tools/record_torch_outputs.py "
        "(PyTorch is not installed here)"
    )


def print_side_by_side(mine: list[str], theirs: list[str] | None, source: str) -> None:
    """Print each of our lines with PyTorch's under it; raise ``AssertionError`` if any differ."""
    mine = [str(line) for line in mine]
    if theirs is None:
        print(f"{source}: `pip install torch==2.13.0` to see PyTorch's side.")
        for line in mine:
            print(f"  minitorch_nn  {line}")
        return
    print(f"PyTorch's side: {source}.")
    different = []
    for k in range(max(len(mine), len(theirs))):
        m = mine[k] if k < len(mine) else "(no line)"
        t = theirs[k] if k < len(theirs) else "(no line)"
        print(f"  minitorch_nn  {m}")
        print(f"  PyTorch       {t}")
        if m != t:
            print("  ^ DIFFERENT")
            different.append(k)
    if different:
        raise AssertionError(
            f"{len(different)} line(s) differ from PyTorch's (lines {different}); a tutorial "
            "promises PyTorch's behaviour. If PyTorch's side is a recording, rerun "
            "tools/record_torch_outputs.py with torch==2.13.0 installed."
        )
    print(f"All {len(mine)} lines are the same as PyTorch's.")


def compare_with_pytorch(story, name: str) -> None:
    """Run ``story`` with minitorch_nn and with PyTorch (or its recording) and print both.

    Returns nothing, so a tutorial's last line prints no value. (A tutorial that already has
    its own lines, and wants PyTorch's, calls :func:`pytorch_lines` and
    :func:`print_side_by_side` itself.)
    """
    import minitorch_nn

    theirs, source = pytorch_lines(story, name)
    print_side_by_side(story(minitorch_nn), theirs, source)

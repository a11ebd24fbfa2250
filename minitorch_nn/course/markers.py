"""Solution markers: find ``# BEGIN SOLUTION task-id`` ... ``# END SOLUTION`` blocks in source
files and replace their bodies with a ``raise NotImplementedError(...)`` stub.

A block is a run of whole lines. The ``BEGIN`` line's indentation is the indentation of the
stub, so a block inside a method gives a stub inside the method. Blocks do not nest; every
``BEGIN`` needs its ``END``. The marker lines are comments, so the marked code is the real
implementation and runs as usual until a starter copy replaces it. The starter keeps the marker
lines around the stub: the student writes between them, and the grader takes exactly what is
between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION (?P<task>[A-Za-z0-9_.-]+)[ \t]*$")
END = re.compile(r"^[ \t]*# END SOLUTION[ \t]*$")


class MarkerError(ValueError):
    """A malformed block: END without BEGIN, BEGIN inside a block, or a block never closed."""


@dataclass(frozen=True)
class Block:
    task: str
    path: str
    begin: int  # 0-based line index of the BEGIN line
    end: int  # 0-based line index of the END line
    indent: str


def find_blocks(text: str, path: str = "<string>") -> list[Block]:
    """Every solution block in ``text``, in order."""
    blocks, open_ = [], None
    for i, line in enumerate(text.splitlines()):
        m = BEGIN.match(line)
        if m:
            if open_ is not None:
                raise MarkerError(f"{path}:{i + 1}: BEGIN SOLUTION inside the block opened at line {open_[0] + 1}")
            open_ = (i, m["task"], m["indent"])
        elif END.match(line):
            if open_ is None:
                raise MarkerError(f"{path}:{i + 1}: END SOLUTION without a BEGIN SOLUTION")
            blocks.append(Block(open_[1], path, open_[0], i, open_[2]))
            open_ = None
        elif "BEGIN SOLUTION" in line and line.lstrip().startswith("#"):
            raise MarkerError(f"{path}:{i + 1}: write the marker as '# BEGIN SOLUTION task-id'")
    if open_ is not None:
        raise MarkerError(f"{path}:{open_[0] + 1}: BEGIN SOLUTION {open_[1]} is never closed by END SOLUTION")
    return blocks


def stub_line(indent: str, task_id: str, description: str, tutorial: str) -> str:
    """The line that replaces a block in the student copy."""
    message = f"{task_id}: {description}; see tutorial {tutorial}"
    quoted = '"' + message.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{indent}raise NotImplementedError({quoted})"


STARTER = re.compile(r"^[ \t]*# STARTER[ \t]*$")


def starter_alternative(lines: list[str]) -> list[str] | None:
    """A block's own stub: the commented lines after a ``# STARTER`` line, uncommented.

    Compiled twins (``.pyx``/``.pxi``) of a task's function carry one, because a Cython function
    cannot simply raise: the alternative is code that makes the twin decline, so the student's
    Python runs. In the reference the alternative is a comment, so only the real code compiles::

        # BEGIN SOLUTION views-strides
        ...the compiled twin's real code...
        # STARTER
        # return None
        # END SOLUTION
    """
    for i, line in enumerate(lines):
        if STARTER.match(line):
            out = []
            for alt in lines[i + 1:]:
                stripped = alt.lstrip(" \t")
                indent = alt[:len(alt) - len(stripped)]
                out.append(indent + (stripped[2:] if stripped.startswith("# ") else stripped.lstrip("#")))
            return out
    return None


def replace_blocks(text: str, stubs: dict[str, str], path: str = "<string>") -> tuple[str, list[str]]:
    """``text`` with the body of each block of a task in ``stubs`` (task id -> stub text without
    indent) replaced by the stub at the block's indentation, between the kept marker lines; a block
    with a ``# STARTER`` section gets that section's code instead (see :func:`starter_alternative`).
    Other blocks are kept as they are. Returns the new text and the ids of the tasks replaced."""
    lines = text.splitlines(keepends=True)
    newline = "\n"
    replaced = []
    for block in reversed(find_blocks(text, path)):
        if block.task not in stubs:
            continue
        alternative = starter_alternative(lines[block.begin + 1:block.end])
        if alternative is None:
            alternative = [block.indent + stubs[block.task] + newline]
        lines[block.begin + 1:block.end] = alternative
        replaced.append(block.task)
    return "".join(lines), sorted(set(replaced))

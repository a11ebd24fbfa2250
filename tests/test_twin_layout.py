"""The compiled code is laid out along what it mirrors: ``_ext/_C.pyx`` holds the tensor object
only, and each compiled twin is a module of its own named after the readable file it mirrors
(``_ext/twins/<path>.pyx`` for ``minitorch_nn/<path>.py``), whose docstring names that file."""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXT = ROOT / "_ext"
TWINS = sorted((EXT / "twins").rglob("*.pyx"))
GATE = EXT / "twins" / "_gate.pyx"   # what every kernel twin checks first; it mirrors no one file


def _docstring(path: pathlib.Path) -> str:
    """The module docstring of a Cython file (its first statement, after the directive comments)."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r'(?:\s*#[^\n]*\n)*\s*("""(?:.|\n)*?""")', text)
    assert match, f"{path.relative_to(ROOT)} has no module docstring"
    return ast.literal_eval(match.group(1))


def test_the_tensor_object_file_includes_nothing():
    text = (EXT / "_C.pyx").read_text(encoding="utf-8")
    assert not re.search(r'^\s*include\s+"', text, re.M), "_C.pyx must not paste other files into itself"
    assert not list(EXT.rglob("*.pxi")), "no .pxi files: each twin is a module of its own"


@pytest.mark.parametrize("twin", [t for t in TWINS if t != GATE], ids=lambda p: str(p.relative_to(EXT)))
def test_each_twin_is_named_after_its_original_and_says_so(twin):
    relative = twin.relative_to(EXT / "twins").with_suffix(".py")
    original = ROOT / "minitorch_nn" / relative
    assert original.is_file(), f"{twin.relative_to(ROOT)} mirrors no readable file (expected {original.relative_to(ROOT)})"
    assert f"minitorch_nn/{relative.as_posix()}" in _docstring(twin), "the docstring names the original"
    module = importlib.import_module("minitorch_nn._twins." + ".".join(relative.with_suffix("").parts))
    assert module.__doc__ and module.__doc__.strip() == _docstring(twin).strip()


def test_the_gate_says_it_is_no_twin():
    doc = _docstring(GATE)
    assert "gate" in doc.splitlines()[0] and "Not a twin" in doc


def test_every_compiled_file_has_its_listing_on_the_source_page():
    page = (ROOT / "docs" / "source_c.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\.\. literalinclude:: \.\./(_ext/\S+)$", page, re.M))
    files = {p.relative_to(ROOT).as_posix() for p in EXT.rglob("*.pyx")}
    assert files <= listed, f"docs/source_c.rst lacks {sorted(files - listed)}"

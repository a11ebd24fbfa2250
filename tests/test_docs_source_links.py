"""The site's source-link extension (``docs/_ext/source_links.py``) finds what pages name.

The whole extension runs in ``make docs``, and the page check then follows every link it made;
these tests pin down the pieces that decide what becomes a link and where it points.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def source_links():
    pytest.importorskip("sphinx", reason="the extension is a Sphinx extension (docs extra)")
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        import source_links
    finally:
        sys.path.pop(0)
    return source_links


def test_which_literals_name_source_files(source_links):
    names = ["minitorch_nn/_tensor.py", "minitorch_nn/backends/cpu/", "_ext/_C.pyx",
             "_ext/twins/backends/cpu/pointwise.pyx"]
    assert all(source_links.PATH.match(n) for n in names)
    for not_a_file in ("_tensor.py", "minitorch_nn.nn", "torch/_tensor.py", "_ext/setup.py", "x.pyx"):
        assert not source_links.PATH.match(not_a_file)


def test_module_names_and_listing_ids(source_links):
    assert source_links._module_name("minitorch_nn/_tensor.py") == "minitorch_nn._tensor"
    assert source_links._module_name("minitorch_nn/backends/cpu/") == "minitorch_nn.backends.cpu"
    assert source_links._module_name("minitorch_nn/nn/__init__.py") == "minitorch_nn.nn"
    assert source_links._file_id("_ext/_C.pyx") == "src-_C-pyx"


def test_cython_definitions_are_found_at_their_lines(source_links):
    found = source_links._cython_definitions("_ext/_C.pyx")
    lines = (ROOT / "_ext" / "_C.pyx").read_text().splitlines()
    for name in ("TensorBase", "TensorImpl", "_swap_payload"):
        assert name in found, name
        assert name in lines[found[name] - 1]
        assert lines[found[name] - 1].lstrip().startswith(("cdef", "def", "cpdef", "class"))

"""Build the Cython tensor core (`_ext/_C.pyx`) and the compiled twins (`_ext/twins/**.pyx`).

Everything else is pure Python and described in pyproject.toml. Set MINITORCH_ANNOTATE=1 to
get Cython's HTML annotation (`_ext/_C.html`), which shows which lines touch the Python C-API.
"""

import glob
import os

import numpy as np
from Cython.Build import cythonize
from Cython.Build.Dependencies import create_dependency_tree
from setuptools import Extension, setup


def _module_name(source):
    """``_ext/<name>.pyx`` builds ``minitorch_nn.<name>``; a compiled twin,
    ``_ext/twins/<path of the file it mirrors>.pyx``, builds ``minitorch_nn._twins.<that path>``
    (the twin of ``minitorch_nn/backends/cpu/pointwise.py`` is ``_ext/twins/backends/cpu/pointwise.pyx``,
    imported as ``minitorch_nn._twins.backends.cpu.pointwise``)."""
    relative = os.path.splitext(os.path.relpath(source, "_ext"))[0].split(os.sep)
    if relative[0] == "twins":
        relative[0] = "_twins"
    return ".".join(["minitorch_nn", *relative])


def _declarations(source):
    """The module's own ``.pxd`` (``minitorch_nn/<path>.pxd``, where the modules that cimport it find
    it), or None."""
    pxd = os.path.join(*_module_name(source).split(".")) + ".pxd"
    return pxd if os.path.exists(pxd) else None


def _remove_stale_c(sources):
    """Remove the generated C of a module whose own ``.pxd`` (or a ``.pxd`` that one cimports) is
    newer than it. Cython looks for a ``.pyx`` file's own ``.pxd`` only beside it; ours live in the
    package, so without this a changed ``.pxd`` (the gate's, say) would leave its module built from
    the old declarations, and every module that cimports it would fail to import."""
    tree = create_dependency_tree()
    for source in sources:
        pxd, c_file = _declarations(source), os.path.splitext(source)[0] + ".c"
        if pxd is None or not os.path.exists(c_file):
            continue
        newest = max(os.path.getmtime(f) for f in tree.all_dependencies(pxd))
        if newest > os.path.getmtime(c_file):
            os.remove(c_file)


_SOURCES = sorted(glob.glob(os.path.join("_ext", "**", "*.pyx"), recursive=True))
_remove_stale_c(_SOURCES)

extensions = [
    Extension(
        _module_name(source),
        [source],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # Linking libm by name records its symbol versions: without it the loader binds expf, exp,
        # fma... to their oldest (compatibility) versions, which are several times slower.
        libraries=["m"],
    )
    for source in _SOURCES
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        annotate=os.environ.get("MINITORCH_ANNOTATE") == "1",
        # binding + embedsignature let Sphinx autodoc show the compiled methods' signatures.
        compiler_directives={"binding": True, "embedsignature": True},
    )
)

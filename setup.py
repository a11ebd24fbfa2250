"""Build the Cython tensor core (`_ext/_C.pyx`) and the compiled twins (`_ext/twins/**.pyx`).

Everything else is pure Python and described in pyproject.toml. Set MINITORCH_ANNOTATE=1 to
get Cython's HTML annotation (`_ext/_C.html`), which shows which lines touch the Python C-API.
"""

import glob
import os

import numpy as np
from Cython.Build import cythonize
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
    for source in sorted(glob.glob(os.path.join("_ext", "**", "*.pyx"), recursive=True))
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

"""Build the Cython tensor core (`_ext/*.pyx`) into `minitorch_nn._C` (and any other `_ext/<name>.pyx`).

Everything else is pure Python and described in pyproject.toml. Set MINITORCH_ANNOTATE=1 to
get Cython's HTML annotation (`_ext/_C.html`), which shows which lines touch the Python C-API.
"""

import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# Every `_ext/<name>.pyx` becomes the extension module `minitorch_nn.<name>`.
extensions = [
    Extension(
        f"minitorch_nn.{os.path.splitext(os.path.basename(source))[0]}",
        [source],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # Linking libm by name records its symbol versions: without it the loader binds expf, exp,
        # fma... to their oldest (compatibility) versions, which are several times slower.
        libraries=["m"],
    )
    for source in sorted(glob.glob(os.path.join("_ext", "*.pyx")))
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

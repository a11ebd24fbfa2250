"""Build the Cython tensor core (`_ext/*.pyx`) into `minitorch_nn._C` (and any other `_ext/<name>.pyx`).

Everything else is pure Python and described in pyproject.toml. Set MINITORCH_ANNOTATE=1 to
get Cython's HTML annotation (`_ext/_C.html`), which shows which lines touch the Python C-API.
"""

import glob
import importlib.util
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def _load_fingerprints():
    """minitorch_nn/backends/_twin_fingerprints.py, loaded by path (the package is not built yet)."""
    path = os.path.join(ROOT, "minitorch_nn", "backends", "_twin_fingerprints.py")
    spec = importlib.util.spec_from_file_location("_twin_fingerprints", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildTwins(build_ext):
    """build_ext, then a record of the readable originals the compiled twins were built against
    (their fingerprints): at import, a twin whose original has changed since turns itself off."""

    def run(self):
        super().run()
        package_dir = os.path.join(ROOT if self.inplace else self.build_lib, "minitorch_nn")
        os.makedirs(package_dir, exist_ok=True)
        _load_fingerprints().write_record(ROOT, package_dir)

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
    cmdclass={"build_ext": BuildTwins},
    ext_modules=cythonize(
        extensions,
        language_level=3,
        annotate=os.environ.get("MINITORCH_ANNOTATE") == "1",
        # binding + embedsignature let Sphinx autodoc show the compiled methods' signatures.
        compiler_directives={"binding": True, "embedsignature": True},
    )
)

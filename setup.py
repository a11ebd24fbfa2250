"""Build the Cython tensor core (`_ext/*.pyx`) into `minitorch_nn._C` (and any other `_ext/<name>.pyx`).

Everything else is pure Python and described in pyproject.toml. Set MINITORCH_ANNOTATE=1 to
get Cython's HTML annotation (`_ext/_C.html`), which shows which lines touch the Python C-API.

The build also writes `minitorch_nn/_twin_manifest.json`: a fingerprint of every function in the
modules the compiled twins mirror (`minitorch_nn/backends/_fingerprint.py`), so that at run time
a twin whose original has been edited since the build turns itself off
(`minitorch_nn.backends.compiled.disabled()` lists it).
"""

import glob
import importlib.util
import json
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

# The modules whose functions a compiled twin mirrors (kernels, public functions, derivatives,
# the recorder and the engine, the optimizers' tensor path), relative to minitorch_nn/.
MIRRORED = ["_functions", "_dispatch", "backends", "autograd", "optim", "nn",
            "_tensor_methods.py", "_tensor.py", "_ops.py"]


def write_twin_manifest(package="minitorch_nn", out="minitorch_nn/_twin_manifest.json"):
    spec = importlib.util.spec_from_file_location("_fingerprint", os.path.join(package, "backends", "_fingerprint.py"))
    fingerprint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fingerprint)
    files = []
    for entry in MIRRORED:
        path = os.path.join(package, entry)
        files += [path] if path.endswith(".py") else glob.glob(os.path.join(path, "**", "*.py"), recursive=True)
    manifest = {}   # {path under the package, with "/": {qualified name: [fingerprints]}}
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        manifest[os.path.relpath(path, package).replace(os.sep, "/")] = fingerprint.module_fingerprints(source, path)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(manifest, f, sort_keys=True, separators=(",", ":"))


write_twin_manifest()

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        annotate=os.environ.get("MINITORCH_ANNOTATE") == "1",
        # binding + embedsignature let Sphinx autodoc show the compiled methods' signatures.
        compiler_directives={"binding": True, "embedsignature": True},
    )
)

"""Write ``minitorch_nn/_twin_manifest.json``: the fingerprints of the functions the twins mirror.

Run it (``make twins-manifest``) after changing a function that a compiled twin mirrors -- a cpu
kernel, a public function, a derivative -- once the twin computes the same thing again (the tests
under ``tests/twins/`` compare every twin with its original, with the switch on and off). Until
then the twin stays off and the readable code runs, which is what a student editing a kernel wants.
"""

import warnings

warnings.simplefilter("ignore", RuntimeWarning)   # (the twins whose originals changed say so)

import minitorch_nn  # noqa: E402
import minitorch_nn.nn  # noqa: E402,F401  (F.relu, F.softmax...: their twins check their originals on import)
import minitorch_nn.optim  # noqa: E402,F401  (the optimizers' numpy paths)
import minitorch_nn.random  # noqa: E402,F401  (loaded lazily; its distributions' twin checks them on import)
import minitorch_nn.utils.data  # noqa: E402,F401  (the DataLoader's batched fetch)
from minitorch_nn.backends import compiled  # noqa: E402

if __name__ == "__main__":
    count = compiled.write_manifest()
    print(f"recorded {count} functions in {compiled._MANIFEST_PATH}")

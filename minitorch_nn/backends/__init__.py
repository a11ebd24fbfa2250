"""Backends: the kernels that do the work for each device.

* ``views.py``: view ops, for every device (they only change sizes/strides/offset);
* ``cpu/``: numpy (+ ml_dtypes for bfloat16);
* ``meta.py``: shapes and dtypes only;
* ``cuda/``: numba CUDA kernels (loaded on first CUDA use, never at import).
"""

from minitorch_nn.backends import cpu, meta, views  # noqa: F401  (registering kernels)
from minitorch_nn.backends import complex_views  # noqa: F401  (view_as_real, view_as_complex)
from minitorch_nn.backends import meta_nn  # noqa: F401,E402  (nn ops: cpu/nn_ops.py kernels and their meta kernels)
from minitorch_nn.backends import compiled  # noqa: F401,E402  (the one switch for the compiled twins)

"""Choosing where CUDA kernels run: a real GPU, or numba's CUDA simulator.

PyTorch needs a GPU and a driver for ``device="cuda"``. We also accept numba's *CUDA simulator*,
which runs every kernel thread as a Python thread on the cpu: slow, but it lets a student run,
step through and debug each kernel on a laptop.

numba decides between the two **when ``numba.cuda`` is first imported**, from the environment
variable ``NUMBA_ENABLE_CUDASIM``. This module is that import, done once, on the first CUDA use
(``import minitorch_nn`` never imports numba):

* ``MINITORCH_NN_CUDA=sim`` or ``NUMBA_ENABLE_CUDASIM=1``: the simulator;
* otherwise a real GPU if the driver reports one;
* otherwise no CUDA at all: :func:`minitorch_nn.cuda.is_available` is False and using a cuda
  tensor raises :class:`CudaUnavailable` saying how to turn the simulator on.
"""

from __future__ import annotations

import ctypes
import os


class CudaUnavailable(RuntimeError):
    """Raised on the first CUDA use when there is neither a GPU nor the simulator."""


_state = None  # (cuda module or None, simulator: bool, reason: str)


def _gpu_present() -> bool:
    """Ask the CUDA driver (libcuda) directly whether it sees a device, without importing numba."""
    lib = None
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return False
    n = ctypes.c_int(0)
    try:
        return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
    except Exception:  # pragma: no cover - a broken driver install
        return False


def want_simulator() -> bool:
    return os.environ.get("MINITORCH_NN_CUDA", "").lower() in ("sim", "simulator") or os.environ.get(
        "NUMBA_ENABLE_CUDASIM", "0"
    ) not in ("", "0")


def _load():
    global _state
    if _state is not None:
        return _state
    sim = want_simulator()
    if not sim and not _gpu_present():
        _state = (None, False, "no CUDA GPU was found (the CUDA driver reports no device)")
        return _state
    try:
        import numba
    except ImportError:
        _state = (None, sim, 'numba and numba-cuda are not installed (pip install "minitorch-nn[cuda]")')
        return _state
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if sim else "0"
    numba.core.config.reload_config()  # numba may have been imported already, before the variable was set
    from numba import cuda

    _state = (cuda, bool(numba.core.config.ENABLE_CUDASIM), "")
    return _state


def available() -> bool:
    return _load()[0] is not None


def simulator() -> bool:
    return _load()[1]


def cuda():
    """The ``numba.cuda`` module (GPU or simulator); raises :class:`CudaUnavailable` if neither."""
    mod, _, reason = _load()
    if mod is None:
        raise CudaUnavailable(
            f"CUDA is not available: {reason}.\n"
            "Hint: to run cuda tensors on the cpu with numba's CUDA simulator (slow, for learning), set "
            "MINITORCH_NN_CUDA=sim (or NUMBA_ENABLE_CUDASIM=1) in the environment before the first CUDA use."
        )
    return mod

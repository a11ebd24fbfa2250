"""``set_num_threads`` / ``get_num_threads``: how many CPU threads one op may use (mirrors
``torch.set_num_threads`` and ``torch.get_num_threads``, which PyTorch implements in C++ around
its OpenMP pool).

minitorch_nn does its heavy lifting in numpy, whose matrix products run on a BLAS library
(OpenBLAS, MKL, ...) with its own thread pool; ``threadpoolctl`` is the maintained way to resize
such pools from Python, whatever the library. The number also goes to numba's pool when numba is
loaded (the project's own compiled loops). Elementwise numpy work is single-threaded either way.

Like PyTorch, the starting value is the number of CPUs this process may run on, and the setting is
process-wide (DataLoader workers set it to 1 in themselves).
"""

from __future__ import annotations

import builtins
import os
import sys

__all__ = ["set_num_threads", "get_num_threads"]


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


_num_threads = _available_cpus()
_controller = None  # a threadpoolctl.ThreadpoolController, made on first use (it scans loaded libraries)


def _blas_pools():
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


def set_num_threads(int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Use ``int`` threads for BLAS calls (matmul, conv's GEMMs) and the project's compiled loops."""
    value = int
    if isinstance(value, bool) or not isinstance(value, builtins.int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    global _num_threads
    _blas_pools().limit(limits=value, user_api="blas")
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            numba.set_num_threads(min(value, numba.config.NUMBA_NUM_THREADS))
        except Exception:  # noqa: BLE001 - numba without a threading layer: nothing to resize
            pass
    _num_threads = value


def get_num_threads() -> int:
    """The number last given to ``set_num_threads`` (the CPUs available, before any call)."""
    return _num_threads

"""``minitorch_nn.cuda``: the CUDA device, as ``torch.cuda`` (a small subset).

Mirrors ``torch/cuda/__init__.py``. The kernels live in ``backends/cuda`` and are loaded lazily
by :func:`_lazy_backend` on the first CUDA use, so ``import minitorch_nn`` never imports numba.

Where we differ from PyTorch:

* without a GPU, setting ``MINITORCH_NN_CUDA=sim`` (or ``NUMBA_ENABLE_CUDASIM=1``) before the
  first CUDA use runs cuda tensors on numba's CUDA simulator: slow, on the cpu, but every kernel
  can be read, stepped through and debugged; :func:`is_available` is then True;
* one device only (``cuda:0``); no streams, events or caching allocator;
* random numbers come from our own Philox counter-based generator (``backends/cuda/random.py``),
  seeded by :func:`manual_seed`; they are reproducible but are not PyTorch's CUDA numbers.
"""

from __future__ import annotations

from minitorch_nn import _dispatch

_backend = None


def _lazy_backend():
    """Import (once) and return the cuda backend package; raises if CUDA is unavailable."""
    global _backend
    if _backend is None:
        from minitorch_nn.backends.cuda import _numba

        _numba.cuda()  # raises the "how to turn the simulator on" error when there is no CUDA
        import minitorch_nn.backends.cuda as backend

        _backend = backend
    return _backend


def is_available() -> bool:
    """True when cuda tensors can be made: a GPU, or the simulator was asked for."""
    from minitorch_nn.backends.cuda import _numba

    return _numba.available()


def is_simulator() -> bool:
    """True when cuda tensors run on numba's CUDA simulator (not in PyTorch)."""
    from minitorch_nn.backends.cuda import _numba

    return _numba.available() and _numba.simulator()


def device_count() -> int:
    return 1 if is_available() else 0


def current_device() -> int:
    _lazy_backend()
    return 0


def get_device_name(device=None) -> str:
    _lazy_backend()
    from minitorch_nn.backends.cuda import _numba

    if _numba.simulator():
        return "numba CUDA simulator"
    dev = _numba.cuda().get_current_device()
    name = dev.name
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None) -> None:
    """Wait until every kernel launched so far has finished."""
    _lazy_backend()
    from minitorch_nn.backends.cuda import _numba

    _numba.cuda().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the cuda random generator (lazily: no GPU work if CUDA is never used)."""
    if not is_available():
        return  # PyTorch silently ignores the call without CUDA
    _lazy_backend().random.manual_seed(seed)


manual_seed_all = manual_seed


def memory_allocated(device=None) -> int:
    """Bytes held by live cuda tensors' storages."""
    if _backend is None:
        return 0
    return _backend.memory_allocated()


def init() -> None:
    _lazy_backend()


# The dispatcher loads the backend through this on the first op that meets a cuda tensor.
_dispatch.register_cuda_loader(_lazy_backend)

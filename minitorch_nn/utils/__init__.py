"""``minitorch_nn.utils``: ``swap_tensors`` (mirrors ``torch.utils``), ``_pytree`` (mirrors
``torch.utils._pytree``, imported on use) and ``dispatch_trace`` (ours); ``utils.data`` (datasets
and ``DataLoader``) and ``utils.checkpoint`` are subpackages.

They load on first use (``minitorch_nn.utils.data`` works as after ``import torch``), so that
importing ``nn`` (whose modules use ``utils.hooks``) does not pay for multiprocessing and friends.
"""

from minitorch_nn.utils import _python_dispatch  # noqa: F401  (torch.utils._python_dispatch.TorchDispatchMode works)
from minitorch_nn.utils._dispatch_trace import dispatch_trace
from minitorch_nn.utils._swap import swap_tensors

__all__ = ["dispatch_trace", "swap_tensors"]

_LAZY_SUBMODULES = frozenset({"data", "checkpoint"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"minitorch_nn.utils.{name}")
    raise AttributeError(f"module 'minitorch_nn.utils' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)

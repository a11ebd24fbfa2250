"""``minitorch_nn.utils``: ``swap_tensors`` (mirrors ``torch.utils``), ``_pytree`` (mirrors
``torch.utils._pytree``, imported on use) and ``dispatch_trace`` (ours)."""

from minitorch_nn.utils import _python_dispatch  # noqa: F401  (torch.utils._python_dispatch.TorchDispatchMode works)
from minitorch_nn.utils._dispatch_trace import dispatch_trace
from minitorch_nn.utils._swap import swap_tensors

__all__ = ["dispatch_trace", "swap_tensors"]

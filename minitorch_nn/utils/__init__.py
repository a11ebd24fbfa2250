"""``minitorch_nn.utils``: ``swap_tensors`` (mirrors ``torch.utils``) and ``dispatch_trace`` (ours);
``utils.data`` (datasets and ``DataLoader``) and ``utils.checkpoint`` are subpackages, imported
here because ``import torch`` makes ``torch.utils.data`` and ``torch.utils.checkpoint`` available."""

from minitorch_nn.utils import (
    _python_dispatch,  # noqa: F401  (torch.utils._python_dispatch.TorchDispatchMode works)
    checkpoint,
    data,
)
from minitorch_nn.utils._dispatch_trace import dispatch_trace
from minitorch_nn.utils._swap import swap_tensors

__all__ = ["dispatch_trace", "swap_tensors"]

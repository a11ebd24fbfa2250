"""``minitorch_nn.utils``: ``swap_tensors`` (mirrors ``torch.utils``) and ``dispatch_trace`` (ours);
``utils.data`` (datasets and ``DataLoader``) and ``utils.checkpoint`` are subpackages."""

from minitorch_nn.utils import _python_dispatch  # noqa: F401  (torch.utils._python_dispatch.TorchDispatchMode works)
from minitorch_nn.utils._dispatch_trace import dispatch_trace
from minitorch_nn.utils._swap import swap_tensors
from minitorch_nn.utils import data  # noqa: E402  (torch.utils.data, as `import torch` provides it)

__all__ = ["dispatch_trace", "swap_tensors"]
from minitorch_nn.utils import checkpoint  # noqa: E402  (torch.utils.checkpoint)

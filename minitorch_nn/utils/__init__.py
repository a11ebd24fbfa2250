"""``minitorch_nn.utils``: ``swap_tensors`` (mirrors ``torch.utils``)."""

from minitorch_nn.utils._swap import swap_tensors

__all__ = ["swap_tensors"]

"""``minitorch_nn.testing``: helpers for writing tests of tensor code (mirrors
``torch.testing``, plus what a course's graded tests need).

* :func:`assert_close`: PyTorch's comparison, tolerances per dtype and failure message;
* :func:`make_tensor`: a random tensor of a shape, dtype and device (``torch.testing.make_tensor``'s
  signature);
* :func:`check_gradients`, :func:`gradcheck`, :func:`gradgradcheck`: gradients against finite
  differences;
* :mod:`minitorch_nn.testing.strategies`: hypothesis strategies for tensors with random shapes,
  dtypes and memory layouts (imported on use, since it needs hypothesis).

Where we differ from PyTorch: ``strategies`` and ``check_gradients`` have no PyTorch
counterpart; ``make_tensor`` draws from numpy's generator.
"""

from minitorch_nn.testing._comparison import (
    DTYPE_PRECISIONS,
    assert_close,
    default_tolerances,
    make_tensor,
)
from minitorch_nn.testing._gradcheck import check_gradients, gradcheck, gradgradcheck, make_leaves

__all__ = [
    "DTYPE_PRECISIONS",
    "assert_close",
    "check_gradients",
    "default_tolerances",
    "gradcheck",
    "gradgradcheck",
    "make_leaves",
    "make_tensor",
]

"""``ConvTranspose3d``: the one regular convolution that ``LazyConvTranspose3d`` needs and ``conv.py`` lacks.

PyTorch defines it in ``torch/nn/modules/conv.py`` next to the other convolutions. It lives in its
own small file here only because ``conv.py`` is maintained separately; it reuses ``conv.py``'s
``_ConvTranspose`` (argument checks, weight layout (C_in, C_out/groups, kD, kH, kW), PyTorch's
initialisation and repr) and ``nn.functional.conv_transpose3d``, so it behaves like
``ConvTranspose1d``/``ConvTranspose2d``: same differences from PyTorch (``forward`` has no
``output_size``; only ``padding_mode="zeros"``).
"""

from __future__ import annotations

from minitorch_nn.nn import functional as F
from minitorch_nn.nn.modules.conv import _ConvTranspose

__all__ = ["ConvTranspose3d"]


class ConvTranspose3d(_ConvTranspose):
    """The adjoint of ``Conv3d`` over (N, C_in, D, H, W) input: ``weight`` is (C_in, C_out/groups, kD, kH, kW)."""

    _n = 3
    _fn = staticmethod(F.conv_transpose3d)

"""``InstanceNorm3d``: the one regular norm that ``LazyInstanceNorm3d`` needs and ``instancenorm.py`` lacks.

PyTorch defines it in ``torch/nn/modules/instancenorm.py``. It lives in its own small file here
only because ``instancenorm.py`` is maintained separately; everything but the number of spatial
dims comes from that file's ``_InstanceNorm`` (so the behaviour, and any difference from PyTorch,
is the same as ``InstanceNorm1d``/``InstanceNorm2d``'s).
"""

from __future__ import annotations

from minitorch_nn.nn.modules.instancenorm import _InstanceNorm

__all__ = ["InstanceNorm3d"]


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) input."""

    _ndim = 3

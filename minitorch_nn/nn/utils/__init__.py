"""``minitorch_nn.nn.utils`` (mirrors ``torch.nn.utils``): for now the parametrization tools.

* :mod:`~minitorch_nn.nn.utils.parametrize`: ``register_parametrization``, ``cached``,
  ``remove_parametrizations`` and friends;
* :mod:`~minitorch_nn.nn.utils.parametrizations`: the built-in ``orthogonal``, ``weight_norm``
  and ``spectral_norm``.

PyTorch's older hook-based ``torch.nn.utils.weight_norm``/``spectral_norm`` and the gradient
clipping helpers are not here.
"""

from minitorch_nn.nn.utils import parametrizations, parametrize  # noqa: F401

__all__ = ["parametrize", "parametrizations"]

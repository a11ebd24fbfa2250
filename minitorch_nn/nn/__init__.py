"""``minitorch_nn.nn``: parameters, modules, functional, init (mirrors ``torch.nn``)."""

from minitorch_nn.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from minitorch_nn.nn import modules  # noqa: F401
from minitorch_nn.nn.modules import *  # noqa: F403  (Module, containers and the layers)
from minitorch_nn.nn.modules import __all__ as _modules_all
from minitorch_nn.nn import functional, init  # noqa: E402,F401  (layers helper)
from minitorch_nn.nn import utils  # noqa: E402,F401  (parametrize, parametrizations)

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", *_modules_all]

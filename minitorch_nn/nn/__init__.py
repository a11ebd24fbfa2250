
from minitorch_nn.nn.parameter import Buffer, Parameter
from minitorch_nn.nn import modules  # noqa: F401
from minitorch_nn.nn.modules import *  # noqa: F403  (Module, containers and the layers)
from minitorch_nn.nn.modules import __all__ as _modules_all

__all__ = ["Parameter", "Buffer", *_modules_all]

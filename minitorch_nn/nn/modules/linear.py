"""``Identity``, ``Linear`` and ``Bilinear`` (mirrors ``torch/nn/modules/linear.py``).

``Linear`` keeps its weight as (out_features, in_features), PyTorch's layout, and computes
``x @ weight.T + bias`` through :func:`nn.functional.linear` (``aten.t`` + ``aten.addmm``).
Initialisation draws the same numbers as PyTorch: ``kaiming_uniform_(a=sqrt(5))`` for the weight
(which works out to U(-1/sqrt(in), 1/sqrt(in))) and U(-1/sqrt(in), 1/sqrt(in)) for the bias.
"""

from __future__ import annotations

import math

import minitorch_nn as _t
from minitorch_nn.nn import functional as F
from minitorch_nn.nn import init
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are accepted and ignored."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features)."""

    __constants__ = ["in_features", "out_features"]   # (TorchScript's list in PyTorch; kept for dir())

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_t.empty((out_features, in_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(_t.empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # a=sqrt(5) makes the kaiming bound 1/sqrt(fan_in): PyTorch's long-standing default.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        # Same objects as ``F.linear(input, self.weight, self.bias)``, read from the registry:
        # ``self.weight`` finds a parameter only after a failed normal lookup and a call of
        # Module.__getattr__ (about 2 us each, most of what this method costs by itself). A
        # name that is no longer a registered parameter (parametrized, or deleted and set to a
        # plain tensor) is read as an attribute, as before.
        params = self._parameters
        weight = params["weight"] if "weight" in params else self.weight
        bias = params["bias"] if "bias" in params else self.bias
        return F.linear(input, weight, bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each output feature, ``weight`` of shape (out, in1, in2)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_t.empty((out_features, in1_features, in2_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(_t.empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )

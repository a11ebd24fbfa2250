"""Convolution layers (mirrors ``torch/nn/modules/conv.py``).

``_ConvNd`` holds what every convolution shares: argument checks, the weight of shape
(out_channels, in_channels/groups, *kernel_size) -- or (in_channels, out_channels/groups,
*kernel_size) for the transposed ones --, PyTorch's initialisation and its ``repr``. The
subclasses only say how many spatial dims they have and which ``F.conv*`` they call; all of
those end in the single ``aten.convolution`` op (``backends/cpu/nn_ops.py``: im2col + matmul).
"""

from __future__ import annotations

import math

import minitorch_nn as _t
from minitorch_nn.nn import functional as F
from minitorch_nn.nn import init
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_t.empty(shape, **factory_kwargs))
        if bias:
            self.bias = Parameter(_t.empty(out_channels, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # Same draws as PyTorch: weight U(-1/sqrt(fan_in), ..) via kaiming(a=sqrt(5)), then the bias.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _reversed_padding_repeated_twice(self):
        """The ``F.pad`` argument for ``padding``: last dim first, each side given (left, right)."""
        out = []
        if isinstance(self.padding, str):
            if self.padding == "valid":
                return [0, 0] * len(self.kernel_size)
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                out += [total // 2, total - total // 2]
            return out
        for p in reversed(self.padding):
            out += [p, p]
        return out


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        n = self._n
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
            padding if isinstance(padding, str) else _ntuple(padding, n), _ntuple(dilation, n), False, _ntuple(0, n),
            groups, bias, padding_mode, device, dtype,
        )

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            # pad with the mode first, then convolve without padding (what PyTorch does)
            padded = F.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode)
            return type(self)._fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return type(self)._fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) input."""

    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) input: ``weight`` is (C_out, C_in/groups, kH, kW)."""

    _n = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) input."""

    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._n
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(padding, n),
            _ntuple(dilation, n), True, _ntuple(output_padding, n), groups, bias, padding_mode, device, dtype,
        )

    def _output_padding(self, input, output_size):
        """The output padding that makes the result ``output_size`` (a stride > 1 leaves a choice)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or {non_spatial + n} "
                f"elements (got {len(output_size)})"
            )
        min_sizes = [
            (input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            for d in range(n)
        ]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {input.size()[2:]})"
                )
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                              self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """The adjoint of ``Conv2d`` ("deconvolution"): ``weight`` is (C_in, C_out/groups, kH, kW)."""

    _n = 2
    _fn = staticmethod(F.conv_transpose2d)

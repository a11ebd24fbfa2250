"""The lazy layers: ``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*``, ``LazyInstanceNorm*``.

PyTorch defines each lazy layer next to its regular layer (``LazyLinear`` in
``torch/nn/modules/linear.py``, ``LazyConv2d`` in ``conv.py``...). Here all thirteen live in this one
file, so that the regular layer files stay about regular layers; the machinery they share is
``lazy.py`` (read its docstring first: it walks through one dry run).

Every lazy layer follows the same recipe:

1. ``class LazyFoo(LazyModuleMixin, Foo)`` with ``cls_to_become = Foo``: so ``isinstance(m, Foo)``
   holds before the dry run, and the object becomes a ``Foo`` after it;
2. ``__init__`` builds a ``Foo`` with size 0 and no bias/affine (so that no tensor is allocated
   and no random number is drawn), then puts placeholders in place of the parameters;
3. ``reset_parameters`` does nothing until the sizes are known (``Foo.__init__`` calls it);
4. ``initialize_parameters(input)`` reads the size from the input, materializes the placeholders
   and calls ``reset_parameters``, which now draws the same numbers as ``Foo`` would.

The inferred size: ``in_features = input.shape[-1]`` (Linear), ``in_channels = input.shape[1]``
(``shape[0]`` when unbatched) for convolutions, ``num_features = input.shape[1]`` for norms.

PyTorch's quirks are kept: before initialization the reprs show 0 for the unknown size
(``LazyLinear(in_features=0, out_features=10, bias=True)``); ``LazyInstanceNorm*`` defaults to
``affine=True, track_running_stats=True`` unlike ``InstanceNorm*``; after ``load_state_dict`` and a
forward, convs and norms keep ``in_channels``/``num_features`` at 0 (only LazyLinear fixes its size).

Differences from PyTorch: ``ConvTranspose*d.forward`` here has no ``output_size`` argument, so
``LazyConvTranspose*d`` accepts ``output_size`` for inference but the forward then refuses it.
"""

from __future__ import annotations

from minitorch_nn.nn.modules._helpers import no_grad
from minitorch_nn.nn.modules.batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,
    _NormBase,
)
from minitorch_nn.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from minitorch_nn.nn.modules.conv_extra import ConvTranspose3d
from minitorch_nn.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, _InstanceNorm
from minitorch_nn.nn.modules.lazy import LazyModuleMixin
from minitorch_nn.nn.modules.linear import Linear
from minitorch_nn.nn.modules.norm_extra import InstanceNorm3d
from minitorch_nn.nn.parameter_lazy import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


# =================================================================================================
# Linear
# =================================================================================================


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is read from the last dim of the first input.

    Example::

        >>> m = nn.LazyLinear(10)
        >>> m
        LazyLinear(in_features=0, out_features=10, bias=True)
        >>> _ = m(torch.ones(5, 3))
        >>> m
        Linear(in_features=3, out_features=10, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(0, 0, False)  # a Linear with nothing to allocate and nothing to draw
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # Initialized by load_state_dict, not by an input: take the size now, and check it.
            if input.shape[-1] != self.weight.shape[-1]:
                hint = ""
                if self.weight.shape[-1] == 0:
                    # (PyTorch too: swap_tensors replaces the placeholder's class with Parameter)
                    hint = (
                        "\nHint: the weight is an empty Parameter instead of a placeholder. That happens when the "
                        "module was converted (.to(), .double()...) with "
                        "torch.__future__.set_swap_module_params_on_conversion(True) before its first forward: "
                        "run the dry run first, or convert with the flag off."
                    )
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to in_features from "
                    f"self.weight: {self.weight.shape[-1]}" + hint
                )
            self.in_features = input.shape[-1]


# =================================================================================================
# Convolutions
# =================================================================================================


class _LazyConvXdMixin(LazyModuleMixin):
    """What the six lazy convolutions share: ``in_channels`` comes from the channel dim of the input."""

    _num_spatial_dims = 0  # set by each class

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        # *args/**kwargs: ConvTranspose's forward takes output_size, which the size does not depend on.
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        n = self._num_spatial_dims
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {self.__class__.__name__}, but "
                f"got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]

    def _lazy_conv_init(self, bias, factory_kwargs):
        # Called at the end of each __init__, after the size-0 conv is built without a bias.
        self.weight = UninitializedParameter(**factory_kwargs)
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        factory_kwargs = {"device": device, "dtype": dtype}
        # in_channels=0 and out_channels=0: the weight built here is empty and replaced below.
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            **factory_kwargs,
        )
        self.out_channels = out_channels
        self._lazy_conv_init(bias, factory_kwargs)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            **factory_kwargs,
        )
        self.out_channels = out_channels
        self._lazy_conv_init(bias, factory_kwargs)


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv1d
    _num_spatial_dims = 1


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv2d
    _num_spatial_dims = 2


class LazyConv3d(_LazyConv, Conv3d):
    """``Conv3d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv3d
    _num_spatial_dims = 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose1d
    _num_spatial_dims = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose2d
    _num_spatial_dims = 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose3d
    _num_spatial_dims = 3


# =================================================================================================
# Batch and instance norm
# =================================================================================================


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """What the six lazy norms share: ``num_features`` comes from ``input.shape[1]``.

    Placeholders replace ``weight``/``bias`` when ``affine`` and ``running_mean``/``running_var``
    when ``track_running_stats``; ``num_batches_tracked`` is a real 0 from the start (its shape,
    ``()``, does not depend on the input).
    """

    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        factory_kwargs = {"device": device, "dtype": dtype}
        # affine and track_running_stats off: the size-0 norm allocates nothing.
        super().__init__(0, eps, momentum, False, False, **factory_kwargs, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(**factory_kwargs)
            if bias:
                self.bias = UninitializedParameter(**factory_kwargs)
        if self.track_running_stats:
            # Assigning to names registered as (None) buffers registers buffers.
            self.running_mean = UninitializedBuffer(**factory_kwargs)
            self.running_var = UninitializedBuffer(**factory_kwargs)
            from minitorch_nn import long, tensor

            self.num_batches_tracked = tensor(0, dtype=long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """``BatchNorm1d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """``BatchNorm2d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """``BatchNorm3d`` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm1d`` whose ``num_features`` is read from the first input
    (note: ``affine`` and ``track_running_stats`` default to True here, as in PyTorch)."""

    cls_to_become = InstanceNorm1d
    _ndim = 1


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm2d`` whose ``num_features`` is read from the first input
    (``affine`` and ``track_running_stats`` default to True, as in PyTorch)."""

    cls_to_become = InstanceNorm2d
    _ndim = 2


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm3d`` whose ``num_features`` is read from the first input
    (``affine`` and ``track_running_stats`` default to True, as in PyTorch)."""

    cls_to_become = InstanceNorm3d
    _ndim = 3

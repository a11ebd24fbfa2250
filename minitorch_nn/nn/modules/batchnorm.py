"""Batch normalization (mirrors ``torch/nn/modules/batchnorm.py``).

``_NormBase`` owns the state shared with instance norm: the affine ``weight``/``bias``
parameters and the buffers ``running_mean``, ``running_var`` and ``num_batches_tracked`` (a 0-d
int64 tensor). In training, ``forward`` counts the batch and updates the running statistics with
``momentum`` -- or, with ``momentum=None``, with ``1 / num_batches_tracked``, a cumulative
average --; in eval it normalizes with the running statistics instead of the batch's.
``F.batch_norm`` does the work in one ``aten.native_batch_norm`` call.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.nn import functional as F
from minitorch_nn.nn import init
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_t.empty(num_features, **factory_kwargs))
            if bias:
                self.bias = Parameter(_t.empty(num_features, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", _t.zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", _t.ones(num_features, **factory_kwargs))
            self.register_buffer(
                "num_batches_tracked",
                _t.tensor(0, dtype=_t.long, device=factory_kwargs["device"]),
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    # (its override only fills in a key of the load's own copy of the state dict, so a load may
    # validate the whole tree with it before writing anything: see _state_dict.py)
    _load_from_state_dict_writes_nothing_else = True

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints from before num_batches_tracked existed (version < 2) load with a 0 count.
        version = local_metadata.get("version", None) if local_metadata else None
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None and self.num_batches_tracked.device.type != "meta"
                    else _t.tensor(0, dtype=_t.long)
                )
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        # Batch statistics in training, and in eval when there are no running stats to use.
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight, self.bias, bn_training, exponential_average_factor, self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input, one mean/var per channel."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")

"""Instance normalization (mirrors ``torch/nn/modules/instancenorm.py``).

Each (sample, channel) plane is normalized on its own. The state is batch norm's
(``_NormBase``) with other defaults: ``affine=False`` and ``track_running_stats=False``.
Unbatched input (one dim fewer) is accepted and given a batch dim of 1.
"""

from __future__ import annotations

from minitorch_nn._warnings import warn_user
from minitorch_nn.nn import functional as F
from minitorch_nn.nn.modules.batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]


class _InstanceNorm(_NormBase):
    _ndim = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._ndim + 1, self._ndim + 2):
            raise ValueError(
                f"expected {self._ndim + 1}D or {self._ndim + 2}D input (got {input.dim()}D input)"
            )

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._ndim - 1
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), "
                    f"but got: {input.size(feature_dim)}."
                )
            # without affine parameters num_features is unused, so PyTorch only warns
            warn_user(
                f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by "
                "not passing in num_features, which is not used because affine=False",
            )
        if input.dim() == self._ndim + 1:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _apply_instance_norm(self, input):
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps,
        )


class InstanceNorm1d(_InstanceNorm):
    _ndim = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) input."""

    _ndim = 2

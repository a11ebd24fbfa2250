"""``Uniform(low, high)`` on ``[low, high)`` (mirrors ``torch/distributions/uniform.py``).

``rsample`` is ``low + rand(shape) * (high - low)``, PyTorch's call, so seeded samples agree.
"""

from __future__ import annotations

from numbers import Number

import minitorch_nn as _t
from minitorch_nn.distributions import constraints
from minitorch_nn.distributions.distribution import Distribution
from minitorch_nn.distributions.utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform on the half-open interval ``[low, high)``."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if isinstance(low, Number) and isinstance(high, Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = _t.Size(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _t.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return _t.log(lb.mul(ub)) - _t.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return _t.log(self.high - self.low)

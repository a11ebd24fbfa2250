"""``OneHotCategorical(probs=None, logits=None)``: a ``Categorical`` whose samples are one-hot
vectors (mirrors ``torch/distributions/one_hot_categorical.py``).

It wraps a ``Categorical`` and draws through it, so seeded samples agree with PyTorch.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.distributions import constraints
from minitorch_nn.distributions.categorical import Categorical
from minitorch_nn.distributions.distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """One-hot vectors of size ``K``: event shape ``(K,)``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = _t.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(_t.Size(sample_shape))
        return _one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _t.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


def _one_hot(indices, num_classes):
    from minitorch_nn.nn.functional import one_hot

    return one_hot(indices, num_classes)

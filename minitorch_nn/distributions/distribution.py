"""``Distribution``: the interface every distribution follows (mirrors
``torch/distributions/distribution.py``).

Shapes: a distribution holds a *batch* of independent distributions (``batch_shape``), each over
events of ``event_shape``; ``sample(sample_shape)`` returns ``sample_shape + batch_shape +
event_shape``. ``rsample`` is the reparameterised sample (gradients flow to the parameters); the
default ``sample`` is ``rsample`` without gradients.

Validation: with ``validate_args`` on (the default, as in PyTorch when Python runs without ``-O``)
the constructor checks every parameter against ``arg_constraints`` and ``log_prob`` checks its
value against ``support``, with PyTorch's ``ValueError`` messages. Switch it off per instance
(``validate_args=False``) or globally (``Distribution.set_default_validate_args(False)``).
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.distributions import constraints
from minitorch_nn.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class for probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for every distribution built afterwards without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None) -> None:
        self._batch_shape = _t.Size(batch_shape)
        self._event_shape = _t.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warn_user(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                    "to turn off validation.",
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # the other parameterisation was given; this one is derived
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )

    # ------------------------------------------------------------------ shapes
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return _t.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ "
                "method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    # ------------------------------------------------------------------ what subclasses define
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample without gradients: ``rsample`` under ``no_grad`` unless overridden."""
        with _t.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warn_user("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(_t.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _t.exp(self.entropy())

    # ------------------------------------------------------------------ validation
    def _validate_sample(self, value) -> None:
        """PyTorch's checks on a value given to ``log_prob``/``cdf``: a tensor, shapes, support."""
        if not isinstance(value, _t.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}."
                )
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}" for p in names
        )
        return self.__class__.__name__ + "(" + args + ")"

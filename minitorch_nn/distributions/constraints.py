"""Constraints: which values a distribution's parameters and samples may take (mirrors
``torch/distributions/constraints.py``, the part the distributions here use).

A constraint's ``check(value)`` returns a boolean tensor, ``True`` where ``value`` satisfies it;
for constraints on whole events (``event_dim = 1``: a probability vector, a one-hot vector) the
last dimension is reduced away. Their ``repr`` is PyTorch's, because it appears in error messages.
"""

from __future__ import annotations

import minitorch_nn as _t

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than", "greater_than_eq",
    "independent", "integer_interval", "interval", "is_dependent", "less_than", "nonnegative",
    "one_hot", "positive", "real", "real_vector", "simplex", "unit_interval",
]


class Constraint:
    """Base class: ``check(value)`` is a boolean tensor; ``is_discrete``/``event_dim`` describe it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (never checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A ``property`` (e.g. ``Uniform.support``, built from ``low``/``high``) that reads as a
    dependent constraint on the class."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


def dependent_property(fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
    if fn is None:
        return _DependentProperty(is_discrete=is_discrete, event_dim=event_dim)
    return _DependentProperty(fn, is_discrete=is_discrete, event_dim=event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` applied to whole events of ``reinterpreted_batch_ndims`` dimensions."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        result = result.reshape(result.shape[: result.dim() - self.reinterpreted_batch_ndims] + (-1,))
        return result.all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Non-negative vectors summing to 1 (to within 1e-6) along the last dimension."""

    event_dim = 1

    def check(self, value):
        return _t.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


dependent = _Dependent()
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
simplex = _Simplex()

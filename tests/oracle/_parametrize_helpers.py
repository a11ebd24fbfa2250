"""Shared pieces of the parametrization oracle tests (``test_parametrize*_oracle.py``,
``test_parametrizations_builtin_oracle.py``).

Every scenario runs once with each library (``lib`` is ``torch`` or ``minitorch_nn``) and the
results are compared. Here: running a scenario with both libraries, the comparison helpers,
and the parametrizations the scenarios register, built for either library.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402

LIBS = [mt, torch]


def P(lib):
    return lib.nn.utils.parametrize


def PZ(lib):
    return lib.nn.utils.parametrizations


def arr(t):
    return t.detach().numpy().copy()


def both(fn):
    """Run ``fn(lib)`` with each library; return (ours, torch's)."""
    return fn(mt), fn(torch)


def assert_same(a, b, atol=1e-5):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, atol)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-5)
    else:
        assert a == b


def outcome(fn):
    """(exception type name, message) or ("ok", result) of ``fn()``."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).split("\nHint:")[0])


# ---------------------------------------------------------------------------------------------
# Parametrizations used below, built for either library
# ---------------------------------------------------------------------------------------------


def kit(lib):
    nn = lib.nn

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class Double(nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    class NoInverse(nn.Module):
        def forward(self, X):
            return X + 0

    class Resize(nn.Module):
        def forward(self, X):
            return X[[0]]

    class ToBool(nn.Module):
        def forward(self, X):
            return X > 0

    class ReturnsInt(nn.Module):
        def forward(self, X):
            return 1

    class RightInvNone(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return None

    class RightInvBool(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return X > 0

    class RightInvNotImpl(nn.Module):
        def forward(self, X):
            return X * 3

        def right_inverse(self, X):
            raise NotImplementedError

    class RightInvTuple(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return (X, X)

    class SeqWithNone(nn.Module):
        def forward(self, X, Y):
            return X

        def right_inverse(self, X):
            return [X, None]

    class SequenceLen1(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return (X,)

    class Sum(nn.Module):
        def forward(self, X, Y):
            return X + Y

        def right_inverse(self, Z):
            return Z, lib.zeros_like(Z)

    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, X):
            self.calls += 1
            return X

    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", lib.ones(1) * 3)

        def forward(self, X):
            return X * self.scale

        def right_inverse(self, X):
            return X / self.scale

    return {k: v for k, v in locals().items() if isinstance(v, type)}


def linear(lib, seed=0, n=3, m=3):
    lib.manual_seed(seed)
    return lib.nn.Linear(m, n)

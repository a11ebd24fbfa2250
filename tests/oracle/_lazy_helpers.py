"""Shared pieces of the lazy-module oracle tests (``test_lazy_*_oracle.py``).

Each scenario is a function of the library (``torch`` or ``minitorch_nn``) that returns plain
Python values (strings, shapes, numpy arrays, error summaries); the test runs it with both and
compares. Here: running with both libraries, the error summary, and the comparison that treats
initial values as exact and kernel outputs (:class:`Approx`) as equal up to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)
import minitorch_nn as mt  # noqa: E402

LIBS = (torch, mt)


def both(fn, *args):
    """Run ``fn(lib, *args)`` with PyTorch and with minitorch_nn; return the two results."""
    return fn(torch, *args), fn(mt, *args)


def err(fn):
    """``(exception type name, message)`` of what ``fn()`` raises, or ``None``."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e)
    return None


class Approx:
    """Marks values computed by kernels (outputs, running statistics): equal up to float rounding.

    Initial values are not wrapped: they come from the RNG and ``nn.init`` and must match exactly.
    """

    def __init__(self, a):
        self.a = a


def assert_same(a, b):
    """Deep equality where numpy arrays compare exactly (same dtype, same bits)."""
    if isinstance(a, Approx):
        assert isinstance(b, Approx) and a.a.dtype == b.a.dtype and a.a.shape == b.a.shape
        np.testing.assert_allclose(b.a, a.a, rtol=1e-5, atol=1e-6)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), (a, b)
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (a, b)
        for k in a:
            assert_same(a[k], b[k])
    else:
        assert a == b, (a, b)


def arr(t):
    return t.detach().numpy().copy()


def sd_summary(lib, sd):
    """A state dict as {key: class name and, for real tensors, values}."""
    out = {}
    for k, v in sd.items():
        if lib.nn.parameter.is_lazy(v):
            out[k] = repr(v)
        else:
            out[k] = (
                type(v).__name__,
                Approx(arr(v)),
            )  # (parameters are compared exactly elsewhere)
    return out


def error_summary(e):
    # The message names ``func``, whose repr differs between the libraries: keep the rest.
    if e is None:
        return None
    kind, msg = e
    if msg.startswith("Attempted to use an uninitialized parameter in "):
        return kind, msg.split(". ", 1)[1]
    return kind, msg

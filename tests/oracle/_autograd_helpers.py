"""Shared pieces of the autograd oracle tests (``test_autograd_*_oracle.py``): the fixed
asymmetric weights of every loss, reading a gradient as a numpy array, and the second-order
check (gradients of a weighted sum of the first-order gradients, compared between torch and
minitorch_nn).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402


def asym_weights(L, t):
    # Fixed, asymmetric weights so that no gradient cancels by symmetry.
    n = t.numel()
    return (L.arange(n, dtype=L.float64) * 0.37 + 0.1).sin().reshape(tuple(t.shape))


def as_np(t):
    return None if t is None else np.array(t.detach().numpy(force=True))


def second_order(L, leaves, grads):
    """Gradients of a weighted sum of first-order gradients (None where nothing depends on a leaf)."""
    graded = [g for g in grads if g is not None and g.requires_grad]
    if not graded:
        return [None] * len(leaves)
    total = sum((g * asym_weights(L, g)).sum() for g in graded)
    return L.autograd.grad(total, leaves, allow_unused=True)


def compare_second_order(tl, tg, ml, mg, msg):
    # A path whose second derivative is exactly zero may be kept by one library and pruned by
    # the other (torch's relu/hardtanh backward ops take their input; our formulas mask with it):
    # None on one side must then be all zeros on the other.
    for a, b in zip(second_order(torch, tl, tg), second_order(mt, ml, mg)):
        if a is None or b is None:
            other = a if b is None else b
            assert other is None or not np.any(as_np(other)), msg
            continue
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-5, atol=1e-8, err_msg=msg)

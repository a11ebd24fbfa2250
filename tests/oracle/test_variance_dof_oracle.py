"""var/std gradients when no degrees of freedom are left (``correction >= n``), against torch.

PyTorch divides by ``n - correction`` in floating point: 0 gives infinities (and NaN where the
deviation is 0), a negative count a finite gradient of the other sign. Ours used to raise
ZeroDivisionError. (The all-dims reduction in torch gives +inf everywhere, whatever the sign:
not reproduced, so only reductions over a dim are compared.)
"""

import warnings

import numpy as np
import pytest

import minitorch_nn as mt

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("values, correction", [([1.0, 3.0], 2), ([3.0, 1.0, 2.0], 3), ([1.0, 2.0, 4.0], 5),
                                                ([2.0], 1), ([1.0, 2.0, 4.0], 1)])
def test_gradient_with_no_degrees_of_freedom(op, values, correction):
    grads = []
    for lib in (torch, mt):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(x, op)(0, correction=correction)
            (y * -2).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])

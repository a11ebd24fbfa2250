"""Oracle: ``autograd.functional`` (``jacobian``, ``hessian``, ``vjp``, ``jvp``...) against
PyTorch 2.13.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.oracle._autograd_helpers import as_np  # noqa: E402

# ---------------------------------------------------------------------------------------------
# autograd.functional
# ---------------------------------------------------------------------------------------------


def _f_vec(x):
    return (x * x).sin() * x.sum()


def _f_two(x, y):
    return x @ y, (x * 2).sum(1)


def _f_scalar(x, y):
    return (x.tanh() @ y).pow(2).sum()


FUNCTIONAL = {
    "jacobian_vec": lambda F, L, x, y: F.jacobian(_f_vec, x),
    "jacobian_two": lambda F, L, x, y: F.jacobian(_f_two, (x, y.t())),
    "hessian": lambda F, L, x, y: F.hessian(_f_scalar, (x, y.t())),
    "hessian_single": lambda F, L, x, y: F.hessian(lambda a: (a.exp() * a).sum(), x),
    "vjp": lambda F, L, x, y: F.vjp(_f_vec, x, L.ones(2, 3, dtype=L.float64) * 0.5),
    "jvp": lambda F, L, x, y: F.jvp(_f_vec, x, y),
    "vhp": lambda F, L, x, y: F.vhp(lambda a: (a.exp() * a).sum(), x, y),
    "hvp": lambda F, L, x, y: F.hvp(lambda a: (a.sin() * a).sum(), x, y),
}


def _flatten(obj):
    if isinstance(obj, (tuple, list)):
        return [v for o in obj for v in _flatten(o)]
    return [as_np(obj)]


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_matches_torch(name):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    results = []
    for L, F in ((torch, torch.autograd.functional), (mt, mt.autograd.functional)):
        x, y = L.tensor(a, dtype=L.float64), L.tensor(b, dtype=L.float64)
        results.append(_flatten(FUNCTIONAL[name](F, L, x, y)))
    assert len(results[0]) == len(results[1])
    for t, m in zip(*results):
        assert t.shape == m.shape
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-10)

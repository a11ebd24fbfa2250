"""Shared pieces of the complex-dtype oracle tests (``test_complex_oracle.py``,
``test_complex_autograd_oracle.py``): running one scenario in both libraries, comparing results or
errors, and a hypothesis strategy for complex tensors in every memory layout.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.strategies import LAYOUTS, TensorSpec, _base_shape, shapes  # noqa: E402

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
COMPLEX = ("complex64", "complex128")
LIBS = (torch, mt)


def run(fn):
    """``fn(lib)`` for torch and minitorch_nn: (torch result or exception, ours)."""
    out = []
    for lib in LIBS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - compared by the caller
            out.append(e)
    return out


def same_error(t, m):
    assert isinstance(t, Exception) and isinstance(m, Exception), (t, m)
    assert type(m).__name__ == type(t).__name__, (type(m), type(t), m, t)
    first_line = str(t).split("\n")[0].strip()
    assert first_line in str(m), (str(m), str(t))


def check(t, m, *, rtol=None, atol=None, exact=False):
    """``m`` (minitorch_nn) matches ``t`` (torch): both raise alike, or dtype, shape and values agree."""
    if isinstance(t, Exception):
        same_error(t, m)
        return
    assert not isinstance(m, Exception), f"torch gave {t!r}, minitorch_nn raised {m!r}"
    if isinstance(t, (tuple, list)):
        assert len(t) == len(m)
        for a, b in zip(t, m):
            check(a, b, rtol=rtol, atol=atol, exact=exact)
        return
    if not isinstance(t, torch.Tensor):
        assert type(m) is type(t), (m, t)
        if isinstance(t, (complex, float)):
            assert m == pytest.approx(t, rel=1e-5, abs=1e-6, nan_ok=True), (m, t)
        else:
            assert m == t
        return
    assert isinstance(m, mt.Tensor), m
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    assert tuple(m.shape) == tuple(t.shape), (m.shape, t.shape)
    tv = t.detach().resolve_conj().numpy()
    mv = np.asarray(m.detach().resolve_conj().numpy())
    if exact or tv.dtype.kind in "biu":
        np.testing.assert_array_equal(mv, tv)
        return
    single = tv.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(
        mv, tv, rtol=rtol if rtol is not None else (2e-5 if single else 1e-12),
        atol=atol if atol is not None else (2e-5 if single else 1e-12), equal_nan=True,
    )


def both(fn, **kw):
    t, m = run(fn)
    check(t, m, **kw)
    return t, m


def complex_values(rng, shape, dtype, *, small=False):
    scale = 1.0 if small else 3.0
    re = rng.uniform(-scale, scale, shape)
    im = rng.uniform(-scale, scale, shape)
    return np.asarray(re + 1j * im).astype(dtype)


@st.composite
def complex_specs(draw, shape=None, dtypes=COMPLEX, layouts=LAYOUTS, *, min_dims=0, max_dims=3, small=False):
    """A complex :class:`TensorSpec`: random shape, dtype, layout and values."""
    if shape is None:
        shape = draw(shapes(min_dims, max_dims))
    dtype = draw(st.sampled_from(dtypes))
    layout = draw(st.sampled_from(layouts)) if shape else "contiguous"
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    base = complex_values(rng, _base_shape(shape, layout), dtype, small=small)
    return TensorSpec(base, dtype, layout, tuple(shape))

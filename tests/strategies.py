"""Hypothesis strategies for tensors: random shapes, dtypes, values and memory layouts.

As in MiniTorch's test suite, a strategy draws not only values but also how they sit in memory:
the same logical tensor can be contiguous, a transpose (permuted strides), a strided slice (a
step > 1 and a storage offset) or an expansion (a zero stride). Oracle tests build the *same*
layout in minitorch_nn and in PyTorch from one numpy array, run one op in both and compare.

The strategies only draw plain data (:class:`TensorSpec`); :func:`build` turns a spec into a
tensor of either library, so this file does not need torch to import.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from minitorch_nn.testing.strategies import values as _package_values

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "offset")

_NUMPY = {name: np.dtype(name) for name in DTYPE_NAMES if name != "bfloat16"}
_NUMPY["bfloat16"] = np.dtype(ml_dtypes.bfloat16)


@dataclass(frozen=True)
class TensorSpec:
    """Everything needed to build one tensor identically in two libraries."""

    base: np.ndarray  # contiguous storage values (already in the final dtype)
    dtype: str
    layout: str
    shape: tuple  # the logical shape after the layout is applied

    def __repr__(self):
        return f"TensorSpec({self.dtype}, {self.layout}, shape={self.shape}, base={self.base.tolist()!r})"


def values(rng: np.random.Generator, shape, dtype: str, *, specials=True, positive=False, small=False):
    """Random values for ``dtype``: :func:`minitorch_nn.testing.strategies.values`, with the
    inf/nan/-0 sprinkle on by default (the oracle tests want the special values)."""
    return _package_values(rng, shape, dtype, specials=specials, positive=positive, small=small)


def _base_shape(shape, layout):
    shape = tuple(shape)
    if layout == "transposed":
        return shape[::-1]
    if layout == "sliced" and shape:
        return shape[:-1] + (2 * shape[-1],)
    if layout == "expanded" and shape:
        return (1,) + shape[1:]
    if layout == "offset" and shape:
        return (shape[0] + 1,) + shape[1:]
    return shape


def build(lib, spec: TensorSpec):
    """Make ``spec`` as a tensor of ``lib`` (``minitorch_nn`` or ``torch``) with its layout."""
    base = spec.base
    if spec.dtype == "bfloat16":
        t = lib.from_numpy(base.astype(np.float32)).to(lib.bfloat16)
    else:
        t = lib.from_numpy(base.copy())
    shape = spec.shape
    if spec.layout == "transposed":
        t = t.permute(*reversed(range(t.dim())))
    elif spec.layout == "sliced" and shape:
        t = t[..., ::2]
    elif spec.layout == "expanded" and shape:
        t = t.expand(*shape)
    elif spec.layout == "offset" and shape:
        t = t[1:]
    return t


@st.composite
def shapes(draw, min_dims=0, max_dims=3, min_side=1, max_side=4):
    return tuple(draw(st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims)))


@st.composite
def tensor_specs(draw, shape=None, dtypes=DTYPE_NAMES, layouts=LAYOUTS, *, specials=True, positive=False,
                 small=False, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A :class:`TensorSpec` with a random (or given) shape, dtype, layout and values."""
    if shape is None:
        shape = draw(shapes(min_dims, max_dims, min_side, max_side))
    dtype = draw(st.sampled_from(dtypes))
    layout = draw(st.sampled_from(layouts)) if shape else "contiguous"
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = values(rng, _base_shape(shape, layout), dtype, specials=specials, positive=positive, small=small)
    return TensorSpec(base, dtype, layout, tuple(shape))


def broadcastable_to(shape):
    """A shape that broadcasts against ``shape``: trailing dims kept or set to 1, maybe fewer dims."""

    @st.composite
    def strat(draw):
        ndim = draw(st.integers(0, len(shape)))
        tail = shape[len(shape) - ndim:]
        return tuple(draw(st.sampled_from([s, 1])) for s in tail)

    return strat()


def python_scalars(kind=None):
    """Python bool / int / float operands (the "wrapped number" tier of type promotion)."""
    strats = {
        "bool": st.booleans(),
        "int": st.integers(-5, 5),
        "float": st.sampled_from([0.5, -1.25, 2.0, 3.7, 1e-3, -0.0, 1000.0]),
    }
    if kind is not None:
        return strats[kind]
    return st.one_of(*strats.values())


# -- comparing a minitorch_nn result with PyTorch's ---------------------------------------------------

_TOLERANCES = {  # (rtol, atol) per dtype, like torch.testing.assert_close's defaults
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
}


def to_numpy(t):
    """Values of a tensor of either library as a numpy array (16-bit floats widened to float64)."""
    t = t.detach()
    name = str(t.dtype).replace("torch.", "")
    if name in FLOAT_NAMES:
        lib = _mt() if isinstance(t, _mt().Tensor) else _torch()
        t = t.to(lib.float64)
    return np.asarray(t.numpy())


def _mt():
    import minitorch_nn

    return minitorch_nn


def _torch():
    import torch

    return torch


def assert_same(m, t, *, rtol=None, atol=None, exact=False, check_stride=False):
    """``m`` (minitorch_nn) equals ``t`` (torch): type, dtype, shape and values (NaN == NaN)."""
    torch = _torch()
    if isinstance(t, (tuple, list)):
        assert isinstance(m, (tuple, list)), f"expected a sequence like torch's, got {type(m).__name__}"
        assert len(m) == len(t), (len(m), len(t))
        for a, b in zip(m, t):
            assert_same(a, b, rtol=rtol, atol=atol, exact=exact, check_stride=check_stride)
        return
    if not isinstance(t, torch.Tensor):
        assert type(m) is type(t), f"{type(m).__name__} != {type(t).__name__}"
        if isinstance(t, float) and t != t:
            assert m != m
        else:
            assert m == t or abs(m - t) <= 1e-6 * max(1.0, abs(t)), (m, t)
        return
    assert isinstance(m, _mt().Tensor), f"expected a Tensor, got {type(m).__name__}"
    assert str(m.dtype) == str(t.dtype), f"dtype {m.dtype} != torch's {t.dtype}"
    assert tuple(m.shape) == tuple(t.shape), f"shape {tuple(m.shape)} != torch's {tuple(t.shape)}"
    if check_stride:
        assert m.stride() == t.stride(), f"stride {m.stride()} != torch's {t.stride()}"
    mv, tv = to_numpy(m), to_numpy(t)
    name = str(t.dtype).replace("torch.", "")
    if name in FLOAT_NAMES and not exact:
        r, a = _TOLERANCES[name]
        np.testing.assert_allclose(mv, tv, rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(mv, tv)


def run_both(fn, *inputs, compare=True, **cmp):
    """Run ``fn(lib, *inputs)`` with both libraries (specs become tensors); compare results or errors.

    When torch raises, minitorch_nn must raise the same exception type; returns both results
    (or both exceptions) for further checks.
    """
    import minitorch_nn

    torch = _torch()
    outs = []
    for lib in (torch, minitorch_nn):
        args = [build(lib, x) if isinstance(x, TensorSpec) else x for x in inputs]
        try:
            outs.append(fn(lib, *args))
        except Exception as e:  # noqa: BLE001 - compared below
            outs.append(e)
    t, m = outs
    if isinstance(t, Exception):
        assert isinstance(m, Exception), f"torch raised {type(t).__name__}: {t}; minitorch_nn returned {m!r}"
        assert type(m) is type(t) or isinstance(m, type(t)), (
            f"torch raised {type(t).__name__}: {t}; minitorch_nn raised {type(m).__name__}: {m}"
        )
        return m, t
    if isinstance(m, Exception):
        raise AssertionError(f"minitorch_nn raised {type(m).__name__}: {m}; torch returned {t!r}") from m
    if compare:
        assert_same(m, t, **cmp)
    return m, t

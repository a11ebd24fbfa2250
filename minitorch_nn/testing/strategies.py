"""Hypothesis strategies for tensors, for the tests a course writes (no PyTorch counterpart;
PyTorch's own suite uses ``make_tensor`` and OpInfo samples instead).

A tensor test is only as good as its inputs. These strategies draw not only a shape, a dtype
and values, but also *how the values sit in memory*, because most bugs in a kernel or a view
function show up only for non-contiguous inputs:

* ``"contiguous"``: row-major, strides from :func:`contiguous strides <shapes>`;
* ``"transposed"``: the dims of a contiguous tensor reversed (permuted strides);
* ``"sliced"``: every other element of the last dim (a stride of 2);
* ``"expanded"``: the first dim broadcast from size 1 (a zero stride);
* ``"offset"``: a slice that starts one row in (a storage offset).

The strategies draw plain data, a :class:`TensorSpec`, and :meth:`TensorSpec.build` makes it a
tensor of any library with a torch-like API (``minitorch_nn``, or ``torch`` in a differential
test), so one drawn example gives the *same* tensor, layout included, to two implementations.

Example::

    from hypothesis import given
    from minitorch_nn.testing import strategies as mts

    @given(mts.tensor_specs(dtypes=mts.FLOAT_NAMES))
    def test_neg_twice(spec):
        x = spec.build(minitorch_nn)
        assert_close(-(-x), x)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "offset")


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype that stores values of the tensor dtype ``name``."""
    return _BF16 if name == "bfloat16" else np.dtype(name)


@dataclass(frozen=True)
class TensorSpec:
    """A drawn tensor as plain data: contiguous ``base`` storage values, and how to view them.

    ``shape`` is the logical shape after ``layout`` is applied to ``base``.
    """

    base: np.ndarray
    dtype: str
    layout: str
    shape: tuple

    def build(self, lib, *, requires_grad=False):
        """This tensor in library ``lib`` (a module with ``from_numpy``, e.g. ``minitorch_nn``)."""
        if self.dtype == "bfloat16":
            t = lib.from_numpy(self.base.astype(np.float32)).to(lib.bfloat16)
        else:
            t = lib.from_numpy(self.base.copy())
        if self.shape:
            if self.layout == "transposed":
                t = t.permute(*reversed(range(t.dim())))
            elif self.layout == "sliced":
                t = t[..., ::2]
            elif self.layout == "expanded":
                t = t.expand(*self.shape)
            elif self.layout == "offset":
                t = t[1:]
        if requires_grad:
            t = t.detach().requires_grad_(True)  # a leaf (the layout's view would not be one)
        return t

    def numpy(self) -> np.ndarray:
        """The logical values as a numpy array (what :meth:`build` shows, as a copy)."""
        b = self.base
        if not self.shape:
            return b.copy()
        if self.layout == "transposed":
            return b.transpose().copy()
        if self.layout == "sliced":
            return b[..., ::2].copy()
        if self.layout == "expanded":
            return np.broadcast_to(b, self.shape).copy()
        if self.layout == "offset":
            return b[1:].copy()
        return b.copy()

    def __repr__(self):
        return f"TensorSpec({self.dtype}, {self.layout}, shape={self.shape}, base={self.base.tolist()!r})"


def values(rng: np.random.Generator, shape, dtype: str, *, specials=False, positive=False, small=False):
    """Random values of ``dtype`` and ``shape`` from ``rng``: small integers, or normal floats
    (with ``specials``, about 10% of them inf, -inf, nan, 0 or -0)."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        arr = rng.integers(0, 2, n).astype(bool)
    elif dtype in INT_NAMES:
        lo = 0 if dtype == "uint8" or positive else (-5 if small else -20)
        arr = rng.integers(lo, 6 if small else 21, n).astype(dtype)
    else:
        arr = rng.standard_normal(n) * (1.5 if small else 3.0)
        if positive:
            arr = np.abs(arr) + 0.1
        if specials and n:
            mask = rng.random(n) < 0.1
            arr[mask] = rng.choice([np.inf, -np.inf, np.nan, 0.0, -0.0], mask.sum())
        arr = arr.astype(numpy_dtype(dtype))
    return arr.reshape(shape)


def _base_shape(shape, layout):
    shape = tuple(shape)
    if not shape:
        return shape
    return {
        "transposed": shape[::-1],
        "sliced": shape[:-1] + (2 * shape[-1],),
        "expanded": (1,) + shape[1:],
        "offset": (shape[0] + 1,) + shape[1:],
    }.get(layout, shape)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A shape tuple with ``min_dims``..``max_dims`` dims of size ``min_side``..``max_side``."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def tensor_specs(draw, shape=None, dtypes=FLOAT_NAMES, layouts=LAYOUTS, *, specials=False,
                 positive=False, small=False, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A :class:`TensorSpec` with a random (or the given) shape, dtype from ``dtypes``, layout
    from ``layouts`` and values (see :func:`values`)."""
    if shape is None:
        shape = draw(shapes(min_dims, max_dims, min_side, max_side))
    dtype = draw(st.sampled_from(tuple(dtypes)))
    layout = draw(st.sampled_from(tuple(layouts))) if shape else "contiguous"
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    base = values(rng, _base_shape(shape, layout), dtype, specials=specials, positive=positive, small=small)
    return TensorSpec(base, dtype, layout, tuple(shape))


def tensors(lib=None, **kwargs):
    """Tensors of ``lib`` (default ``minitorch_nn``) built from :func:`tensor_specs` (same arguments)."""
    if lib is None:
        import minitorch_nn as lib
    return tensor_specs(**kwargs).map(lambda spec: spec.build(lib))


def broadcastable_to(shape):
    """A shape that broadcasts against ``shape``: its trailing dims, each kept or set to 1."""

    @st.composite
    def strat(draw):
        ndim = draw(st.integers(0, len(shape)))
        tail = tuple(shape)[len(shape) - ndim:]
        return tuple(draw(st.sampled_from([s, 1])) for s in tail)

    return strat()


@st.composite
def dim_pairs(draw, ndim):
    """Two dims (possibly equal, possibly negative) valid for a tensor with ``ndim`` dims."""
    n = max(ndim, 1)
    return draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))


@st.composite
def reshapes(draw, shape):
    """A new shape with the same number of elements as ``shape`` (for view/reshape tests)."""
    numel = int(np.prod(shape, dtype=np.int64))
    if numel == 0:
        return tuple(shape)
    factors, n, p = [], numel, 2
    while n > 1:  # prime factors, then grouped into random dims
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    factors = draw(st.permutations(factors)) if factors else []
    dims, i = [], 0
    while i < len(factors):
        k = draw(st.integers(1, len(factors) - i))
        dims.append(int(np.prod(factors[i:i + k])))
        i += k
    ones = draw(st.integers(0, 2))
    for _ in range(ones):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)

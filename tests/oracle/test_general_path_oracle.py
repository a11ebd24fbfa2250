"""Oracle: the shortcuts inside the general (Python) dispatch path give what PyTorch 2.13 gives.

The general path takes short cuts for its common cases (``bench/bench_dispatch.py`` times them):
``x[i]`` and ``x[a:b]`` go straight to ``select``/``slice``; advanced indexing lets numpy find an
index out of range before working out PyTorch's message; ``view``/``expand``/``repeat`` read plain
int sizes without ``normalize_size``; ``reshape`` of a row-major tensor skips the view-strides
search; the cpu ``binary`` helper knows the answers for two row-major tensors of one dtype and
shape; softmax, the reductions over one dim and ``nll_loss`` call numpy's ufuncs directly. Each
test draws the cases on both sides of those shortcuts (empty and 0-d tensors, every memory
layout, out-of-range values, other argument forms) and compares the result (shape, strides,
dtype, values) or the error (type and message) with PyTorch's.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.strategies import FLOAT_NAMES, assert_same, build, tensor_specs  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def outcome(fn, *, offset=True):
    """("ERR", type, first line of the message) or ("OK", shape, strides, offset, dtype, values)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - both libraries' errors are compared
            return ("ERR", type(e).__name__, str(e).split("\n")[0])
    strides = tuple(r.stride()) if r.numel() else None  # (empty results: see test_indexing_oracle)
    # (so is an empty result's offset: slicing an empty tensor leaves PyTorch's at 0)
    return ("OK", tuple(r.shape), strides, r.storage_offset() if offset and r.numel() else None,
            str(r.dtype).removeprefix("torch."), _values(r))


def _values(t):
    # 16-bit floats compared as float64 (their tolist() differs in nothing but the Python type)
    name = str(t.dtype).removeprefix("torch.")
    if name in ("float16", "bfloat16"):
        lib = torch if isinstance(t, torch.Tensor) else mt
        t = t.to(lib.float64)
    return np.asarray(t.detach().numpy()).tolist()


def both(fn, spec, **kw):
    return outcome(lambda: fn(mt, build(mt, spec)), **kw), outcome(lambda: fn(torch, build(torch, spec)), **kw)


def _same_outcome(m, t):
    if m[0] == "OK" and t[0] == "OK":
        assert m[:5] == t[:5], (m[:5], t[:5])
        np.testing.assert_array_equal(np.asarray(m[5]), np.asarray(t[5]))  # (NaN equals NaN here)
    else:
        assert m == t


# -- x[i], x[a:b] --------------------------------------------------------------------------------

_slices = st.builds(
    slice,
    st.one_of(st.none(), st.integers(-6, 6)),
    st.one_of(st.none(), st.integers(-6, 6)),
    st.one_of(st.none(), st.sampled_from([-1, 0, 1, 2, 3])),
)


@SETTINGS
@given(spec=tensor_specs(min_side=0, max_dims=3), index=st.one_of(st.integers(-6, 6), _slices))
def test_int_and_slice_index(spec, index):
    # the one-int / one-slice shortcut, on 0-d and empty tensors and every layout; out-of-range ints,
    # zero and negative steps; the tuple form takes the general route and must agree
    _same_outcome(*both(lambda L, x: x[index], spec))
    _same_outcome(*both(lambda L, x: x[(index,)], spec))


# -- advanced indexing out of range ---------------------------------------------------------------


@SETTINGS
@given(
    rows=st.lists(st.integers(-7, 6), min_size=1, max_size=4),
    cols=st.lists(st.integers(-6, 6), min_size=1, max_size=4),
    form=st.sampled_from(["pair", "pair32", "rows", "rows_tuple", "cols", "rows_slice", "none_rows", "three"]),
)
def test_advanced_index_bounds(rows, cols, form):
    # numpy finds a bad value first; the message (value, dim among the indexed ones) is PyTorch's
    n = min(len(rows), len(cols))
    rows, cols = rows[:n], cols[:n]

    def run(L):
        x = L.arange(30.0).reshape(5, 6)
        r, c = L.tensor(rows), L.tensor(cols)
        return {
            "pair": lambda: x[r, c], "pair32": lambda: x[r.to(L.int32), c.to(L.int32)], "rows": lambda: x[r],
            "rows_tuple": lambda: x[(r,)], "cols": lambda: x[:, c], "rows_slice": lambda: x[r, 1:4],
            "none_rows": lambda: x[None, r], "three": lambda: x[r, c, r],
        }[form]()

    _same_outcome(outcome(lambda: run(mt)), outcome(lambda: run(torch)))


# -- view / expand / repeat size forms ------------------------------------------------------------

_SIZE_FORMS = [
    (16,), (2, 8), ((2, 8),), ([4, 4],), (-1,), (2, -1), (-1, -1), (3, 5), (0,), ((),), ([],), (1, 16),
    ("size", 2, 8), ("np", 16), ("np", 2, 8), ((np.int64(2), 8),),
]


def _sizes(L, form):
    if form and form[0] == "size":
        return (L.Size(form[1:]),)
    if form and form[0] == "np":
        return tuple(np.int64(s) for s in form[1:])
    return form


@pytest.mark.parametrize("form", _SIZE_FORMS, ids=repr)
def test_view_size_forms(form):
    for make in (lambda L: L.arange(16.0), lambda L: L.arange(16.0).reshape(4, 4).t(), lambda L: L.tensor(1.0)):
        m = outcome(lambda make=make: make(mt).view(*_sizes(mt, form)))
        t = outcome(lambda make=make: make(torch).view(*_sizes(torch, form)))
        _same_outcome(m, t)


@pytest.mark.parametrize("form", [(2, 4), ((2, 4),), ([3, 2, 4],), ("np", 2, 4), ("size", 2, 4), (1, 1), (4,), (3, 1, 4)],
                         ids=repr)
def test_expand_and_repeat_size_forms(form):
    for method in ("expand", "repeat"):
        m = outcome(lambda method=method: getattr(mt.arange(4.0).reshape(1, 4), method)(*_sizes(mt, form)))
        t = outcome(lambda method=method: getattr(torch.arange(4.0).reshape(1, 4), method)(*_sizes(torch, form)))
        _same_outcome(m, t)


# -- reshape: view or copy ------------------------------------------------------------------------


@SETTINGS
@given(spec=tensor_specs(min_side=0, max_dims=3, dtypes=("float32", "int64")), flat_first=st.booleans())
def test_reshape_view_or_copy(spec, flat_first):
    # row-major inputs always view (the shortcut); other layouts view only when the strides allow
    def run(L, x):
        shape = (-1,) if flat_first or not x.dim() else (x.shape[-1], -1) if x.numel() else (0, -1)
        r = x.reshape(*shape) if x.numel() or shape == (-1,) else x.reshape(0)
        # (a view reads the input's memory; ``_base`` would not tell: our copy is a view of a clone)
        return r, bool(x.numel()) and r.data_ptr() == x.data_ptr()

    m = run(mt, build(mt, spec))
    t = run(torch, build(torch, spec))
    assert m[1] == t[1], "one library made a view and the other a copy"
    assert_same(m[0], t[0], exact=True, check_stride=bool(t[0].numel()))


# -- binary ops on two row-major tensors of one dtype ---------------------------------------------


@SETTINGS
@given(
    spec=tensor_specs(min_side=0, max_dims=3, layouts=("contiguous", "transposed", "expanded", "offset")),
    other_layout=st.sampled_from(["same", "contiguous", "transposed"]),
    op=st.sampled_from(["add", "sub", "mul", "div", "eq", "maximum", "atan2", "remainder"]),
)
def test_binary_same_dtype_and_shape(spec, other_layout, op):
    def run(L):
        x = build(L, spec)
        y = x.flip(0) if x.dim() else x  # same dtype and shape, other values
        if other_layout == "contiguous":
            y = y.contiguous()
        elif other_layout == "transposed" and y.dim() > 1:
            y = y.t().contiguous().t()
        return getattr(L, op)(x, y)

    m, t = outcome(lambda: run(mt), offset=False), outcome(lambda: run(torch), offset=False)
    if m[0] == "OK" and t[0] == "OK" and t[4] in FLOAT_NAMES:
        assert m[:5] == t[:5]
        np.testing.assert_allclose(np.asarray(m[5], dtype=float), np.asarray(t[5], dtype=float), rtol=1e-2,
                                   atol=1e-5, equal_nan=True)
    else:
        _same_outcome(m, t)


# -- softmax, reductions over one dim, nll_loss ---------------------------------------------------


@SETTINGS
@given(spec=tensor_specs(min_side=0, max_dims=3), dim=st.integers(-4, 3), log=st.booleans())
def test_softmax(spec, dim, log):
    # (an empty non-float input: PyTorch returns it, we refuse the dtype as for a non-empty one)
    assume(spec.dtype in FLOAT_NAMES or spec.base.size)
    name = "log_softmax" if log else "softmax"

    def run(L, x):
        return getattr(L, name)(x, dim)

    m, t = both(run, spec, offset=False)
    if m[0] == "OK" and t[0] == "OK" and t[4] in FLOAT_NAMES:
        assert m[:5] == t[:5]
        tol = 2e-2 if t[4] in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(np.asarray(m[5], dtype=float), np.asarray(t[5], dtype=float), rtol=tol, atol=tol,
                                   equal_nan=True)
    else:
        _same_outcome(m, t)


@SETTINGS
@given(
    spec=tensor_specs(min_side=0, max_dims=3, dtypes=("bool", "int64", "float32", "float64", "float16")),
    dim=st.integers(-4, 3),
    keepdim=st.booleans(),
    op=st.sampled_from(["amax", "amin", "sum", "mean", "max", "min"]),
)
def test_reductions_over_one_dim(spec, dim, keepdim, op):
    # (max/min over an empty dim: PyTorch's IndexError names the dim, ours is numpy's ValueError)
    assume(op in ("sum", "mean") or all(spec.shape))
    def run(L, x):
        if op in ("max", "min"):
            return getattr(x, op)() if keepdim else getattr(x, op)(dim)[0]
        return getattr(x, op)(dim, keepdim=keepdim)

    m, t = both(run, spec, offset=False)
    if m[0] == "OK" and t[0] == "OK" and t[4] in FLOAT_NAMES:
        assert m[:5] == t[:5]
        np.testing.assert_allclose(np.asarray(m[5], dtype=float), np.asarray(t[5], dtype=float), rtol=2e-3,
                                   atol=1e-5, equal_nan=True)
    else:
        _same_outcome(m, t)


@SETTINGS
@given(
    # (negative targets other than the ignored -100: PyTorch names the first, we the smallest)
    targets=st.lists(st.one_of(st.just(-100), st.integers(0, 5)), min_size=0, max_size=5),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    weighted=st.booleans(),
)
def test_nll_loss_targets(targets, reduction, weighted):
    # ignored rows (-100), out-of-range classes, every row ignored (mean is nan), no rows at all
    rng = np.random.default_rng(len(targets))
    logits = rng.standard_normal((len(targets), 4)).astype(np.float32)
    w = rng.random(4).astype(np.float32)

    def run(L):
        weight = L.tensor(w) if weighted else None
        return L.nn.functional.cross_entropy(L.tensor(logits), L.tensor(targets, dtype=L.int64), weight=weight,
                                             reduction=reduction)

    m, t = outcome(lambda: run(mt), offset=False), outcome(lambda: run(torch), offset=False)
    if m[0] == "OK" and t[0] == "OK":
        assert m[:5] == t[:5]
        np.testing.assert_allclose(np.asarray(m[5], dtype=float), np.asarray(t[5], dtype=float), rtol=1e-5,
                                   atol=1e-6, equal_nan=True)
    else:
        assert m == t


@SETTINGS
@given(spec=tensor_specs(min_side=0, max_dims=3, dtypes=("bool", "uint8", "int32", "int64")))
def test_nan_to_num_of_integers_is_laid_out_as_a_clone(spec):
    # nothing to replace in an integer tensor: PyTorch returns self.clone(), whose layout follows the
    # input's (a size-1 dim keeps its stride), not the elementwise rule
    _same_outcome(*both(lambda L, x: x.nan_to_num(), spec, offset=False))


@SETTINGS
@given(
    spec=tensor_specs(min_side=0, max_dims=3, dtypes=("int64", "float32", "float16", "bool")),
    lo=st.one_of(st.none(), st.sampled_from([-1, 0, 0.5])),
    hi=st.one_of(st.none(), st.sampled_from([1, 2.5])),
)
def test_clamp_with_number_bounds(spec, lo, hi):
    # number bounds on a row-major input: row-major result (the shortcut); other layouts keep theirs
    _same_outcome(*both(lambda L, x: x.clamp(lo, hi), spec, offset=False))


@SETTINGS
@given(spec=tensor_specs(min_side=0, min_dims=2, max_dims=2, dtypes=("float32", "int64")), write_base=st.booleans())
def test_transpose_reads_and_writes_through_the_base(spec, write_base):
    # a matrix transpose gets its numpy view from the base's at once: writes through either side
    # must show in the other, and ops on the transpose must read the base's current values
    def run(L, x):
        v = x.t()
        (x if write_base else v).mul_(2)
        w = v.t()
        w.add_(1)
        return L.stack([(v * 1).t(), x, v.contiguous().t()])

    _same_outcome(*both(run, spec, offset=False))


@pytest.mark.parametrize("alpha", [1, 2.0])
def test_addmm_with_infinities_warns_nothing(alpha):
    # inf + -inf inside addmm is nan, silently, as in PyTorch (nn.Linear's in-place bias add included)
    def run(L):
        bias = L.tensor([float("-inf"), 1.0])
        m1 = L.tensor([[float("inf"), 1.0], [1.0, 1.0]])
        m2 = L.tensor([[1.0, 1.0], [0.0, 1.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return L.addmm(bias, m1, m2, alpha=alpha)

    m, t = run(mt), run(torch)
    np.testing.assert_array_equal(m.numpy(), t.numpy())


@settings(SETTINGS, max_examples=80)
@given(
    spec=tensor_specs(min_side=0, max_dims=3, layouts=("contiguous", "transposed", "sliced", "offset")),
    other=st.sampled_from(["same", "self", "row", "column", "scalar_int", "scalar_float", "other_dtype", "bigger"]),
    op=st.sampled_from(["add_", "sub_", "mul_"]),
    alpha=st.sampled_from([None, 1, 2, 0.5, -1.0, True]),
)
def test_in_place_arithmetic(spec, other, op, alpha):
    # the in-place kernels write straight into self when nothing needs converting; every other
    # case (dtype changes, 16-bit floats, other not broadcasting to self, bool alpha) must still
    # give PyTorch's values, errors and version bumps
    if op == "mul_" and alpha is not None:
        alpha = None

    def run(L, x):
        y = {
            "same": lambda: x.flip(0) if x.dim() else x * 1,
            "self": lambda: x,
            "row": lambda: x[..., :1] * 1 if x.dim() else x * 1,
            "column": lambda: (x[:1] * 1) if x.dim() else x * 1,
            "scalar_int": lambda: 3,
            "scalar_float": lambda: 0.25,
            "other_dtype": lambda: (x * 1).to(L.float64 if x.dtype != L.float64 else L.float32),
            "bigger": lambda: L.stack([x, x]) if x.dim() < 3 else x * 1,
        }[other]()
        before = x._version
        kw = {} if alpha is None else {"alpha": alpha}
        r = getattr(x, op)(y, **kw)
        assert r is x and x._version == before + 1, "not self, or not one version bump"
        return x * 1  # (a copy: its layout is the elementwise rule's, its values self's)

    _same_outcome(*both(run, spec, offset=False))

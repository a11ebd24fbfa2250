"""The elementwise and ``addmm`` twins on operands that are not row-major, against the readable path.

The elementwise twins (``_ext/twins/backends/cpu/pointwise.pyx``) take two strided layouts whose
result layout is plain: row-major order with gaps (``chunk``/``narrow`` along a later dim, ``[..., ::2]``:
a row-major result) and permuted dense strides shared by every operand (``x.t()``: the result keeps
them, as ``wrap_strided`` lays it out). Every other layout still takes the full path. Here random
operands of those layouts (and mixtures that must decline) go through both paths, with and without
grad, and the results, strides, storage sharing, version counters, graphs and gradients must match.
``minitorch_nn.addmm`` (the LSTM step's product) is checked the same way with strided matrices.
"""

import contextlib
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from tests.twins.harness import _Passthrough, assert_fast_equals_full, assert_same_graph, fast_when_on, ran_kernels

LAYOUTS = ("contiguous", "transposed", "permuted", "chunk", "sliced", "expanded", "size-1 dim")


def _make(rng, shape, layout, dtype):
    """A tensor of ``shape`` with ``layout``, from fresh random values (``dtype`` a numpy name)."""
    def values(s):
        if dtype == "int64":
            return mt.from_numpy(rng.integers(-9, 9, size=s).astype(np.int64))
        return mt.from_numpy(rng.standard_normal(s).astype(dtype))

    n = len(shape)
    if layout == "transposed":
        return values(shape[::-1]).permute(*reversed(range(n)))
    if layout == "permuted" and n >= 2:   # the last two dims swapped
        return values(shape[:-2] + (shape[-1], shape[-2])).transpose(-2, -1)
    if layout == "chunk":   # the second of four chunks along the last dim (an LSTM gate)
        return values(shape[:-1] + (4 * shape[-1],)).chunk(4, -1)[1]
    if layout == "sliced":
        return values(shape[:-1] + (2 * shape[-1],))[..., ::2]
    if layout == "expanded":
        return values((1,) + shape[1:]).expand(*shape)
    if layout == "size-1 dim":
        return values(shape + (1,))[..., 0]
    return values(shape)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "add()": mt.add, "mul()": mt.mul, ".sub()": lambda a, b: a.sub(b)}
UNARY = {"sigmoid()": mt.sigmoid, "tanh()": mt.tanh, ".exp()": lambda a: a.exp(), "neg": operator.neg,
         ".abs()": lambda a: a.abs(), ".sqrt()": lambda a: a.sqrt()}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
       same_layout=st.booleans(), dtype=st.sampled_from(["float32", "float64", "int64"]),
       op=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**32 - 1), mode=st.booleans())
def test_binary_on_strided_operands_matches_full_path(shape, layouts, same_layout, dtype, op, seed, mode):
    rng = np.random.default_rng(seed)
    la, lb = (layouts[0], layouts[0]) if same_layout else layouts
    a, b = _make(rng, shape, la, dtype), _make(rng, shape, lb, dtype)
    with _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: BINARY[op](a, b), a, b)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, layout=st.sampled_from(LAYOUTS), dtype=st.sampled_from(["float32", "float64", "int64"]),
       op=st.sampled_from(sorted(UNARY)), seed=st.integers(0, 2**32 - 1))
def test_unary_on_a_strided_operand_matches_full_path(shape, layout, dtype, op, seed):
    t = _make(np.random.default_rng(seed), shape, layout, dtype)
    assert_fast_equals_full(lambda: UNARY[op](t), t)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, layout=st.sampled_from(LAYOUTS), dtype=st.sampled_from(["float32", "float64"]),
       op=st.sampled_from(["add", "mul", "sigmoid()", "tanh()"]), both=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_strided_operands_with_grad_build_the_full_paths_graph(shape, layout, dtype, op, both, seed):
    def make():
        rng = np.random.default_rng(seed)
        x = _make(rng, shape, layout, dtype).detach().requires_grad_()   # (a leaf keeping the layout)
        y = _make(rng, shape, layout, dtype).detach()
        if both:
            y.requires_grad_()
        return [x, y], x, y

    if op in BINARY:
        assert_same_graph(make, lambda x, y: BINARY[op](x, y))
    else:
        assert_same_graph(make, lambda x, y: UNARY[op](x) * y)


def test_lstm_gates_take_the_fast_path():
    """The LSTM step's sigmoid/tanh of ``chunk`` views and the sum of transposed gradients run no
    readable kernel with the switch on (and the readable kernels with it off)."""
    gates = mt.randn(8, 4 * 16)
    i, f, g, o = gates.chunk(4, 1)
    ops = (aten.sigmoid.default, aten.tanh.default, aten.mul.Tensor, aten.add.Tensor)
    assert fast_when_on(ran_kernels(lambda: mt.sigmoid(f) * mt.tanh(g) + mt.sigmoid(i) * o, ops))
    wt1, wt2 = mt.randn(16, 64).t(), mt.randn(16, 64).t()
    assert fast_when_on(ran_kernels(lambda: wt1 + wt2, (aten.add.Tensor,)))
    assert (wt1 + wt2).stride() == wt1.stride()


ADDMM_LAYOUTS = ("contiguous", "transposed", "chunk", "sliced")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4),
       layouts=st.tuples(*[st.sampled_from(ADDMM_LAYOUTS)] * 2),
       bias=st.sampled_from(["matrix", "row", "column", "scalar-like", "vector", "wrong", "other dtype"]),
       dtype=st.sampled_from(["float32", "float64"]), grad=st.sampled_from([None, "mat1", "all"]),
       kwargs=st.sampled_from([{}, {"beta": 1}, {"alpha": 2}]), seed=st.integers(0, 2**32 - 1))
def test_addmm_matches_full_path(m, k, n, layouts, bias, dtype, grad, kwargs, seed):
    rng = np.random.default_rng(seed)
    mat1, mat2 = _make(rng, (m, k), layouts[0], dtype), _make(rng, (k, n), layouts[1], dtype)
    shape = {"matrix": (m, n), "row": (1, n), "column": (m, 1), "scalar-like": (1,), "vector": (n,),
             "wrong": (n + 1,), "other dtype": (m, n)}[bias]
    other = "float64" if bias == "other dtype" and dtype == "float32" else dtype
    input = _make(rng, shape, "contiguous", other)
    if grad is not None:
        mat1.requires_grad_()
        if grad == "all":
            input.requires_grad_(), mat2.requires_grad_()
    assert_fast_equals_full(lambda: mt.addmm(input, mat1, mat2, **kwargs), input, mat1, mat2)


@pytest.mark.parametrize("bias", ["matrix", "vector"])
def test_addmm_with_grad_builds_the_full_paths_graph(bias):
    def make():
        rng = np.random.default_rng(0)
        h = mt.from_numpy(rng.standard_normal((3, 5)).astype(np.float32)).requires_grad_()
        w = mt.from_numpy(rng.standard_normal((8, 5)).astype(np.float32)).requires_grad_()
        shape = (3, 8) if bias == "matrix" else (8,)
        x = mt.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_()
        return [h, w, x], h, (w, x)

    assert_same_graph(make, lambda h, wx: mt.addmm(wx[1], h, wx[0].t()))
    h, (w, x) = make()[1:]
    assert fast_when_on(ran_kernels(lambda: mt.addmm(x, h, w.t()), (aten.addmm.default,)))

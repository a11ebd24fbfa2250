"""The compiled fast paths of the twins under ``_ext/twins/backends/`` give exactly what the full path gives.

``flatten``, ``sum(dim)``, ``F.linear``, ``clone``, ``clamp``, ``cumsum``, ``F.silu``,
``F.leaky_relu``, ``masked_fill``, ``bmm``, ``where``, ``F.mse_loss``, ``chunk``, ``unbind``,
``var``, ``std`` and the comparisons (``>``, ``x.eq(y)``...), in their method, function, operator and keyword
forms, on random tensors (dtypes, layouts, ranks, dims in range or not, odd arguments): each call
runs as is and with the full path forced, and everything observable is compared -- the result's
metadata and bytes or the error, and warnings (without grad); the graph, its saved values and
sequence numbers, and every gradient bit for bit (with grad). The helpers are those of
``tests/test_fast_path_ops.py``. Counting kernel calls checks that the fast path really runs for
plain operands and steps aside where something could observe the op.
"""

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn._ops import aten
from minitorch_nn._twins.backends.cpu import activations as _activations_twin
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.strategies import build, tensor_specs
from tests.twins.harness import fast_when_on, full_path, kernel_calls
from tests.twins.test_fast_path_ops import (
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
)

NUMBERS = [0.5, -1, 2, -0.25, 1e39, 2**30, True, None, float("nan"), 3]


def _forms(d0, d1, n0, n1):
    """The calls under test, by name: ``fn(x, y, z)`` (``y``, ``z``: the other operands, if any)."""
    return {
        "flatten()": lambda x, y, z: x.flatten(),
        "flatten(s)": lambda x, y, z: x.flatten(d0),
        "flatten(s, e)": lambda x, y, z: x.flatten(d0, d1),
        "flatten(start_dim=)": lambda x, y, z: x.flatten(start_dim=d0),
        "flatten(end_dim=)": lambda x, y, z: x.flatten(end_dim=d1),
        "flatten(s, end_dim=)": lambda x, y, z: x.flatten(d0, end_dim=d1),
        "mt.flatten": lambda x, y, z: mt.flatten(x, d0, d1),
        "sum(d)": lambda x, y, z: x.sum(d0),
        "sum(d, True)": lambda x, y, z: x.sum(d0, True),
        "sum(d, keepdim=)": lambda x, y, z: x.sum(d0, keepdim=n0 is None),
        "sum(dim=, keepdim=)": lambda x, y, z: x.sum(dim=d0, keepdim=True),
        "sum(dim=)": lambda x, y, z: x.sum(dim=d0),
        "sum([d0, d1])": lambda x, y, z: x.sum([d0, d1]),
        "sum((d0,), True)": lambda x, y, z: x.sum((d0,), True),
        "sum(d, 1)": lambda x, y, z: x.sum(d0, 1),
        "sum()": lambda x, y, z: x.sum(),
        "sum(d, dtype=)": lambda x, y, z: x.sum(d0, dtype=mt.float64),
        "clone()": lambda x, y, z: x.clone(),
        "mt.clone": lambda x, y, z: mt.clone(x),
        "clone(memory_format=)": lambda x, y, z: x.clone(memory_format=mt.contiguous_format),
        "clamp(a, b)": lambda x, y, z: x.clamp(n0, n1),
        "clamp(a)": lambda x, y, z: x.clamp(n0),
        "clamp(max=)": lambda x, y, z: x.clamp(max=n1),
        "clamp(min=, max=)": lambda x, y, z: x.clamp(min=n0, max=n1),
        "mt.clamp": lambda x, y, z: mt.clamp(x, n0, n1),
        "mt.clip": lambda x, y, z: mt.clip(x, n0, n1),
        "cumsum(d)": lambda x, y, z: x.cumsum(d0),
        "cumsum(dim=)": lambda x, y, z: x.cumsum(dim=d0),
        "mt.cumsum": lambda x, y, z: mt.cumsum(x, d0),
        "cumsum(d, dtype=)": lambda x, y, z: x.cumsum(d0, dtype=mt.float64),
        "silu": lambda x, y, z: F.silu(x),
        "silu(False)": lambda x, y, z: F.silu(x, False),
        "silu(inplace=False)": lambda x, y, z: F.silu(x, inplace=False),
        "leaky_relu": lambda x, y, z: F.leaky_relu(x),
        "leaky_relu(slope)": lambda x, y, z: F.leaky_relu(x, n0),
        "leaky_relu(negative_slope=)": lambda x, y, z: F.leaky_relu(x, negative_slope=n1),
        "leaky_relu(slope, False)": lambda x, y, z: F.leaky_relu(x, n0, False),
        "masked_fill": lambda x, y, z: x.masked_fill(y, n0),
        "masked_fill(gt)": lambda x, y, z: x.masked_fill(x > 0, 0.0),
        "where": lambda x, y, z: mt.where(z, x, y),
        "where(gt)": lambda x, y, z: mt.where(x > 0, x, y),
        "where method": lambda x, y, z: x.where(z, y),
        "linear": lambda x, y, z: F.linear(x, y),
        "linear(bias)": lambda x, y, z: F.linear(x, y, z),
        "linear(bias=)": lambda x, y, z: F.linear(x, y, bias=z),
        "nn.Linear": lambda x, y, z: _linear_module(y, z)(x),
        "bmm": lambda x, y, z: mt.bmm(x, y),
        "bmm method": lambda x, y, z: x.bmm(y),
        "mse_loss": lambda x, y, z: F.mse_loss(x, y),
        "mse_loss(sum)": lambda x, y, z: F.mse_loss(x, y, reduction="sum"),
        "mse_loss(none)": lambda x, y, z: F.mse_loss(x, y, reduction="none"),
        "mse_loss(reduction=n0)": lambda x, y, z: F.mse_loss(x, y, reduction=n0),
        "nn.MSELoss": lambda x, y, z: mt.nn.MSELoss()(x, y),
        "chunk(n)": lambda x, y, z: x.chunk(_count(n0)),
        "chunk(n, d)": lambda x, y, z: x.chunk(_count(n1), d0),
        "chunk(n, dim=)": lambda x, y, z: x.chunk(_count(n0), dim=d1),
        "mt.chunk": lambda x, y, z: mt.chunk(x, _count(n1), d1),
        "chunk(n0)": lambda x, y, z: x.chunk(n0 if not (type(n0) is int and n0 >= 10) else 7),
        "unbind()": lambda x, y, z: x.unbind(),
        "unbind(d)": lambda x, y, z: x.unbind(d0),
        "unbind(dim=)": lambda x, y, z: x.unbind(dim=d1),
        "mt.unbind": lambda x, y, z: mt.unbind(x, d0),
        "x > n": lambda x, y, z: x > n0,
        "x < n": lambda x, y, z: x < n1,
        "x >= y": lambda x, y, z: x >= y,
        "x <= y": lambda x, y, z: x <= y,
        "x == n": lambda x, y, z: x == n0,
        "x != y": lambda x, y, z: x != y,
        "gt(n)": lambda x, y, z: x.gt(n1),
        "eq(y)": lambda x, y, z: x.eq(y),
        "mt.lt": lambda x, y, z: mt.lt(x, n0),
        "var()": lambda x, y, z: x.var(),
        "var(d)": lambda x, y, z: x.var(d0),
        "var(dim=, keepdim=)": lambda x, y, z: x.var(dim=d1, keepdim=True),
        "var([d0, d1])": lambda x, y, z: x.var([d0, d1]),
        "var(d, unbiased=False)": lambda x, y, z: x.var(d0, unbiased=False),
        "std()": lambda x, y, z: x.std(),
        "std(d)": lambda x, y, z: x.std(d0),
        "std(d, keepdim=)": lambda x, y, z: x.std(d1, keepdim=n0 is None),
        "std(correction=0)": lambda x, y, z: x.std(correction=0),
        "mt.var": lambda x, y, z: mt.var(x, d0),
        "mt.std": lambda x, y, z: mt.std(x, dim=d1),
    }


def _count(n):
    """A chunk count made of a drawn number (some of them not counts at all)."""
    if type(n) is int and abs(n) >= 10:
        return 7   # (2**30 chunks of an empty dim would be 2**30 empty tensors, in PyTorch too)
    return int(abs(n)) + 1 if type(n) in (int, float) and n == n and abs(n) < 10 else n


def _linear_module(weight, bias):
    """An ``nn.Linear`` holding ``weight`` and ``bias`` (no bias unless it is a float vector)."""
    with_bias = bias is not None and bias.dim() == 1 and bias.dtype.is_floating_point
    m = mt.nn.Linear(1, 1, bias=with_bias)
    m.weight = mt.nn.Parameter(weight.detach().clone())
    if with_bias:
        m.bias = mt.nn.Parameter(bias.detach().clone())
    return m


_FORM_NAMES = sorted(_forms(0, 0, 0, 0))


def _others(draw, name, spec, dtypes):
    """The other operands of ``name`` for an ``x`` of ``spec``: usually of ``x``'s shape and dtype,
    sometimes not (then the full path raises or converts)."""
    shape = spec.shape
    layouts = ("contiguous", "contiguous", "transposed", "sliced")
    like = st.sampled_from([shape, shape, shape, shape[1:], (shape[0] + 1,) + shape[1:] if shape else (2,)])
    if name.startswith(("mse_loss", "nn.MSELoss", "x >=", "x <=", "x !=", "eq(y)")):
        other = build(mt, draw(tensor_specs(shape=draw(like), dtypes=(spec.dtype,) * 3 + dtypes, layouts=layouts)))
        return other, None
    if name.startswith(("masked_fill", "where")):
        mask = build(mt, draw(tensor_specs(shape=draw(like), dtypes=("bool", "bool", "bool", "float32"), layouts=layouts)))
        other = build(mt, draw(tensor_specs(shape=draw(like), dtypes=(spec.dtype,) * 3 + dtypes, layouts=layouts)))
        return other if name != "masked_fill" else mask, mask
    if name.startswith(("linear", "nn.Linear")):
        k = shape[-1] if shape else 1
        n = draw(st.integers(1, 3))
        w_shape = draw(st.sampled_from([(n, k), (n, k), (n, k + 1), (k,)]))
        w = build(mt, draw(tensor_specs(shape=w_shape, dtypes=(spec.dtype,) * 3 + dtypes, layouts=layouts)))
        b_shape = draw(st.sampled_from([(n,), (n,), (1,), (1, n), (2, n), (n + 1,), ()]))
        b = build(mt, draw(tensor_specs(shape=b_shape, dtypes=(spec.dtype,) * 3 + dtypes, layouts=layouts)))
        return w, b if draw(st.integers(0, 4)) else None
    if name.startswith("bmm"):
        b_shape = (shape[0], shape[-1], draw(st.integers(1, 3))) if len(shape) == 3 else draw(st.sampled_from([(2, 2, 2), (2,)]))
        b = build(mt, draw(tensor_specs(shape=draw(st.sampled_from([b_shape, b_shape, (1,) + b_shape[1:]])),
                                        dtypes=(spec.dtype,) * 3 + dtypes, layouts=layouts)))
        return b, None
    return None, None


@st.composite
def more_cases(draw, dtypes=("float32", "float64", "int64", "float32", "float64", "int32", "bool", "float16"),
               min_side=0, names=_FORM_NAMES, numbers=NUMBERS):
    name = draw(st.sampled_from(names))
    min_dims = 3 if name.startswith("bmm") and draw(st.integers(0, 5)) else 0
    spec = draw(tensor_specs(dtypes=dtypes, layouts=("contiguous", "contiguous", "transposed", "sliced", "expanded"),
                             min_side=min_side, max_side=4, min_dims=min_dims))
    rank = max(len(spec.shape), 1)
    d0, d1 = draw(st.integers(-rank - 1, rank)), draw(st.integers(-rank - 1, rank))
    if draw(st.integers(0, 9)) == 0:
        d0 = draw(st.sampled_from([1.0, True, None, [0, 0]]))
    n0, n1 = draw(st.sampled_from(numbers)), draw(st.sampled_from(numbers))
    y, z = _others(draw, name, spec, dtypes)
    return name, spec, (d0, d1, n0, n1), y, z


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=more_cases(), subclass=st.booleans(), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_more_ops_match_full_path(case, subclass, mode, grad):
    name, spec, dims, y, z = case
    x = build(mt, spec)
    if subclass:
        x = x.as_subclass(_Sub)
    if grad is not None and x.dtype.is_floating_point:
        x.requires_grad_()
    fn = _forms(*dims)[name]
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: fn(x, y, z), x, y, z)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_special_values_bit_for_bit(dtype):
    # infinities, NaN, -0.0 and the largest values through every op: the same bits and warnings
    big = float(np.finfo(dtype.numpy_dtype).max)
    values = [big, -big, float("inf"), -float("inf"), float("nan"), -0.0, 0.0, 1e-45, -1.5, 0.7, 3.0, -2.0]
    x = mt.tensor(values, dtype=dtype).reshape(3, 4)
    w = mt.tensor(values[::-1], dtype=dtype).reshape(3, 4)
    b = mt.tensor(values[:3], dtype=dtype)
    mask = x > 0
    for name, fn in _forms(1, -1, 0.5, 2).items():
        y, z = (w, b) if "linear" in name else (w.reshape(1, 3, 4), None) if "bmm" in name else (w, mask)
        xx = x.reshape(1, 3, 4) if "bmm" in name else x
        yy = w.reshape(1, 4, 3) if "bmm" in name else (mask if name == "masked_fill" else y)
        assert_fast_equals_full(lambda fn=fn, xx=xx, yy=yy, z=z: fn(xx, yy, z), xx, yy, z)


# -- with grad: the graph the full path records ----------------------------------------------------

@pytest.mark.filterwarnings("ignore:Using a target size")   # (mse_loss of two shapes, on both paths)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=more_cases(dtypes=("float32", "float64"), min_side=1, numbers=[0.5, -1, 2, -0.25, 3]),
       x_kind=st.sampled_from(["leaf", "leaf", "parameter", "node output", "view of leaf"]),
       y_grad=st.booleans(), modify=st.sampled_from([None, None, 0]))
def test_more_ops_with_grad_build_the_full_paths_graph(case, x_kind, y_grad, modify):
    name, spec, dims, y_made, z_made = case
    fn = _forms(*dims)[name]
    if "var" in name or "std" in name:
        # (no degrees of freedom left: the backward formula divides by zero, on both paths alike)
        assume(min(spec.shape, default=1) >= 2)

    def make():
        with full_path():
            leaf = build(mt, spec).requires_grad_()
            if x_kind == "parameter":
                leaf = mt.nn.Parameter(leaf.detach())
            x = leaf * 1.5 if x_kind == "node output" else leaf.unsqueeze(0).squeeze(0) if x_kind == "view of leaf" else leaf
            tensors = [leaf] + ([x] if x is not leaf else [])
            others = []
            for t in (y_made, z_made):
                if isinstance(t, mt.Tensor):
                    t = t.detach().clone()
                    if y_grad and t.dtype.is_floating_point:
                        t.requires_grad_()
                    tensors.append(t)
                others.append(t)
        return tensors, x, others

    assert_same_graph(make, lambda x, others: fn(x, *others), modify)


# -- the fast path runs, and steps aside for observers ---------------------------------------------

# (not view's and t's: those are course exercises, and their fast paths step aside -- rightly --
# when the registered kernel is not the reference solution, as a counting wrapper is not)
_KERNELS = [aten.sum.dim_IntList, aten.mm.default, aten.addmm.default,
            aten.clone.default, aten.clamp.default, aten.cumsum.default, aten.silu.default, aten.leaky_relu.default,
            aten.masked_fill.Scalar, aten.bmm.default, aten.where.self, aten.mse_loss.default, aten.gt.Scalar,
            aten.lt.Scalar, aten.eq.Tensor, aten.var.correction, aten.std.correction]


def _counting():
    return kernel_calls(_KERNELS)


def _everyday_calls(x, w, b, m, x3):
    return [x.flatten(), mt.flatten(x, 0), x.sum(1), x.sum(-1, keepdim=True), x.sum([0, 1]), F.linear(x, w),
            F.linear(x, w, b), x.clone(), mt.clone(x), x.clamp(0.1, 0.5), x.clamp(max=0.2), mt.clamp(x, -1),
            x.cumsum(1), mt.cumsum(x, 0), F.silu(x), F.leaky_relu(x), F.leaky_relu(x, 0.2),
            x.masked_fill(m, 0.0), mt.where(m, x, w), x.where(m, w), mt.bmm(x3, x3), x3.bmm(x3), F.mse_loss(x, w),
            F.mse_loss(x, w, reduction="sum"), *x.chunk(2), *x.unbind(1), *mt.chunk(x, 3, 1), x.var(), x.std(1),
            mt.var(x, [0, 1], keepdim=True), x.std()]


@pytest.mark.parametrize("grad", [False, True])
def test_fast_path_runs_for_plain_tensors(grad):
    x, w, b = mt.randn(3, 3, requires_grad=grad), mt.randn(3, 3, requires_grad=grad), mt.randn(3, requires_grad=grad)
    x3 = mt.randn(2, 3, 3, requires_grad=grad)
    with _counting() as calls:
        m = x.detach() > 0
        outs = _everyday_calls(x, w, b, m, x3)
        masks = [x < 0.5, x.eq(w), w.lt(0), x != w]
    assert fast_when_on(bool(calls))
    assert all(t.dtype is mt.bool and not t.requires_grad for t in masks)
    assert all(o.requires_grad == grad for o in outs)
    if grad:
        assert [o.grad_fn.name() for o in outs[:7]] == [
            "ViewBackward0", "ViewBackward0", "SumBackward1", "SumBackward1", "SumBackward1", "MmBackward0",
            "AddmmBackward0"]
        assert outs[5].grad_fn.next_functions[1][0].name() == "TBackward0"


def test_observers_see_every_call():
    x, w, b = mt.randn(3, 3), mt.randn(3, 3), mt.randn(3)
    x3 = mt.randn(2, 3, 3)
    m = x > 0
    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Dispatch():
        _everyday_calls(x, w, b, m, x3)
    assert seen[:8] == [aten.view.default, aten.view.default, aten.sum.dim_IntList, aten.sum.dim_IntList,
                        aten.sum.dim_IntList, aten.t.default, aten.mm.default, aten.t.default]
    assert len(seen) == 24 + 2 + 3 + 4   # (linear: t then mm/addmm; the others: one op each)
    seen.clear()
    with Function():
        _everyday_calls(x, w, b, m, x3)
    assert seen[:4] == ["flatten", "flatten", "sum", "sum"]
    with _counting() as calls:   # a subclass takes the full path
        _everyday_calls(x.as_subclass(_Sub), w, b, m, x3.as_subclass(_Sub))
    assert len(calls) >= 20
    with _counting() as calls:   # (an int64 tensor and a float: the full path's type promotion)
        assert (mt.arange(3) > 0.5).dtype is mt.bool
    assert len(calls) == 1


# -- the compiled leaky_relu loop: numpy's formula, bit for bit -------------------------------------

_NAN_PAYLOADS = np.frombuffer(np.array([0x7FC01234, 0xFFC05678, 0x7F800001, 0xFF800123], dtype=np.uint32).tobytes(),
                              dtype=np.float32)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**32 - 1),
       slope=st.one_of(st.sampled_from([0.01, 0.2, -0.5, 0, 1, 2, -0.0, 1e30, 5e-324, 2**24, 2**25 + 1, 1e39]),
                       st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**30), 2**30)),
       shape=st.sampled_from([(0,), (1,), (7,), (3, 5), (2, 3, 4), ()]), transposed=st.booleans())
def test_leaky_relu_loop_is_numpys_formula(dtype, seed, slope, shape, transposed):
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.standard_normal(shape) * 10.0 ** int(rng.integers(-5, 5)), dtype=dtype)
    if x.size:
        specials = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45, -3e38] + (list(_NAN_PAYLOADS) if dtype is np.float32 else [])
        flat = x.reshape(-1)
        for i in rng.integers(0, x.size, min(x.size, 4)):
            flat[i] = specials[int(rng.integers(0, len(specials)))]
    if transposed and x.ndim == 2:
        x = x.T
    with np.errstate(all="ignore"):
        expected = np.where(x > 0, x, x * np.asarray(slope, x.dtype))
        got = _activations_twin.leaky_relu_values(x, slope)
    if got is None:   # (what it declines: numpy's formula runs)
        assert not x.flags.c_contiguous or slope != slope or type(slope) is int or abs(slope) > np.finfo(np.float32).max
        return
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()

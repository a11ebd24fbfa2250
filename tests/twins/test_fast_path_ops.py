"""The compiled fast paths of the twins of ``backends/cpu/pointwise.py``, ``linalg.py`` and ``backends/views.py`` (``_ext/twins/``) give exactly what the full dispatch gives.

Unary math (``x.exp()``... ``-x``, ``abs(x)``), ``x.div(y)``/``x / y``, ``x.matmul(y)``/``x.mm(y)``/
``x @ y`` and the views ``t``, ``transpose``, ``unsqueeze``, ``squeeze``, ``view``, ``reshape`` skip
the dispatch chain when nothing could observe them, with and without grad. Each case runs twice on
the same operands, once as is and once with the full path forced (``full_path()``: the pass-through
dispatcher that ``dispatch_trace()`` installs, under which every fast path declines), and compares

* without grad: the result's class, dtype, shape, strides, offset, version, the bytes of its values,
  what it shares with the inputs (storage, version counter, ``_base``), or the error; and warnings;
* with grad: the graph (node class, edges, saved values and their versions, view bookkeeping, use
  counts) and, after backward, every gradient bit for bit or the version error (the signatures of
  ``tests/test_fast_record.py``, whose ``reference_path()`` also swaps in the readable recorder).

Counting kernel calls checks that the fast path really runs for plain operands (else the
comparisons would be vacuous) and that it declines under subclasses, modes, dispatch layers and
forward AD, which must see every call.
"""

import contextlib
import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import _dispatch
from minitorch_nn._ops import aten
from minitorch_nn.nn import functional as F
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.strategies import build, tensor_specs
from tests.twins.harness import (  # noqa: F401  (re-exported for the other twin tests)
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
    code_calls,
    fast_when_on,
    full_path,
    outcome,
    reference_path,
)

UNARY = ("exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh",
         "tanh", "sigmoid", "reciprocal", "neg", "abs")
DTYPES = ("float32", "float64", "int64", "float32", "float64", "int32", "bool", "float16", "bfloat16")
LAYOUTS = ("contiguous", "contiguous", "transposed", "sliced", "expanded", "offset")


# -- the cases: op(x, y) with the y (and arguments) each op takes ------------------------------------

def _view_shapes(shape):
    """Shapes to view a tensor of ``shape`` as: valid ones (with -1, ones, the same), and invalid ones."""
    n = int(np.prod(shape)) if shape else 1
    out = [(n,), (-1,), (1, n), (n, 1, 1), tuple(reversed(shape)), tuple(shape), (-1, 1), (n + 1,), (-1, -1), (-2,)]
    if n % 2 == 0:
        out += [(2, -1), (2, n // 2), (-1, 2, 1)]
    if len(shape) >= 2:
        out += [tuple(shape[:-2]) + (shape[-2] * shape[-1],), (shape[0], -1)]
    return out


@st.composite
def cases(draw, dtypes=DTYPES, layouts=LAYOUTS, min_side=0):
    """(name, spec of x, fn(x, y), spec or value of y or None)."""
    kind = draw(st.sampled_from(["unary", "unary", "operator", "div", "pow", "matmul", "view"]))
    if kind == "matmul":
        n, k, m = (draw(st.integers(min_side, 3)) for _ in range(3))
        x = draw(tensor_specs(shape=draw(st.sampled_from([(n, k), (n, k), (k,), (2, n, k), (2, 1, n, k)])),
                              dtypes=dtypes, layouts=layouts))
        k2 = draw(st.sampled_from([k, k, k + 1]))
        y = draw(tensor_specs(shape=draw(st.sampled_from([(k2, m), (k2, m), (k2,)])),
                              dtypes=draw(st.sampled_from([(x.dtype,), dtypes])), layouts=layouts))
        name = draw(st.sampled_from(["matmul", "mm", "@", "mt.matmul", "mt.mm"]))
        fn = {"matmul": lambda a, b: a.matmul(b), "mm": lambda a, b: a.mm(b), "@": lambda a, b: a @ b,
              "mt.matmul": lambda a, b: mt.matmul(a, b), "mt.mm": lambda a, b: mt.mm(a, b)}[name]
        return name, x, fn, y
    x = draw(tensor_specs(dtypes=dtypes, layouts=layouts, min_side=min_side))
    if kind == "unary":
        name = draw(st.sampled_from(UNARY))
        if draw(st.booleans()):  # the public function
            return "mt." + name, x, (lambda a, b: getattr(mt, name)(a)), None
        return name, x, (lambda a, b: getattr(a, name)()), None
    if kind == "operator":
        name = draw(st.sampled_from(["-x", "abs(x)", "F.relu(x)", "F.relu(x, False)", "F.relu(x, inplace=False)"]))
        fn = {"-x": lambda a, b: -a, "abs(x)": lambda a, b: abs(a), "F.relu(x)": lambda a, b: F.relu(a),
              "F.relu(x, False)": lambda a, b: F.relu(a, False),
              "F.relu(x, inplace=False)": lambda a, b: F.relu(a, inplace=False)}[name]
        return name, x, fn, None
    if kind == "pow":
        n = draw(st.sampled_from([2, 3, -1, 0, 1, 0.5, -0.5, 2.0, 1.0, 0.0, float("nan"), float("inf"), 1e300, 2**30,
                                  True, np.float32(2)]))
        name = draw(st.sampled_from(["pow", "**", "mt.pow", "square", "mt.square"]))
        fn = {"pow": lambda a, b: a.pow(n), "**": lambda a, b: a ** n, "mt.pow": lambda a, b: mt.pow(a, n),
              "square": lambda a, b: a.square(), "mt.square": lambda a, b: mt.square(a)}[name]
        return f"{name} {n!r}", x, fn, None
    if kind == "div":
        other = draw(st.sampled_from(["same", "same", "0-d", "scalar", "broadcast", "other dtype"]))
        if other == "scalar":
            y = draw(st.sampled_from([2, -3, 0, 2.5, 0.1, -0.0, float("inf"), 1e300, 2**30, True]))
        elif other == "0-d":
            y = draw(tensor_specs(shape=(), dtypes=(x.dtype,)))
        elif other == "broadcast":
            y = draw(tensor_specs(shape=x.shape[-1:] if x.shape else (), dtypes=(x.dtype,), layouts=layouts))
        else:
            y = draw(tensor_specs(shape=x.shape, dtypes=(x.dtype,) if other == "same" else dtypes, layouts=layouts))
        name = draw(st.sampled_from(["div", "/", "mt.div", "number /"]))
        fn = {"div": lambda a, b: a.div(b), "/": lambda a, b: a / b, "mt.div": lambda a, b: mt.div(a, b),
              "number /": lambda a, b: 1.5 / a if isinstance(b, mt.Tensor) else b / a}[name]
        return name, x, fn, y
    ndim = len(x.shape)
    name = draw(st.sampled_from(["t", "transpose", "unsqueeze", "squeeze", "squeeze", "view", "reshape", "permute",
                                 "expand"]))
    if name == "t":
        args = ()
    elif name == "transpose":
        args = (draw(st.integers(-ndim - 1, ndim)), draw(st.integers(-ndim - 1, ndim)))
    elif name == "unsqueeze":
        args = (draw(st.integers(-ndim - 2, ndim + 1)),)
    elif name == "squeeze":
        args = draw(st.sampled_from([(), (None,), ([0],)])) if draw(st.booleans()) else \
            (draw(st.integers(-ndim - 1, ndim)),)
    elif name == "permute":
        dims = draw(st.permutations(range(ndim)))
        if draw(st.booleans()):  # negative dims, a repeated or a missing one
            dims = draw(st.sampled_from([[d - ndim for d in dims], dims[:-1], dims + [0], [0] * ndim, dims]))
        args = tuple(dims) if draw(st.booleans()) else (list(dims),)
    elif name == "expand":
        sizes = [draw(st.sampled_from([s, -1, 3, 1] if s == 1 else [s, -1, s + 1])) for s in x.shape]
        args = tuple([draw(st.sampled_from([2, 0, 1]))] * draw(st.integers(0, 2)) + sizes)
        if draw(st.booleans()):
            args = draw(st.sampled_from([args[1:], (-1,) + args, (-2,) * len(args), (args,)]))
    else:
        shape = draw(st.sampled_from(_view_shapes(x.shape)))
        form = draw(st.sampled_from(["args", "tuple", "list", "Size"]))
        args = {"args": shape, "tuple": (shape,), "list": (list(shape),), "Size": (mt.Size(shape),)}[form]
    if name == "permute" and draw(st.booleans()):  # the public function takes the dims as one argument
        dims = list(args) if len(args) != 1 else args[0]
        return f"mt.permute({dims})", x, (lambda a, b: mt.permute(a, dims)), None
    if name not in ("view", "permute", "expand") and draw(st.booleans()):  # the public function
        return f"mt.{name}{args}", x, (lambda a, b: getattr(mt, name)(a, *args)), None
    return f"{name}{args}", x, (lambda a, b: getattr(a, name)(*args)), None


def _make(v):
    return build(mt, v) if hasattr(v, "layout") else v


# -- without grad: random operands, dtypes, layouts, subclasses and modes -------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), subclass=st.sampled_from([None, None, "x", "y", "parameter"]), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_fast_ops_match_full_path(case, subclass, mode, grad):
    name, xs, fn, ys = case
    x, y = _make(xs), _make(ys)
    if subclass == "x":
        x = x.as_subclass(_Sub)
    elif subclass == "y" and isinstance(y, mt.Tensor):
        y = y.as_subclass(_Sub)
    elif subclass == "parameter" and x.dtype.is_floating_point:
        x = mt.nn.Parameter(x, requires_grad=False)
    if grad is not None and x.dtype.is_floating_point:
        x.requires_grad_()   # (a non-leaf view or not: requires_grad_ is refused on non-leaves)
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: fn(x, y), x, y)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.int64])
def test_special_values_and_warnings(dtype):
    # overflow, inf, nan, -0.0, log of negatives, division by zero: numpy's warnings stay off as in
    # the kernels, and the values (NaN payloads included) are the kernels' bit for bit
    if dtype.is_floating_point:
        big = float(np.finfo(dtype.numpy_dtype).max)
        values = [big, -big, float("inf"), -float("inf"), float("nan"), -0.0, 0.0, 1e-45, -1.5, 710.0]
    else:
        values = [2**62, -(2**63), 2**63 - 1, 0, -1, 7, 1, -5, 3, 2]
    a = mt.tensor(values, dtype=dtype)
    b = mt.tensor(values[::-1], dtype=dtype)
    m = a.reshape(2, 5)
    cases = [lambda n=n: getattr(a, n)() for n in UNARY] + [
        lambda: -a, lambda: abs(a), lambda: a / b, lambda: a.div(b), lambda: a / 0, lambda: a / 0.0, lambda: a / -0.0,
        lambda: a ** 2, lambda: a ** -1, lambda: a ** 0.5, lambda: a.pow(3.5), lambda: a.square(), lambda: 1 / a,
        lambda: 0 / a, lambda: -2.5 / a, lambda: float("inf") / a,
        lambda: m @ m.t(), lambda: m.t() @ m, lambda: m.mm(m.t()), lambda: m.matmul(m.t()), lambda: a @ b,
        lambda: a[:5] @ a[5:], lambda: m @ a[:5], lambda: m.t() @ b[::5],
    ]
    for fn in cases:
        assert_fast_equals_full(fn, a, b, m)


def test_errors_match():
    a, b, v = mt.ones(2, 3), mt.ones(4, 5), mt.ones(3, 2).t()
    cases = [
        lambda: a @ b, lambda: a.mm(b), lambda: a.matmul(b), lambda: a.mm(mt.ones(3, 2, dtype=mt.float64)),
        lambda: a / mt.ones(4), lambda: a.div(b), lambda: a / "x", lambda: a.div(2, rounding_mode="bad"),
        lambda: a.exp(1), lambda: a.t(1), lambda: mt.ones(2, 2, 2).t(), lambda: a.transpose(0, 2),
        lambda: a.transpose(0), lambda: a.unsqueeze(3), lambda: a.unsqueeze(-4), lambda: a.squeeze(2),
        lambda: a.view(4), lambda: a.view(-1, -1), lambda: a.view(-2, 3), lambda: v.view(6),
        lambda: a.view(2.0, 3), lambda: a.reshape(7), lambda: a.view(mt.float64), lambda: a.transpose(0, 1.0),
        lambda: mt.ones(3, dtype=mt.bool).neg(), lambda: a.unsqueeze(2**70),
    ]
    for fn in cases:
        assert_fast_equals_full(fn, a, b, v)


# -- with grad: the same graph and gradients ------------------------------------------------------------

def _grad_inputs(spec, y_spec, x_kind, y_kind):
    """A ``make()`` for one case: ``x`` a leaf that requires grad (or a Parameter), a node's
    output, a view of a leaf, or a view of a node's output whose base was later modified in place;
    ``y`` a tensor (requiring grad or not) or a number. The setup runs on the full path so that only
    the op under test differs between the two runs."""

    def make():
        with full_path():
            leaf = build(mt, spec).requires_grad_()
            if x_kind == "parameter":
                leaf = mt.nn.Parameter(leaf.detach())
            tensors = [leaf]
            if x_kind in ("leaf", "parameter"):
                x = leaf
            elif x_kind == "node output":
                x = leaf * 1.5
            elif x_kind == "view of leaf":
                x = leaf.unsqueeze(0).squeeze(0)
            else:  # "stale view": a view of a node's output, whose base is then written in place
                base = leaf * 1.0
                x = base.unsqueeze(0).squeeze(0)
                base.mul_(2)
            if x is not leaf:
                tensors.append(x)
            y = _make(y_spec)
            if isinstance(y, mt.Tensor):
                y = y.to(x.dtype)
                if y_kind == "grad":
                    y.requires_grad_()
                tensors.append(y)
        return tensors, x, y

    return make


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(dtypes=("float32", "float64"), min_side=1),
       x_kind=st.sampled_from(["leaf", "leaf", "parameter", "node output", "view of leaf", "stale view"]),
       y_kind=st.sampled_from(["grad", "plain"]), modify=st.sampled_from([None, None, 0, -1]))
def test_fast_ops_with_grad_build_the_full_paths_graph(case, x_kind, y_kind, modify):
    name, xs, fn, ys = case
    assert_same_graph(_grad_inputs(xs, ys, x_kind, y_kind), fn, modify)


def test_only_the_second_operand_requires_grad():
    def make():
        a, b = mt.full((2, 3), 2.0), mt.full((3, 2), 3.0, requires_grad=True)
        return [a, b], a, b

    assert_same_graph(make, lambda a, b: a @ b)
    assert_same_graph(make, lambda a, b: a / b.t())


def test_views_of_views_keep_the_root_base_and_grad():
    x = mt.arange(24.0).reshape(2, 3, 4).clone().requires_grad_()
    v = x.transpose(0, 2).unsqueeze(1).squeeze(1)
    w = v.transpose(2, 0).view(6, 4)
    assert v._base is x and w._base is x
    assert v.grad_fn.name() == "SqueezeBackward1" and v.grad_fn.next_functions[0][0].name() == "UnsqueezeBackward0"
    (w * mt.arange(24.0).reshape(w.shape)).sum().backward()
    with full_path():
        x2 = mt.arange(24.0).reshape(2, 3, 4).clone().requires_grad_()
        v2 = x2.transpose(0, 2).unsqueeze(1).squeeze(1)
        w2 = v2.transpose(2, 0).view(6, 4)
        (w2 * mt.arange(24.0).reshape(w2.shape)).sum().backward()
    assert np.asarray(x.grad._array).tobytes() == np.asarray(x2.grad._array).tobytes()


def test_in_place_write_through_a_fast_view_updates_the_base_history():
    # a view made on the fast path is a real view for autograd: writing through it rebases
    def run(make_view):
        leaf = mt.ones(2, 3, requires_grad=True)
        base = leaf * 2
        view = make_view(base)
        view.mul_(mt.arange(1.0, 7.0).reshape(view.shape))
        names = base.grad_fn.name(), view.grad_fn.name()
        base.sum().backward()
        return names, leaf.grad.tolist()

    for make_view in (lambda b: b.t(), lambda b: b.view(3, 2), lambda b: b.unsqueeze(0), lambda b: b.transpose(1, 0)):
        fast = run(make_view)
        with full_path():
            full = run(make_view)
        assert fast == full and fast[0][0].endswith("CopySlices")


# -- does the fast path run, and decline when it must? ---------------------------------------------------

_COUNTED = [getattr(aten, n).default for n in UNARY] + [aten.div.Tensor, aten.mm.default, aten.mv.default,
                                                      aten.dot.default, aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor,
                                                      aten.mul.Tensor, aten.relu.default]


def kernel_calls():
    """Count calls of the cpu kernels of the ops above, and of the view kernels (through the
    ``_make_view`` they all end in). The fast path calls none of them."""
    from minitorch_nn.backends import views

    return code_calls([op.kernel_for("cpu") for op in _COUNTED] + [views._make_view])


def _ran_full_path(fn):
    with kernel_calls() as calls:
        try:
            fn()
        except RuntimeError:   # (the kernel's own error: it ran)
            pass
    return len(calls) > 0


def _all_ops(a, b):
    return [lambda n=n: getattr(a, n)() for n in UNARY] + [lambda n=n: getattr(mt, n)(a) for n in UNARY] + [
        lambda: -a, lambda: abs(a), lambda: a / b, lambda: a / 2, lambda: a.div(2.5), lambda: mt.div(a, b),
        lambda: a ** 2, lambda: a.pow(0.5), lambda: mt.pow(a, -2), lambda: a.square(), lambda: mt.square(a),
        lambda: 2 / a,
        lambda: a @ b, lambda: a.mm(b), lambda: a.matmul(b), lambda: mt.matmul(a, b), lambda: mt.mm(a, b),
        lambda: a.t(), lambda: a.transpose(0, 1), lambda: a.unsqueeze(-1), lambda: a.squeeze(), lambda: a.squeeze(0),
        lambda: a.view(-1), lambda: a.view(3, 3), lambda: a.reshape((9,)), lambda: mt.t(a), lambda: mt.transpose(a, 1, 0),
        lambda: mt.unsqueeze(a, 0), lambda: mt.squeeze(a), lambda: mt.squeeze(a, 1), lambda: mt.reshape(a, (3, 3)),
        lambda: a.permute(1, 0), lambda: a.permute([-1, 0]), lambda: mt.permute(a, (1, 0)), lambda: a.expand(2, 3, 3),
        lambda: a.expand(-1, 3),
    ]


@pytest.mark.parametrize("grad", [False, True])
def test_fast_path_runs_for_plain_operands(grad):
    for dtype in (mt.float32, mt.float64):
        a = mt.tensor(np.linspace(0.1, 0.9, 9).reshape(3, 3), dtype=dtype, requires_grad=grad)
        p = mt.nn.Parameter(a.detach().clone(), requires_grad=grad)
        for x in (a, p):
            for fn in _all_ops(x, x):
                assert fast_when_on(_ran_full_path(fn))
                assert (fn().grad_fn is not None) == grad
        for fn in (lambda a=a: F.relu(a), lambda a=a: F.relu(a, inplace=False)):  # Tensor.relu's path (exact Tensors)
            assert fast_when_on(_ran_full_path(fn))
            assert (fn().grad_fn is not None) == grad
        v = mt.tensor([0.5, -1.0, 2.0], dtype=dtype, requires_grad=grad)
        for fn in (lambda a=a, v=v: a @ v, lambda v=v: v @ v, lambda a=a, v=v: a.matmul(v),
                   lambda v=v: mt.matmul(v, v)):  # mv, dot
            assert fast_when_on(_ran_full_path(fn))
            assert (fn().grad_fn is not None) == grad
        batch = mt.tensor(np.linspace(-1, 1, 18).reshape(2, 3, 3), dtype=dtype, requires_grad=grad)
        for fn in (lambda b=batch, a=a: b @ a, lambda b=batch, v=v: b.matmul(v), lambda b=batch, a=a: mt.matmul(b, a)):
            assert fast_when_on(_ran_full_path(fn))  # (view, mm/mv, _unsafe_view)
            assert (fn().grad_fn is not None) == grad
        assert _ran_full_path(lambda b=batch: b @ b) and _ran_full_path(lambda b=batch, a=a: b.transpose(0, 1) @ a)
        assert _ran_full_path(lambda a=a, v=v: v @ a)  # (unsqueeze + mm + squeeze)
        assert _ran_full_path(lambda a=a, v=v: a.mm(v))  # (mm's error)
    n = mt.arange(9).reshape(3, 3)
    for fn in (lambda: -n, lambda: n.abs(), lambda: n.t(), lambda: n.view(9), lambda: n.unsqueeze(0)):
        assert fast_when_on(_ran_full_path(fn))


def test_fast_path_declines_when_something_could_observe():
    a = mt.ones(3, 3)
    declined = {
        "subclass": (a.as_subclass(_Sub), a), "float16": (a.half(), a.half()), "int exp": (a.long(), a.long()),
        "strided elementwise": (a.t(), a),
    }
    for name, (x, y) in declined.items():
        for op in ("exp", "neg", "sigmoid"):
            if op != "neg" or name in ("subclass", "float16"):  # (neg of int64 or of a view is fast)
                assert _ran_full_path(lambda x=x, op=op: getattr(x, op)()), name
        if name != "int exp":
            assert _ran_full_path(lambda x=x, y=y: x / y), name
    assert _ran_full_path(lambda: a.as_subclass(_Sub).t())
    assert _ran_full_path(lambda: a / True) and _ran_full_path(lambda: a / np.float32(2))
    assert _ran_full_path(lambda: a.long() / 2) and _ran_full_path(lambda: a @ a.double())
    assert _ran_full_path(lambda: a.view(mt.float32)) and _ran_full_path(lambda: a.squeeze([0]))
    assert _ran_full_path(lambda: a ** 1) and _ran_full_path(lambda: a ** 0.0) and _ran_full_path(lambda: a ** a)
    assert _ran_full_path(lambda: a.long() ** 2) and _ran_full_path(lambda: a ** True)
    assert _ran_full_path(lambda: 1 / a.long()) and _ran_full_path(lambda: True / a)
    assert _ran_full_path(lambda: mt.ones(0, 3).view(-1)) and _ran_full_path(lambda: mt.ones(0, 3) @ a)


def test_fast_path_declines_under_saved_tensors_hooks():
    a = mt.ones(2, 2, requires_grad=True)
    packed = []
    with mt.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(1), t)[1], lambda t: t):
        for fn in (lambda: a.exp(), lambda: a / a, lambda: a @ a):
            assert _ran_full_path(fn)
    assert packed


def test_fast_path_declines_when_an_ops_derivative_is_not_a_simple_one():
    # e.g. a course starter with a formula removed: the full path records a NotImplemented node;
    # the twin mirrors the op's derivative too, so it steps aside with or without grad
    a = mt.ones(2, 2, requires_grad=True)
    op = aten.exp.default
    saved = op.derivative
    op.derivative = None
    try:
        assert _ran_full_path(lambda: a.exp())
        assert a.exp().grad_fn.name() == "NotImplemented"
        assert _ran_full_path(lambda: a.detach().exp())
    finally:
        op.derivative = saved
    assert fast_when_on(_ran_full_path(lambda: a.exp()))


def test_views_that_are_course_exercises_run_the_registered_kernel():
    # transpose/t and view are course tasks (backends/views.py's solution blocks): in a student's
    # copy their code, or the stub, must run; a kernel that is not the reference turns the path off
    a = mt.ones(2, 3)

    def stub(*args):
        raise NotImplementedError("views-transpose: return a view with two dims swapped")

    for op, call in ((aten.transpose.int, lambda: a.transpose(0, 1)), (aten.t.default, lambda: a.t()),
                     (aten.view.default, lambda: a.view(6)), (aten.view.default, lambda: a.reshape(3, 2))):
        saved = op._kernels["any"]
        op._kernels["any"] = stub
        try:
            with pytest.raises(NotImplementedError, match="views-transpose"):
                call()
        finally:
            op._kernels["any"] = saved
        assert fast_when_on(_ran_full_path(call))


@pytest.mark.parametrize("layer", ["python_layer", "forward_ad_layer"])
def test_fast_path_declines_while_a_dispatch_layer_is_installed(layer):
    a = mt.ones(3, 3)
    saved = getattr(_dispatch, layer, None)
    setattr(_dispatch, layer, lambda op, args, kwargs: NotImplemented)
    try:
        for fn in _all_ops(a, a):
            assert _ran_full_path(fn)
    finally:
        setattr(_dispatch, layer, saved)
    for fn in _all_ops(a, a):
        assert fast_when_on(_ran_full_path(fn))


def test_dispatch_modes_and_traces_see_every_call():
    a = mt.ones(3, 3)
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Log():
        a.exp(), a / a, a @ a, a.t(), a.view(9), -a
    assert seen == [aten.exp.default, aten.div.Tensor, aten.mm.default, aten.t.default, aten.view.default,
                    aten.neg.default]
    with mt.utils.dispatch_trace() as trace:
        a.tanh(), a.transpose(0, 1), a.reshape(9)
    text = str(trace)
    for line in ("Tensor.tanh", "aten.tanh.default", "Tensor.transpose", "aten.transpose.int", "aten.view.default"):
        assert line in text


def test_function_modes_see_the_methods():
    a = mt.ones(3, 3)
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Log():
        a.exp(), a / 2, a @ a, a.t(), a.view(9), a.reshape(9), -a, abs(a), a.unsqueeze(0), a.squeeze(), a.div(a)
        a.permute(1, 0), a.expand(2, 3, 3), mt.permute(a, (1, 0)), F.relu(a), F.relu(a, inplace=False)
        mt.exp(a), mt.div(a, 2), mt.matmul(a, a), mt.mm(a, a), mt.t(a), mt.transpose(a, 0, 1), mt.reshape(a, (9,))
        mt.negative(a), mt.absolute(a), mt.swapaxes(a, 0, 1)
    T = mt.Tensor
    assert seen == [T.exp, T.div, T.matmul, T.t, T.view, T.reshape, T.neg, T.abs, T.unsqueeze, T.squeeze, T.div,
                    T.permute, T.expand, mt.permute, F.relu, F.relu, mt.exp, mt.div, mt.matmul, mt.mm, mt.t, mt.transpose, mt.reshape, mt.neg, mt.abs, mt.transpose]
    assert T.exp.__name__ == "exp" and T.view.__qualname__ == "Tensor.view" and T.exp.__doc__
    assert mt.exp.__name__ == "exp" and mt.exp.__doc__ == "e to the power of each element."
    assert str(inspect.signature(mt.matmul)) == "(input, other, *, out=None)"


def test_forward_ad_sees_the_ops():
    import minitorch_nn.autograd.forward_ad as fwAD

    x, tangent = mt.tensor([[0.5, 1.0], [1.5, 2.0]]), mt.ones(2, 2)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tangent)
        outs = [d.exp(), d / 2, d @ d, d.t(), d.view(4), d.unsqueeze(0)]
        tangents = [fwAD.unpack_dual(o).tangent for o in outs]
    expected = [x.exp(), tangent / 2, tangent @ x + x @ tangent, tangent.t(), tangent.view(4), tangent.unsqueeze(0)]
    for t, e in zip(tangents, expected):
        assert t is not None and mt.allclose(t, e)


def test_view_results_share_storage_version_and_base():
    a = mt.arange(6.0).reshape(2, 3).clone()
    for v in (a.t(), a.view(3, 2), a.reshape(6), a.unsqueeze(0), a.transpose(0, 1), a.unsqueeze(0).squeeze(0)):
        assert v._base is a and v._impl.storage is a._impl.storage and v._impl.version is a._impl.version
        before = a._version
        v.add_(0)
        assert a._version == before + 1
    assert a.view(6).view(2, 3)._base is a   # a view of a view: the root base, as _make_view

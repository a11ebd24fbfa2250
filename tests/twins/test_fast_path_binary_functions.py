"""``minitorch_nn.add/sub/mul(a, b)`` and ``a.add/sub/mul(b)`` (``_ext/twins/backends/cpu/pointwise.pyx``)
give exactly what the full path gives: they share the operators' compiled path while nothing
could tell the spellings apart. Random operands (tensors of any dtype and layout, broadcasting,
Python numbers on either side), keywords (``alpha=``), subclasses, modes and grad, each compared
with the full path forced; with grad, the graph and the gradients.
"""

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn.overrides import TorchFunctionMode
from tests.strategies import build, tensor_specs
from tests.twins.harness import fast_when_on, kernel_calls
from tests.twins.test_fast_path_ops import (
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
)

_FORMS = {
    "function": lambda name, a, b: getattr(mt, name)(a, b),
    "method": lambda name, a, b: getattr(a, name)(b),
    "function alpha": lambda name, a, b: getattr(mt, name)(a, b, alpha=2) if name != "mul" else mt.mul(a, b),
    "method alpha": lambda name, a, b: getattr(a, name)(b, alpha=2) if name != "mul" else a.mul(b),
}
_DTYPES = ("float32", "float64", "int64", "float32", "float16", "bool")


@st.composite
def operands(draw):
    spec = draw(tensor_specs(dtypes=_DTYPES, layouts=("contiguous", "contiguous", "transposed", "sliced")))
    kind = draw(st.sampled_from(["same", "same", "broadcast", "number", "number first"]))
    if kind == "number" or kind == "number first":
        other = draw(st.sampled_from([2, 0.5, -1.25, True]))
    else:
        shape = spec.shape if kind == "same" else spec.shape[1:]
        other = draw(tensor_specs(shape=shape, dtypes=_DTYPES))
    return spec, kind, other


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=operands(), name=st.sampled_from(["add", "sub", "mul"]), form=st.sampled_from(sorted(_FORMS)),
       subclass=st.booleans(), mode=st.booleans(), grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_functions_and_methods_match_full_path(case, name, form, subclass, mode, grad):
    spec, kind, other = case
    a = build(mt, spec)
    b = other if not hasattr(other, "shape") else build(mt, other)
    if subclass:
        a = a.as_subclass(_Sub)
    if grad is not None and a.dtype.is_floating_point:
        a.requires_grad_()
    if kind == "number first":
        if form.startswith("method"):
            return   # (a number has no .add method)
        a, b = b, a
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: _FORMS[form](name, a, b), a, b)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=("float32", "float64"), layouts=("contiguous", "transposed")),
       name=st.sampled_from(["add", "sub", "mul"]), form=st.sampled_from(["function", "method"]),
       both=st.booleans())
def test_with_grad_build_the_full_paths_graph(spec, name, form, both):
    def make():
        x = build(mt, spec).requires_grad_()
        y = build(mt, spec) * 0.5
        if both:
            y.requires_grad_()
        return [x, y], x, y

    assert_same_graph(make, lambda x, y: _FORMS[form](name, x, y))


def test_the_fast_path_runs_and_handlers_see_each_spelling():
    a, b = mt.ones(2, 2), mt.full((2, 2), 3.0)
    with kernel_calls([aten.add.Tensor]) as calls:
        mt.add(a, b), a.add(b), mt.add(a, 1)
    assert fast_when_on(bool(calls))
    with kernel_calls([aten.add.Tensor]) as calls:
        mt.add(a, b, alpha=2), a.add(b.as_subclass(_Sub))
    assert len(calls) == 2
    seen = []

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Function():
        mt.add(a, b), a.mul(b), a - b
    assert seen == ["add", "mul", "sub"]   # (PyTorch hands a - b to handlers as Tensor.sub too)

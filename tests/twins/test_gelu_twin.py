"""GELU's compiled twin (``_ext/twins/backends/cpu/activations.pyx``) gives what its readable
originals in ``backends/cpu/activations.py`` give, bit for bit, and steps aside when they change.

* the twin's two functions against ``_gelu_values`` / ``_gelu_backward_values`` on arrays of every
  float layout, with NaN, infinities, signed zeros, subnormals and large values;
* ``F.gelu``, ``nn.GELU`` and ``torch.ops.aten.gelu_backward`` on random tensors (dtypes, layouts,
  ranks, both approximations, bad arguments): the result's metadata and bytes or the error, and
  the ``GeluBackward0`` graph and gradients, each compared with the readable path;
* the guard: a function assigned in place of an original, or of the C-library functions it calls
  through ``libm.py``, runs instead of the twin.

Like every test here it runs with the switch on and off (``conftest.py``).
"""

import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn.backends import compiled
from minitorch_nn.backends.cpu import activations, libm
from tests.strategies import build, tensor_specs
from tests.twins.harness import assert_fast_equals_full, assert_same_graph, full_path, switch_on

twin = pytest.importorskip("minitorch_nn._twins.backends.cpu.activations",
                           reason="the package was built without the compiled twins (_ext/twins/)")

_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 5e-324, 40.0, -40.0, 1e30, -1e30, 3.0, -3.0]


def _bits(a):
    return np.asarray(a).tobytes()


def _arrays(draw_dtype, seed, shape, layout):
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal((*shape[:-1], shape[-1] * 2)) * rng.choice([0.5, 3.0, 12.0])).astype(draw_dtype)
    flat = base.reshape(-1)
    flat[: min(len(_SPECIAL), flat.size)] = np.asarray(_SPECIAL[: flat.size], dtype=np.float64).astype(draw_dtype)
    if layout == "sliced":
        return base[..., ::2]
    if layout == "transposed":
        return base[..., : shape[-1]].T
    return np.ascontiguousarray(base[..., : shape[-1]])


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**32 - 1),
       shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), layout=st.sampled_from(["contiguous", "sliced", "transposed"]),
       approximate=st.sampled_from(["none", "tanh"]))
def test_twin_functions_are_bit_equal_to_the_readable_ones(dtype, seed, shape, layout, approximate):
    x = _arrays(dtype, seed, shape, layout)
    g = _arrays(dtype, seed + 1, shape, layout)
    readable_values, readable_backward = _readable()
    with np.errstate(all="ignore"):
        readable = readable_values(x, approximate)
        readable_grad = readable_backward(g, x, approximate)
        compiled_values = twin.gelu_values(x, approximate)
        compiled_grad = twin.gelu_backward_values(g, x, approximate)
    assert compiled_values.dtype == readable.dtype and compiled_values.shape == readable.shape
    assert _bits(compiled_values) == _bits(np.ascontiguousarray(readable))
    assert compiled_grad.dtype == readable_grad.dtype
    assert _bits(compiled_grad) == _bits(np.ascontiguousarray(readable_grad))


def _readable():
    """The readable originals, whatever the switch has bound in their place."""
    with full_path():
        return activations._gelu_values, activations._gelu_backward_values


def test_twin_functions_decline_what_the_readable_ones_handle():
    x = np.linspace(-3, 3, 12, dtype=np.float32)
    assert twin.gelu_values(x.astype(np.float16), "none") is None             # only float32/float64
    assert twin.gelu_values(x, "bogus") is None                                 # the kernel raises first
    assert twin.gelu_backward_values(x, x.astype(np.float64), "none") is None   # mixed dtypes
    assert twin.gelu_backward_values(x[:6], x, "none") is None                  # broadcasting
    assert twin.gelu_backward_values(x.reshape(3, 4), x.reshape(4, 3), "none") is None   # same size, other shape
    # a numpy scalar (what 0-d arithmetic gives) gives a numpy scalar, as numpy does
    value = twin.gelu_values(np.float32(0.5), "none")
    assert type(value) is np.float32 and value == _readable()[0](np.asarray(np.float32(0.5)), "none")


_SPELLINGS = {
    "F.gelu": lambda x, a: F.gelu(x, approximate=a),
    "F.gelu default": lambda x, a: F.gelu(x),
    "nn.GELU": lambda x, a: mt.nn.GELU(approximate=a)(x),
    "aten.gelu": lambda x, a: mt.ops.aten.gelu.default(x, approximate=a),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=("float32", "float64", "float32", "float16", "bfloat16", "int64"), max_side=6),
       spelling=st.sampled_from(sorted(_SPELLINGS)), approximate=st.sampled_from(["none", "tanh", "none", "bad"]))
def test_gelu_matches_the_readable_path(spec, spelling, approximate):
    x = build(mt, spec)
    assert_fast_equals_full(lambda: _SPELLINGS[spelling](x, approximate), x, any_nan=True)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=("float32", "float64", "float16"), max_side=6),
       other=tensor_specs(dtypes=("float32", "float64", "int64"), max_side=6),
       approximate=st.sampled_from(["none", "tanh", "bad"]), same_shape=st.booleans())
def test_gelu_backward_op_matches_the_readable_path(spec, other, approximate, same_shape):
    x = build(mt, spec)
    g = build(mt, other)
    if same_shape and g.numel() == x.numel():
        g = g.reshape(x.shape)
    assert_fast_equals_full(lambda: mt.ops.aten.gelu_backward.default(g, x, approximate=approximate), x, g, any_nan=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=("float32", "float64"), layouts=("contiguous", "transposed", "sliced"), min_side=1, max_side=6),
       approximate=st.sampled_from(["none", "tanh"]), x_kind=st.sampled_from(["leaf", "node output"]))
def test_gelu_graph_and_gradients_match_the_readable_path(spec, approximate, x_kind):
    def make():
        leaf = build(mt, spec).requires_grad_()
        return [leaf], (leaf * 1.5 if x_kind == "node output" else leaf), None

    assert_same_graph(make, lambda x, _: F.gelu(x, approximate=approximate))


def test_the_twin_is_bound_only_while_the_switch_is_on():
    readable_values, readable_backward = _readable()
    bound = activations._gelu_values, activations._gelu_backward_values
    if switch_on():
        assert bound[0] is not readable_values and bound[1] is not readable_backward
    else:
        assert bound == (readable_values, readable_backward)
    assert not [name for name in compiled.disabled() if "gelu" in name]


def _counting(fn, calls):
    def wrapper(*args):
        calls.append(fn.__name__)
        return fn(*args)

    return wrapper


def test_a_replaced_original_runs_instead_of_the_twin(monkeypatch):
    readable_values, readable_backward = _readable()
    calls = []
    monkeypatch.setattr(activations, "_gelu_values", _counting(readable_values, calls))
    monkeypatch.setattr(activations, "_gelu_backward_values", _counting(readable_backward, calls))
    x = mt.randn(3, 5, requires_grad=True)
    F.gelu(x).sum().backward()
    with compiled.flags(enabled=True):
        F.gelu(x.detach(), approximate="tanh")
    assert calls == ["_gelu_values", "_gelu_backward_values", "_gelu_values"]


def test_a_replaced_libm_function_runs_instead_of_the_twin(monkeypatch):
    calls = []
    monkeypatch.setattr(libm, "erf", _counting(libm.erf, calls))
    monkeypatch.setattr(libm, "exp", _counting(libm.exp, calls))
    with compiled.flags(enabled=True):
        x = mt.randn(4, requires_grad=True)
        F.gelu(x).sum().backward()
    assert calls == ["erf", "erf", "exp"]   # the forward's erf, the backward's erf and exp


def test_an_edited_original_turns_the_twin_off(monkeypatch):
    # What a student's edit of _gelu_values looks like when the package binds the twin at import:
    # the same function with one constant changed no longer has the recorded fingerprint, and
    # bind() then keeps the readable function for good.
    monkeypatch.setattr(compiled, "_disabled_twins", dict(compiled._disabled_twins))
    readable_values = _readable()[0]
    code = readable_values.__code__
    edited = types.FunctionType(code.replace(co_consts=tuple(0.25 if c == 0.5 else c for c in code.co_consts)),
                                readable_values.__globals__, "_gelu_values")
    assert compiled.original_changed(readable_values) is None
    assert "_gelu_values in backends/cpu/activations.py has changed" in compiled.original_changed(edited)
    owner = types.SimpleNamespace(__name__="owner")
    with pytest.warns(RuntimeWarning, match="has changed since its twin was written"):
        bound = compiled.bind(owner, "_gelu_values", twin.gelu_values, edited, mirrors=(edited,))
    assert bound is edited and owner._gelu_values is edited
    with compiled.flags(enabled=not compiled.enabled):   # the switch no longer moves it
        assert owner._gelu_values is edited

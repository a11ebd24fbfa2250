"""Oracle: complex dtypes (complex64/complex128) against PyTorch 2.13: the dtypes and their promotion,
factories and random streams, printing, elementwise ops, reductions, matmul, the complex views
(``real``/``imag``/``view_as_real``/``view_as_complex``), ``conj``, ``polar``/``complex``/``angle``,
the errors PyTorch gives for ops it refuses on complex tensors, meta kernels, checkpoints and
``torch.testing``. Autograd, modules, parametrizations and optimizers with complex tensors are in
``test_complex_autograd_oracle.py``; the shared helpers in ``_complex_helpers.py``.

Each test runs one scenario in both libraries and compares values, dtypes, printed text and errors;
hypothesis draws shapes and memory layouts (contiguous, transposed, sliced, expanded, offset).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.oracle._complex_helpers import (  # noqa: E402
    COMPLEX,
    SETTINGS,
    both,
    check,
    complex_specs,
    run,
    same_error,
)
from tests.strategies import TensorSpec, build  # noqa: E402

# -- 1. dtypes and promotion -----------------------------------------------------------------------


def test_dtype_objects_and_aliases():
    for name in ("complex64", "complex128", "cfloat", "cdouble"):
        t, m = getattr(torch, name), getattr(mt, name)
        assert repr(m) == repr(t)
        assert m.is_complex is t.is_complex is True
        assert m.is_floating_point == t.is_floating_point
        assert m.is_signed == t.is_signed
        assert m.itemsize == t.itemsize
        assert repr(m.to_real()) == repr(t.to_real())
        assert repr(m.to_complex()) == repr(t.to_complex())
    assert mt.cfloat is mt.complex64 and mt.cdouble is mt.complex128
    for name in ("float32", "float64", "bfloat16", "int64", "bool"):
        assert repr(getattr(mt, name).to_real()) == repr(getattr(torch, name).to_real())
        assert getattr(mt, name).is_complex is False
    for name in ("float32", "float64", "bfloat16"):
        assert repr(getattr(mt, name).to_complex()) == repr(getattr(torch, name).to_complex())
    same_error(*run(lambda lib: lib.int64.to_complex()))


def test_complex32_is_refused_with_a_clear_error():
    # torch has an experimental complex32; numpy has no such type, so we say so instead
    with pytest.raises(TypeError, match="complex32"):
        mt.float16.to_complex()
    with pytest.raises(TypeError, match="complex32"):
        mt.ones(2, dtype=mt.float16) + 1j


def test_dtypes_pickle_to_the_same_object():
    import pickle

    assert pickle.loads(pickle.dumps(mt.complex64)) is mt.complex64


ALL_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
             "complex64", "complex128")


@pytest.mark.parametrize("a", ALL_NAMES)
@pytest.mark.parametrize("b", COMPLEX)
def test_promote_types(a, b):
    t = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert repr(mt.promote_types(getattr(mt, a), getattr(mt, b))) == repr(t)
    assert repr(mt.promote_types(getattr(mt, b), getattr(mt, a))) == repr(t)


@pytest.mark.parametrize("a, b", [(a, b) for a in ALL_NAMES for b in ALL_NAMES if "complex" in a + b])
def test_can_cast(a, b):
    assert mt.can_cast(getattr(mt, a), getattr(mt, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize(
    "scenario",
    [
        lambda lib: lib.result_type(lib.ones(2), 1j),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.float64), 1j),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.int64), 1j),
        lambda lib: lib.result_type(lib.tensor(1.0), 2 + 1j),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.float64), lib.tensor(1j)),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.bfloat16), 1j),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.int32), lib.tensor(1j, dtype=lib.complex128)),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.complex64), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.result_type(lib.ones(2, dtype=lib.complex64), 2.5),
        lambda lib: lib.result_type(lib.tensor(1j), lib.tensor(1j, dtype=lib.complex128)),
        lambda lib: (lib.ones(2) + 1j).dtype,
        lambda lib: (lib.ones(2, dtype=lib.float64) * 1j).dtype,
        lambda lib: lib.tensor([1 + 2j, 3]).dtype,
        lambda lib: lib.tensor(1j).dtype,
        lambda lib: lib.full((2,), 1j).dtype,
    ],
)
def test_result_type_with_complex(default, scenario):
    def fn(lib):
        saved = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            return repr(scenario(lib))
        finally:
            lib.set_default_dtype(saved)

    t, m = run(fn)
    assert m == t


def test_complex_default_dtype_is_refused():
    same_error(*run(lambda lib: lib.set_default_dtype(lib.complex64)))


# -- 2. factories ----------------------------------------------------------------------------------

FACTORIES = {
    "tensor": lambda lib: lib.tensor([1 + 2j, -3.5j, 4]),
    "tensor_c128": lambda lib: lib.tensor([[1, 2j]], dtype=lib.complex128),
    "tensor_real_as_complex": lambda lib: lib.tensor([1.5, 2], dtype=lib.complex64),
    "tensor_complex_into_float": lambda lib: lib.tensor([1j], dtype=lib.float32),
    "tensor_complex_into_int": lambda lib: lib.tensor([1j], dtype=lib.int64),
    "zeros": lambda lib: lib.zeros(2, 3, dtype=lib.complex64),
    "ones": lambda lib: lib.ones(2, dtype=lib.cdouble),
    "full": lambda lib: lib.full((2, 2), 1 - 2j),
    "full_float_value": lambda lib: lib.full((2,), 3.0, dtype=lib.complex64),
    "full_complex_into_float": lambda lib: lib.full((2,), 1 + 1j, dtype=lib.float32),
    "full_complex_into_int": lambda lib: lib.full((2,), 1 + 1j, dtype=lib.int64),
    "full_zero_imag_into_float": lambda lib: lib.full((2,), 2 + 0j, dtype=lib.float32),
    "empty_shape": lambda lib: lib.empty(3, 2, dtype=lib.complex64).zero_(),
    "zeros_like": lambda lib: lib.zeros_like(lib.tensor([1j, 2])),
    "ones_like_dtype": lambda lib: lib.ones_like(lib.tensor([1.0, 2.0]), dtype=lib.complex128),
    "full_like": lambda lib: lib.full_like(lib.tensor([1j]), 2 - 1j),
    "full_like_complex_into_float": lambda lib: lib.full_like(lib.tensor([1.0]), 2 - 1j),
    "arange_refused": lambda lib: lib.arange(3, dtype=lib.complex64),
    "linspace": lambda lib: lib.linspace(0, 1 + 1j, 5, dtype=lib.complex64),
    "linspace_inferred": lambda lib: lib.linspace(1j, 1 - 2j, 7),
    "eye": lambda lib: lib.eye(3, dtype=lib.complex64),
    "randint_refused": lambda lib: lib.randint(0, 3, (2,), dtype=lib.complex64),
    "randperm_refused": lambda lib: lib.randperm(3, dtype=lib.complex64),
    "from_numpy": lambda lib: lib.from_numpy(np.array([1 + 2j, 3j], dtype=np.complex128)),
    "fill_": lambda lib: lib.zeros(2, dtype=lib.complex64).fill_(2 - 3j),
    "fill_into_float": lambda lib: lib.zeros(2).fill_(2 - 3j),
    "masked_fill_into_float": lambda lib: lib.zeros(2).masked_fill(lib.tensor([True, False]), 1j),
    "masked_fill": lambda lib: lib.zeros(2, dtype=lib.complex64).masked_fill(lib.tensor([True, False]), 1j),
    "to_complex": lambda lib: lib.tensor([1, 2]).to(lib.complex64),
    "to_real": lambda lib: lib.tensor([1 + 2j]).to(lib.float64),
    "cfloat": lambda lib: lib.tensor([1.5]).cfloat(),
    "cdouble": lambda lib: lib.tensor([1 + 2j]).cdouble(),
    "cat_promotes": lambda lib: lib.cat([lib.tensor([1 + 2j]), lib.tensor([1.0], dtype=lib.float64)]),
    "stack": lambda lib: lib.stack([lib.tensor([1 + 2j]), lib.tensor([3j])]),
    "where": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1 + 2j, 3]), 0.0),
    "copy_into_float": lambda lib: lib.zeros(1).copy_(lib.tensor([1 + 2j])),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories(name):
    both(FACTORIES[name], exact=True)


def _setitem(lib, value, dtype):
    z = lib.zeros(3, dtype=dtype)
    z[0] = value
    z[1:] = lib.tensor([2.5])
    return z


@pytest.mark.parametrize("value", [1j, 2 + 0j, 3.5])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_setitem_with_complex_values(value, dtype):
    both(lambda lib: _setitem(lib, value, getattr(lib, dtype)), exact=True)


SCALARS = {
    "item": lambda lib: lib.tensor(2 - 1j).item(),
    "tolist": lambda lib: lib.tensor([[1 + 2j], [3j]]).tolist(),
    "complex()": lambda lib: complex(lib.tensor(1 + 2j)),
    "complex() of real": lambda lib: complex(lib.tensor(1.5)),
    "float() with imag": lambda lib: float(lib.tensor(1 + 2j)),
    "float() without imag": lambda lib: float(lib.tensor(1 + 0j)),
    "int() with imag": lambda lib: int(lib.tensor(1 + 2j)),
    "bool()": lambda lib: (bool(lib.tensor(0j)), bool(lib.tensor(1j))),
    "is_complex": lambda lib: (lib.tensor([1j]).is_complex(), lib.is_complex(lib.tensor([1j])), lib.tensor(1.0).is_complex()),
    "is_floating_point": lambda lib: (lib.tensor([1j]).is_floating_point(), lib.is_floating_point(lib.tensor([1j]))),
    "element_size": lambda lib: (lib.tensor([1j]).element_size(), lib.tensor([1j], dtype=lib.complex128).element_size()),
    "type": lambda lib: (lib.tensor([1j]).type(), lib.tensor([1j], dtype=lib.complex128).type()),
    "requires_grad": lambda lib: lib.ones(2, dtype=lib.complex64, requires_grad=True).requires_grad,
}


@pytest.mark.parametrize("name", SCALARS)
def test_python_values(name):
    t, m = run(SCALARS[name])
    if isinstance(t, Exception):
        same_error(t, m)
    else:
        assert m == t and type(m) is type(t)


def test_complex_to_real_copy_warns_like_torch():
    import minitorch_nn.backends.common as common

    common._warned_complex_to_real = False
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        mt.tensor([1 + 2j]).float()


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize(
    "draw",
    [
        lambda lib: lib.randn(3, dtype=lib.complex64),
        lambda lib: lib.randn(5, 4, dtype=lib.complex128),
        lambda lib: lib.randn(20, dtype=lib.complex64),
        lambda lib: lib.rand(6, dtype=lib.complex64),
        lambda lib: lib.rand(17, dtype=lib.complex128),
        lambda lib: lib.randn_like(lib.zeros(2, 3, dtype=lib.complex64)),
        lambda lib: lib.rand_like(lib.zeros(9, dtype=lib.complex128)),
        lambda lib: lib.empty(4, 3, dtype=lib.complex64).t().normal_(),
        lambda lib: lib.empty(17, dtype=lib.complex128).uniform_(-1, 2),
        lambda lib: lib.empty(17, dtype=lib.complex64).normal_(1.0, 3.0),
    ],
)
def test_random_streams_match_torch(seed, draw):
    def fn(lib):
        lib.manual_seed(seed)
        return draw(lib)

    both(fn, exact=True)


RANDOM_REFUSALS = {
    "random_": lambda lib: lib.zeros(3, dtype=lib.complex64).random_(),
    "random_to": lambda lib: lib.zeros(3, dtype=lib.complex64).random_(3),
    "exponential_": lambda lib: lib.zeros(3, dtype=lib.complex64).exponential_(),
    "bernoulli_": lambda lib: lib.zeros(3, dtype=lib.complex64).bernoulli_(0.5),
    "bernoulli": lambda lib: lib.bernoulli(lib.zeros(3, dtype=lib.complex64)),
}


@pytest.mark.parametrize("name", RANDOM_REFUSALS)
def test_random_ops_refuse_complex(name):
    t, m = run(RANDOM_REFUSALS[name])
    same_error(t, m)


# -- 3. printing -----------------------------------------------------------------------------------

PRINT_DATA = [
    [1 + 2j, 3 - 4j],
    [0.5 - 1.25j, 1e-5 + 3j],
    1 + 0j,
    -0.0 - 0.0j,
    [[1e10 + 1j, -0.0 - 0.0j], [float("nan") + 1j, complex(1, float("inf"))]],
    [complex(-1.5, -0.0), complex(0.0, -2.0)],
    [[0.1 + 0.2j] * 30] * 40,
    [1e-9 + 1e9j, 123.456 - 0.001j],
]


@pytest.mark.parametrize("data", range(len(PRINT_DATA)))
@pytest.mark.parametrize("dtype", [None, "complex64", "complex128"])
def test_printing(data, dtype):
    def fn(lib):
        t = lib.tensor(PRINT_DATA[data], dtype=None if dtype is None else getattr(lib, dtype))
        return repr(t), str(t), repr(t.requires_grad_()) if t.dim() else ""

    t, m = run(fn)
    assert m == t


@pytest.mark.parametrize("options", [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False),
                                     dict(linewidth=30), dict(threshold=5, edgeitems=1)])
def test_printing_options(options):
    def fn(lib):
        lib.set_printoptions(**options)
        try:
            return repr(lib.tensor([[1.123456 + 2j, -3.5e-3j, 100 + 1j, 4, 5, 6 - 6j]] * 3))
        finally:
            lib.set_printoptions(profile="default")

    t, m = run(fn)
    assert m == t


def test_printing_with_float64_default_and_empty():
    def fn(lib):
        saved = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return (repr(lib.tensor([1j])), repr(lib.tensor([1j], dtype=lib.complex64)),
                    repr(lib.zeros(0, dtype=lib.complex64)), repr(lib.zeros(2, 0, dtype=lib.complex128)))
        finally:
            lib.set_default_dtype(saved)

    t, m = run(fn)
    assert m == t


@given(spec=complex_specs(max_dims=3))
@SETTINGS
def test_printing_any_layout(spec):
    t, m = run(lambda lib: repr(build(lib, spec)))
    assert m == t


# -- 4. elementwise ops, reductions, matmul --------------------------------------------------------

UNARY = ["neg", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "reciprocal", "abs", "sigmoid",
         "rsqrt", "square", "sgn", "angle", "isnan", "isinf", "isfinite", "log2", "log10", "exp2", "expm1", "log1p",
         "asin", "acos", "atan", "conj", "conj_physical", "real", "logical_not", "nan_to_num"]


@pytest.mark.parametrize("name", UNARY)
@given(spec=complex_specs())
@SETTINGS
def test_unary_ops(name, spec):
    both(lambda lib: getattr(lib, name)(build(lib, spec)), rtol=1e-4 if spec.dtype == "complex64" else 1e-10)


def test_imag_values_and_errors():
    both(lambda lib: lib.imag(lib.tensor([[1 + 2j], [3 - 4j]])), exact=True)
    same_error(*run(lambda lib: lib.imag(lib.tensor([1.0]))))
    same_error(*run(lambda lib: lib.tensor([1.0]).imag))


BINARY = ["add", "sub", "mul", "div", "eq", "ne", "pow"]


@pytest.mark.parametrize("name", BINARY)
@given(a=complex_specs(shape=(2, 3)), b=complex_specs(shape=(2, 3)), real=st.booleans())
@SETTINGS
def test_binary_ops(name, a, b, real):
    def fn(lib):
        x, y = build(lib, a), build(lib, b)
        if real:
            y = y.real.contiguous()  # a real operand promotes to the complex dtype
        return getattr(lib, name)(x, y)

    both(fn, rtol=1e-4 if "complex64" in (a.dtype, b.dtype) else 1e-10)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("scalar", [2, 0.5, 1 - 2j, True])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64", "int64"])
def test_binary_ops_with_python_numbers(name, scalar, dtype):
    def fn(lib):
        x = lib.tensor([[1.5, -2.0], [0.25, 3.0]]).to(getattr(lib, dtype))
        if dtype.startswith("complex"):
            x = x * (1 - 0.5j)
        return getattr(lib, name)(x, scalar), getattr(lib, name)(scalar, x) if name in ("add", "mul") else 0

    both(fn, rtol=1e-5)


INPLACE = {
    "add_": lambda lib, x: x.add_(1j),
    "mul_": lambda lib, x: x.mul_(lib.tensor([2 - 1j, 0.5])),
    "div_": lambda lib, x: x.div_(2 + 1j),
    "sub_alpha": lambda lib, x: x.sub_(lib.tensor([1j, 2]), alpha=3),
    "pow_": lambda lib, x: x.pow_(2),
    "float_add_complex": lambda lib, x: x.real.clone().add_(1j),
    "float_mul_complex_tensor": lambda lib, x: x.real.clone().mul_(lib.tensor([1j, 2])),
    "abs_": lambda lib, x: x.abs_(),
    "conj_physical_": lambda lib, x: x.conj_physical_(),
    "fill_": lambda lib, x: x.fill_(3 - 1j),
    "zero_": lambda lib, x: x.zero_(),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_ops(name):
    def fn(lib):
        x = lib.tensor([1 + 2j, -0.5 + 0.25j])
        out = INPLACE[name](lib, x)
        return out, x

    both(fn, rtol=1e-6)


REFUSED = {
    "lt": lambda lib, a, b: lib.lt(a, b),
    "le": lambda lib, a, b: lib.le(a, b),
    "gt": lambda lib, a, b: a > b,
    "ge_scalar": lambda lib, a, b: a >= 1,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "max_binary": lambda lib, a, b: lib.max(a, b),
    "max": lambda lib, a, b: lib.max(a),
    "min": lambda lib, a, b: a.min(),
    "max_dim": lambda lib, a, b: lib.max(a, 0),
    "min_dim": lambda lib, a, b: lib.min(a, 0),
    "amax": lambda lib, a, b: lib.amax(a),
    "amin": lambda lib, a, b: lib.amin(a, 0),
    "argmax": lambda lib, a, b: lib.argmax(a),
    "argmin": lambda lib, a, b: a.argmin(0),
    "sort": lambda lib, a, b: lib.sort(a),
    "topk": lambda lib, a, b: lib.topk(a, 1),
    "clamp": lambda lib, a, b: lib.clamp(a, 0, 1),
    "clamp_min": lambda lib, a, b: lib.clamp_min(a, 0),
    "clamp_max": lambda lib, a, b: a.clamp_max(1),
    "clamp_": lambda lib, a, b: a.clamp_(min=0),
    "relu": lambda lib, a, b: lib.relu(a),
    "relu_": lambda lib, a, b: a.relu_(),
    "F.relu": lambda lib, a, b: lib.nn.functional.relu(a),
    "hardtanh": lambda lib, a, b: lib.nn.functional.hardtanh(a),
    "relu6": lambda lib, a, b: lib.nn.functional.relu6(a),
    "gelu": lambda lib, a, b: lib.nn.functional.gelu(a),
    "elu": lambda lib, a, b: lib.nn.functional.elu(a),
    "leaky_relu": lambda lib, a, b: lib.nn.functional.leaky_relu(a),
    "softplus": lambda lib, a, b: lib.nn.functional.softplus(a),
    "softmax": lambda lib, a, b: lib.softmax(a, 0),
    "log_softmax": lambda lib, a, b: lib.log_softmax(a, 0),
    "sign": lambda lib, a, b: lib.sign(a),
    "floor": lambda lib, a, b: lib.floor(a),
    "ceil": lambda lib, a, b: a.ceil(),
    "trunc": lambda lib, a, b: lib.trunc(a),
    "round": lambda lib, a, b: lib.round(a),
    "frac": lambda lib, a, b: lib.frac(a),
    "erf": lambda lib, a, b: lib.erf(a),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "heaviside": lambda lib, a, b: lib.heaviside(a, b),
    "bitwise_and": lambda lib, a, b: lib.bitwise_and(a, b),
    "bitwise_xor": lambda lib, a, b: lib.bitwise_xor(a, b),
    "mm_mixed": lambda lib, a, b: lib.mm(a.reshape(3, 1), a.real.reshape(1, 3)),
    "imag_of_real": lambda lib, a, b: a.real.imag,
}


@pytest.mark.parametrize("name", REFUSED)
def test_ops_torch_refuses_for_complex(name):
    def fn(lib):
        a = lib.tensor([1 + 2j, -0.5 + 0.25j, 3 - 1j])
        return REFUSED[name](lib, a, a.clone())

    t, m = run(fn)
    same_error(t, m)


REDUCTIONS = {
    "sum": lambda lib, x: x.sum(),
    "sum_dim": lambda lib, x: x.sum(-1, keepdim=True),
    "sum_dtype": lambda lib, x: x.sum(dtype=lib.complex128),
    "sum_real_to_complex": lambda lib, x: x.real.sum(dtype=lib.complex64),
    "mean": lambda lib, x: x.mean(),
    "mean_dim": lambda lib, x: x.mean(0),
    "prod": lambda lib, x: x.prod(),
    "prod_dim": lambda lib, x: x.prod(-1),
    "var": lambda lib, x: x.var(),
    "std_dim": lambda lib, x: x.std(-1),
    "var_keepdim": lambda lib, x: x.var(0, keepdim=True, correction=0),
    "norm": lambda lib, x: lib.linalg.vector_norm(x),
    "norm_dim": lambda lib, x: x.norm(dim=-1),
    "cumsum": lambda lib, x: x.cumsum(-1),
    "cumprod": lambda lib, x: x.cumprod(0),
    "all": lambda lib, x: x.all(),
    "any_dim": lambda lib, x: x.any(-1),
    "logsumexp": lambda lib, x: lib.logsumexp(x, -1),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@given(spec=complex_specs(min_dims=1, max_dims=3, small=True))
@SETTINGS
def test_reductions(name, spec):
    both(lambda lib: REDUCTIONS[name](lib, build(lib, spec)))  # (tolerances by the result's dtype)


MATMUL = {
    "mm": lambda lib, a, b: lib.mm(a, b),
    "matmul": lambda lib, a, b: a @ b,
    "bmm": lambda lib, a, b: lib.bmm(a.unsqueeze(0).expand(2, -1, -1), b.unsqueeze(0).expand(2, -1, -1)),
    "mv": lambda lib, a, b: lib.mv(a, b[:, 0]),
    "dot": lambda lib, a, b: lib.dot(a[0], b[:, 0]),
    "vdot": lambda lib, a, b: lib.vdot(a[0], b[:, 0]),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b.t()),
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
}


@pytest.mark.parametrize("name", MATMUL)
@given(a=complex_specs(shape=(3, 4)), b=complex_specs(shape=(4, 2)), data=st.data())
@SETTINGS
def test_matmul_family(name, a, b, data):
    if a.dtype != b.dtype:
        b = TensorSpec(b.base.astype(a.dtype), a.dtype, b.layout, b.shape)
    both(lambda lib: MATMUL[name](lib, build(lib, a), build(lib, b)), rtol=1e-4 if a.dtype == "complex64" else 1e-10,
         atol=1e-4 if a.dtype == "complex64" else 1e-10)


# -- complex views, conj, polar, complex -------------------------------------------------------------

VIEW_CASES = {
    "view_as_complex": lambda lib: lib.view_as_complex(lib.arange(24.0).reshape(3, 4, 2)),
    "view_as_complex_offset": lambda lib: lib.view_as_complex(lib.arange(24.0).reshape(3, 4, 2)[1:]),
    "view_as_complex_transposed": lambda lib: lib.view_as_complex(lib.arange(24.0).reshape(3, 4, 2).transpose(0, 1)),
    "view_as_complex_stepped": lambda lib: lib.view_as_complex(lib.arange(24.0).reshape(3, 4, 2)[:, ::2]),
    "view_as_complex_f64": lambda lib: lib.view_as_complex(lib.zeros(2, dtype=lib.float64)),
    "vac_last_size": lambda lib: lib.view_as_complex(lib.zeros(2, 3)),
    "vac_last_stride": lambda lib: lib.view_as_complex(lib.zeros(2, 3).t()[:, :2].t().t()),
    "vac_offset": lambda lib: lib.view_as_complex(lib.zeros(4)[1:3]),
    "vac_stride_even": lambda lib: lib.view_as_complex(lib.zeros(3, 3)[:, :2]),
    "vac_expanded": lambda lib: lib.view_as_complex(lib.zeros(2, 1).expand(2, 2)),
    "vac_int": lambda lib: lib.view_as_complex(lib.zeros(3, 2, dtype=lib.int64)),
    "vac_0d": lambda lib: lib.view_as_complex(lib.tensor(1.0)),
    "vac_empty": lambda lib: lib.view_as_complex(lib.zeros(0, 2)),
    "view_as_real": lambda lib: lib.view_as_real(lib.tensor([[1 + 2j, 3j]])),
    "view_as_real_of_real": lambda lib: lib.view_as_real(lib.zeros(3)),
    "view_as_real_of_conj": lambda lib: lib.view_as_real(lib.tensor([1j]).conj()),
    "view_as_real_0d": lambda lib: lib.view_as_real(lib.tensor(1 + 2j)),
}


@pytest.mark.parametrize("name", VIEW_CASES)
def test_complex_views(name):
    def fn(lib):
        v = VIEW_CASES[name](lib)
        return v, v.stride(), v.storage_offset()

    t, m = run(fn)
    check(t, m, exact=True)


@given(spec=complex_specs(min_dims=1))
@SETTINGS
def test_real_imag_views_share_memory(spec):
    def fn(lib):
        x = build(lib, spec).clone() if spec.layout == "expanded" else build(lib, spec)
        r, i, v = x.real, x.imag, lib.view_as_real(x)
        geometry = (r.stride(), r.storage_offset(), i.stride(), i.storage_offset(), v.stride(), v.storage_offset(),
                    r._base is x or r._base is x._base, x._version)
        r.mul_(2)
        i.add_(1)
        back = lib.view_as_complex(v)
        return x, geometry, x._version, back, lib.view_as_real(x)

    t, m = run(fn)
    check(t[0], m[0])
    assert m[1] == t[1] and m[2] == t[2]
    check(t[3], m[3])
    check(t[4], m[4])


def test_real_imag_setters_and_real_of_real():
    def fn(lib):
        x = lib.tensor([1 + 2j, 3 - 4j])
        x.real = lib.tensor([9.0, 8.0])
        x.imag = lib.tensor([7.0, 6.0])
        y = lib.tensor([1.0, 2.0])
        return x, y.real is y, lib.real(y) is y, y.conj() is y, y.resolve_conj() is y

    t, m = run(fn)
    check(t[0], m[0], exact=True)
    assert m[1:] == t[1:]


def test_conj_bit_observables():
    def fn(lib):
        x = lib.tensor([1 + 1j, 2 - 3j])
        y = x.conj()
        z = y.resolve_conj()
        return (y, z, y.conj(), y.is_conj(), z.is_conj(), x.is_conj(), lib.is_conj(y), y.conj().is_conj(),
                (y * 2).is_conj(), lib.conj_physical(x).is_conj())

    t, m = run(fn)
    check(list(t[:3]), list(m[:3]), exact=True)
    assert list(m[3:]) == list(t[3:])


POLAR = {
    "polar": lambda lib: lib.polar(lib.tensor([1.0, 2]), lib.tensor([0.5, 1.0])),
    "polar_broadcast": lambda lib: lib.polar(lib.tensor([1.0, 2]), lib.tensor([[0.5], [1.0]])),
    "polar_f64": lambda lib: lib.polar(lib.tensor([1.0, 2], dtype=lib.float64), lib.tensor([3.0, -1], dtype=lib.float64)),
    "polar_mixed": lambda lib: lib.polar(lib.tensor([1.0, 2]), lib.tensor([0.5, 1.0], dtype=lib.float64)),
    "polar_int": lambda lib: lib.polar(lib.tensor([1, 2]), lib.tensor([0, 1])),
    "complex": lambda lib: lib.complex(lib.tensor([1.0, 2]), lib.tensor([0.5, 1.0])),
    "complex_broadcast": lambda lib: lib.complex(lib.tensor([1.0, 2], dtype=lib.float64),
                                                 lib.tensor([[0.5], [1.0]], dtype=lib.float64)),
    "complex_mixed": lambda lib: lib.complex(lib.tensor([1.0]), lib.tensor([0.5], dtype=lib.float64)),
    "complex_int": lambda lib: lib.complex(lib.tensor([1]), lib.tensor([0])),
    "angle_real": lambda lib: lib.angle(lib.tensor([1.0, -2.0, 0.0, -0.0, float("nan")])),
    "angle_int": lambda lib: lib.angle(lib.tensor([1, -2, 0])),
    "angle_complex": lambda lib: lib.tensor([1 + 1j, -1j, 0j]).angle(),
    "sgn_real": lambda lib: lib.sgn(lib.tensor([1.5, 0, -3])),
    "sgn_complex": lambda lib: lib.tensor([1 + 1j, 0j, -3j]).sgn(),
    "abs_c128": lambda lib: lib.abs(lib.tensor([3 + 4j], dtype=lib.complex128)),
}


@pytest.mark.parametrize("name", POLAR)
def test_polar_complex_angle_sgn(name):
    both(POLAR[name])


@pytest.mark.parametrize("name", ["view_as_real", "view_as_complex", "angle", "abs", "conj", "polar", "complex", "sgn"])
def test_meta_dtypes(name):
    cases = {
        "view_as_real": lambda lib: lib.view_as_real(lib.empty(2, 3, dtype=lib.complex128, device="meta")),
        "view_as_complex": lambda lib: lib.view_as_complex(lib.empty(2, 3, 2, device="meta")),
        "angle": lambda lib: lib.angle(lib.empty(2, dtype=lib.complex64, device="meta")),
        "abs": lambda lib: lib.abs(lib.empty(2, 3, dtype=lib.complex128, device="meta").t()),
        "conj": lambda lib: lib.conj_physical(lib.empty(2, dtype=lib.complex64, device="meta")),
        "polar": lambda lib: lib.polar(lib.empty(2, device="meta"), lib.empty(3, 1, device="meta")),
        "complex": lambda lib: lib.complex(lib.empty(2, dtype=lib.float64, device="meta"),
                                           lib.empty(2, dtype=lib.float64, device="meta")),
        "sgn": lambda lib: lib.sgn(lib.empty(2, dtype=lib.complex64, device="meta")),
    }

    def fn(lib):
        r = cases[name](lib)
        return str(r.dtype), tuple(r.shape), r.device.type

    t, m = run(fn)
    assert m == t


# -- checkpoints -----------------------------------------------------------------------------------------


def _checkpoint(lib):
    p = lib.nn.Parameter(lib.tensor([1j, 2 - 1j]))
    return {"a": lib.tensor([1 + 2j, 3j]), "b": lib.tensor([[1j, 2]], dtype=lib.complex128).t(), "p": p}


@pytest.mark.parametrize("writer, reader", [(torch, mt), (mt, torch), (mt, mt)])
def test_save_load_complex_tensors(writer, reader):
    import io

    buf = io.BytesIO()
    writer.save(_checkpoint(writer), buf)
    buf.seek(0)
    loaded = reader.load(buf)
    expected = _checkpoint(torch)
    for key in expected:
        got = loaded[key]
        assert str(got.dtype) == str(expected[key].dtype)
        np.testing.assert_array_equal(got.detach().numpy(), expected[key].detach().numpy())
    assert type(loaded["p"]).__name__ == "Parameter" and loaded["p"].requires_grad


def test_safetensors_complex64_both_ways(tmp_path):
    from safetensors.torch import load_file, save_file

    ours, theirs = str(tmp_path / "ours.safetensors"), str(tmp_path / "theirs.safetensors")
    mt.safetensors_save({"w": mt.tensor([[1 + 2j, 3j]])}, ours)
    save_file({"w": torch.tensor([[1 + 2j, 3j]])}, theirs)
    for got in (load_file(ours)["w"], mt.safetensors_load(theirs)["w"], mt.safetensors_load(ours)["w"]):
        assert str(got.dtype) == "torch.complex64"
        np.testing.assert_array_equal(got.numpy(), np.array([[1 + 2j, 3j]], dtype=np.complex64))


# -- torch.testing.assert_close ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "scenario",
    [
        lambda lib: (lib.tensor([1 + 2j, 3 - 1j]), lib.tensor([1 + 2j, 3 - 1j])),
        lambda lib: (lib.tensor([1 + 2j, 3 - 1j]), lib.tensor([1 + 3j, 3 - 1j])),  # only an imaginary part differs
        lambda lib: (lib.tensor([1 + 2j, 3 - 1j]), lib.tensor([1 + 2j, 3 - 1j]) * (1 + 1e-8)),
        lambda lib: (lib.tensor(1 + 2j, dtype=lib.complex128), lib.tensor(1 + 2.5j, dtype=lib.complex128)),
        lambda lib: (lib.tensor([1j]), lib.tensor([1j], dtype=lib.complex128)),
    ],
)
def test_assert_close_with_complex(scenario):
    import minitorch_nn.testing  # noqa: F401  (torch.testing)

    def fn(lib):
        a, b = scenario(lib)
        lib.testing.assert_close(a, b)
        return "close"

    t, m = run(fn)
    if isinstance(t, Exception):
        assert type(m) is type(t) and str(m) == str(t), (m, t)
    else:
        assert m == t


@pytest.mark.parametrize(
    "scenario",
    [
        lambda lib: lib.float_power(lib.tensor([1 + 2j, -0.5j]), 2),
        lambda lib: lib.float_power(lib.tensor([2.0, 3.0]), 1j),
        lambda lib: lib.float_power(1j, lib.tensor([2.0, 0.5])),
        lambda lib: lib.float_power(lib.tensor([2.0]), lib.tensor([1 + 1j])),
        lambda lib: lib.scalar_tensor(1j),
        lambda lib: lib.scalar_tensor(1j, dtype=lib.complex64),
        lambda lib: lib.scalar_tensor(2 + 0j),
    ],
)
def test_float_power_and_scalar_tensor_with_complex(scenario):
    both(scenario, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_make_tensor_complex(dtype, noncontiguous):
    import minitorch_nn.testing  # noqa: F401  (torch.testing)

    def fn(lib):
        t = lib.testing.make_tensor(3, 4, dtype=getattr(lib, dtype), device="cpu", low=-2, high=2,
                                    noncontiguous=noncontiguous)
        values = t.numpy()
        return (str(t.dtype), tuple(t.shape), t.is_contiguous(), bool((np.abs(values.real) <= 2).all()),
                bool((np.abs(values.imag) <= 2).all()), bool((values.imag != 0).any()))

    t, m = run(fn)
    assert m == t


META_CASES = {
    "add_promotes": lambda lib, a, f: a + f,
    "float_times_1j": lambda lib, a, f: f * 1j,
    "int_div_1j": lambda lib, a, f: lib.empty(2, dtype=lib.int64, device="meta") / 1j,
    "exp": lambda lib, a, f: a.exp(),
    "sum": lambda lib, a, f: a.sum(0),
    "mean": lambda lib, a, f: a.mean(),
    "var": lambda lib, a, f: a.var(0),
    "norm": lambda lib, a, f: lib.linalg.vector_norm(a),
    "mm": lambda lib, a, f: a @ a.t(),
    "real": lambda lib, a, f: a.real,
    "imag": lambda lib, a, f: a.imag,
    "eq": lambda lib, a, f: a == a,
    "to": lambda lib, a, f: f.to(lib.complex128),
    "cumsum": lambda lib, a, f: a.cumsum(0),
    "prod": lambda lib, a, f: a.prod(),
}


@pytest.mark.parametrize("name", META_CASES)
def test_meta_kernels_give_complex_dtypes(name):
    def fn(lib):
        a = lib.empty(2, 3, dtype=lib.complex64, device="meta")
        f = lib.empty(2, 3, dtype=lib.float64, device="meta")
        r = META_CASES[name](lib, a, f)
        return str(r.dtype), tuple(r.shape), r.stride(), r.device.type

    t, m = run(fn)
    assert m == t


@pytest.mark.parametrize(
    "scenario",
    [
        lambda lib: lib.tensor([[1 + 2j, 3], [4j, 5 - 1j]]).H,
        lambda lib: lib.tensor([[1 + 2j, 3], [4j, 5 - 1j]]).mH,
        lambda lib: lib.tensor([[[1 + 2j, 3]], [[4j, 5 - 1j]]]).mH,
        lambda lib: lib.tensor([[[1 + 2j, 3]], [[4j, 5 - 1j]]]).adjoint(),
        lambda lib: lib.tensor([[1.0, 2.0]]).H,
        lambda lib: lib.zeros(2, 3, 4).H,
        lambda lib: lib.zeros(3).H,
        lambda lib: lib.zeros(3).mH,
        lambda lib: lib.tensor(1 + 1j).H,
    ],
)
def test_conjugate_transposes(scenario):
    both(scenario, exact=True)


EDGE_VALUES = {
    "reciprocal_of_zero": lambda lib: lib.tensor([0j, 1 + 1j]).reciprocal(),
    "divide_by_zero": lambda lib: lib.tensor([1 + 1j]) / 0,
    "log_of_zero": lambda lib: lib.tensor([0j]).log(),
    "sqrt_of_negative": lambda lib: lib.tensor([-4.0 + 0j]).sqrt(),
    "pow_half": lambda lib: lib.tensor([-4.0 + 0j, 3 - 4j]) ** 0.5,
    "pow_minus_half": lambda lib: lib.tensor([-4.0 + 0j, 3 - 4j]) ** -0.5,
    "pow_minus_one": lambda lib: lib.tensor([0j, 3 - 4j]).pow(-1),
    "sum_empty": lambda lib: lib.zeros(0, dtype=lib.complex64).sum(),
    "prod_empty": lambda lib: lib.zeros(0, dtype=lib.complex64).prod(),
    "mean_empty": lambda lib: lib.zeros(0, dtype=lib.complex64).mean(),
    "abs_inf_nan": lambda lib: lib.tensor([complex(float("inf"), float("nan"))]).abs(),
    "addmm_complex_beta": lambda lib: lib.addmm(lib.ones(2, 2, dtype=lib.complex64), lib.ones(2, 1, dtype=lib.complex64),
                                                lib.ones(1, 2, dtype=lib.complex64) * 1j, beta=1j, alpha=2 - 1j),
    "baddbmm_complex_alpha": lambda lib: lib.baddbmm(lib.zeros(1, 2, 2, dtype=lib.complex64),
                                                     lib.ones(1, 2, 1, dtype=lib.complex64) * 1j,
                                                     lib.ones(1, 1, 2, dtype=lib.complex64), alpha=2 + 1j),
    "where_complex_scalar": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.0, 2.0]), 1j),
}


@pytest.mark.parametrize("name", EDGE_VALUES)
def test_complex_edge_values(name):
    both(EDGE_VALUES[name], rtol=1e-6, atol=1e-6)

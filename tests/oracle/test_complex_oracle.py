"""Oracle: complex dtypes (complex64/complex128) against PyTorch 2.13.

Covers the dtypes and their promotion rules, the factories (with ``manual_seed`` streams), printing,
elementwise ops, reductions, matmul, the complex views (``real``/``imag``/``view_as_real``/
``view_as_complex``), ``conj``, ``polar``/``complex``/``angle``/``abs``, the errors PyTorch gives
for ops it refuses on complex tensors, and autograd with PyTorch's conjugate-Wirtinger convention.
Each test runs one scenario in both libraries and compares values, dtypes, printed text and
errors; hypothesis draws shapes and memory layouts (contiguous, transposed, sliced, expanded,
offset).
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from tests.strategies import LAYOUTS, TensorSpec, _base_shape, build, shapes  # noqa: E402

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
COMPLEX = ("complex64", "complex128")
LIBS = (torch, mt)


# -- helpers ---------------------------------------------------------------------------------------


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

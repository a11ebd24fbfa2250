"""Oracle: ``repr``/``str`` of minitorch_nn tensors equal PyTorch 2.13's, character for character.

Hypothesis draws shapes (0-d, empty, small, and large enough to be
summarised), dtypes (bool, the integer types, float16, bfloat16, float32,
float64) and values that mix tiny, huge, whole, negative, nan, inf and
negative zero. Each case is built from the same bits in both libraries and
the printed text is compared, under the default print options and under
random ``printoptions``. Suffix cases (requires_grad, grad_fn, the default
dtype set to float64, meta tensors) are checked separately.

Our side is built by ``ours()``: a real ``minitorch_nn`` tensor when the tensor
core is importable, otherwise a small stand-in object carrying the same
interface (the printer is duck-typed), so this file is useful on its own.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")  # fmt: skip

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from minitorch_nn import _dtype  # noqa: E402
from minitorch_nn import _tensor_str as ts  # noqa: E402

pytestmark = pytest.mark.oracle

DTYPE_NAMES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]

# -- our side: the real core if it is there, else a stand-in --------------------


def _real_core():
    try:
        import minitorch_nn

        minitorch_nn.tensor([1.0])
        return minitorch_nn
    except Exception:  # core not built / not written yet
        return None


MT = _real_core()


class _Device:
    def __init__(self, name):
        self.type, _, index = name.partition(":")
        self.index = int(index) if index else None
        self._name = name

    def __str__(self):
        return self._name


class _GradFn:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _StandIn:
    def __init__(self, array, dtype_name, device="cpu", requires_grad=False, grad_fn=None):
        self.dtype = getattr(_dtype, dtype_name)
        self.shape = tuple(array.shape)
        self._array = array
        self.device = _Device(device)
        self.requires_grad = requires_grad
        self.grad_fn = None if grad_fn is None else _GradFn(grad_fn)
        self.is_leaf = grad_fn is None

    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def __repr__(self):
        return ts._str(self)

    __str__ = __repr__


@pytest.fixture(autouse=True)
def _clean_state(monkeypatch):
    if MT is None:
        monkeypatch.setattr(ts, "_tensor_classes", lambda: (_StandIn, None))
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    _dtype.set_default_dtype(_dtype.float32)


LAYOUTS = ["contiguous", "transposed", "strided"]


def ours(array: np.ndarray, dtype_name: str, *, requires_grad=False, layout="contiguous"):
    """Our tensor holding exactly ``array`` (whose numpy dtype matches ``dtype_name``).

    ``layout`` picks the memory layout of the same values: contiguous, a
    transpose of a contiguous block, or every other element of a twice as
    wide block (a non-unit stride).
    """
    if array.ndim == 0:
        layout = "contiguous"
    if MT is not None:
        if layout == "transposed":
            block = MT.from_numpy(array.transpose().copy(order="C"))
            t = block.permute(*reversed(range(array.ndim)))
        elif layout == "strided":
            t = MT.from_numpy(np.repeat(array, 2, axis=-1))[..., ::2]
        else:
            t = MT.from_numpy(array.copy(order="C"))
        return t.requires_grad_() if requires_grad else t
    if layout == "transposed":
        array = array.transpose().copy(order="C").transpose()
    elif layout == "strided":
        array = np.repeat(array, 2, axis=-1)[..., ::2]
    return _StandIn(array, dtype_name, requires_grad=requires_grad)


def theirs_and_data(values: np.ndarray, dtype_name: str):
    """The torch tensor for ``values`` and the numpy array holding the very same bits."""
    torch_dtype = getattr(torch, dtype_name)
    values = np.asarray(values, dtype=np.float64)
    if dtype_name == "bool":
        t = torch.from_numpy(np.asarray(values > 0))
    elif dtype_name in ("float16", "bfloat16", "float32", "float64"):
        t = torch.from_numpy(values.astype(np.float64)).to(torch_dtype)
    else:
        info = np.iinfo(getattr(np, dtype_name))
        finite = np.nan_to_num(values, nan=0.0, posinf=info.max, neginf=info.min)
        # The largest float64 not above the int type's maximum (2**63 itself overflows int64).
        top = np.nextafter(float(info.max) + 1.0, 0.0)
        ints = np.clip(np.trunc(finite), info.min, top).astype(getattr(np, dtype_name))
        t = torch.from_numpy(np.asarray(ints))
    if dtype_name == "bfloat16":
        data = t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    else:
        data = t.numpy()
    return t, data.copy()


# -- value and shape strategies ---------------------------------------------------

SCALES = [1e-12, 1e-6, 1e-4, 1e-2, 1.0, 10.0, 999.0, 1e4, 1e8, 1e12, 1e30, 1e300]
# Values on the edges of the style rules: max/min ratio of exactly 1000, max of
# exactly 1e8, min of exactly 1e-4, and their neighbours.
EDGES = [1e-4, 9.9e-5, 1.0001e-4, 0.1, 1.0, 1000.0, 1000.5, 999.5, 1e8, 1e8 + 1, 99999999.0, 1e5]


@st.composite
def shapes(draw):
    kind = draw(st.sampled_from(["small", "small", "small", "empty", "big"]))
    if kind == "small":
        return tuple(draw(st.lists(st.integers(1, 6), min_size=0, max_size=4)))
    if kind == "empty":
        dims = draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
        dims[draw(st.integers(0, len(dims) - 1))] = 0
        return tuple(dims)
    # Past the default threshold of 1000 elements, so summarised.
    return draw(
        st.sampled_from(
            [
                (1001,),
                (1500,),
                (40, 30),
                (3, 400),
                (11, 11, 11),
                (2, 3, 200),
                (5, 7, 6, 8),
                (1, 1200),
            ]
        )
    )


@st.composite
def value_arrays(draw, shape):
    """float64 values mixing scales, whole numbers, signs and specials."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = math.prod(shape)
    style = draw(st.sampled_from(["normal", "whole", "whole", "mixed_scale", "specials", "edges"]))
    scale = draw(st.sampled_from(SCALES))
    if style == "normal":
        values = rng.standard_normal(size) * scale
    elif style == "whole":
        values = np.round(
            rng.standard_normal(size) * draw(st.sampled_from([1.0, 5.0, 100.0, 1e5, 1e9]))
        )
    elif style == "mixed_scale":
        values = rng.standard_normal(size) * rng.choice(SCALES, size)
    elif style == "edges":
        picks = draw(st.lists(st.sampled_from(EDGES), min_size=1, max_size=3, unique=True))
        values = rng.choice(picks, size) * rng.choice([1.0, -1.0], size)
    else:
        values = rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, np.nan, np.inf, -np.inf, 3.0], size) * scale
    if draw(st.booleans()):
        specials = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], size)
        values = np.where(rng.random(size) < 0.1, specials, values)
    return values.reshape(shape)


@st.composite
def cases(draw):
    shape = draw(shapes())
    return (
        draw(value_arrays(shape)),
        draw(st.sampled_from(DTYPE_NAMES)),
        draw(st.sampled_from(LAYOUTS)),
    )


def check_same(values: np.ndarray, dtype_name: str, layout: str = "contiguous"):
    theirs, data = theirs_and_data(values, dtype_name)
    mine = ours(data, dtype_name, layout=layout)
    assert repr(mine) == repr(theirs)
    assert str(mine) == str(theirs)


SETTINGS = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(cases())
def test_random_tensors_print_like_torch(case):
    check_same(*case)


@st.composite
def print_options(draw):
    options = {}
    if draw(st.booleans()):
        options["precision"] = draw(st.integers(0, 8))
    if draw(st.booleans()):
        options["threshold"] = draw(st.sampled_from([0, 1, 5, 20, 100, 1000, math.inf]))
    if draw(st.booleans()):
        options["edgeitems"] = draw(st.integers(0, 4))
    if draw(st.booleans()):
        options["linewidth"] = draw(st.integers(5, 200))
    if draw(st.booleans()):
        options["profile"] = draw(st.sampled_from(["default", "short", "full"]))
    options["sci_mode"] = draw(st.sampled_from([None, None, True, False]))
    return options


@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(cases(), print_options())
def test_random_tensors_under_printoptions(case, options):
    values, dtype_name, layout = case
    if options.get("threshold") == math.inf or options.get("profile") == "full":
        # Printing everything is fine but slow for the big shapes; keep it small.
        values = values.reshape(-1)[:300]
    with torch._tensor_str.printoptions(**options), ts.printoptions(**options):
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        check_same(values, dtype_name, layout)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(
    "values",
    [
        [1.0, 1000.0],
        [1.5, 1500.0],
        [1.0, 1000.5],
        [1e8],
        [1e8 + 1],
        [1e8, 2.5],
        [1e-4],
        [1e-4, 0.5],
        [9.9e-5, 0.5],
        [-0.0, 1e-4],
        [0.1, 100.0],
        [65504.0, 1.0],
        [6e-8, 1.0],
    ],
)
def test_style_rule_edges(values, dtype_name):
    check_same(np.array(values), dtype_name)


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"profile": "short"},
        {"threshold": 5},
        {"edgeitems": 0},
        {"linewidth": 30},
        {},
    ],
)
def test_get_printoptions_matches(options):
    torch.set_printoptions(**options)
    ts.set_printoptions(**options)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()


# -- suffixes ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (12, 10), (40, 40)])
def test_requires_grad_suffix(shape):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape).astype(np.float32)
    theirs = torch.from_numpy(values.copy()).requires_grad_()
    assert repr(ours(values, "float32", requires_grad=True)) == repr(theirs)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (9, 9)])
def test_grad_fn_suffix(shape, monkeypatch):
    rng = np.random.default_rng(1)
    values = rng.standard_normal(shape).astype(np.float32)
    theirs = torch.from_numpy(values.copy()).requires_grad_() * 2
    doubled = theirs.detach().numpy().copy()
    # The printer's side of the contract, with a stand-in whose grad_fn is named.
    with monkeypatch.context() as patch:
        patch.setattr(ts, "_tensor_classes", lambda: (_StandIn, None))
        stand_in = _StandIn(doubled, "float32", requires_grad=True, grad_fn="MulBackward0")
        assert repr(stand_in) == repr(theirs)
    if MT is not None:
        mine = ours(values, "float32", requires_grad=True) * 2
        assert repr(mine) == repr(theirs)


@pytest.mark.skipif(MT is None, reason="needs the minitorch_nn tensor core")
@pytest.mark.parametrize("values", [[1.5, 2.0], [[1.0, 2.0], [3.0, 4.0]], 2.5])
def test_parameter_and_its_subclass(values):
    data = np.array(values, dtype=np.float32)
    theirs = torch.nn.Parameter(torch.from_numpy(data.copy()))
    mine = MT.nn.Parameter(MT.from_numpy(data.copy()))
    assert repr(mine) == repr(theirs)

    class MyParam(torch.nn.Parameter):
        pass

    class MyParamOurs(MT.nn.Parameter):
        pass

    MyParamOurs.__name__ = "MyParam"
    theirs = MyParam(torch.from_numpy(data.copy()))
    assert repr(MyParamOurs(MT.from_numpy(data.copy()))) == repr(theirs)


@pytest.mark.skipif(MT is None, reason="needs the minitorch_nn tensor core")
def test_tensor_subclass_prints_its_class_name():
    class MyTensor(torch.Tensor):
        pass

    class MyTensorOurs(MT.Tensor):
        pass

    MyTensorOurs.__name__ = "MyTensor"
    base = MT.tensor([1.5, 2.0])
    theirs = torch.tensor([1.5, 2.0]).as_subclass(MyTensor)
    assert repr(base.as_subclass(MyTensorOurs)) == repr(theirs)


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "float16", "int64", "int32", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (4,), (2, 3)])
def test_dtype_suffix_with_default_float64(dtype_name, shape):
    torch.set_default_dtype(torch.float64)
    _dtype.set_default_dtype(_dtype.float64)
    values = np.random.default_rng(2).standard_normal(shape) * 3
    check_same(values, dtype_name)


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "int64", "bool", "bfloat16"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (5, 1, 4)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_meta_tensors(dtype_name, shape, requires_grad):
    if requires_grad and dtype_name in ("int64", "bool"):
        pytest.skip("only floating tensors can require grad")
    theirs = torch.empty(shape, dtype=getattr(torch, dtype_name), device="meta")
    theirs.requires_grad_(requires_grad)
    if MT is not None:
        mine = MT.empty(shape, dtype=getattr(MT, dtype_name), device="meta")
        mine.requires_grad_(requires_grad)
    else:
        mine = _StandIn(np.empty(shape), dtype_name, device="meta", requires_grad=requires_grad)
        mine._array = None
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("options", [{}, {"edgeitems": 0}, {"linewidth": 20}])
def test_tensor_contents_argument(options):
    torch.set_printoptions(**options)
    ts.set_printoptions(**options)
    values = np.arange(6.0).reshape(2, 3)
    theirs = torch.from_numpy(values.copy())
    mine = ours(values.copy(), "float64")
    assert ts._str(mine, tensor_contents="[stuff]") == torch._tensor_str._str(
        theirs, tensor_contents="[stuff]"
    )

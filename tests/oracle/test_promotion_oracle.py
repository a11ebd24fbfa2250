"""Oracle: type promotion against PyTorch 2.13: ``promote_types``, ``result_type`` and op result dtypes.

PyTorch's promotion has three tiers (dimensioned tensors, zero-dim tensors, Python numbers) and
a lower tier only counts when it is of a higher category (bool < integer < floating). These
tests compare the tables exhaustively and check that every binary op's result dtype, for every
pair of dtypes and every kind of second operand, is PyTorch's (or that both refuse the pair
with the same exception type).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from tests.strategies import DTYPE_NAMES  # noqa: E402

# -- type promotion ---------------------------------------------------------------------------------------

DTYPES = [getattr(torch, n) for n in DTYPE_NAMES]


@pytest.mark.parametrize("d1", DTYPE_NAMES)
@pytest.mark.parametrize("d2", DTYPE_NAMES)
def test_promote_types_table(d1, d2):
    assert str(mt.promote_types(getattr(mt, d1), getattr(mt, d2))) == str(torch.promote_types(getattr(torch, d1), getattr(torch, d2)))


@pytest.mark.parametrize("d1", DTYPE_NAMES)
@pytest.mark.parametrize("kind", ["tensor", "zero_dim", "bool", "int", "float"])
@pytest.mark.parametrize("d2", DTYPE_NAMES)
def test_result_type_tiers(d1, kind, d2):
    def make(lib, name, shape):
        return lib.zeros(shape, dtype=getattr(lib, name))

    scalar = {"bool": True, "int": 3, "float": 2.5}.get(kind)

    def other(lib):
        if kind == "tensor":
            return make(lib, d2, (2,))
        if kind == "zero_dim":
            return make(lib, d2, ())
        return scalar

    for lhs_shape in ((2,), ()):
        expected = torch.result_type(make(torch, d1, lhs_shape), other(torch))
        got = mt.result_type(make(mt, d1, lhs_shape), other(mt))
        assert str(got) == str(expected), (d1, lhs_shape, kind, d2)
    if kind not in ("tensor", "zero_dim") and d2 != DTYPE_NAMES[0]:
        return
    # the scalar can also come first
    if kind in ("bool", "int", "float"):
        assert str(mt.result_type(scalar, make(mt, d1, (2,)))) == str(torch.result_type(scalar, make(torch, d1, (2,))))


@pytest.mark.parametrize("d", ["float32", "float64", "float16", "bfloat16"])
def test_default_dtype_changes_promotion(d):
    old_t, old_m = torch.get_default_dtype(), mt.get_default_dtype()
    try:
        if d in ("float32", "float64"):
            torch.set_default_dtype(getattr(torch, d))
            mt.set_default_dtype(getattr(mt, d))
        for x in (1, 2.5, True):
            for src in ("int64", "int8", "bool"):
                got = (mt.zeros(2, dtype=getattr(mt, src)) + x).dtype
                expected = (torch.zeros(2, dtype=getattr(torch, src)) + x).dtype
                assert str(got) == str(expected)
        assert str(mt.tensor([1.5]).dtype) == str(torch.tensor([1.5]).dtype)
        assert str(mt.arange(3.0).dtype) == str(torch.arange(3.0).dtype)
    finally:
        torch.set_default_dtype(old_t)
        mt.set_default_dtype(old_m)


def test_can_cast_table():
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            assert mt.can_cast(getattr(mt, a), getattr(mt, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


BINARY_OPS = {
    "add": lambda lib, a, b: lib.add(a, b), "sub": lambda lib, a, b: lib.sub(a, b), "mul": lambda lib, a, b: lib.mul(a, b),
    "div": lambda lib, a, b: lib.div(a, b), "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b), "pow": lambda lib, a, b: lib.pow(a, b),
    "eq": lambda lib, a, b: lib.eq(a, b), "lt": lambda lib, a, b: lib.lt(a, b),
    "bitwise_and": lambda lib, a, b: lib.bitwise_and(a, b), "where": lambda lib, a, b: lib.where(lib.ones((), dtype=lib.bool), a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b) if isinstance(b, lib.Tensor) else lib.maximum(a, lib.tensor(b)),
    "atan2": lambda lib, a, b: lib.atan2(a, b) if isinstance(b, lib.Tensor) else lib.atan2(a, lib.tensor(b)),
    "clamp": lambda lib, a, b: lib.clamp(a, min=b),
    "cat": lambda lib, a, b: lib.cat([a, b if isinstance(b, lib.Tensor) and b.dim() else lib.ones(1, dtype=a.dtype)]),
}
SECOND = ["tensor", "zero_dim", True, 3, 2.5]


def _operand(lib, kind, name):
    if kind == "tensor":
        return lib.ones(2, dtype=getattr(lib, name))
    if kind == "zero_dim":
        return lib.ones((), dtype=getattr(lib, name))
    return kind


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
@pytest.mark.parametrize("second", SECOND, ids=str)
def test_op_result_dtypes(op, second):
    fn = BINARY_OPS[op]
    names = DTYPE_NAMES if second in ("tensor", "zero_dim") else DTYPE_NAMES[:1]
    for d1 in DTYPE_NAMES:
        for d2 in names:
            outcome = []
            for lib in (torch, mt):
                try:
                    r = fn(lib, lib.ones(2, dtype=getattr(lib, d1)), _operand(lib, second, d2))
                    outcome.append(str(r.dtype))
                except Exception as e:  # noqa: BLE001 - compared below
                    outcome.append(type(e))
            t, m = outcome
            if isinstance(t, type):
                assert isinstance(m, type) and issubclass(m, t), (op, d1, second, d2, t, m)
            else:
                assert m == t, f"{op}({d1}, {second} {d2 if second in ('tensor', 'zero_dim') else ''}) is {m}, torch {t}"

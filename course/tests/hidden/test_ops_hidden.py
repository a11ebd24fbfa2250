"""Hidden graded tests: one op, end to end. Differential checks against the reference."""

import numpy as np
import probes
import pytest
from hypothesis import given
from hypothesis import strategies as st

_SHAPES = st.lists(st.integers(0, 3), max_size=4)


@pytest.mark.task("broadcast-shapes")
@given(_SHAPES, _SHAPES)
def test_broadcast_matches_reference(mt, ref, a, b):
    assert probes.broadcast_probe(mt, a, b) == ref(probes.broadcast_probe, a, b)


@pytest.mark.task("broadcast-shapes")
def test_broadcast_through_an_op(mt):
    out = mt.ops.aten.mul.Tensor(mt.ones(4, 1, 3), mt.ones(2, 1))
    assert tuple(out.shape) == (4, 2, 3)
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(3\) at non-singleton dimension 0"):
        mt.ops.aten.mul.Tensor(mt.ones(2), mt.ones(3))


_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.task("type-promotion")
@given(st.lists(st.sampled_from(_DTYPES), max_size=3), st.lists(st.sampled_from(_DTYPES), max_size=3),
       st.lists(st.sampled_from([True, 3, -2, 0.5]), max_size=2))
def test_promotion_matches_reference(mt, ref, dims, zeros, scalars):
    if not (dims or zeros or scalars):
        return
    assert probes.promotion_probe(mt, dims, zeros, scalars) == ref(probes.promotion_probe, dims, zeros, scalars)


@pytest.mark.task("kernel-add")
@given(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES), st.sampled_from([1, 2, -1, 0.5, True, 0]))
def test_add_matches_reference(mt, ref, assert_close, dtype_a, dtype_b, alpha):
    a, b = [[1, 0], [3, 1]], [1, 1]
    got, want = probes.add_probe(mt, a, b, dtype_a, dtype_b, alpha), ref(probes.add_probe, a, b, dtype_a, dtype_b, alpha)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert got[1][0] == want[1][0]
        np.testing.assert_array_equal(got[1][1], want[1][1])
    else:
        assert got[1] == want[1]


@pytest.mark.task("kernel-sum")
@given(st.sampled_from(["bool", "int32", "float16", "float32", "float64"]),
       st.lists(st.integers(-3, 2), max_size=3, unique=True), st.booleans(),
       st.sampled_from([None, "float64", "int64"]))
def test_sum_matches_reference(mt, ref, dtype, dims, keepdim, out_dtype):
    arr = np.arange(24).reshape(2, 3, 4) % 5
    got = probes.sum_probe(mt, arr, dtype, dims, keepdim, out_dtype)
    want = ref(probes.sum_probe, arr, dtype, dims, keepdim, out_dtype)
    assert got[0] == want[0] and got[1][:2] == want[1][:2], (got, want)
    if got[0] == "ok":
        np.testing.assert_allclose(got[1][2], want[1][2])


@pytest.mark.task("dispatch-mode")
def test_mode_is_restored_after_a_failing_handler(mt):
    from minitorch_nn.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

    class Boom(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            assert _get_current_dispatch_mode() is None, "the running mode is off the stack"
            raise ValueError("boom")

    mode = Boom()
    with mode:
        with pytest.raises(ValueError, match="boom"):
            mt.ones(2) * 3
        assert _get_current_dispatch_mode() is mode, "the mode is back after the handler raised"
    assert _get_current_dispatch_mode() is None


@pytest.mark.task("dispatch-mode")
def test_mode_result_replaces_the_kernel(mt):
    from minitorch_nn.utils._python_dispatch import TorchDispatchMode

    class Zeros(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) == "aten.mul.Tensor":
                return mt.zeros(2)
            return func(*args, **(kwargs or {}))

    with Zeros():
        out = mt.ones(2) * 5
        added = mt.ones(2) + 1
    assert out.tolist() == [0.0, 0.0] and added.tolist() == [2.0, 2.0]

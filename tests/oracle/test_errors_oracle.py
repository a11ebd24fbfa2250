"""Oracle: errors for bad shapes, dtypes and devices: PyTorch's exception type and message first.

Each case runs in both libraries; the exception types must match and minitorch_nn's message must
start with PyTorch's first line (we may add a hint line after it, never before).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402

CASES = {
    "broadcast_add": lambda lib: lib.ones(2, 3) + lib.ones(2, 4),
    "broadcast_mul_3d": lambda lib: lib.ones(5, 2, 3) * lib.ones(4, 3),
    "broadcast_where": lambda lib: lib.where(lib.ones(3, dtype=lib.bool), lib.ones(3), lib.ones(4)),
    "inplace_broadcast": lambda lib: lib.ones(3).add_(lib.ones(2, 3)),
    "inplace_cast": lambda lib: lib.ones(3, dtype=lib.int64).add_(lib.ones(3)),
    "inplace_cast_bool": lambda lib: lib.ones(3, dtype=lib.bool).mul_(2),
    "mm_shapes": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(4, 5)),
    "mm_dtypes": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64)),
    "mm_1d": lambda lib: lib.mm(lib.ones(3), lib.ones(3, 4)),
    "matmul_0d": lambda lib: lib.matmul(lib.ones(()), lib.ones(3)),
    "bmm_2d": lambda lib: lib.bmm(lib.ones(2, 3), lib.ones(2, 3, 4)),
    "bmm_shapes": lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 4, 4)),
    "dot_1d": lambda lib: lib.dot(lib.ones(2, 2), lib.ones(2)),
    "dot_dtype": lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "view_incompatible": lambda lib: lib.ones(2, 3).t().view(6),
    "view_numel": lambda lib: lib.ones(2, 3).view(4),
    "reshape_two_minus_one": lambda lib: lib.ones(6).reshape(-1, -1),
    "expand_bad": lambda lib: lib.ones(2, 3).expand(4, 3),
    "expand_fewer": lambda lib: lib.ones(2, 3).expand(3),
    "dim_out_of_range": lambda lib: lib.ones(2, 3).sum(2),
    "dim_out_of_range_neg": lambda lib: lib.ones(2, 3).softmax(-3),
    "dim_repeated": lambda lib: lib.ones(2, 3).sum((0, 0)),
    "index_out_of_range": lambda lib: lib.ones(2, 3)[2],
    "index_too_many": lambda lib: lib.ones(2)[0, 0],
    "index_tensor_oob": lambda lib: lib.ones(2)[lib.tensor([5])],
    "index_float": lambda lib: lib.ones(2)[lib.tensor([0.5])],
    "mask_shape": lambda lib: lib.ones(2, 3)[lib.ones(3, dtype=lib.bool)],
    "cat_dims": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2)]),
    "cat_sizes": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3, 4)]),
    "cat_empty": lambda lib: lib.cat([]),
    "stack_sizes": lambda lib: lib.stack([lib.ones(2), lib.ones(3)]),
    "mean_int": lambda lib: lib.ones(3, dtype=lib.int64).mean(),
    "var_int": lambda lib: lib.ones(3, dtype=lib.int64).var(),
    "neg_bool": lambda lib: -lib.ones(2, dtype=lib.bool),
    "sub_bool": lambda lib: lib.ones(2, dtype=lib.bool) - lib.ones(2, dtype=lib.bool),
    "bitwise_float": lambda lib: lib.ones(2) & lib.ones(2),
    "requires_grad_int": lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
    "item_many": lambda lib: lib.ones(2).item(),
    "bool_many": lambda lib: bool(lib.ones(2)),
    "len_0d": lambda lib: len(lib.tensor(1.0)),
    "iter_0d": lambda lib: iter(lib.tensor(1.0)),
    "where_cond_dtype": lambda lib: lib.where(lib.ones(2), lib.ones(2), lib.ones(2)),
    "masked_fill_mask": lambda lib: lib.ones(2).masked_fill(lib.ones(2), 0.0),
    "gather_index_shape": lambda lib: lib.ones(2, 2).gather(0, lib.zeros(2, 2, 2, dtype=lib.int64)),
    "meta_item": lambda lib: lib.zeros(1, device="meta").item(),
    "meta_to_cpu": lambda lib: lib.zeros(1, device="meta").cpu(),
    "meta_numpy": lambda lib: lib.zeros(1, device="meta").numpy(),
    "device_string": lambda lib: lib.zeros(1, device="tpu"),
    "arange_step_zero": lambda lib: lib.arange(0, 1, 0),
    "arange_sign": lambda lib: lib.arange(0, -5),
    "linspace_negative": lambda lib: lib.linspace(0, 1, -1),
    "eye_negative": lambda lib: lib.eye(-1),
    "set_default_int": lambda lib: lib.set_default_dtype(lib.int64),
    "split_sizes": lambda lib: lib.ones(5).split([2, 2]),
    "chunk_zero": lambda lib: lib.ones(5).chunk(0),
    "permute_dims": lambda lib: lib.ones(2, 3).permute(0),
    "transpose_range": lambda lib: lib.ones(2, 3).transpose(0, 5),
    "squeeze_range": lambda lib: lib.ones(2, 3).squeeze(4),
    "as_strided_oob": lambda lib: lib.ones(4).as_strided((3,), (2,)),
    "narrow_oob": lambda lib: lib.ones(4).narrow(0, 3, 2),
    "unflatten_bad": lambda lib: lib.ones(6).unflatten(0, (4, 2)),
    "flatten_order": lambda lib: lib.ones(2, 3).flatten(1, 0),
    "int_pow_negative": lambda lib: lib.tensor([2]) ** -1,
    "int_div_zero": lambda lib: lib.tensor([2]) // 0,
    "abs_bool": lambda lib: lib.ones(2, dtype=lib.bool).abs(),
    "argmax_bool": lambda lib: lib.ones(2, dtype=lib.bool).argmax(),
    "max_empty": lambda lib: lib.ones(0).max(),
    "max_dim_empty": lambda lib: lib.ones(0, 2).max(0),
    "copy_shapes": lambda lib: lib.ones(3).copy_(lib.ones(4)),
    "clamp_none": lambda lib: lib.ones(3).clamp(),
    "tril_1d": lambda lib: lib.ones(3).tril(),
    "solve_int": lambda lib: lib.linalg.solve(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    "qr_1d": lambda lib: lib.linalg.qr(lib.ones(3)),
    "vector_norm_int": lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64)),
    "alpha_float_int": lambda lib: lib.add(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), alpha=0.5),
    "div_mode": lambda lib: lib.div(lib.ones(2), 2, rounding_mode="round"),
    "from_numpy_type": lambda lib: lib.from_numpy([1, 2]),
    "tensor_ragged": lambda lib: lib.tensor([[1, 2], [3]]),
    "size_float": lambda lib: lib.zeros(2.5),
    "softmax_int": lambda lib: lib.ones(2, dtype=lib.int64).softmax(0),
    "grad_assign_shape": lambda lib: setattr(lib.ones(2, requires_grad=True), "grad", lib.ones(3)),
}


def _first_line(e):
    return str(e).strip().split("\n")[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_type_and_message(name):
    outcomes = []
    for lib in (torch, mt):
        try:
            CASES[name](lib)
        except Exception as e:  # noqa: BLE001 - compared below
            outcomes.append(e)
        else:
            outcomes.append(None)
    t, m = outcomes
    assert t is not None, "the case should fail in torch"
    assert m is not None, f"torch raised {type(t).__name__}: {t}; minitorch_nn did not raise"
    assert isinstance(m, type(t)), f"torch raised {type(t).__name__}: {t}; minitorch_nn raised {type(m).__name__}: {m}"
    expected = _first_line(t)
    got = _first_line(m)
    # PyTorch's text comes first; a hint may follow. Compare the part before any parenthesised
    # C++ location PyTorch appends.
    expected = expected.split(" (Triggered internally")[0]
    assert got.startswith(expected[:60]), f"message\n  {got!r}\ndoes not start with torch's\n  {expected!r}"

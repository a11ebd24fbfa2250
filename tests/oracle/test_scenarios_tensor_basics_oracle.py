"""Scenario sweep: everyday tensor operations a course prints (conversions with ``to``/``type``,
Python number conversions and formatting, comparisons and ``allclose``, ``where``/``clamp``,
``arange``/``linspace``, reductions with ties and options, sort, cat/stack dtypes, views,
fancy indexing and assignment, masked_fill, gather/scatter).

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state  # noqa: F401

pytestmark = pytest.mark.oracle

CASES = {
    "to_variants": lambda t: print(
        t.ones(2).to(t.float64).dtype,
        t.ones(2).to("cpu", t.int32),
        t.ones(2).to(t.ones(1, dtype=t.int8)),
        t.ones(2).type(t.float16).dtype,
        t.ones(2).type("torch.DoubleTensor").dtype,
        t.ones(2).type(),
        t.ones(2).double().half().bfloat16().dtype,
        t.ones(2).to(dtype=t.bool),
    ),
    "to_copy_flag": lambda t: (
        lambda x: print(
            x.to(t.float32) is x,
            x.to(t.float32, copy=True) is x,
            x.to("cpu") is x,
            x.cpu() is x,
            x.float() is x,
            x.contiguous() is x,
        )
    )(t.ones(2)),
    "type_bad": lambda t: t.ones(2).type("foo"),
    "int_of_tensor": lambda t: print(
        int(t.tensor(3.7)),
        float(t.tensor([2])),
        bool(t.tensor(0.0)),
        complex(t.tensor(1.0)) if False else "",
        t.tensor(5).__index__(),
        [0, 1, 2][t.tensor(1)],
    ),
    "int_of_float_index": lambda t: [0, 1][t.tensor(1.0)],
    "format_tensor": lambda t: print(
        f"{t.tensor(3.14159):.2f}", f"{str(t.tensor(1)):>8}", format(t.tensor(2.5), ".1f")
    ),
    "format_multi": lambda t: print(f"{t.ones(2):.2f}"),
    "round_ops": lambda t: print(
        round(t.tensor(2.567).item(), 2), t.tensor([2.5, 3.5, -0.5]).round(), t.tensor([1.2345]).round(decimals=2)
    ),
    "comparisons": lambda t: print(
        t.tensor([1, 2]) == t.tensor([1, 3]),
        t.tensor([1.0, float("nan")]) != t.tensor([1.0, float("nan")]),
        t.equal(t.ones(2), t.ones(2, dtype=t.float64)),
        t.allclose(t.tensor([1.0]), t.tensor([1.0 + 1e-9])),
        t.isclose(t.tensor([1.0, float("nan")]), t.tensor([1.0, float("nan")]), equal_nan=True),
    ),
    "allclose_dtype_err": lambda t: t.allclose(t.ones(2), t.ones(2, dtype=t.float64)),
    "where_scalar": lambda t: print(
        t.where(t.tensor([True, False]), 1.0, 0), t.where(t.tensor([True, False]), t.tensor([1, 2]), 0.5)
    ),
    "clamp_tensor_bounds": lambda t: print(
        t.arange(5.0).clamp(min=t.tensor(1.0), max=t.tensor([3.0])), t.arange(5).clamp(max=2.5)
    ),
    "arange_float_steps": lambda t: print(
        t.arange(0, 1, 0.1).shape, t.arange(1, 2.5, 0.5), t.arange(5, dtype=t.float32), t.arange(-1, -5, -2)
    ),
    "linspace_int": lambda t: print(t.linspace(0, 10, 5, dtype=t.int64), t.linspace(0, 1, 1)),
    "max_dim_ties": lambda t: print(
        t.tensor([[1, 3, 3], [2, 2, 1]]).max(1), t.tensor([3.0, 3.0, 1.0]).argmax(), t.tensor([1, 3, 3]).argmin()
    ),
    "sort_stable": lambda t: print(t.tensor([2, 1, 2, 1]).sort(stable=True), t.tensor([2.0, 1.0, float("nan")]).sort()),
    "mean_int_err": lambda t: t.tensor([1, 2]).mean(),
    "sum_keepdim": lambda t: print(
        t.ones(2, 3).sum((0, 1), keepdim=True), t.ones(2, 3).sum(-1), t.ones(2, 3).mean(dim=[0])
    ),
    "std_var_options": lambda t: print(
        t.tensor([1.0, 2.0, 4.0]).std(unbiased=False),
        t.tensor([1.0, 2.0, 4.0]).var(correction=0),
        t.tensor([1.0, 2.0, 4.0]).std(dim=0, keepdim=True),
    ),
    "std_single_warn": lambda t: print(t.tensor([1.0]).std()),
    "cat_dtypes": lambda t: print(
        t.cat([t.ones(1), t.ones(1, dtype=t.int64)]),
        t.cat([t.ones(1, dtype=t.float16), t.ones(1, dtype=t.bfloat16)]).dtype,
        t.cat([t.ones(0), t.ones(2, 2)]),
    ),
    "stack_dim_neg": lambda t: print(
        t.stack([t.ones(2), t.zeros(2)], dim=-1), t.stack([t.ones(2), t.zeros(2)], 1).shape
    ),
    "squeeze_dims": lambda t: print(
        t.ones(1, 2, 1).squeeze((0, 2)).shape, t.ones(1, 2, 1).squeeze(1).shape, t.ones(2).unsqueeze(-1).shape
    ),
    "expand_as_repeat": lambda t: print(
        t.tensor([[1], [2]]).expand(2, 3), t.tensor([1, 2]).repeat(2, 2), t.ones(1, 3).expand_as(t.ones(2, 3)).stride()
    ),
    "index_fancy": lambda t: (
        lambda x: print(x[[0, 1], [1, 2]], x[x > 2], x[:, [0]], x[..., -1], x[None, 1].shape, x[1:, ::2])
    )(t.arange(6).reshape(2, 3)),
    "setitem_fancy": lambda t: (
        lambda x: (x.__setitem__((x > 2), 0), x.__setitem__(([0, 1], [0, 0]), t.tensor([9, 8])), print(x))
    )(t.arange(6).reshape(2, 3)),
    "masked_fill_variants": lambda t: print(
        t.ones(2, 2).masked_fill(t.tensor([[True, False], [False, True]]), float("-inf")),
        t.zeros(3).masked_fill(t.tensor([True, False, True]), t.tensor(5.0)),
    ),
    "gather_scatter_values": lambda t: print(
        t.tensor([[1, 2], [3, 4]]).gather(1, t.tensor([[0, 0], [1, 0]])),
        t.zeros(2, 3).scatter_add(1, t.tensor([[0, 0], [2, 2]]), t.ones(2, 2)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_basics_match_torch(name):
    assert_same_transcript(CASES[name])

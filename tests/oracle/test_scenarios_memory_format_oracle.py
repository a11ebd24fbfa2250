"""Scenario sweep: memory formats (``channels_last``, ``channels_last_3d``, ``contiguous_format``,
``preserve_format``) through ``is_contiguous``, ``contiguous``, ``to``, ``clone``, ``empty``,
``empty_like``, elementwise results and ``Module.to(memory_format=...)``.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``. The rules themselves live in ``minitorch_nn/backends/layout.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()

SHAPES_4D = [(2, 3, 1, 1), (2, 3, 4, 5), (1, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 5)]
SHAPES_5D = [(2, 3, 4, 5, 6), (2, 3, 1, 1, 1), (1, 3, 4, 5, 6), (2, 1, 4, 5, 6)]


def _sweep(t, shapes, fmt):
    for shape in shapes:
        x = t.zeros(*shape)
        y = x.contiguous(memory_format=fmt)
        print(
            shape,
            y.stride(),
            x.to(memory_format=fmt).stride(),
            x.clone(memory_format=fmt).stride(),
            t.empty(*shape, memory_format=fmt).stride(),
            t.empty_like(x, memory_format=fmt).stride(),
            x.to(t.float64, memory_format=fmt).stride(),
            x.is_contiguous(memory_format=fmt),
            y.is_contiguous(memory_format=fmt),
            y.to(memory_format=fmt) is y,
        )
        print(
            "  ",
            y.to(memory_format=t.contiguous_format).stride(),
            (y * 2).stride(),
            t.zeros_like(y).stride(),
            (y * t.ones(shape[-1])).stride(),
            y.exp().stride(),
            y.sum(0).stride(),
            y.to(t.float64).stride(),
            t.empty(*shape, memory_format=fmt, device="meta").stride(),
        )


@case
def channels_last_sweep(t):
    _sweep(t, SHAPES_4D, t.channels_last)


@case
def channels_last_3d_sweep(t):
    _sweep(t, SHAPES_5D, t.channels_last_3d)


@case
def memory_format_objects(t):
    print(t.channels_last, repr(t.channels_last_3d), t.contiguous_format, t.preserve_format)
    print(type(t.channels_last_3d).__name__, t.channels_last_3d == t.channels_last)


@case
def permuted_to_contiguous_format(t):
    x = t.arange(24.0).reshape(1, 2, 3, 4).transpose(1, 3)
    print(x.to("cpu", memory_format=t.contiguous_format).stride(), x.to(memory_format=t.contiguous_format).stride())
    print(x.to(t.float64, memory_format=t.contiguous_format).stride(), x.to("cpu").stride())
    y = t.arange(6.0).reshape(2, 3).t()
    print(y.to(memory_format=t.contiguous_format).stride(), y.to("cpu", memory_format=t.contiguous_format) is y)


@case
def module_to_channels_last(t):
    nn = t.nn
    m = nn.Sequential(nn.Conv2d(3, 2, 2), nn.BatchNorm2d(2), nn.Linear(2, 2)).to(memory_format=t.channels_last)
    print([p.stride() for p in m.parameters()], [b.stride() for b in m.buffers()])
    m = nn.Conv2d(3, 2, 2).to(t.float64, memory_format=t.channels_last)
    print(m.weight.stride(), m.weight.dtype)
    m = nn.Conv2d(3, 2, 1).to(memory_format=t.channels_last)
    print(m.weight.stride())


@case
def module_to_channels_last_3d_and_forward(t):
    t.manual_seed(0)
    m = t.nn.Conv3d(2, 3, 2).to(memory_format=t.channels_last_3d)
    x = t.randn(1, 2, 3, 3, 3).to(memory_format=t.channels_last_3d)
    y = m(x)
    print(m.weight.stride(), y.stride(), y.is_contiguous(memory_format=t.channels_last_3d))


@case
def conv2d_channels_last_forward(t):
    t.manual_seed(0)
    m = t.nn.Conv2d(2, 3, 2).to(memory_format=t.channels_last)
    x = t.randn(2, 2, 4, 4).to(memory_format=t.channels_last)
    y = m(x)
    print(y.stride(), y.is_contiguous(memory_format=t.channels_last), y.sum())


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.zeros(2, 3, 4, 5).contiguous(memory_format=t.channels_last_3d),
        lambda t: t.zeros(2, 3, 4, 5, 6).contiguous(memory_format=t.channels_last),
        lambda t: t.zeros(2, 3, 4, 5).is_contiguous(memory_format=t.channels_last_3d),
        lambda t: t.empty(2, 3, memory_format=t.channels_last_3d),
        lambda t: t.empty(2, 3, memory_format=t.channels_last),
        lambda t: t.empty(2, 3, 4, 5, memory_format=t.preserve_format),
        lambda t: t.zeros(2, 3, 4, 5).to(memory_format=t.channels_last_3d),
        lambda t: t.zeros(2, 3).clone(memory_format=t.channels_last),
        lambda t: t.empty_like(t.zeros(2, 3), memory_format=t.channels_last_3d),
    ],
    ids=[
        "contiguous_cl3d_4d",
        "contiguous_cl_5d",
        "is_contiguous_cl3d_4d",
        "empty_cl3d_2d",
        "empty_cl_2d",
        "empty_preserve",
        "to_cl3d_4d",
        "clone_cl_2d",
        "empty_like_cl3d_2d",
    ],
)
def test_memory_format_errors_match_torch(fn):
    assert_same_transcript(fn)


@pytest.mark.parametrize("name", sorted(CASES))
def test_memory_format_scenario_matches_torch(name):
    assert_same_transcript(CASES[name])

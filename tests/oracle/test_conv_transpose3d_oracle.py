"""Oracle: ``F.conv_transpose3d`` (values, gradients, errors) and ``nn.ConvTranspose3d`` on it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


def run(lib, x, w, b, kwargs):
    xs = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    ws = lib.tensor(w, dtype=lib.float64, requires_grad=True)
    bs = None if b is None else lib.tensor(b, dtype=lib.float64, requires_grad=True)
    out = lib.nn.functional.conv_transpose3d(xs, ws, bs, **kwargs)
    (out * out).sum().backward()
    grads = [xs.grad.numpy(), ws.grad.numpy()] + ([] if bs is None else [bs.grad.numpy()])
    return out.detach().numpy(), grads


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    groups=st.sampled_from([1, 2]),
    batched=st.booleans(),
    with_bias=st.booleans(),
)
def test_values_and_gradients_match(data, groups, batched, with_bias):
    c_in = groups * data.draw(st.integers(1, 2))
    c_out_per_group = data.draw(st.integers(1, 2))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    padding = tuple(data.draw(st.integers(0, 1)) for _ in range(3))
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    spatial = tuple(data.draw(st.integers(1, 3)) for _ in range(3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal(((2,) if batched else ()) + (c_in,) + spatial)
    w = rng.standard_normal((c_in, c_out_per_group) + kernel)
    b = rng.standard_normal(c_out_per_group * groups) if with_bias else None
    kwargs = dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation)
    try:
        expected, expected_grads = run(torch, x, w, b, kwargs)
    except RuntimeError as e:   # e.g. an output size below 1: both must refuse
        assert error_of(lambda: run(mt, x, w, b, kwargs))[0] == "RuntimeError", str(e)
        return
    got, got_grads = run(mt, x, w, b, kwargs)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    for g, e in zip(got_grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "shape,kwargs",
    [((1, 2, 3, 3), {}), ((2, 3, 3), {}), ((1, 2, 3, 3, 3), {"output_padding": 2, "stride": 2}),
     ((1, 2, 3, 3, 3), {"output_padding": 1, "stride": 1, "dilation": 1})],
    ids=["5d_input_needed", "2d_input", "output_padding_too_big", "output_padding_not_below"],
)
def test_errors_match(shape, kwargs):
    def call(lib):
        return lib.nn.functional.conv_transpose3d(lib.ones(*shape), lib.ones(2, 1, 2, 2, 2), **kwargs)

    ours, theirs = error_of(lambda: call(mt)), error_of(lambda: call(torch))
    assert ours[0] == theirs[0]
    if ours[0] == "RuntimeError":
        assert ours[1].split("\n")[0] == theirs[1].split("\n")[0]


def test_module_uses_it():
    torch.manual_seed(0)
    mt.manual_seed(0)
    t = torch.nn.ConvTranspose3d(2, 3, 2, stride=2, output_padding=1)
    m = mt.nn.ConvTranspose3d(2, 3, 2, stride=2, output_padding=1)
    m.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((1, 2, 2, 3, 2)).astype(np.float32)
    np.testing.assert_allclose(m(mt.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert mt.nn.functional.conv_transpose3d.__name__ == "conv_transpose3d"

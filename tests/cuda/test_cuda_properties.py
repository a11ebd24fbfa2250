"""Property tests: the new kernels on random shapes, dtypes, memory layouts and values (with inf,
nan and -0.0) give the cpu backend's answer. Few examples each: the simulator is slow."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from tests.cuda._helpers import assert_same
from tests.strategies import build, tensor_specs

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _on_cuda(spec):
    """The tensor of ``spec`` with the same layout (strides, offset) over a cuda storage."""
    base = mt.from_numpy(spec.base.astype(np.float32) if spec.dtype == "bfloat16" else spec.base.copy())
    t = (base.to(mt.bfloat16) if spec.dtype == "bfloat16" else base).cuda()
    if spec.layout == "transposed":
        t = t.permute(*reversed(range(t.dim())))
    elif spec.layout == "sliced" and spec.shape:
        t = t[..., ::2]
    elif spec.layout == "expanded" and spec.shape:
        t = t.expand(*spec.shape)
    elif spec.layout == "offset" and spec.shape:
        t = t[1:]
    return t


def _both(spec):
    return _on_cuda(spec), build(mt, spec)


ALONG_A_DIM = {
    "sort": lambda t, d: t.sort(d),
    "sort descending": lambda t, d: t.sort(d, descending=True),
    "cumsum": lambda t, d: t.cumsum(d),
    "max.dim": lambda t, d: t.max(d),
    "argmin": lambda t, d: t.argmin(d, keepdim=True),
    "flip": lambda t, d: t.flip([d]),
    "roll": lambda t, d: t.roll(2, d),
}


@SETTINGS
@given(tensor_specs(dtypes=("float32", "int64"), min_dims=1), st.sampled_from(sorted(ALONG_A_DIM)), st.data())
def test_ops_along_a_dim(spec, name, data):
    d = data.draw(st.integers(0, len(spec.shape) - 1))
    cu, cp = _both(spec)
    assert_same(ALONG_A_DIM[name](cu, d), ALONG_A_DIM[name](cp, d), atol=1e-5)


MASKS_AND_SHAPES = {
    "masked_select": lambda t: t.masked_select(t > 0),
    "nonzero": lambda t: mt.nonzero(t),
    "nonzero of a mask": lambda t: mt.nonzero(t < 0),
    "nonzero as tuple": lambda t: mt.stack(t.nonzero(as_tuple=True)),
    "index by mask": lambda t: t[t > 0],
    "masked_fill": lambda t: t.masked_fill(t < 0, 7),
    "tril": lambda t: t.tril(-1) if t.dim() >= 2 else t.flip([0]),
    "pad": lambda t: mt.nn.functional.pad(t, (1, 2)),
    "repeat": lambda t: t.repeat(*([2] * t.dim())),
    "isfinite": lambda t: t.isfinite() if t.dtype.is_floating_point else t.bitwise_not(),
}


@SETTINGS
@given(tensor_specs(dtypes=("float32", "int64", "bool"), min_dims=1), st.sampled_from(sorted(MASKS_AND_SHAPES)))
def test_masks_and_rearrangements(spec, name):
    cu, cp = _both(spec)
    assert_same(MASKS_AND_SHAPES[name](cu), MASKS_AND_SHAPES[name](cp))


@SETTINGS
@given(tensor_specs(dtypes=("float32",), min_dims=2, max_dims=3, specials=False), st.data())
def test_scatter_add_and_gather_round_trip(spec, data):
    cu, cp = _both(spec)
    d = data.draw(st.integers(0, cp.dim() - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    idx = mt.from_numpy(rng.integers(0, cp.shape[d], size=tuple(cp.shape)).astype(np.int64))
    assert_same(cu.gather(d, idx.cuda()), cp.gather(d, idx))
    assert_same(mt.zeros_like(cu).scatter_add(d, idx.cuda(), cu), mt.zeros_like(cp).scatter_add(d, idx, cp), atol=1e-5)

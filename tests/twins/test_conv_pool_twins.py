"""The compiled twins of the convolution and max pooling kernels against their readable originals.

``_ext/twins/backends/cpu/nn_ops.pyx`` mirrors ``backends/cpu/nn_ops.py``'s ``conv_forward_np``,
``conv_transpose_np`` and ``_conv_weight_grad``; ``_ext/twins/backends/cpu/pooling.pyx`` mirrors
``backends/cpu/pooling.py``'s ``max_pool2d_np``, ``max_pool2d_values_np`` and
``max_pool2d_scatter_np``. Each test computes the same thing with the test's switch (the twin while
``backends.compiled`` is on) and on the readable path (switch off), and compares the arrays bit for
bit: shape, dtype, strides and bytes. Hypothesis draws shapes, memory layouts (transposed and
strided views), dtypes, stride, padding, dilation, groups and ceil mode. The guard tests replace a
helper the original calls and check that the replacement runs; an edited original turns the twin
off at import. Agreement with PyTorch itself is checked by the oracle tests
(``tests/oracle/test_layers_oracle.py``, ``test_layers_grad_oracle.py``, ``test_max_pool_oracle.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.backends import compiled
from minitorch_nn.backends.cpu import nn_ops, pooling
from minitorch_nn.nn import functional as F
from tests.twins.harness import full_path, switch_on

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _used_strides(a):
    return tuple(stride for stride, size in zip(a.strides, a.shape) if size > 1)


def _assert_same_arrays(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_arrays(x, y)
        return
    # (a stride along a dim of size 1 is never used: numpy calls such arrays contiguous whatever
    # it is, and so does the tensor made from one)
    assert (a.shape, a.dtype, _used_strides(a)) == (b.shape, b.dtype, _used_strides(b))
    assert a.tobytes() == b.tobytes(), f"values differ by up to {np.nanmax(np.abs(a - b))}"


def _both(fn):
    """``fn()`` with the test's switch and on the readable path, compared bit for bit."""
    with np.errstate(all="ignore"):   # (infinities times zeros: NaN, on both paths alike)
        got = fn()
        with full_path():
            expected = fn()
    _assert_same_arrays(got, expected)
    return got


def _layout(draw, array):
    """``array``'s values in a memory layout drawn by hypothesis: row-major, a transposed copy
    seen through its transpose, every other element of a larger array, or a reversed copy seen
    reversed (negative strides)."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "strided", "reversed"]))
    if kind == "transposed":
        return np.ascontiguousarray(array.T).T
    if kind == "reversed":   # negative strides along the last two dims
        return np.ascontiguousarray(array[..., ::-1, ::-1])[..., ::-1, ::-1]
    if kind == "strided":
        big = np.zeros(tuple(2 * s for s in array.shape), dtype=array.dtype)
        view = big[tuple(slice(None, None, 2) for _ in array.shape)]
        view[...] = array
        return view
    return array


@st.composite
def conv_cases(draw):
    nd = draw(st.sampled_from([1, 2, 3]))   # (3-d: the twin declines, the readable code runs)
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    n = draw(st.integers(1, 5))
    ksize = [draw(st.integers(1, 4)) for _ in range(nd)]
    stride = [draw(st.integers(1, 3)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 3)) for _ in range(nd)]
    padding = [draw(st.integers(0, 3)) for _ in range(nd)]
    sizes = [draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 12)) for k, d, p in zip(ksize, dilation, padding)]
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = _layout(draw, rng.standard_normal((n, cg * groups, *sizes)).astype(dtype))
    w = _layout(draw, rng.standard_normal((og * groups, cg, *ksize)).astype(dtype))
    if draw(st.booleans()):   # zeros of both signs, infinities: data movement must keep them
        x = x.copy()
        x.flat[:: max(1, x.size // 4)] = draw(st.sampled_from([0.0, -0.0, np.inf, -np.inf]))
    return x, w, stride, padding, dilation, groups


@SETTINGS
@given(case=conv_cases(), data=st.data())
def test_convolution_forward_weight_and_input_gradients_are_bit_equal(case, data):
    x, w, stride, padding, dilation, groups = case
    rng = np.random.default_rng(0)
    bias = data.draw(st.sampled_from([None, rng.standard_normal(w.shape[0]).astype(x.dtype)]))
    out = _both(lambda: nn_ops.conv_forward_np(x, w, stride, padding, dilation, groups, bias))
    gy = _layout(data.draw, rng.standard_normal(out.shape).astype(x.dtype))
    _both(lambda: nn_ops._conv_weight_grad(x, gy, w.shape, stride, padding, dilation, groups))
    # the input gradient: a transposed convolution, with the output padding that recovers the
    # rows a strided forward skipped
    extra = [s + 2 * p - ((o - 1) * st_ + dl * (k - 1) + 1)
             for s, p, o, st_, dl, k in zip(x.shape[2:], padding, gy.shape[2:], stride, dilation, w.shape[2:])]
    gx = _both(lambda: nn_ops.conv_transpose_np(gy, w, stride, padding, dilation, groups, extra))
    assert gx.shape == x.shape


@SETTINGS
@given(case=conv_cases(), output_padding=st.integers(0, 2), with_bias=st.booleans())
def test_transposed_convolution_is_bit_equal(case, output_padding, with_bias):
    x, w, stride, padding, dilation, groups = case
    # read x as a transposed convolution's input: its weight is (C_in, C_out/groups, *k)
    c_in = x.shape[1]
    w = np.ascontiguousarray(np.broadcast_to(w.reshape(-1)[:1], (c_in, w.shape[0] // groups, *w.shape[2:]))) * 0.5
    out_padding = [min(output_padding, max(s, d) - 1) for s, d in zip(stride, dilation)]
    sizes = [(s - 1) * st_ - 2 * p + d * (k - 1) + op + 1
             for s, st_, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], out_padding)]
    if min(sizes) < 1:
        return   # refused by the kernel's checks before either path runs
    bias = np.linspace(-1, 1, w.shape[1] * groups).astype(x.dtype) if with_bias else None
    _both(lambda: nn_ops.conv_transpose_np(x, w, stride, padding, dilation, groups, out_padding, bias))


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.bfloat16])
def test_training_a_convolution_gives_the_same_gradients_through_the_public_api(dtype):
    def run():
        mt.manual_seed(0)
        x = mt.randn(3, 4, 9, 8, dtype=dtype, requires_grad=True)
        conv = mt.nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=1, groups=2).to(dtype)
        deconv = mt.nn.ConvTranspose1d(6, 2, 3, stride=2, padding=1, output_padding=1).to(dtype)
        y = F.max_pool2d(conv(x), 2, ceil_mode=True)
        z = deconv(y.flatten(2))
        z.square().sum().backward()
        return tuple(t.detach().float().numpy().copy() for t in (z, x.grad, conv.weight.grad, conv.bias.grad,
                                                                   deconv.weight.grad))
    _both(run)


@st.composite
def pool_cases(draw):
    k = [draw(st.integers(1, 4)) for _ in range(2)]
    s = [draw(st.integers(1, 3)) for _ in range(2)]
    p = [draw(st.integers(0, kk // 2)) for kk in k]
    d = [draw(st.integers(1, 3)) for _ in range(2)]
    ceil_mode = draw(st.booleans())
    sizes = [draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 12)) for kk, dd, pp in zip(k, d, p)]
    lead = draw(st.sampled_from([(), (3,), (2, 3)]))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == np.int64:   # (few distinct values: ties, which the first of them wins)
        x = rng.integers(-3, 3, (*lead, *sizes))
    else:
        x = rng.standard_normal((*lead, *sizes)).astype(dtype)
        special = draw(st.sampled_from([None, np.nan, -np.inf, np.inf, 0.0, -0.0]))
        if special is not None:
            x.flat[rng.integers(0, x.size, max(1, x.size // 3))] = special
            if special == 0.0:   # both zeros side by side: the first one is kept
                x.flat[rng.integers(0, x.size, max(1, x.size // 3))] = -special
    x = _layout(draw, x)
    out_sizes = [pooling._pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(sizes, k, s, p, d)]
    return x, k, s, p, d, out_sizes


@SETTINGS
@given(case=pool_cases())
def test_max_pooling_values_indices_and_backward_are_bit_equal(case):
    x, k, s, p, d, out_sizes = case
    if min(out_sizes) <= 0:
        return   # refused by the kernel's checks before either path runs
    vals, idx = _both(lambda: pooling.max_pool2d_np(x, k, s, p, d, out_sizes))
    _assert_same_arrays(_both(lambda: pooling.max_pool2d_values_np(x, k, s, p, d, out_sizes)), vals)
    plane = x.shape[-2] * x.shape[-1]
    # (a window of padding alone, which dilation allows, names an element past its plane: the
    # backward of such indices is an error on both paths)
    if x.dtype.kind == "f" and ((idx >= 0) & (idx < plane)).all():
        g = np.random.default_rng(1).standard_normal(vals.shape).astype(x.dtype)
        _both(lambda: pooling.max_pool2d_scatter_np(g, idx, x.shape))


def test_max_pooling_through_the_public_api_with_and_without_grad():
    x = mt.randn(2, 3, 11, 10)
    x[0, 0, 0, :3] = float("nan")
    xg = x.clone().requires_grad_()

    def run():
        y, i = F.max_pool2d(xg, 3, 2, 1, 2, True, return_indices=True)
        y.sum().backward()
        values = F.max_pool2d(x, (2, 3), (1, 2), (1, 1), ceil_mode=True)
        grad = xg.grad.numpy().copy()
        xg.grad = None
        return y.detach().numpy().copy(), i.numpy().copy(), grad, values.numpy().copy()
    _both(run)


def test_the_scatter_leaves_bad_indices_to_the_readable_code():
    g = np.ones((1, 2, 2), dtype=np.float32)
    bad = np.array([[[0, 1], [2, 99]]])
    if switch_on():
        assert pooling._twin.max_pool2d_scatter_np(g, bad, (1, 3, 3)) is None
    with pytest.raises(IndexError):
        pooling.max_pool2d_scatter_np(g, bad, (1, 3, 3))


def test_the_twins_run_only_with_the_switch_on():
    assert nn_ops._twin is not None and pooling._twin is not None, "the compiled twins are not built"
    assert nn_ops._twin_holds() is switch_on()
    assert pooling._twin_holds() is switch_on()
    assert not any(name.startswith(("backends.cpu.nn_ops", "backends.cpu.pooling")) for name in compiled.disabled())
    # and they take the everyday cases (None would send them to the readable code)
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    assert nn_ops._twin.conv_forward_np(x, w, [1, 1], [1, 1], [1, 1], 1) is not None
    assert nn_ops._twin.conv_forward_np(x, w, [1, 1], [1, 1], [1, 1], 1, np.ones(4, np.float32)) is not None
    assert nn_ops._twin.conv_forward_np(x, w, [1, 1], [1, 1], [1, 1], 1, np.ones(4, np.float64)) is None
    assert nn_ops._twin.conv_weight_grad(x, x, (3, 3, 3, 3), [1, 1], [1, 1], [1, 1], 1) is not None
    assert nn_ops._twin.conv_transpose_np(x, np.ones((3, 2, 3, 3), np.float32), [2, 2], [1, 1], [1, 1], 1, [1, 1]) is not None
    assert pooling._twin.max_pool2d_np(x, [2, 2], [2, 2], [0, 0], [1, 1], [4, 4]) is not None
    assert pooling._twin.max_pool2d_np(x.astype(np.int64), [2, 2], [2, 2], [0, 0], [1, 1], [4, 4]) is None


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


@pytest.mark.parametrize("name", ["_im2col", "_col2im", "_window_slices"])
def test_a_replaced_helper_of_the_convolution_runs(monkeypatch, name):
    calls = _counting(monkeypatch, nn_ops, name)
    x = mt.randn(2, 3, 7, 7, requires_grad=True)
    w = mt.randn(4, 3, 3, 3, requires_grad=True)
    F.conv2d(x, w, padding=1, stride=2).sum().backward()
    assert calls, f"the replaced {name} did not run"
    assert not nn_ops._twin_holds()


@pytest.mark.parametrize("name", ["conv_forward_np", "conv_transpose_np", "_conv_weight_grad"])
def test_a_replaced_original_of_the_convolution_runs(monkeypatch, name):
    calls = _counting(monkeypatch, nn_ops, name)
    x = mt.randn(2, 3, 7, 7, requires_grad=True)
    w = mt.randn(4, 3, 3, 3, requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    assert calls


@pytest.mark.parametrize("name", ["_take_larger", "_padded_for_pool", "max_pool2d_np", "max_pool2d_values_np",
                                  "max_pool2d_scatter_np"])
def test_a_replaced_function_of_max_pooling_runs(monkeypatch, name):
    calls = _counting(monkeypatch, pooling, name)
    x = mt.randn(2, 3, 8, 8)
    F.max_pool2d(x, 2)
    xg = x.clone().requires_grad_()
    F.max_pool2d(xg, 2).sum().backward()
    assert calls, f"the replaced {name} did not run"


def test_an_edited_original_turns_its_twin_off_and_the_edit_takes_effect(tmp_path):
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    shutil.copytree(ROOT / "minitorch_nn", tmp_path / "minitorch_nn", ignore=shutil.ignore_patterns("__pycache__"))
    source_file = tmp_path / "minitorch_nn" / "backends" / "cpu" / "pooling.py"
    source = source_file.read_text()
    original = "    return vals\n\n\n@aten.max_pool2d_with_indices_backward"
    assert original in source
    source_file.write_text(source.replace(original, original.replace("return vals", "return vals + 1"), 1))
    code = """
        import warnings
        warnings.simplefilter("ignore")
        import minitorch_nn as t
        x = t.zeros(1, 1, 4, 4)
        print(t.nn.functional.max_pool2d(x, 2).sum().item(), t.nn.functional.conv2d(x, t.ones(1, 1, 3, 3)).sum().item())
        print(sorted(t.backends.compiled.disabled()))
    """
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    probe = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr
    values, disabled = probe.stdout.splitlines()
    assert values == "4.0 0.0"   # the edit ran (four windows, each 0 + 1)
    assert disabled == "['backends.cpu.pooling max_pool2d']"   # the convolution's twin stays on

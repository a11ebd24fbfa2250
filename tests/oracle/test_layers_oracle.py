"""Oracle: ``nn.functional``, ``nn.init`` and the layers against PyTorch 2.13.

Every case runs the same call on the same numpy data through ``torch`` and ``minitorch_nn`` and
compares results (values, shapes, dtypes), the exception type and key message text on bad input,
and, for layers, the reprs and the exact initial weights after ``manual_seed``.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402

TF = torch.nn.functional
MF = mt.nn.functional


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def assert_same(a, b, tol=1e-5):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y, tol)
        return
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)


class Data:
    """Random numpy arrays, handed to both libraries as their own tensors."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.arrays = {}

    def randn(self, name, *shape):
        self.arrays[name] = self.rng.standard_normal(shape).astype(np.float32)

    def rand(self, name, *shape):
        self.arrays[name] = self.rng.random(shape).astype(np.float32)

    def ints(self, name, low, high, *shape):
        self.arrays[name] = self.rng.integers(low, high, shape).astype(np.int64)

    def values(self, name, arr):
        self.arrays[name] = np.asarray(arr)

    def tensors(self, lib):
        return {k: lib.tensor(v.copy()) for k, v in self.arrays.items()}


def run_both(data, fn, tol=1e-5):
    """``fn(lib, F, tensors)`` in both libraries; compare results or exception types."""
    results = []
    for lib, F in ((torch, TF), (mt, MF)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(("ok", fn(lib, F, data.tensors(lib))))
            except Exception as e:  # noqa: BLE001
                results.append(("err", e))
    (tk, tv), (mk, mv) = results
    if tk == "err":
        assert mk == "err", f"torch raised {tv!r}, minitorch_nn returned"
        assert type(mv) is type(tv), (tv, mv)
        return tv, mv
    if mk == "err":
        raise mv
    assert_same(tv, mv, tol)
    return tv, mv


# =================================================================================================
# functional
# =================================================================================================

CONV2D = [dict(), dict(stride=2), dict(padding=1), dict(dilation=2, padding=(2, 1)), dict(stride=(2, 3), padding=1),
          dict(padding="same"), dict(padding="valid")]


@pytest.mark.parametrize("kw", CONV2D, ids=str)
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d(kw, groups):
    d = Data(1)
    d.randn("x", 3, 4, 9, 8)
    d.randn("w", 6, 4 // groups, 3, 2)
    d.randn("b", 6)
    run_both(d, lambda lib, F, t: F.conv2d(t["x"], t["w"], t["b"], groups=groups, **kw))


def test_conv1d_and_unbatched():
    d = Data(2)
    d.randn("x", 2, 4, 11)
    d.randn("w", 5, 4, 3)
    run_both(d, lambda lib, F, t: F.conv1d(t["x"], t["w"], stride=2, padding=1))
    run_both(d, lambda lib, F, t: F.conv1d(t["x"][0], t["w"], padding="same"))


@pytest.mark.parametrize("kw", [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(groups=2),
                                dict(stride=(2, 3), padding=(1, 0), dilation=2, groups=2)], ids=str)
def test_conv_transpose2d(kw):
    d = Data(3)
    d.randn("x", 2, 6, 5, 4)
    d.randn("w", 6, 3, 3, 2)
    d.randn("b", 3 * kw.get("groups", 1))
    run_both(d, lambda lib, F, t: F.conv_transpose2d(t["x"], t["w"], t["b"], **kw))


def test_conv_errors():
    d = Data(4)
    d.randn("x", 2, 3, 5, 5)
    d.randn("w", 4, 2, 3, 3)
    d.randn("x2", 3, 5, 5, 5, 1)
    d.randn("w9", 4, 3, 9, 9)
    _, e = run_both(d, lambda lib, F, t: F.conv2d(t["x"], t["w"]))
    assert "expected input[2, 3, 5, 5] to have 2 channels, but got 3 channels instead" in str(e)
    _, e = run_both(d, lambda lib, F, t: F.conv2d(t["x2"], t["w"]))
    assert "Expected 3D (unbatched) or 4D (batched) input to conv2d" in str(e)
    _, e = run_both(d, lambda lib, F, t: F.conv2d(t["x"], t["w9"]))
    assert "Kernel size can't be greater than actual input size" in str(e)
    _, e = run_both(d, lambda lib, F, t: F.conv2d(t["x"], t["w"], stride=2, padding="same"))
    assert "padding='same' is not supported for strided convolutions" in str(e)


POOL = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, ceil_mode=True),
        dict(kernel_size=(2, 3), stride=(1, 2))]


@pytest.mark.parametrize("kw", POOL + [dict(kernel_size=(2, 3), dilation=2)], ids=str)
def test_max_pool2d(kw):
    d = Data(5)
    d.randn("x", 2, 3, 9, 8)
    run_both(d, lambda lib, F, t: F.max_pool2d(t["x"], return_indices=True, **kw))
    run_both(d, lambda lib, F, t: F.max_pool2d(t["x"][0], **kw))


@pytest.mark.parametrize("kw", POOL + [dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                       dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                                       dict(kernel_size=2, divisor_override=3)], ids=str)
def test_avg_pool2d(kw):
    d = Data(6)
    d.randn("x", 2, 3, 9, 8)
    run_both(d, lambda lib, F, t: F.avg_pool2d(t["x"], **kw))


def test_pool1d_and_errors():
    d = Data(7)
    d.randn("x", 2, 3, 9)
    run_both(d, lambda lib, F, t: F.max_pool1d(t["x"], 3, 2))
    run_both(d, lambda lib, F, t: F.avg_pool1d(t["x"], 2))
    _, e = run_both(d, lambda lib, F, t: F.max_pool2d(t["x"], 3, padding=2))
    assert "pad should be at most half of effective kernel size" in str(e)


def test_norms():
    d = Data(8)
    d.randn("x", 4, 6, 5, 3)
    d.randn("g", 6)
    d.randn("b", 6)
    d.randn("lw", 5, 3)
    d.randn("rm", 6)
    d.rand("rv", 6)
    run_both(d, lambda lib, F, t: F.layer_norm(t["x"], (5, 3), t["lw"], None, eps=1e-3))
    run_both(d, lambda lib, F, t: F.layer_norm(t["x"], 3))
    run_both(d, lambda lib, F, t: F.group_norm(t["x"], 3, t["g"], t["b"]))
    run_both(d, lambda lib, F, t: F.batch_norm(t["x"], t["rm"], t["rv"], t["g"], t["b"]))

    def bn_train(lib, F, t):
        out = F.batch_norm(t["x"], t["rm"], t["rv"], t["g"], t["b"], training=True, momentum=0.3)
        return out, t["rm"], t["rv"]

    run_both(d, bn_train)

    def inorm(lib, F, t):
        return F.instance_norm(t["x"], t["rm"], t["rv"], t["g"], t["b"]), t["rm"], t["rv"]

    run_both(d, inorm)
    run_both(d, lambda lib, F, t: F.instance_norm(t["x"]))


def test_norm_errors():
    d = Data(9)
    d.randn("x", 1, 6)
    d.randn("y", 4, 6, 5)
    _, e = run_both(d, lambda lib, F, t: F.batch_norm(t["x"], None, None, training=True))
    assert "Expected more than 1 value per channel when training, got input size torch.Size([1, 6])" in str(e)
    _, e = run_both(d, lambda lib, F, t: F.layer_norm(t["y"], (6,)))
    assert "Given normalized_shape=[6], expected input with shape [*, 6], but got input of size[4, 6, 5]" in str(e)
    _, e = run_both(d, lambda lib, F, t: F.group_norm(t["y"], 4))
    assert "Expected number of channels in input to be divisible by num_groups" in str(e)


def test_embedding_and_dropout():
    d = Data(10)
    d.randn("w", 10, 4)
    d.ints("i", 0, 10, 3, 5)
    run_both(d, lambda lib, F, t: F.embedding(t["i"], t["w"], padding_idx=-2))
    d.values("bad", np.array([[0, 10]]))
    _, e = run_both(d, lambda lib, F, t: F.embedding(t["bad"], t["w"]))
    assert "index out of range in self" in str(e)
    d.randn("x", 6, 7)

    def drop(lib, F, t):
        lib.manual_seed(7)
        a = F.dropout(t["x"], 0.3)
        b = F.dropout(t["x"], 0.5, training=False)
        c = F.dropout(t["x"], 1.0)
        return a, b, c

    run_both(d, drop)
    _, e = run_both(d, lambda lib, F, t: F.dropout(t["x"], 1.5))
    assert "dropout probability has to be between 0 and 1, but got 1.5" in str(e)


ACTS = {
    "relu": lambda F, x: F.relu(x),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "tanh": lambda F, x: F.tanh(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "softmax": lambda F, x: F.softmax(x, dim=1),
    "log_softmax": lambda F, x: F.log_softmax(x, -1),
    "softmax_implicit": lambda F, x: F.softmax(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x),
    "softplus": lambda F, x: F.softplus(x, beta=2),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.5),
    "relu6": lambda F, x: F.relu6(x * 4),
    "pad": lambda F, x: F.pad(x, (1, 2, 0, 3), value=2.0),
    "pad_reflect": lambda F, x: F.pad(x, (2, 1, 3, 0), mode="reflect"),
    "pad_replicate": lambda F, x: F.pad(x, (2, 3), mode="replicate"),
    "pad_circular": lambda F, x: F.pad(x, (1, 2, 5, 0), mode="circular"),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x.unsqueeze(0), (3, 4)),
    "adaptive_avg_pool2d_even": lambda F, x: F.adaptive_avg_pool2d(x.unsqueeze(0), (1, 3)),
    "normalize": lambda F, x: F.normalize(x, dim=-1),
    "sdpa_causal": lambda F, x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.7),
    "mish": lambda F, x: F.mish(x),
    "hardswish": lambda F, x: F.hardswish(x * 3),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x * 3),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.1, 20.0),
    "glu": lambda F, x: F.glu(x, 1),
    "glu_odd": lambda F, x: F.glu(x, 1 if x.shape[1] % 2 else 0),
    "softmin": lambda F, x: F.softmin(x, 1),
    "interp_nearest": lambda F, x: F.interpolate(x, scale_factor=2),
    "interp_nearest_size": lambda F, x: F.interpolate(x.unsqueeze(0), size=(7, 9)),
    "interp_nearest_exact": lambda F, x: F.interpolate(x.unsqueeze(0), scale_factor=(0.5, 2.5), mode="nearest-exact"),
    "interp_linear": lambda F, x: F.interpolate(x, scale_factor=3, mode="linear"),
    "interp_bilinear": lambda F, x: F.interpolate(x.unsqueeze(0), scale_factor=1.7, mode="bilinear"),
    "interp_bilinear_corners": lambda F, x: F.interpolate(x.unsqueeze(0), size=(3, 7), mode="bilinear", align_corners=True),
    "interp_bilinear_recompute": lambda F, x: F.interpolate(x.unsqueeze(0), scale_factor=1.5, mode="bilinear",
                                                            recompute_scale_factor=True),
    "interp_bad_mode_dims": lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
}


@pytest.mark.parametrize("name", list(ACTS))
def test_activations(name):
    d = Data(11)
    d.randn("x", 2, 5, 6)
    run_both(d, lambda lib, F, t: ACTS[name](F, t["x"]))


def test_linear_bilinear():
    d = Data(12)
    d.randn("x", 5, 7)
    d.randn("x3", 2, 5, 7)
    d.randn("w", 4, 7)
    d.randn("b", 4)
    d.randn("x2", 5, 3)
    d.randn("wb", 4, 7, 3)
    run_both(d, lambda lib, F, t: F.linear(t["x"], t["w"], t["b"]))
    run_both(d, lambda lib, F, t: F.linear(t["x"], t["w"]))
    run_both(d, lambda lib, F, t: F.linear(t["x3"], t["w"], t["b"]))
    run_both(d, lambda lib, F, t: F.linear(t["x3"], t["w"]))
    run_both(d, lambda lib, F, t: F.linear(t["x"][0], t["w"], t["b"]))
    run_both(d, lambda lib, F, t: F.bilinear(t["x"], t["x2"], t["wb"], t["b"]))
    _, e = run_both(d, lambda lib, F, t: F.linear(t["x2"], t["w"], t["b"]))
    assert "mat1 and mat2 shapes cannot be multiplied (5x3 and 7x4)" in str(e)


def test_linear_dispatches_like_torch():
    """F.linear reaches __torch_dispatch__ as aten.t + aten.addmm (aten.mm without bias), as in PyTorch.
    (Without an observer, the compiled twin of F.linear (_ext/twins/backends/cpu/linalg.pyx) records the same two ops.)"""
    from minitorch_nn.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Spy(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, w, b = mt.randn(3, 4), mt.randn(5, 4), mt.randn(5)
    with Spy():
        MF.linear(x, w, b)
        MF.linear(x, w)
    assert seen == ["aten.t.default", "aten.addmm.default", "aten.t.default", "aten.mm.default"]


def test_cross_entropy_dispatches_like_torch():
    """F.cross_entropy reaches __torch_dispatch__ as _log_softmax + nll_loss_forward in both."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from minitorch_nn.utils._python_dispatch import TorchDispatchMode as OurMode

    def names(lib, mode_cls):
        seen = []

        class Spy(mode_cls):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func).removeprefix("aten."))
                return func(*args, **(kwargs or {}))

        # (no grad: with grad, torch's autograd also dispatches a detach of the saved log_softmax
        # output, which ours does not; that is autograd's business, not the loss function's)
        x = lib.randn(4, 3)
        y = lib.tensor([0, 2, 1, 2])
        with Spy():
            lib.nn.functional.cross_entropy(x, y)
        return seen

    assert names(mt, OurMode) == names(torch, TorchDispatchMode) == [
        "_log_softmax.default", "nll_loss_forward.default"]


CE = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(label_smoothing=0.2), dict(weight=True),
      dict(weight=True, label_smoothing=0.3, reduction="none"), dict(weight=True, label_smoothing=0.3),
      dict(ignore_index=3)]


@pytest.mark.parametrize("kw", CE, ids=str)
def test_cross_entropy_class_targets(kw):
    d = Data(13)
    d.randn("x", 5, 7)
    d.values("y", np.array([1, 0, 6, 3, -100]))
    d.values("w", np.arange(1.0, 8.0, dtype=np.float32))
    d.randn("x4", 2, 3, 4, 5)
    d.ints("y4", 0, 3, 2, 4, 5)

    def fn(lib, F, t):
        k = dict(kw)
        if k.pop("weight", False):
            k["weight"] = t["w"]
        out = F.cross_entropy(t["x"], t["y"], **k)
        k.pop("weight", None)
        return out, F.cross_entropy(t["x4"], t["y4"], **k), F.nll_loss(F.log_softmax(t["x"], 1), t["y"].clamp(0), **k)

    run_both(d, fn)


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.1), dict(reduction="none"), dict(reduction="sum")], ids=str)
def test_cross_entropy_prob_targets(kw):
    d = Data(14)
    d.randn("x", 5, 7)
    d.rand("p", 5, 7)
    run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["p"] / t["p"].sum(1, keepdim=True), **kw))


def test_loss_errors():
    d = Data(15)
    d.randn("x", 5, 7)
    d.values("y", np.array([1, 0, 6]))
    d.values("yf", np.array([1.0, 0.0, 6.0, 1.0, 2.0], dtype=np.float32))
    d.values("big", np.array([1, 0, 7, 0, 0]))
    d.rand("t", 5, 6)
    _, e = run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["y"]))
    assert "Expected input batch_size (5) to match target batch_size (3)." in str(e)
    _, e = run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["yf"]))
    assert "expected target dtype to be Long or Byte, but got Float" in str(e)  # PyTorch 2.13's words
    run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["big"]))
    _, e = run_both(d, lambda lib, F, t: F.binary_cross_entropy_with_logits(t["x"], t["t"]))
    assert "must be the same as input size" in str(e)
    run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["y"], reduction="bogus"))
    d.values("y0", np.array(1))  # a 0-d target counts as batch size 0 against a batched input
    for name in ("nll_loss", "cross_entropy"):
        _, e = run_both(d, lambda lib, F, t, name=name: getattr(F, name)(t["x"], t["y0"]))
        assert "Expected input batch_size (5) to match target batch_size (0)." in str(e)


def test_other_losses():
    d = Data(16)
    d.randn("x", 5, 7)
    d.rand("t", 5, 7)
    d.rand("t1", 5, 1)
    d.values("pw", np.arange(7.0, dtype=np.float32))
    for red in ("mean", "sum", "none"):
        run_both(d, lambda lib, F, t, red=red: F.mse_loss(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t, red=red: F.l1_loss(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t, red=red: F.binary_cross_entropy_with_logits(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t, red=red: F.binary_cross_entropy_with_logits(t["x"] * 30, t["t"], pos_weight=t["pw"], reduction=red))
        run_both(d, lambda lib, F, t, red=red: F.binary_cross_entropy(t["t"], t["t"].round(), reduction=red))
        run_both(d, lambda lib, F, t, red=red: F.smooth_l1_loss(t["x"], t["t"], reduction=red, beta=0.5))
        run_both(d, lambda lib, F, t, red=red: F.huber_loss(t["x"], t["t"], reduction=red, delta=0.7))
        run_both(d, lambda lib, F, t, red=red: F.kl_div(F.log_softmax(t["x"], 1), t["t"] * (t["t"] > 0.3), reduction=red))
    for red in ("batchmean", "sum"):
        run_both(d, lambda lib, F, t, red=red: F.kl_div(F.log_softmax(t["x"], 1), F.log_softmax(t["t"], 1), reduction=red,
                                               log_target=True))
    run_both(d, lambda lib, F, t: F.mse_loss(t["x"], t["t1"]))  # broadcasts, with a warning
    with pytest.warns(UserWarning, match="Using a target size"):
        MF.mse_loss(mt.randn(5, 7), mt.randn(5, 1))


# =================================================================================================
# layers: repr, initial weights after manual_seed, forward
# =================================================================================================

LAYERS = [
    ("Identity", (3,), {}, (2, 3)),
    ("Linear", (3, 5), {}, (4, 3)),
    ("Linear", (4, 2), dict(bias=False), (2, 3, 4)),
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1), (2, 4, 9)),
    ("Conv2d", (4, 6, 3), {}, (2, 4, 7, 6)),
    ("Conv2d", (4, 6, (3, 2)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False), (2, 4, 9, 8)),
    ("Conv2d", (4, 6, 3), dict(padding="same"), (4, 7, 6)),
    ("Conv2d", (4, 6, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 4, 7, 6)),
    ("Conv2d", (4, 6, (3, 2)), dict(padding="same", padding_mode="circular"), (2, 4, 7, 6)),
    ("Conv1d", (4, 6, 3), dict(padding=2, padding_mode="replicate"), (2, 4, 9)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 5)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2), (2, 4, 5, 4)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True), (2, 3, 8, 7)),
    ("AvgPool2d", (2,), {}, (2, 3, 6, 6)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 7, 6)),
    ("BatchNorm1d", (4,), {}, (8, 4)),
    ("BatchNorm1d", (4,), dict(affine=False), (8, 4, 3)),
    ("BatchNorm2d", (4,), dict(momentum=None), (3, 4, 5, 5)),
    ("BatchNorm2d", (4,), dict(affine=False, track_running_stats=False), (3, 4, 5, 5)),
    ("BatchNorm2d", (4,), dict(bias=False), (3, 4, 5, 5)),
    ("LayerNorm", (6,), {}, (2, 3, 6)),
    ("LayerNorm", ((5, 6),), dict(elementwise_affine=False), (2, 5, 6)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("InstanceNorm2d", (4,), {}, (2, 4, 5, 5)),
    ("InstanceNorm2d", (4,), dict(affine=True, track_running_stats=True), (2, 4, 5, 5)),
    ("Dropout", (), {}, (4, 5)),
    ("Dropout", (0.2,), dict(inplace=True), (4, 5)),
    ("Flatten", (), {}, (2, 3, 4)),
    ("Unflatten", (1, (2, 2)), {}, (3, 4)),
    ("ReLU", (), {}, (3, 4)),
    ("ReLU", (True,), {}, (3, 4)),
    ("GELU", (), {}, (3, 4)),
    ("GELU", ("tanh",), {}, (3, 4)),
    ("SiLU", (), {}, (3, 4)),
    ("Tanh", (), {}, (3, 4)),
    ("Sigmoid", (), {}, (3, 4)),
    ("Softmax", (1,), {}, (3, 4)),
    ("LogSoftmax", (), dict(dim=-1), (3, 4)),
    ("LeakyReLU", (0.2,), {}, (3, 4)),
    ("ELU", (), {}, (3, 4)),
    ("Softplus", (), {}, (3, 4)),
    ("Hardtanh", (), {}, (3, 4)),
    ("ReLU6", (), {}, (3, 4)),
    ("SELU", (True,), {}, (3, 4)),
    ("CELU", (0.5,), {}, (3, 4)),
    ("Mish", (), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)),
    ("Hardsigmoid", (True,), {}, (3, 4)),
    ("LogSigmoid", (), {}, (3, 4)),
    ("Softsign", (), {}, (3, 4)),
    ("Tanhshrink", (), {}, (3, 4)),
    ("GLU", (), {}, (3, 4)),
    ("PReLU", (), {}, (3, 4)),
    ("PReLU", (4, 0.1), {}, (2, 4, 3)),
    ("Threshold", (0.1, 20.0), {}, (3, 4)),
    ("Softmin", (1,), {}, (3, 4)),
    ("Softmax2d", (), {}, (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(3, 7), mode="bilinear"), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,args,kw,shape", LAYERS, ids=lambda v: str(v))
def test_layer_repr_init_forward(name, args, kw, shape):
    d = Data(20)
    d.randn("x", *shape)
    d.values("x", d.arrays["x"] * 3)

    def fn(lib, F, t):
        lib.manual_seed(0)
        m = getattr(lib.nn, name)(*args, **kw)
        out1 = m(t["x"].clone())
        m.eval()
        out2 = m(t["x"].clone())
        state = [v for _, v in sorted(m.state_dict().items())]
        return repr(m), [k for k in m.state_dict()], out1, out2, state

    results = []
    for lib in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append(fn(lib, None, d.tensors(lib)))
    (tr, tk, *tv), (mr, mk, *mv) = results
    assert mr == tr
    assert mk == tk
    assert_same(tv, mv)


def test_conv_transpose_output_size():
    d = Data(25)
    d.randn("x", 2, 4, 5, 4)

    def fn(lib, F, t):
        lib.manual_seed(0)
        m = lib.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
        return m(t["x"], output_size=[10, 8]), m(t["x"], output_size=(2, 3, 9, 7)), m(t["x"][0], output_size=[10, 7])

    run_both(d, fn)
    _, e = run_both(d, lambda lib, F, t: lib.nn.ConvTranspose2d(4, 3, 3, stride=2)(t["x"], output_size=[20, 8]))
    assert "requested an output size of [20, 8], but valid sizes range from [11, 9] to [12, 10]" in str(e)


def test_initial_weights_bit_identical():
    """After the same seed, a stack of layers holds exactly PyTorch's numbers (no tolerance)."""
    def build(lib):
        lib.manual_seed(1234)
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.ConvTranspose2d(8, 4, 2, stride=2), nn.Flatten(),
            nn.Linear(10, 7), nn.Bilinear(3, 4, 5), nn.Embedding(11, 6, padding_idx=0), nn.LayerNorm(5),
            nn.MultiheadAttention(8, 4), nn.Conv1d(2, 3, 5, groups=1),
        )

    ts, ms = build(torch).state_dict(), build(mt).state_dict()
    assert list(ts) == list(ms)
    for k in ts:
        np.testing.assert_array_equal(ms[k].numpy(), ts[k].numpy(), err_msg=k)


def test_init_functions_bit_identical():
    cases = {
        "uniform_": lambda init, w: init.uniform_(w, -0.3, 0.7),
        "normal_": lambda init, w: init.normal_(w, 0.5, 2.0),
        "trunc_normal_": lambda init, w: init.trunc_normal_(w, 0.1, 0.5, -0.4, 0.6),
        "trunc_normal_tail": lambda init, w: init.trunc_normal_(w, 0.0, 1.0, 2.0, 3.0),
        "trunc_normal_narrow": lambda init, w: init.trunc_normal_(w, 0.0, 1.0, -0.1, 0.1),
        "constant_": lambda init, w: init.constant_(w, 0.25),
        "zeros_": lambda init, w: init.zeros_(w),
        "ones_": lambda init, w: init.ones_(w),
        "eye_": lambda init, w: init.eye_(init.zeros_(w)[0, 0]),
        "dirac_": lambda init, w: init.dirac_(w),
        "xavier_uniform_": lambda init, w: init.xavier_uniform_(w, gain=init.calculate_gain("tanh")),
        "xavier_normal_": lambda init, w: init.xavier_normal_(w),
        "kaiming_uniform_": lambda init, w: init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"),
        "kaiming_normal_": lambda init, w: init.kaiming_normal_(w, a=0.1),
    }
    for name, fn in cases.items():
        outs = []
        for lib in (torch, mt):
            lib.manual_seed(5)
            w = lib.empty(6, 4, 3, 5)
            fn(lib.nn.init, w)
            outs.append(w.numpy().copy())
        np.testing.assert_array_equal(outs[1], outs[0], err_msg=name)
    outs = []
    for lib in (torch, mt):
        lib.manual_seed(5)
        outs.append(lib.nn.init.orthogonal_(lib.empty(4, 6), gain=2.0).numpy().copy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


def test_init_helpers_and_errors():
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("selu",)]:
        assert mt.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    for shape in [(5, 3), (4, 3, 2, 7), (2, 6, 5)]:
        assert mt.nn.init._calculate_fan_in_and_fan_out(mt.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.nn.init.calculate_gain("foo")
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init.xavier_uniform_(lib.empty(3))
        with pytest.raises(ValueError, match="Mode fan_bad not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_bad")
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            lib.nn.init.eye_(lib.empty(3, 3, 3))


def test_batchnorm_running_stats_over_steps():
    """momentum=None averages cumulatively; num_batches_tracked counts; eval uses running stats."""
    d = Data(21)
    for i in range(4):
        d.randn(f"x{i}", 6, 3, 4, 4)

    def fn(lib, F, t):
        lib.manual_seed(0)
        outs = []
        for momentum in (0.1, None):
            bn = lib.nn.BatchNorm2d(3, momentum=momentum)
            for i in range(3):
                outs.append(bn(t[f"x{i}"]))
            bn.eval()
            outs += [bn(t["x3"]), bn.running_mean, bn.running_var, bn.num_batches_tracked]
        return outs

    run_both(d, fn)


def test_multihead_attention_forward():
    d = Data(22)
    d.randn("q", 5, 2, 8)
    d.randn("k", 7, 2, 8)
    d.values("kpm", np.array([[False] * 6 + [True], [False] * 7]))

    def fn(lib, F, t):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(8, 2)
        a = m(t["q"], t["k"], t["k"])
        b = m(t["q"], t["k"], t["k"], key_padding_mask=t["kpm"], average_attn_weights=False)
        c = m(t["q"], t["q"], t["q"], attn_mask=lib.ones(5, 5, dtype=lib.bool).triu(1))
        bf = lib.nn.MultiheadAttention(8, 4, batch_first=True)
        e = bf(t["q"].transpose(0, 1), t["k"].transpose(0, 1), t["k"].transpose(0, 1))
        u = m(t["q"][:, 0], t["k"][:, 0], t["k"][:, 0])
        return list(a) + list(b) + list(c) + list(e) + list(u)

    run_both(d, fn)


def test_instance_norm_channel_mismatch():
    for lib in (torch, mt):
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm2d(3)(lib.ones(2, 4, 3, 3))
        with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\)"):
            lib.nn.InstanceNorm2d(3, affine=True)(lib.ones(2, 4, 3, 3))


def test_losses_as_modules():
    d = Data(23)
    d.randn("x", 5, 7)
    d.values("y", np.array([1, 0, 6, 3, 2]))
    d.rand("t", 5, 7)
    d.values("w", np.arange(1.0, 8.0, dtype=np.float32))

    def fn(lib, F, t):
        nn = lib.nn
        ce = nn.CrossEntropyLoss(weight=t["w"], label_smoothing=0.1, ignore_index=3)
        return [
            repr(ce), sorted(ce.state_dict()), ce(t["x"], t["y"]),
            nn.NLLLoss(reduction="sum")(F.log_softmax(t["x"], 1), t["y"]),
            nn.MSELoss()(t["x"], t["t"]), nn.L1Loss(reduction="none")(t["x"], t["t"]),
            nn.BCEWithLogitsLoss(pos_weight=t["w"])(t["x"], t["t"]),
        ]

    (tv, mv) = run_both(d, lambda lib, F, t: fn(lib, F, t)[2:])
    assert fn(mt, MF, d.tensors(mt))[:2] == fn(torch, TF, d.tensors(torch))[:2]


@pytest.mark.parametrize("ctor", [
    lambda nn: nn.Conv2d(3, 4, 3, groups=2),
    lambda nn: nn.Conv2d(4, 3, 3, groups=2),
    lambda nn: nn.Conv2d(4, 4, 3, groups=0),
    lambda nn: nn.Conv2d(4, 4, 3, padding="full"),
    lambda nn: nn.Conv2d(4, 4, 3, stride=2, padding="same"),
    lambda nn: nn.Conv2d(4, 4, 3, padding_mode="bogus"),
    lambda nn: nn.GroupNorm(3, 4),
    lambda nn: nn.functional.pad(torch.ones(1, 1, 3, 4) if nn is torch.nn else mt.ones(1, 1, 3, 4), (4, 1), mode="reflect"),
    lambda nn: nn.functional.pad(torch.ones(3) if nn is torch.nn else mt.ones(3), (1, 1), mode="reflect"),
    lambda nn: nn.functional.pad(torch.ones(1, 3) if nn is torch.nn else mt.ones(1, 3), (1, 1), mode="bogus"),
    lambda nn: nn.Dropout(-0.1),
    lambda nn: nn.Unflatten(1, 4),
    lambda nn: nn.Unflatten(1, (2, 2.0)),
    lambda nn: nn.BatchNorm2d(3)(nn.Flatten()(nn.Identity()(torch.zeros(2, 3) if nn is torch.nn else mt.zeros(2, 3)))),
    lambda nn: nn.BatchNorm1d(3)(torch.zeros(1, 3) if nn is torch.nn else mt.zeros(1, 3)),
])
def test_layer_errors(ctor):
    errs = []
    for lib in (torch, mt):
        with pytest.raises(Exception) as info:
            ctor(lib.nn)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0])
    # up to any printed set, whose order varies between runs in PyTorch too
    assert str(errs[0]).splitlines()[0].split("{")[0] in str(errs[1])


EDGE = {
    "ce_1d": lambda l: l.nn.functional.cross_entropy(l.tensor([1.0, 2.0, 3.0]), l.tensor(2)),
    "ce_1d_none": lambda l: l.nn.functional.cross_entropy(l.tensor([1.0, 2.0, 3.0]), l.tensor(2), reduction="none"),
    "ce_all_ignored": lambda l: l.nn.functional.cross_entropy(l.tensor([[1.0, 2.0, 3.0]]), l.tensor([-100])),
    "ce_empty": lambda l: l.nn.functional.cross_entropy(l.zeros(0, 3), l.zeros(0, dtype=l.long)),
    "nll_weight_ignore": lambda l: l.nn.functional.nll_loss(l.tensor([[1.0, 2.0, 3.0], [4, 5, 6]]), l.tensor([0, 2]),
                                                            weight=l.tensor([1.0, 2.0, 3.0]), ignore_index=0),
    "mse_empty": lambda l: l.nn.functional.mse_loss(l.zeros(0), l.zeros(0)),
    "bn_3d": lambda l: l.nn.functional.batch_norm(l.arange(24.0).reshape(2, 3, 4), None, None, training=True),
    "maxpool_indices_module": lambda l: l.nn.MaxPool2d(2, return_indices=True)(l.arange(16.0).reshape(1, 1, 4, 4))[1],
    "conv_dtype_mismatch": lambda l: l.nn.functional.conv2d(l.zeros(1, 1, 3, 3), l.zeros(1, 1, 2, 2, dtype=l.float64)),
    "conv_bias_dtype": lambda l: l.nn.functional.conv2d(l.ones(1, 3, 4, 4), l.ones(1, 3, 2, 2), l.ones(1, dtype=l.float64)),
    "conv_bias_size": lambda l: l.nn.functional.conv2d(l.zeros(1, 1, 3, 3), l.zeros(2, 1, 2, 2), l.zeros(3)),
    "linear_1d_nobias": lambda l: l.nn.functional.linear(l.arange(3.0), l.ones(2, 3)),
    "embedding_float_idx": lambda l: l.nn.functional.embedding(l.tensor([1.0]), l.ones(3, 2)),
    "layer_norm_bad_weight": lambda l: l.nn.functional.layer_norm(l.ones(2, 3), (3,), l.ones(2)),
    "layer_norm_long": lambda l: l.nn.functional.layer_norm(l.ones(2, 3, dtype=l.long), (3,)),
    "batch_norm_long": lambda l: l.nn.functional.batch_norm(l.ones(2, 3, dtype=l.long), None, None, training=True),
    "mse_long": lambda l: l.nn.functional.mse_loss(l.ones(2, dtype=l.long), l.ones(2, dtype=l.long)),
    "gelu_bad": lambda l: l.nn.functional.gelu(l.ones(2), approximate="foo"),
    "softmax_dim_none_3d": lambda l: l.nn.functional.softmax(l.arange(8.0).reshape(2, 2, 2)),
    "relu_int": lambda l: l.nn.functional.relu(l.tensor([-1, 2])),
    "instance_norm1d_unbatched": lambda l: l.nn.InstanceNorm1d(3)(l.arange(12.0).reshape(3, 4)),
    "bn_eval_without_stats": lambda l: l.nn.functional.batch_norm(l.ones(2, 3), None, None, training=False),
    "avg_pool_3d_input": lambda l: l.nn.functional.avg_pool2d(l.arange(16.0).reshape(1, 4, 4), 2),
    "bce_out_of_range": lambda l: l.nn.functional.binary_cross_entropy(l.tensor([1.5]), l.tensor([1.0])),
    "conv3d": lambda l: l.nn.functional.conv3d(l.arange(128.0).reshape(1, 2, 4, 4, 4) / 100, l.ones(3, 2, 2, 2, 2), stride=2),
    "conv_transpose1d": lambda l: l.nn.functional.conv_transpose1d(l.arange(8.0).reshape(1, 2, 4), l.ones(2, 3, 3), stride=2),
    "max_pool_nan_and_ties": lambda l: l.nn.functional.max_pool2d(l.tensor(
        [[[[1, float("nan"), 3, float("nan")], [5, 2, 2, 5], [0, 0, -1, 7], [float("nan"), 1, 1, 1]]]]), 2, 1,
        return_indices=True),
    "max_pool1d_indices": lambda l: l.nn.functional.max_pool1d(l.arange(8.0).reshape(1, 1, 8), 3, 2, return_indices=True)[1],
}


@pytest.mark.parametrize("name", list(EDGE))
def test_edge_cases(name):
    """Edge inputs: values where both succeed, exception type and message start where both fail."""
    _, e = run_both(Data(40), lambda lib, F, t: EDGE[name](lib))
    if isinstance(_, Exception):
        assert str(_).splitlines()[0][:50] in str(e)

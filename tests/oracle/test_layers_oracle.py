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
    "normalize": lambda F, x: F.normalize(x, dim=-1),
    "sdpa_causal": lambda F, x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
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


def test_linear_dispatches_like_torch(monkeypatch):
    """F.linear reaches the backend as aten.t + aten.addmm (aten.mm without bias), as in PyTorch."""
    from minitorch_nn import _dispatch

    seen = []
    real = _dispatch.backend

    def spy(op, args, kwargs):
        seen.append(str(op))
        return real(op, args, kwargs)

    x, w, b = mt.randn(3, 4), mt.randn(5, 4), mt.randn(5)
    monkeypatch.setattr(_dispatch, "backend", spy)
    MF.linear(x, w, b)
    MF.linear(x, w)
    monkeypatch.undo()
    assert seen == ["aten.t.default", "aten.addmm.default", "aten.t.default", "aten.mm.default"]


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
    assert "expected scalar type Long but found Float" in str(e)
    run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["big"]))
    _, e = run_both(d, lambda lib, F, t: F.binary_cross_entropy_with_logits(t["x"], t["t"]))
    assert "must be the same as input size" in str(e)
    run_both(d, lambda lib, F, t: F.cross_entropy(t["x"], t["y"], reduction="bogus"))


def test_other_losses():
    d = Data(16)
    d.randn("x", 5, 7)
    d.rand("t", 5, 7)
    d.rand("t1", 5, 1)
    d.values("pw", np.arange(7.0, dtype=np.float32))
    for red in ("mean", "sum", "none"):
        run_both(d, lambda lib, F, t: F.mse_loss(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t: F.l1_loss(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t: F.binary_cross_entropy_with_logits(t["x"], t["t"], reduction=red))
        run_both(d, lambda lib, F, t: F.binary_cross_entropy_with_logits(t["x"] * 30, t["t"], pos_weight=t["pw"], reduction=red))
        run_both(d, lambda lib, F, t: F.binary_cross_entropy(t["t"], t["t"].round(), reduction=red))
        run_both(d, lambda lib, F, t: F.smooth_l1_loss(t["x"], t["t"], reduction=red, beta=0.5))
    run_both(d, lambda lib, F, t: F.mse_loss(t["x"], t["t1"]))  # broadcasts, with a warning
    with pytest.warns(UserWarning, match="Using a target size"):
        MF.mse_loss(mt.randn(5, 7), mt.randn(5, 1))

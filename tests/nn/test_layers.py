"""Unit tests for the layers, ``nn.functional`` and ``nn.init`` that need no PyTorch.

Convolution and pooling are checked against direct loops written here, gradients against
finite differences (``autograd.gradcheck`` in float64), shapes on the meta device, and the
training/eval behaviour of batch norm and dropout against their definitions.
"""

import itertools
import math

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn import nn
from minitorch_nn.autograd import gradcheck
from minitorch_nn.nn import functional as F

RNG = np.random.default_rng(0)


def t64(*shape, requires_grad=True):
    return mt.tensor(RNG.standard_normal(shape), dtype=mt.float64).requires_grad_(requires_grad)


# -- reference implementations (plain loops) ------------------------------------------------------

def conv2d_loops(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2])
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for b_, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        patch = xp[b_, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                   j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
        out[b_, oc, i, j] = (patch * w[oc]).sum() + (b[oc] if b is not None else 0)
    return out


def conv_transpose2d_loops(x, w, stride, padding, output_padding, groups):
    # scatter every input pixel times the kernel into the (uncropped) output
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    full_h = (h - 1) * stride[0] + kh + output_padding[0]
    full_w = (wd - 1) * stride[1] + kw + output_padding[1]
    out = np.zeros((n, og * groups, full_h, full_w))
    for b_, ic, i, j in itertools.product(range(n), range(c), range(h), range(wd)):
        g = ic // cg
        out[b_, g * og:(g + 1) * og, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw] += x[b_, ic, i, j] * w[ic]
    return out[:, :, padding[0]:full_h - padding[0], padding[1]:full_w - padding[1]]


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 2), (1, 0), (2, 1), 2), ((3, 3), (2, 2), (2, 2), 4),
])
def test_conv2d_matches_loops(stride, padding, dilation, groups):
    x = RNG.standard_normal((2, 4, 9, 8))
    w = RNG.standard_normal((8, 4 // groups, 3, 2))
    b = RNG.standard_normal(8)
    ours = F.conv2d(mt.tensor(x), mt.tensor(w), mt.tensor(b), stride, padding, dilation, groups).numpy()
    np.testing.assert_allclose(ours, conv2d_loops(x, w, b, stride, padding, dilation, groups), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("stride,padding,output_padding,groups", [
    ((1, 1), (0, 0), (0, 0), 1), ((2, 2), (1, 0), (1, 0), 1), ((2, 3), (0, 1), (1, 2), 2),
])
def test_conv_transpose2d_matches_loops(stride, padding, output_padding, groups):
    x = RNG.standard_normal((2, 4, 3, 4))
    w = RNG.standard_normal((4, 3, 3, 2))
    ours = F.conv_transpose2d(mt.tensor(x), mt.tensor(w), None, stride, padding, output_padding, groups).numpy()
    ref = conv_transpose2d_loops(x, w, stride, padding, output_padding, groups)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_pools_match_loops():
    x = RNG.standard_normal((2, 3, 7, 6))
    mx = F.max_pool2d(mt.tensor(x), 3, 2, 1).numpy()
    av = F.avg_pool2d(mt.tensor(x), 3, 2, 1, count_include_pad=False).numpy()
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=np.nan)
    for i, j in itertools.product(range(mx.shape[2]), range(mx.shape[3])):
        win = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
        np.testing.assert_allclose(mx[:, :, i, j], np.nanmax(win, axis=(2, 3)))
        np.testing.assert_allclose(av[:, :, i, j], np.nanmean(win, axis=(2, 3)))


# -- gradients vs finite differences ----------------------------------------------------------------

def _bce_case(target):
    # the target is drawn once, outside the function gradcheck calls repeatedly
    return (lambda x: F.binary_cross_entropy_with_logits(x, target)), (t64(3, 2),), {}


GRADCHECKS = {
    "conv2d": lambda: (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (t64(2, 4, 5, 5), t64(6, 4, 3, 2), t64(6)),
                       {}),
    "conv2d_groups": lambda: (lambda x, w: F.conv2d(x, w, None, 1, (1, 0), 2, 2), (t64(1, 4, 6, 5), t64(4, 2, 2, 3)), {}),
    "conv1d": lambda: (lambda x, w: F.conv1d(x, w, stride=2, padding="valid"), (t64(2, 3, 7), t64(2, 3, 3)), {}),
    "conv_transpose2d": lambda: (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                                 (t64(2, 4, 3, 3), t64(4, 3, 3, 2), t64(3)), {}),
    "conv_transpose2d_groups": lambda: (lambda x, w: F.conv_transpose2d(x, w, None, (1, 2), 0, 0, 2, (2, 1)),
                                        (t64(1, 4, 3, 3), t64(4, 2, 2, 3)), {}),
    "max_pool2d": lambda: (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (t64(2, 2, 6, 5),), {}),
    "avg_pool2d": lambda: (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (t64(2, 2, 6, 5),), {}),
    "batch_norm": lambda: (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (t64(4, 3, 2, 2), t64(3), t64(3)), {}),
    "batch_norm_eval": lambda: (lambda x, w: F.batch_norm(x, mt.zeros(3, dtype=mt.float64), mt.ones(3, dtype=mt.float64) * 2, w),
                                (t64(4, 3, 2), t64(3)), {}),
    "group_norm": lambda: (lambda x, w, b: F.group_norm(x, 2, w, b), (t64(3, 4, 5), t64(4), t64(4)), {}),
    "layer_norm": lambda: (lambda x, w, b: F.layer_norm(x, (4,), w, b), (t64(3, 4), t64(4), t64(4)), {}),
    # (no padding_idx here: its row is used forward but deliberately gets no gradient)
    "embedding": lambda: (lambda w: F.embedding(mt.tensor([[0, 2], [2, 3]]), w), (t64(5, 3),), {}),
    "cross_entropy": lambda: (lambda x: F.cross_entropy(x, mt.tensor([1, 0, -100, 3]), label_smoothing=0.2), (t64(4, 5),), {}),
    "bce_logits": lambda: _bce_case(mt.tensor(RNG.random((3, 2)))),
    "bilinear": lambda: (lambda a, b, w: F.bilinear(a, b, w), (t64(3, 2), t64(3, 4), t64(5, 2, 4)), {}),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    fn, inputs, _ = GRADCHECKS[name]()
    assert gradcheck(fn, inputs)


# -- shapes on meta ------------------------------------------------------------------------------

def test_meta_forward_shapes():
    with mt.device("meta"):
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.AvgPool2d(2, ceil_mode=True),
            nn.ConvTranspose2d(8, 4, 2, stride=2), nn.GroupNorm(2, 4), nn.Flatten(), nn.Linear(4 * 4 * 4, 10),
            nn.LayerNorm(10), nn.Dropout(0.5),
        )
        out = model(mt.randn(2, 3, 8, 7))
        loss = F.cross_entropy(out, mt.zeros(2, dtype=mt.long))
    assert out.device.type == "meta" and tuple(out.shape) == (2, 10)
    assert tuple(loss.shape) == ()


# -- training / eval behaviour --------------------------------------------------------------------

def test_batchnorm_running_stats_definition():
    x = [RNG.standard_normal((5, 2, 3)).astype(np.float32) for _ in range(3)]
    bn = nn.BatchNorm1d(2, momentum=None)
    for xi in x:
        bn(mt.tensor(xi))
    allx = np.stack(x)  # momentum=None: the plain average of the batch statistics
    np.testing.assert_allclose(bn.running_mean.numpy(), allx.mean(axis=(1, 3)).mean(0), rtol=1e-5, atol=1e-6)
    unbiased = np.stack([xi.transpose(1, 0, 2).reshape(2, -1).var(axis=1, ddof=1) for xi in x]).mean(0)
    np.testing.assert_allclose(bn.running_var.numpy(), unbiased, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 3 and bn.num_batches_tracked.dtype is mt.int64
    bn.eval()
    out = bn(mt.tensor(x[0])).detach().numpy()
    ref = (x[0] - bn.running_mean.numpy().reshape(1, 2, 1)) / np.sqrt(
        bn.running_var.numpy().reshape(1, 2, 1) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    assert bn.num_batches_tracked.item() == 3  # eval does not count


def test_batchnorm_errors():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(mt.zeros(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(mt.zeros(1, 3))


def test_dropout_train_and_eval():
    x = mt.ones(2000)
    d = nn.Dropout(0.25)
    y = d(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.05
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.0) is x


def test_layer_state_dict_keys_and_buffers():
    bn = nn.BatchNorm2d(4)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert list(nn.BatchNorm2d(4, track_running_stats=False).state_dict()) == ["weight", "bias"]
    ce = nn.CrossEntropyLoss(weight=mt.ones(3))
    assert list(ce.state_dict()) == ["weight"]
    lin = nn.Linear(3, 2, bias=False)
    assert lin.bias is None and list(lin.state_dict()) == ["weight"]


def test_linear_forward_reads_what_attribute_access_reads():
    """Linear.forward reads its registry for speed; it must use what ``lin.weight`` and
    ``lin.bias`` give in every state: registered, parametrized, deleted and replaced, absent."""
    from minitorch_nn.nn.utils import parametrize

    class Double(nn.Module):
        def forward(self, w):
            return w * 2

    mt.manual_seed(0)
    x = mt.randn(4, 3)

    def check(lin):
        assert mt.equal(lin(x), F.linear(x, lin.weight, lin.bias))

    lin = nn.Linear(3, 2)
    check(lin)
    parametrize.register_parametrization(lin, "weight", Double())
    assert "weight" not in lin._parameters
    check(lin)
    assert not mt.equal(lin(x), F.linear(x, lin.parametrizations.weight.original, lin.bias))
    parametrize.remove_parametrizations(lin, "weight")
    check(lin)
    del lin.bias
    lin.bias = mt.full((2,), 5.0)  # a plain attribute now, not a parameter
    check(lin)
    assert mt.equal(lin(x), F.linear(x, lin.weight) + 5.0)
    check(nn.Linear(3, 2, bias=False))


def test_linear_init_bounds():
    mt.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)
    assert float(lin.weight.abs().max()) <= bound and float(lin.bias.abs().max()) <= bound
    assert float(lin.weight.abs().max()) > 0.9 * bound


def test_embedding_padding_row_is_zero_and_gets_no_grad():
    emb = nn.Embedding(6, 3, padding_idx=-1)
    assert emb.padding_idx == 5
    assert float(emb.weight[5].abs().sum()) == 0
    emb(mt.tensor([5, 1, 5])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[5], 0)
    np.testing.assert_array_equal(emb.weight.grad.numpy()[1], 1)


def test_init_calculate_gain_and_fans():
    assert nn.init.calculate_gain("relu") == math.sqrt(2)
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(8, 3, 5, 5)) == (75, 200)
    w = nn.init.orthogonal_(mt.empty(4, 6))
    np.testing.assert_allclose((w @ w.t()).numpy(), np.eye(4), atol=1e-5)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_normal_(mt.empty(3, 3), mode="fan_avg")

"""Oracle: gradients of ``nn.functional`` and the layers against PyTorch 2.13.

Each case runs the same computation in ``torch`` and ``minitorch_nn`` on the same data, backprops
the same upstream gradient and compares the outputs and every input gradient; then whole models
(an MLP trained three SGD steps, ``MultiheadAttention``, ``TransformerEncoder``). Split from
``test_layers_oracle.py`` (forward values, reprs, initial weights), whose helpers it uses.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from test_layers_oracle import MF, TF, Data, assert_same, run_both  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.optim  # noqa: E402,F401  (mt.optim)


def test_multihead_attention_gradients():
    d = Data(24)
    d.randn("q", 5, 2, 8)

    def fn(lib, F, t):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(8, 2)
        x = t["q"].requires_grad_(True)
        out, w = m(x, x, x, attn_mask=lib.ones(5, 5, dtype=lib.bool).triu(1))
        (out.sum() + (w * w).sum()).backward()
        return [x.grad] + [p.grad for p in m.parameters()]

    run_both(d, fn)


# =================================================================================================
# gradients
# =================================================================================================

def grads_both(data, fn, wrt, tol=1e-4):
    """Run ``fn`` in both libraries with ``wrt`` requiring grad; backprop a fixed random
    upstream gradient and compare the outputs and every input gradient."""
    results = []
    for lib, F in ((torch, TF), (mt, MF)):
        t = data.tensors(lib)
        for name in wrt:
            t[name].requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, F, t)
        rng = np.random.default_rng(99)
        upstream = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
        (out * upstream).sum().backward()
        results.append([out] + [t[name].grad for name in wrt])
    for name, a, b in zip(["output", *wrt], *results):
        assert b is not None, f"no gradient for {name}"
        assert_same(a, b, tol)


GRAD_CASES = {
    "linear": (["x", "w", "b"], lambda lib, F, t: F.linear(t["x"].flatten(1)[:, :6], t["w"], t["b"])),
    "conv2d": (["x", "cw", "b"], lambda lib, F, t: F.conv2d(t["x"], t["cw"], t["b"], stride=2, padding=1)),
    "conv2d_groups": (["x", "gw"], lambda lib, F, t: F.conv2d(t["x"], t["gw"], None, padding=(1, 0), dilation=2, groups=2)),
    "conv_transpose2d": (["x", "tw", "b"], lambda lib, F, t: F.conv_transpose2d(t["x"], t["tw"], t["b"], stride=2, padding=1, output_padding=1)),
    "conv_transpose2d_groups": (["x", "tgw"], lambda lib, F, t: F.conv_transpose2d(t["x"], t["tgw"], None, stride=(1, 2), groups=2, dilation=(2, 1))),
    "conv1d": (["x", "w1"], lambda lib, F, t: F.conv1d(t["x"][:, :, 0], t["w1"], stride=2, padding=1)),
    "max_pool2d": (["x"], lambda lib, F, t: F.max_pool2d(t["x"], 3, 2, padding=1, ceil_mode=True)),
    "avg_pool2d": (["x"], lambda lib, F, t: F.avg_pool2d(t["x"], 3, 2, padding=1, count_include_pad=False)),
    "avg_pool2d_ceil": (["x"], lambda lib, F, t: F.avg_pool2d(t["x"], 2, ceil_mode=True)),
    "batch_norm_train": (["x", "g", "b4"], lambda lib, F, t: F.batch_norm(t["x"], t["rm"], t["rv"], t["g"], t["b4"], training=True)),
    "batch_norm_eval": (["x", "g", "b4"], lambda lib, F, t: F.batch_norm(t["x"], t["rm"], t["rv"], t["g"], t["b4"])),
    "group_norm": (["x", "g", "b4"], lambda lib, F, t: F.group_norm(t["x"], 2, t["g"], t["b4"])),
    "instance_norm": (["x"], lambda lib, F, t: F.instance_norm(t["x"])),
    "layer_norm": (["x", "lw"], lambda lib, F, t: F.layer_norm(t["x"], (5, 6), t["lw"])),
    "embedding": (["ew"], lambda lib, F, t: F.embedding(t["idx"], t["ew"], padding_idx=1)),
    "cross_entropy": (["logits"], lambda lib, F, t: F.cross_entropy(t["logits"], t["y"], label_smoothing=0.1)),
    "mse": (["logits"], lambda lib, F, t: F.mse_loss(t["logits"], t["p"])),
    "bce_logits": (["logits"], lambda lib, F, t: F.binary_cross_entropy_with_logits(t["logits"], t["p"])),
    "pad_reflect_conv": (["x", "cw"], lambda lib, F, t: F.conv2d(F.pad(t["x"], (1, 1, 2, 0), mode="reflect"), t["cw"])),
    "adaptive_avg_pool2d": (["x"], lambda lib, F, t: F.adaptive_avg_pool2d(t["x"], (2, 4))),
    "prelu": (["x", "g"], lambda lib, F, t: F.prelu(t["x"], t["g"])),
    "kl_div": (["logits"], lambda lib, F, t: F.kl_div(F.log_softmax(t["logits"], 1), t["p"], reduction="batchmean")),
    "mish_hardswish": (["logits"], lambda lib, F, t: F.mish(t["logits"]) + F.hardswish(t["logits"] * 3)),
    "interpolate_bilinear": (["x"], lambda lib, F, t: F.interpolate(t["x"], scale_factor=1.5, mode="bilinear")),
    "interpolate_nearest": (["x"], lambda lib, F, t: F.interpolate(t["x"], size=(7, 4))),
    "gelu_softmax": (["logits"], lambda lib, F, t: F.softmax(F.gelu(t["logits"]), -1)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients(name):
    d = Data(30)
    d.randn("x", 3, 4, 5, 6)
    d.randn("w", 7, 6)
    d.randn("b", 7)
    d.randn("cw", 7, 4, 3, 2)
    d.randn("gw", 6, 2, 2, 3)
    d.randn("tw", 4, 7, 3, 2)
    d.randn("tgw", 4, 3, 2, 3)
    d.randn("w1", 3, 4, 3)
    d.randn("g", 4)
    d.randn("b4", 4)
    d.randn("rm", 4)
    d.rand("rv", 4)
    d.randn("lw", 5, 6)
    d.randn("ew", 9, 3)
    d.values("idx", np.array([[1, 2, 2], [8, 1, 0]]))
    d.randn("logits", 5, 7)
    d.values("y", np.array([1, 0, 6, 3, -100]))
    d.rand("p", 5, 7)
    if name == "conv_transpose2d":
        d.randn("b", 7)
    wrt, fn = GRAD_CASES[name]
    grads_both(d, fn, wrt)


def test_mlp_training_step_matches():
    """Forward, backward and an SGD step of a small MLP give PyTorch's parameters."""
    d = Data(31)
    d.randn("x", 16, 10)
    d.ints("y", 0, 3, 16)
    params = []
    for lib in (torch, mt):
        t = d.tensors(lib)
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(10, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Dropout(0.2),
                                  lib.nn.Linear(8, 3))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(t["x"]), t["y"])
            loss.backward()
            opt.step()
        params.append([p.detach() for p in model.state_dict().values()])
    assert_same(params[0], params[1], 1e-4)


def test_transformer_encoder():
    """Same seed -> same weights, repr, warning, outputs and gradients; pre-norm, gelu, eval mode."""
    d = Data(26)
    d.randn("src", 6, 3, 8)
    d.values("kpm", np.array([[False] * 4 + [True] * 2, [False] * 6, [False] * 6]))

    def fn(lib, F, t):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
            enc = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8))
        causal = lib.ones(6, 6, dtype=lib.bool).triu(1)
        x = t["src"].requires_grad_(True)
        y = enc(x, mask=causal, src_key_padding_mask=t["kpm"])
        y.sum().backward()
        pre = lib.nn.TransformerEncoderLayer(8, 4, 16, 0.0, activation="gelu", norm_first=True, batch_first=True)
        z = pre(t["src"].detach().transpose(0, 1))
        enc.eval()
        with lib.no_grad():
            e = enc(t["src"].detach())
        messages = [str(w.message) for w in caught]
        return [repr(enc) == repr(enc), y, x.grad, z, e] + [p.grad for p in enc.parameters()], repr(enc), messages

    outs = []
    for lib, F in ((torch, TF), (mt, MF)):
        outs.append(fn(lib, F, d.tensors(lib)))
    (tv, tr, tw), (mv, mr, mw) = outs
    assert mr == tr
    assert mw == tw
    assert_same(tv[1:], mv[1:], 1e-4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mt.nn.MultiheadAttention(8, 2)(mt.ones(3, 1, 8), mt.ones(3, 1, 8), mt.ones(3, 1, 8), is_causal=True)

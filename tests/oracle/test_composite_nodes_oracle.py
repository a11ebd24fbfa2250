"""nn.functional ops that PyTorch 2.13 runs as one aten op with a node of its own (hardswish,
hardsigmoid, mish, logsigmoid, celu, ...), compared with PyTorch: what a dispatch mode sees in
forward and backward (with and without ``create_graph``), ``grad_fn`` and ``next_functions``
names, the saved attributes, values and gradients; plus gradcheck/gradgradcheck in float64 and the
meta device.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from torch.utils._python_dispatch import TorchDispatchMode as TorchMode  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode as MtMode  # noqa: E402

# name -> (call of (lib, *inputs), input shapes). Inputs are float64 tensors that require grad.
CASES = {
    "hardswish": (lambda L, x: L.nn.functional.hardswish(x), [(2, 5)]),
    "hardsigmoid": (lambda L, x: L.nn.functional.hardsigmoid(x), [(2, 5)]),
    "mish": (lambda L, x: L.nn.functional.mish(x), [(2, 5)]),
    "logsigmoid": (lambda L, x: L.nn.functional.logsigmoid(x), [(2, 5)]),
    "celu": (lambda L, x: L.nn.functional.celu(x), [(2, 5)]),
    "celu_alpha": (lambda L, x: L.nn.functional.celu(x, 0.5), [(2, 5)]),
    "celu_module": (lambda L, x: L.nn.CELU(2.0)(x), [(3,)]),
    "hardswish_module": (lambda L, x: L.nn.Hardswish()(x), [(4,)]),
    "glu": (lambda L, x: L.nn.functional.glu(x), [(2, 4)]),
    "glu_dim0": (lambda L, x: L.nn.functional.glu(x, 0), [(4, 3)]),
    "glu_transposed": (lambda L, x: L.nn.functional.glu(x.t(), 1), [(6, 2)]),
    "prelu": (lambda L, x, w: L.nn.functional.prelu(x, w), [(2, 4), (4,)]),
    "prelu_one_weight": (lambda L, x, w: L.nn.functional.prelu(x, w), [(2, 3, 2), (1,)]),
    "prelu_0d_weight": (lambda L, x, w: L.nn.functional.prelu(x, w), [(2, 3), ()]),
    "prelu_1d_input": (lambda L, x, w: L.nn.functional.prelu(x, w), [(3,), (1,)]),
    "prelu_0d_input": (lambda L, x, w: L.nn.functional.prelu(x, w), [(), (1,)]),
    "prelu_channels": (lambda L, x, w: L.nn.functional.prelu(x, w), [(2, 3, 2, 2), (3,)]),
    "smooth_l1": (lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y), [(2, 4), (2, 4)]),
    "smooth_l1_none_beta": (lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y, reduction="none", beta=0.5),
                            [(2, 4), (2, 4)]),
    "smooth_l1_sum": (lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y, reduction="sum", beta=2.0), [(3,), (3,)]),
    "smooth_l1_module": (lambda L, x, y: L.nn.SmoothL1Loss(beta=3.0)(x, y), [(2, 3), (2, 3)]),
    "smooth_l1_target_const": (lambda L, x: L.nn.functional.smooth_l1_loss(x, L.ones(2, 3, dtype=L.float64)),
                               [(2, 3)]),
    "huber": (lambda L, x, y: L.nn.functional.huber_loss(x, y), [(2, 4), (2, 4)]),
    "huber_sum_delta": (lambda L, x, y: L.nn.functional.huber_loss(x, y, reduction="sum", delta=0.5),
                        [(2, 4), (2, 4)]),
    "huber_none": (lambda L, x, y: L.nn.functional.huber_loss(x, y, reduction="none", delta=2.0), [(5,), (5,)]),
    # (reduction="sum": MeanBackward0 here dispatches div.Tensor where PyTorch dispatches div.Scalar)
    "huber_weight": (lambda L, x, y, w: L.nn.functional.huber_loss(x, y, weight=w, reduction="sum"),
                     [(2, 3), (2, 3), (2, 3)]),
    "huber_module": (lambda L, x, y: L.nn.HuberLoss(delta=0.25)(x, y), [(4,), (4,)]),
    "adaptive_avg_pool2d": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 2), [(2, 3, 5, 4)]),
    "adaptive_avg_pool2d_3d": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (2, 3)), [(3, 5, 4)]),
    "adaptive_avg_pool2d_none": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (None, 2)), [(1, 3, 5, 4)]),
    "adaptive_avg_pool2d_module": (lambda L, x: L.nn.AdaptiveAvgPool2d((3, 2))(x), [(1, 2, 7, 5)]),
    "adaptive_avg_pool1d": (lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 3), [(2, 3, 7)]),
    "adaptive_avg_pool1d_2d": (lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, (2,)), [(3, 7)]),
    "interpolate_nearest_scale": (lambda L, x: L.nn.functional.interpolate(x, scale_factor=2), [(1, 2, 3, 3)]),
    "interpolate_nearest_size": (lambda L, x: L.nn.functional.interpolate(x, size=(5, 4)), [(1, 2, 3, 3)]),
    "interpolate_nearest_odd": (lambda L, x: L.nn.functional.interpolate(x, scale_factor=(1.7, 0.5)), [(2, 1, 3, 4)]),
    "interpolate_nearest_recompute": (lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.7,
                                                                               recompute_scale_factor=True),
                                      [(1, 2, 3, 3)]),
    "upsample_module": (lambda L, x: L.nn.Upsample(scale_factor=3)(x), [(1, 1, 2, 2)]),
    "prelu_input_only": (lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25, -0.5], dtype=L.float64)),
                         [(3, 2)]),
}
# ops whose double backward PyTorch 2.13 does not implement (a NotImplemented node)
NO_DOUBLE_BACKWARD = {"hardsigmoid"}


def _inputs(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    # values away from the kinks at +-3 and 0, where finite differences would straddle them
    out = []
    for shape in shapes:
        v = rng.uniform(-5, 5, size=shape)
        v = np.where(np.abs(np.abs(v) - 3) < 0.1, v + 0.3, v)
        v = np.where(np.abs(v) < 0.1, v + 0.3, v)
        out.append(lib.tensor(v.tolist(), dtype=lib.float64, requires_grad=True))
    return out


def _run(lib, name, create_graph):
    fn, shapes = CASES[name]
    mode_base = TorchMode if lib is torch else MtMode
    log = []

    class Log(mode_base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(str(func))
            return func(*args, **(kwargs or {}))

    xs = _inputs(lib, shapes)
    with Log():
        y = fn(lib, *xs)
    forward_log = list(log)
    log.clear()
    node = y.grad_fn
    seen = {
        "node": type(node).__name__,
        "next": [(type(n).__name__ if n is not None else None, i) for n, i in node.next_functions],
        "saved": sorted(a for a in dir(node) if a.startswith("_saved_")),
        "saved_numbers": {a: getattr(node, a) for a in dir(node)
                          if a.startswith("_saved_") and not isinstance(getattr(node, a), (torch.Tensor, mt.Tensor))},
        "forward_log": forward_log,
    }
    gy = lib.ones_like(y) * 0.5
    with Log():
        grads = lib.autograd.grad(y, xs, gy, create_graph=create_graph)
    seen["backward_log"] = list(log)
    if create_graph:
        seen["grad_nodes"] = [type(g.grad_fn).__name__ for g in grads]
    return seen, y.detach().tolist(), [g.detach().tolist() for g in grads]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_nodes_dispatches_and_values_as_pytorch(name, create_graph):
    t_seen, t_y, t_g = _run(torch, name, create_graph)
    m_seen, m_y, m_g = _run(mt, name, create_graph)
    assert m_seen == t_seen
    np.testing.assert_allclose(m_y, t_y, rtol=1e-13, atol=1e-15)
    for a, b in zip(m_g, t_g):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes = CASES[name]
    xs = _inputs(mt, shapes, seed=1)
    assert mt.autograd.gradcheck(lambda *a: fn(mt, *a), xs)
    if name.split("_")[0] not in NO_DOUBLE_BACKWARD:
        assert mt.autograd.gradgradcheck(lambda *a: fn(mt, *a), xs)


def test_hardsigmoid_double_backward_fails_as_in_pytorch():
    def attempt(lib):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        try:
            g.sum().backward()
        except RuntimeError as e:
            return type(g.grad_fn).__name__, str(e)
        return type(g.grad_fn).__name__, None

    assert attempt(mt) == attempt(torch)
    assert attempt(mt)[1] == "derivative for aten::hardsigmoid_backward is not implemented"


def test_errors_as_pytorch():
    def errors(lib):
        out = []
        for call in (lambda: lib.nn.functional.celu(lib.ones(2), 0.0),
                     lambda: lib.nn.functional.hardswish(lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.hardsigmoid(lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.mish(lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.logsigmoid(lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.glu(lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.glu(lib.tensor(1.0)),
                     lambda: lib.nn.functional.glu(lib.ones(2, 3)),
                     lambda: lib.nn.functional.glu(lib.ones(3, 2), 0),
                     lambda: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)),
                     lambda: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(1, 3)),
                     lambda: lib.nn.functional.prelu(lib.tensor(1.0), lib.ones(3)),
                     lambda: lib.nn.functional.prelu(lib.ones(3), lib.ones(3)),
                     lambda: lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.ones(2), beta=-1.0),
                     lambda: lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), delta=0.0),
                     lambda: lib.nn.functional.smooth_l1_loss(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.huber_loss(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
                     lambda: lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), weight=lib.ones(3)),
                     lambda: lib.nn.functional.adaptive_avg_pool2d(lib.ones(3, 4), 2),
                     lambda: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 3, 4, 4), (-1, 2)),
                     lambda: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 3, 0, 4), 2),
                     lambda: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 3, 4, 4, dtype=lib.int64), 2),
                     lambda: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 3, 4, 4), (2, 2, 2)),
                     lambda: lib.nn.functional.adaptive_avg_pool1d(lib.ones(3), 2),
                     lambda: lib.nn.functional.adaptive_avg_pool1d(lib.ones(1, 3, 4), (2, 2)),
                     lambda: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor=0.4),
                     lambda: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=(0, 3))):
            try:
                call()
                out.append(None)
            except (RuntimeError, ValueError) as e:
                out.append(f"{type(e).__name__}: {e}")
        return out

    assert errors(mt) == errors(torch)


def test_log_sigmoid_forward_returns_output_and_buffer():
    x = np.array([-30.0, -2.0, -0.0, 0.5, 40.0])
    t_out, t_buf = torch.ops.aten.log_sigmoid_forward(torch.tensor(x))
    m_out, m_buf = mt.ops.aten.log_sigmoid_forward(mt.tensor(x))
    np.testing.assert_array_equal(m_out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(m_buf.numpy(), t_buf.numpy())
    assert not m_buf.requires_grad


def test_meta_device_shapes():
    with mt.device("meta"):
        x = mt.randn(2, 3)
        for fn in (mt.nn.functional.hardswish, mt.nn.functional.hardsigmoid, mt.nn.functional.mish,
                   mt.nn.functional.logsigmoid, mt.nn.functional.celu):
            y = fn(x)
            assert y.is_meta and tuple(y.shape) == (2, 3) and y.dtype is mt.float32
        y = mt.nn.functional.glu(x, 0)
        assert y.is_meta and tuple(y.shape) == (1, 3)
        with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
            mt.nn.functional.glu(x)


# dtypes and how closely each op's values follow PyTorch's there: exact for the piecewise-linear
# ones; PyTorch's vectorized float32 exp/log1p/tanh (SLEEF) differ from numpy's by an ulp or so
_EXACT = {"hardswish", "hardsigmoid"}


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["hardswish", "hardsigmoid", "mish", "logsigmoid", "celu", "glu"]),
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    transpose=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_values_and_grads_follow_pytorch(name, dtype, shape, transpose, seed):
    rng = np.random.default_rng(seed)
    if name == "glu":   # halves the last dim, which must be even
        shape = [*shape, 2 * (seed % 3 + 1)]
    v = rng.normal(scale=4.0, size=shape)
    out_shape = [*shape[:-1], shape[-1] // 2] if name == "glu" else shape
    g = rng.normal(size=out_shape)
    results = []
    for lib in (torch, mt):
        x = lib.tensor(v.tolist(), dtype=getattr(lib, dtype))
        if transpose and x.dim() >= 2 and name != "glu":
            x = x.transpose(0, 1)
        x.requires_grad_(True)
        y = getattr(lib.nn.functional, name)(x)
        gy = lib.tensor(g.tolist(), dtype=getattr(lib, dtype))
        if transpose and gy.dim() >= 2 and name != "glu":
            gy = gy.transpose(0, 1)
        (gx,) = lib.autograd.grad(y, x, gy)
        results.append((y.detach().float().numpy(), gx.float().numpy(), y.stride(), y.dtype))
    (ty, tg, ts, tdt), (my, mg, ms, mdt) = results
    assert str(mdt) == str(tdt)
    if name != "glu" or 1 not in shape:   # (glu: size-1 dims' strides may differ, they address nothing)
        assert ms == ts
    if name in _EXACT or dtype in ("float64", "float16", "bfloat16"):
        np.testing.assert_array_equal(my, ty)
        np.testing.assert_array_equal(mg, tg)
    else:
        np.testing.assert_allclose(my, ty, rtol=4e-6, atol=1e-6)
        np.testing.assert_allclose(mg, tg, rtol=4e-6, atol=1e-6)


def test_export_graph_keeps_one_node_per_op():
    def graph(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                F = lib.nn.functional
                y = F.hardswish(x) + F.hardsigmoid(x) + F.mish(x) + F.logsigmoid(x) + F.celu(x, 0.5)
                return F.glu(y, 0).sum() + F.adaptive_avg_pool1d(y.unsqueeze(0), 2).sum()

        ep = lib.export.export(M(), (lib.randn(2, 3),))
        x = lib.tensor([[-4.0, -1.0, 0.5], [2.0, 3.5, 0.0]])
        lib.manual_seed(0)
        prelu = lib.export.export(lib.nn.PReLU(3), (lib.randn(2, 3, 2),))
        outs = [ep.module()(x).tolist(), prelu.module()(lib.cat([x, x]).reshape(2, 3, 2)).tolist()]
        return str(ep.graph) + str(prelu.graph), outs

    (t_graph, t_outs), (m_graph, m_outs) = graph(torch), graph(mt)
    assert m_graph == t_graph
    for m_out, t_out in zip(m_outs, t_outs):
        np.testing.assert_allclose(m_out, t_out, rtol=1e-6)


@settings(max_examples=20, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=4),
    per_channel=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_prelu_values_and_grads_follow_pytorch(dtype, shape, per_channel, seed):
    rng = np.random.default_rng(seed)
    channels = shape[1] if per_channel and len(shape) >= 2 else 1
    x, w, g = rng.normal(scale=3.0, size=shape), rng.normal(size=channels), rng.normal(size=shape)
    results = []
    for lib in (torch, mt):
        d = getattr(lib, dtype)
        xs = lib.tensor(x.tolist(), dtype=d, requires_grad=True)
        ws = lib.tensor(w.tolist(), dtype=d, requires_grad=True)
        y = lib.nn.functional.prelu(xs, ws)
        gx, gw = lib.autograd.grad(y, [xs, ws], lib.tensor(g.tolist(), dtype=d))
        results.append([y.detach().float().numpy(), gx.float().numpy(), y.stride(), gw.float().numpy()])
    for a, b in zip(results[0][:3], results[1][:3]):
        np.testing.assert_array_equal(b, a)
    # the weight's gradient is a sum over the other dims, added up in another order than PyTorch's
    rtol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-2, "bfloat16": 2e-1}[dtype]
    np.testing.assert_allclose(results[1][3], results[0][3], rtol=rtol, atol=rtol)


def test_smooth_l1_with_beta_zero_is_l1_loss():
    # (the nodes and values only: l1_loss's backward here dispatches sign/div.Tensor where
    # PyTorch's dispatches sgn/div.Scalar, a difference of AbsBackward0/MeanBackward0)
    def run(lib):
        x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.smooth_l1_loss(x, lib.zeros(3, dtype=lib.float64), beta=0.0)
        (g,) = lib.autograd.grad(y, x)
        return type(y.grad_fn).__name__, y.item(), g.tolist()

    assert run(mt) == run(torch)


@settings(max_examples=25, deadline=None)
@given(
    loss=st.sampled_from(["smooth_l1_loss", "huber_loss"]),
    reduction=st.sampled_from(["none", "mean", "sum"]),
    param=st.sampled_from([0.25, 1.0, 2.5]),
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    transpose=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_smooth_losses_follow_pytorch(loss, reduction, param, dtype, shape, transpose, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(scale=2.0, size=shape), rng.normal(size=shape)
    kw = {"beta" if loss == "smooth_l1_loss" else "delta": param}
    results = []
    for lib in (torch, mt):
        if transpose and x.ndim >= 2:   # x's values, held column-major
            a = lib.tensor(x.swapaxes(0, 1).tolist(), dtype=getattr(lib, dtype)).transpose(0, 1)
        else:
            a = lib.tensor(x.tolist(), dtype=getattr(lib, dtype))
        b = lib.tensor(y.tolist(), dtype=getattr(lib, dtype))
        a.requires_grad_(True)
        b.requires_grad_(True)
        out = getattr(lib.nn.functional, loss)(a, b, reduction=reduction, **kw)
        ga, gb = lib.autograd.grad(out, [a, b], lib.ones_like(out) * 0.75)
        results.append([out.detach().float().numpy(), ga.float().numpy(), gb.float().numpy(),
                        out.stride(), ga.stride(), type(out.grad_fn).__name__])
    (*t_values, t_out_stride, t_grad_stride, t_node), (*m_values, m_out_stride, m_grad_stride, m_node) = results
    assert m_node == t_node
    if 1 not in shape:   # (the strides of size-1 dims address nothing; the layout rule may order them otherwise)
        assert (m_out_stride, m_grad_stride) == (t_out_stride, t_grad_stride)
    # float64: the same values; the others are computed here in float32 and rounded once, where
    # PyTorch's 16-bit kernels round some steps (and sums add up in another order)
    rtol = {"float64": 1e-13, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    for m, t in zip(m_values, t_values):
        np.testing.assert_allclose(m, t, rtol=rtol, atol=rtol)


def test_export_records_the_smooth_losses_as_one_op_each():
    class M(mt.nn.Module):
        def forward(self, x, y):
            return mt.nn.functional.smooth_l1_loss(x, y, beta=0.5) + mt.nn.functional.huber_loss(x, y, reduction="sum")

    x, y = mt.randn(2, 3), mt.randn(2, 3)
    ep = mt.export.export(M(), (x, y))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    # (PyTorch records aten.broadcast_tensors and getitem before each, as it does for mse_loss: see export/__init__.py)
    assert targets == ["aten.smooth_l1_loss.default", "aten.huber_loss.default", "aten.add.Tensor"]
    assert ep.module()(x, y).item() == M()(x, y).item()


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1),
    lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (1, 1)),
    lambda L, x: L.nn.functional.adaptive_avg_pool1d(x[0], 1),
])
def test_adaptive_avg_pool_to_one_is_a_mean(call):
    # (forward dispatches and nodes only: MeanBackward1's backward here dispatches div.Tensor where
    # PyTorch's dispatches div.Scalar)
    def run(lib):
        log = []
        base = TorchMode if lib is torch else MtMode

        class Log(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(str(func))
                return func(*args, **(kwargs or {}))

        x = lib.tensor(np.linspace(-1, 1, 2 * 3 * 4 * 4).reshape(2, 3, 4, 4).tolist(), dtype=lib.float64,
                       requires_grad=True)
        with Log():
            y = call(lib, x)
        (g,) = lib.autograd.grad(y.sum(), x)
        names = [type(n).__name__ for n, _ in y.grad_fn.next_functions]
        return log, type(y.grad_fn).__name__, names, tuple(y.shape), y.detach().numpy(), g.numpy()

    (*t_seen, t_y, t_g), (*m_seen, m_y, m_g) = run(torch), run(mt)
    assert m_seen == t_seen
    np.testing.assert_allclose(m_y, t_y, rtol=1e-14)
    np.testing.assert_allclose(m_g, t_g, rtol=1e-14)


@settings(max_examples=20, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    lead=st.lists(st.integers(1, 3), min_size=1, max_size=2),
    hw=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    out=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    seed=st.integers(0, 2**16),
)
def test_adaptive_avg_pool2d_follows_pytorch(dtype, lead, hw, out, seed):
    if out == (1, 1):
        out = (2, 1)
    rng = np.random.default_rng(seed)
    shape = [*lead, *hw]
    v = rng.normal(size=shape)
    g = rng.normal(size=(*lead, *out))
    results = []
    for lib in (torch, mt):
        x = lib.tensor(v.tolist(), dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.adaptive_avg_pool2d(x, out)
        (gx,) = lib.autograd.grad(y, x, lib.tensor(g.tolist(), dtype=getattr(lib, dtype)))
        results.append([y.detach().float().numpy(), gx.float().numpy(), y.stride(), type(y.grad_fn).__name__])
    (ty, tg, ts, tn), (my, mg, ms, mn) = results
    assert (ms, mn) == (ts, tn)
    np.testing.assert_array_equal(my, ty)   # PyTorch's order of additions and divisions
    if dtype in ("float16", "bfloat16"):   # (PyTorch's 16-bit backward adds overlapping bins in 16 bits)
        np.testing.assert_allclose(mg, tg, rtol=2e-2, atol=2e-2)
    else:
        np.testing.assert_array_equal(mg, tg)


@settings(max_examples=20, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16", "uint8"]),
    hw=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    how=st.sampled_from(["size", "scale", "recompute"]),
    size=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    scale=st.tuples(st.sampled_from([0.5, 1.0, 1.3, 1.7, 2.0, 2.5, 3.0]), st.sampled_from([0.6, 1.0, 2.0, 2.2])),
    seed=st.integers(0, 2**16),
)
def test_interpolate_nearest_follows_pytorch(dtype, hw, how, size, scale, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=5.0, size=(2, 2, *hw))
    if dtype in ("int64", "uint8"):
        v = np.abs(v).round()
    kw = {"size": size} if how == "size" else {"scale_factor": scale, "recompute_scale_factor": how == "recompute"}
    if how != "size" and min(int(n * f) for n, f in zip(hw, scale)) < 1:
        return   # (an empty output: PyTorch raises; tested with the errors)
    floating = dtype not in ("int64", "uint8")
    results = []
    for lib in (torch, mt):
        x = lib.tensor(v.tolist(), dtype=getattr(lib, dtype), requires_grad=floating)
        y = lib.nn.functional.interpolate(x, **kw)
        out = [y.detach().double().numpy(), y.stride(), str(y.dtype)]
        if floating:
            g = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).tolist(), dtype=getattr(lib, dtype))
            (gx,) = lib.autograd.grad(y, x, g)
            out.append(gx.double().numpy())
        results.append(out)
    t, m = results
    assert m[1:3] == t[1:3]
    np.testing.assert_array_equal(m[0], t[0])
    if floating:
        if dtype in ("float16", "bfloat16"):   # (overlapping sums added in float32 here, in 16 bits there)
            np.testing.assert_allclose(m[3], t[3], rtol=2e-2, atol=2e-2)
        else:
            np.testing.assert_array_equal(m[3], t[3])


def test_export_keeps_upsample_nearest2d_vec():
    def graph(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                F = lib.nn.functional
                return (F.interpolate(x, scale_factor=2).sum() + F.interpolate(x, size=(5, 4)).sum()
                        + F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True).sum())

        ep = lib.export.export(M(), (lib.randn(1, 2, 3, 3),))
        return str(ep.graph), ep.module()(lib.ones(1, 2, 3, 3)).item()

    assert graph(mt) == graph(torch)

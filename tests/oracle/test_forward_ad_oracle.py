"""Oracle: forward-mode AD (``autograd.forward_ad``) against PyTorch 2.13's.

* per op: random float64 inputs and tangents (hypothesis), the tangent of the output compared
  with torch's; ops with a JVP formula and ops that take the double-vjp fallback alike;
* random *expressions* (hypothesis draws a chain of unary and binary ops) compared with torch
  and with central finite differences;
* the API: levels (nesting, exit, re-entry), make_dual/unpack_dual errors and messages, layout
  of stored tangents;
* views and in-place ops (the tangent of a view is a view of the base's tangent; in-place ops
  update tangents in place, also through views of a base that had no tangent);
* reverse mode through a computation that used dual tensors (gradients of primal and tangent).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

fwAD = mt.autograd.forward_ad
tfwAD = torch.autograd.forward_ad

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
PER_OP_SETTINGS = settings(SETTINGS, max_examples=12)   # ~100 ops: keep each test near a second


def _pair(arr):
    return torch.tensor(arr), mt.tensor(arr)


def _np(t):
    return np.asarray(t.detach().tolist() if hasattr(t, "tolist") else t, dtype=np.float64)


def _close(ours, theirs, rtol=1e-6, atol=1e-8):
    assert (ours is None) == (theirs is None), (ours, theirs)
    if theirs is None:
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol)


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _tangents_of(fw, out):
    return [fw.unpack_dual(o).tangent if o.dtype.is_floating_point else None for o in _outputs(out)]


def _make(L, arr, dtype, transposed):
    """``arr`` as a tensor of ``dtype``; with ``transposed``, laid out column-major (same values,
    transposed strides), so ops and stored tangents see non-contiguous memory."""
    if transposed and arr.ndim == 2:
        return L.tensor(np.ascontiguousarray(arr.T), dtype=dtype).t()
    return L.tensor(arr, dtype=dtype)


def _run_both(fn, primals, tangents, dtype="float64", layout=0, rtol=1e-6):
    """fn(L, *duals) in torch and in minitorch_nn; returns (ours, theirs) lists of output tangents
    after checking the primal outputs agree. ``layout`` bit 0 transposes the primals' memory,
    bit 1 the tangents'."""
    res = []
    for L, fw in ((mt, fwAD), (torch, tfwAD)):
        dt = getattr(L, dtype)
        with fw.dual_level():
            duals = [fw.make_dual(_make(L, p, dt, layout & 1), _make(L, t, dt, layout & 2)) if t is not None
                     else _make(L, p, dt, layout & 1) for p, t in zip(primals, tangents)]
            out = fn(L, *duals)
            res.append((_outputs(out), _tangents_of(fw, out)))
    (ours_out, ours_t), (th_out, th_t) = res
    for a, b in zip(ours_out, th_out):
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=rtol * 1e-2)
    return ours_t, th_t


# ---------------------------------------------------------------------------------------------
# Per op
# ---------------------------------------------------------------------------------------------

def _pos(t):
    return t * t + 0.5


# name -> (fn(L, *xs), number of tensor inputs, whether inputs share one shape)
OPS = {
    # pointwise arithmetic (JVP formulas)
    "add": (lambda L, a, b: a + 2 * b, 2),
    "sub_alpha": (lambda L, a, b: L.sub(a, b, alpha=3), 2),
    "rsub": (lambda L, a: 2 - a, 1),
    "mul": (lambda L, a, b: a * b, 2),
    "div": (lambda L, a, b: a / _pos(b), 2),
    "neg_abs": (lambda L, a: -(a.abs()), 1),
    "reciprocal": (lambda L, a: _pos(a).reciprocal(), 1),
    "pow_scalar": (lambda L, a: a.pow(3), 1),
    "pow_tensor": (lambda L, a, b: _pos(a).pow(b), 2),
    "rpow": (lambda L, a: 2 ** a, 1),
    "maximum": (lambda L, a, b: L.maximum(a, b), 2),
    "minimum": (lambda L, a, b: L.minimum(a, b), 2),
    "lerp": (lambda L, a, b, c: L.lerp(a, b, c), 3),
    "addcmul": (lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), 3),
    "addcdiv": (lambda L, a, b, c: L.addcdiv(a, b, _pos(c), value=0.5), 3),
    "clamp": (lambda L, a: a.clamp(-0.5, 0.7), 1),
    "floor_frac": (lambda L, a: a.floor() + a.frac(), 1),
    # unary math, activations
    "exp": (lambda L, a: a.exp(), 1),
    "expm1_exp2": (lambda L, a: a.expm1() + a.exp2(), 1),
    "logs": (lambda L, a: _pos(a).log() + _pos(a).log2() + _pos(a).log10() + _pos(a).log1p(), 1),
    "sqrt_rsqrt": (lambda L, a: _pos(a).sqrt() + _pos(a).rsqrt(), 1),
    "trig": (lambda L, a: a.sin() + a.cos() + (a * 0.3).tan(), 1),
    "inverse_trig": (lambda L, a: (a * 0.3).asin() + (a * 0.3).acos() + a.atan(), 1),
    "atan2": (lambda L, a, b: L.atan2(a, b), 2),
    "hyperbolic": (lambda L, a: a.sinh() + a.cosh() + a.tanh(), 1),
    "sigmoid": (lambda L, a: a.sigmoid(), 1),
    "erfs": (lambda L, a: a.erf() + a.erfc() + (a * 0.3).erfinv(), 1),
    "relu": (lambda L, a: a.relu(), 1),
    "gelu": (lambda L, a: L.nn.functional.gelu(a), 1),
    "gelu_tanh": (lambda L, a: L.nn.functional.gelu(a, approximate="tanh"), 1),
    "silu": (lambda L, a: L.nn.functional.silu(a), 1),
    "softplus": (lambda L, a: L.nn.functional.softplus(a, beta=2.0), 1),
    "elu": (lambda L, a: L.nn.functional.elu(a), 1),
    "leaky_relu": (lambda L, a: L.nn.functional.leaky_relu(a, 0.1), 1),
    "hardtanh": (lambda L, a: L.nn.functional.hardtanh(a), 1),
    "where": (lambda L, a, b: L.where(a > 0, a, b), 2),
    "masked_fill": (lambda L, a: a.masked_fill(a > 0.5, 2.0), 1),
    # reductions, softmax
    "sum": (lambda L, a: a.sum(), 1),
    "sum_dim": (lambda L, a: a.sum(-1, keepdim=True), 1),
    "mean": (lambda L, a: a.mean(), 1),
    "mean_dim": (lambda L, a: a.mean(0), 1),
    "cumsum": (lambda L, a: a.cumsum(-1), 1),
    "logsumexp": (lambda L, a: L.logsumexp(a, -1), 1),
    "softmax": (lambda L, a: L.softmax(a, -1), 1),
    "log_softmax": (lambda L, a: L.log_softmax(a, 0), 1),
    # views, shape, joining, indexing
    "reshape": (lambda L, a: a.reshape(-1), 1),
    "permute_t": (lambda L, a: a.t().unsqueeze(0).permute(2, 0, 1), 1),
    "transpose_squeeze": (lambda L, a: a.unsqueeze(1).transpose(0, 2).squeeze(1), 1),
    "expand": (lambda L, a: a[:1].expand(3, -1), 1),
    "slice_select": (lambda L, a: a[1:, ::2] + a[0, 0], 1),
    "index": (lambda L, a: a[L.tensor([0, 1, 0])], 1),
    "index_select": (lambda L, a: a.index_select(1, L.tensor([1, 0])), 1),
    "gather": (lambda L, a: a.gather(1, L.tensor([[0, 1], [1, 1]])), 1),
    "masked_select": (lambda L, a: a.masked_select(a > 0), 1),
    "cat": (lambda L, a, b: L.cat([a, b], 0), 2),
    "stack": (lambda L, a, b: L.stack([a, b], 1), 2),
    "split": (lambda L, a: a.split(1, 0), 1),
    "unbind": (lambda L, a: a.unbind(1), 1),
    "flip_roll": (lambda L, a: a.flip(0).roll(1, 1), 1),
    "repeat": (lambda L, a: a.repeat(2, 1), 1),
    "pad": (lambda L, a: L.nn.functional.pad(a, (1, 2)), 1),
    "tril_triu": (lambda L, a: a.tril() + 2 * a.triu(1), 1),
    "diagonal": (lambda L, a: a.diagonal(), 1),
    "clone_to": (lambda L, a: a.clone().to(L.float32), 1),
    # matrix products
    "mm": (lambda L, a, b: a @ b.t(), 2),
    "mv_dot": (lambda L, a, b: a @ b[0] + a[0].dot(b[1]), 2),
    "addmm": (lambda L, a, b, c: L.addmm(a[:, :1], b, c.t(), beta=0.5, alpha=2), 3),
    "outer": (lambda L, a, b: L.outer(a[0], b[1]), 2),
    "linear": (lambda L, a, b, c: L.nn.functional.linear(a, b, c[:, 0]), 3),
    # no JVP formula: the double-vjp fallback
    "prod": (lambda L, a: a.prod(), 1),
    "var_std": (lambda L, a: L.cat([a.var(0), a.std(1)]), 1),
    "amax_max_dim": (lambda L, a: L.cat([a.amax(1), a.max(0).values]), 1),
    "sort_topk": (lambda L, a: a.sort(-1).values + a.topk(a.shape[-1], -1).values, 1),
    "cumprod": (lambda L, a: a.cumprod(1), 1),
    "norm": (lambda L, a: L.linalg.vector_norm(a), 1),
    "layer_norm": (lambda L, a, b, c: L.nn.functional.layer_norm(a, (a.shape[-1],), b[0], c[0]), 3),
    "mse_loss": (lambda L, a, b: L.nn.functional.mse_loss(a, b), 2),
    "bce_logits": (lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid()), 2),
    "l1_loss": (lambda L, a, b: L.nn.functional.l1_loss(a, b), 2),
    "linalg_square": (lambda L, a: L.cat([L.linalg.inv(_spd(L, a)).reshape(-1), L.linalg.det(_spd(L, a)).reshape(1),
                                          L.linalg.matrix_exp(a[:2, :2]).reshape(-1)]), 1),
    "solve": (lambda L, a, b: L.linalg.solve(_spd(L, a), b[:, :1] if a.shape[0] == b.shape[0] else b[:1].t()), 2),
    "eigh_svdvals": (lambda L, a: L.cat([L.linalg.eigvalsh(_spd(L, a)), L.linalg.svdvals(a)]), 1),
    "batch_norm": (lambda L, a, b: L.nn.functional.batch_norm(a, None, None, b[0, :a.shape[1]], None, training=True), 2),
    "group_norm": (lambda L, a: L.nn.functional.group_norm(a.reshape(1, -1, 1), 1), 1),
    # in-place ops (their tangent is written into the existing one)
    "inplace_arith": (lambda L, a, b: a.clone().mul_(b).add_(b, alpha=2).div_(_pos(b)), 2),
    "inplace_unary": (lambda L, a: a.clone().exp_().sigmoid_().tanh_(), 1),
    "inplace_view": (lambda L, a, b: _set_row(a.clone(), b), 2),
    "inplace_masked": (lambda L, a, b: a.clone().masked_fill_(b > 0, 0.5).clamp_(-0.3, 0.4), 2),
    "baddbmm": (lambda L, a, b, c: L.baddbmm(a[:, :1].unsqueeze(0), b.unsqueeze(0), c.t().unsqueeze(0), alpha=0.5), 3),
    "index_put_": (lambda L, a, b: a.clone().index_put_((L.tensor([1, 0]),), b[:2], accumulate=True), 2),
}


def _spd(L, a):
    n = a.shape[0]
    return a[:, :n] @ a[:, :n].t() + L.eye(n, dtype=a.dtype)


def _set_row(x, b):
    x[0] = b[1]         # copy_ into a view of x
    x[1:].mul_(b[:1])   # in place through a view
    return x

_shapes = st.sampled_from([(2, 2), (2, 3), (3, 2), (3, 3)])


@pytest.mark.parametrize("name", sorted(OPS))
@PER_OP_SETTINGS
@given(shape=_shapes, seed=st.integers(0, 2**16), dual_mask=st.integers(1, 7),
       dtype=st.sampled_from(["float64", "float32"]), layout=st.integers(0, 3))
def test_op_tangent_matches_torch(name, shape, seed, dual_mask, dtype, layout):
    fn, n = OPS[name]
    rng = np.random.default_rng(seed)
    if name in ("mm", "mv_dot"):
        shape = (shape[0], shape[0])   # b[0], b[1] need a square a
    primals = [rng.uniform(-1, 1, shape) for _ in range(n)]
    mask = [(dual_mask >> i) & 1 for i in range(n)]
    if not any(mask):
        mask[0] = 1
    tangents = [rng.uniform(-1, 1, shape) if m else None for m in mask]
    rtol = 1e-5 if dtype == "float64" else 1e-4   # float32: the two libraries round differently
    ours, theirs = _run_both(fn, primals, tangents, dtype, layout, rtol=rtol)
    for a, b in zip(ours, theirs):
        _close(a, b, rtol=rtol, atol=rtol * 1e-2)
        if a is not None and b is not None:
            assert a.dtype == getattr(mt, str(b.dtype).split(".")[-1])


def test_nn_layers_tangents_match_torch():
    rng = np.random.default_rng(0)
    x, xt = rng.uniform(-1, 1, (1, 2, 5, 5)), rng.uniform(-1, 1, (1, 2, 5, 5))
    w, wt = rng.uniform(-1, 1, (3, 2, 3, 3)), rng.uniform(-1, 1, (3, 2, 3, 3))
    b, bt = rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (3,))

    def net(L, x, w, b):
        F = L.nn.functional
        y = F.conv2d(x, w, b, padding=1)
        return F.max_pool2d(y, 2) .sum() + F.avg_pool2d(y, 2).sum() + F.log_softmax(y.reshape(1, -1), 1)[0, :4]

    ours, theirs = _run_both(net, [x, w, b], [xt, wt, bt])
    _close(ours[0], theirs[0])

    def loss(L, logits):
        return L.nn.functional.cross_entropy(logits, L.tensor([2, 0]))

    ours, theirs = _run_both(loss, [rng.uniform(-1, 1, (2, 3))], [rng.uniform(-1, 1, (2, 3))])
    _close(ours[0], theirs[0])


# ---------------------------------------------------------------------------------------------
# Random expressions: torch and finite differences
# ---------------------------------------------------------------------------------------------

UNARY = [
    lambda L, t: t.tanh(), lambda L, t: t.sin() * 2, lambda L, t: t.exp() / 3, lambda L, t: (t * t + 1).log(),
    lambda L, t: t.sigmoid(), lambda L, t: L.softmax(t, -1), lambda L, t: t.t().flip(0).t(),
    lambda L, t: t.cumsum(0), lambda L, t: t - t.mean(-1, keepdim=True), lambda L, t: (t * t + 0.1).sqrt(),
    # views and in-place ops inside the expression
    lambda L, t: L.cat([t[1:], t[:1]]), lambda L, t: t.clone().mul_(2).sub_(t), lambda L, t: _rows_inplace(t),
    lambda L, t: t.reshape(-1).flip(0).reshape(t.shape), lambda L, t: L.stack(t.unbind(1), 0),
]


def _rows_inplace(t):
    x = t.clone()
    x[0].mul_(t[1])       # in place through a view
    x[:, 1] = t[:, 2]     # copy_ into a strided view
    return x
BINARY = [
    lambda L, a, b: a + b, lambda L, a, b: a * b, lambda L, a, b: a - 0.5 * b, lambda L, a, b: a @ b / 2,
    lambda L, a, b: a / (b * b + 1), lambda L, a, b: L.maximum(a, b) + L.atan2(a, b),
]


@st.composite
def _programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)), draw(st.integers(0, 1)), draw(st.integers(0, 1))))
    return steps


def _run_program(L, steps, x, y):
    vals = [x, y]
    for step in steps:
        if step[0] == "u":
            vals.append(UNARY[step[1]](L, vals[-1 - step[2]]))
        else:
            vals.append(BINARY[step[1]](L, vals[-1 - step[2]], vals[-1 - step[3]]))
    return vals[-1]


@SETTINGS
@given(program=_programs(), seed=st.integers(0, 2**16))
def test_random_expressions_match_torch_and_finite_differences(program, seed):
    rng = np.random.default_rng(seed)
    n = 3
    x, y, xt, yt = (rng.uniform(-1, 1, (n, n)) for _ in range(4))
    ours, theirs = _run_both(lambda L, a, b: _run_program(L, program, a, b), [x, y], [xt, yt])
    _close(ours[0], theirs[0], rtol=1e-5, atol=1e-7)
    # central differences along the tangent direction (float64, so eps=1e-6 is accurate)
    eps = 1e-6
    plus = _run_program(mt, program, mt.tensor(x + eps * xt), mt.tensor(y + eps * yt))
    minus = _run_program(mt, program, mt.tensor(x - eps * xt), mt.tensor(y - eps * yt))
    fd = (_np(plus) - _np(minus)) / (2 * eps)
    np.testing.assert_allclose(_np(ours[0]), fd, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# The API: levels and errors
# ---------------------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type itself is what we compare)
        return type(e), str(e)
    return None


def _same_error(scenario):
    ours = _error(lambda: scenario(mt, fwAD))
    theirs = _error(lambda: scenario(torch, tfwAD))
    assert theirs is not None
    assert ours == theirs


ERRORS = {
    "no_level": lambda L, fw: fw.make_dual(L.ones(3), L.ones(3)),
    "nested": lambda L, fw: _in_level(fw, lambda: fw.enter_dual_level()),
    "nested_ctx": lambda L, fw: _in_level(fw, lambda: fw.dual_level().__enter__()),
    "exit_wrong_level": lambda L, fw: _in_level(fw, lambda: fw.exit_dual_level(level=3)),
    "exit_without_level": lambda L, fw: fw.exit_dual_level(),
    "bad_level_make": lambda L, fw: _in_level(fw, lambda: fw.make_dual(L.ones(3), L.ones(3), level=2)),
    "level_deleted": lambda L, fw: fw.make_dual(L.ones(3), L.ones(3), level=0),
    "bad_level_unpack": lambda L, fw: _in_level(
        fw, lambda: fw.unpack_dual(fw.make_dual(L.ones(3), L.ones(3)), level=4)),
    "shape": lambda L, fw: _in_level(fw, lambda: fw.make_dual(L.ones(2, 3), L.ones(3))),
    "int_primal": lambda L, fw: _in_level(fw, lambda: fw.make_dual(L.ones(3, dtype=L.int64), L.ones(3))),
    "int_tangent": lambda L, fw: _in_level(fw, lambda: fw.make_dual(L.ones(3), L.ones(3, dtype=L.int32))),
    "dual_primal": lambda L, fw: _in_level(
        fw, lambda: fw.make_dual(fw.make_dual(L.ones(3), L.ones(3)), L.ones(4))),
    "dual_tangent": lambda L, fw: _in_level(
        fw, lambda: fw.make_dual(L.ones(3), fw.make_dual(L.ones(4), L.ones(4)))),
}


def _in_level(fw, fn):
    with fw.dual_level():
        fn()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    _same_error(ERRORS[name])
    assert mt._dispatch.forward_ad_layer is None and fwAD._current_level == -1   # nothing left open


def test_levels_enter_exit_reuse_and_decorator():
    assert fwAD.enter_dual_level() == tfwAD.enter_dual_level() == 0
    x = fwAD.make_dual(mt.ones(2), mt.full([2], 3.0))
    fwAD.exit_dual_level()
    tfwAD.exit_dual_level()
    assert fwAD.unpack_dual(x).tangent is None           # tangents die with their level
    with fwAD.dual_level() as level:
        assert level == 0                                # the index is reused, as in torch
        assert fwAD.unpack_dual(x).tangent is None       # ...but old tangents do not come back
        assert mt._dispatch.forward_ad_layer is not None
    assert mt._dispatch.forward_ad_layer is None         # the dispatch chain is plain again

    @fwAD.dual_level()
    def jvp_sin(p, t):
        return fwAD.unpack_dual(fwAD.make_dual(p, t).sin()).tangent

    p = mt.tensor([0.1, 0.2])
    _close(jvp_sin(p, mt.ones(2)), torch.tensor([0.1, 0.2]).cos())


def test_unpack_outside_level_and_primal_identity():
    x = mt.tensor([1.0, 2.0])
    out = fwAD.unpack_dual(x)
    assert isinstance(out, fwAD.UnpackedDualTensor) and out.primal is x and out.tangent is None
    with fwAD.dual_level():
        t = mt.tensor([0.5, 0.25])
        d = fwAD.make_dual(x, t)
        p, tangent = fwAD.unpack_dual(d)
        assert tangent is t and p is not d and p._base is x and d._base is x
        assert fwAD.unpack_dual(p).tangent is None       # the primal carries no tangent
        assert fwAD.unpack_dual(d.detach()).tangent is None


def test_tangent_layout_like_torch():
    with fwAD.dual_level(), tfwAD.dual_level():
        for make in (lambda L: L.ones(4, 3).t(), lambda L: L.ones(3, 1).expand(3, 4), lambda L: L.ones(5, 4)[1:4],
                     lambda L: L.ones(3, 4)):
            ours_t, theirs_t = make(mt), make(torch)
            ours = fwAD.unpack_dual(fwAD.make_dual(mt.zeros(3, 4), ours_t)).tangent
            theirs = tfwAD.unpack_dual(tfwAD.make_dual(torch.zeros(3, 4), theirs_t)).tangent
            assert (ours is ours_t) == (theirs is theirs_t)
            assert ours.stride() == theirs.stride()


def test_tangent_dtype_kept_and_int_outputs_have_none():
    with fwAD.dual_level():
        d = fwAD.make_dual(mt.ones(3), mt.ones(3, dtype=mt.float64))
        assert fwAD.unpack_dual(d * 2).tangent.dtype == mt.float64
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.long()).tangent is None
        with mt.no_grad():   # forward AD does not depend on grad mode
            assert fwAD.unpack_dual(d * 2).tangent is not None


def test_op_without_derivative_raises_like_torch(monkeypatch):
    # An op with no derivative (native_dropout_backward, its derivative taken away here): PyTorch's
    # message for an op that has no forward AD at all. einsum has none either but is made of
    # other ops, which carry the tangent.
    monkeypatch.setattr(mt._ops.aten.native_dropout_backward.default, "derivative", None)
    with fwAD.dual_level():
        d = fwAD.make_dual(mt.ones(3), mt.ones(3))
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with "
                                                      "aten::native_dropout_backward that does not support it.$"):
            mt._ops.aten.native_dropout_backward.default(d, mt.ones(3, dtype=mt.bool), 2.0)
    ours, theirs = _run_both(lambda L, a, b: L.einsum("ij,kj->ik", a, b), [np.eye(2), np.ones((2, 2))],
                             [np.ones((2, 2)), np.eye(2)])
    _close(ours[0], theirs[0])


def test_fallback_without_double_backward_raises_like_torch(monkeypatch):
    # Pretend frac has no JVP formula and a reverse formula built on an op with no derivative
    # (native_dropout_backward, its derivative taken away): the double-vjp fallback cannot run, and the error is
    # PyTorch's for an op whose forward AD "has not been implemented yet" (its text for _ctc_loss).
    from minitorch_nn.autograd import derivatives_forward as dfw
    from minitorch_nn.autograd.recording import Derivative

    aten = mt._ops.aten
    monkeypatch.setattr(aten.native_dropout_backward.default, "derivative", None)
    monkeypatch.delitem(dfw.FORMULAS, aten.frac.default)
    monkeypatch.setattr(aten.frac.default, "derivative", Derivative(aten.frac.default, "FracBackward0", {
        "self": lambda grad, self: aten.native_dropout_backward.default(grad, self > 0, 2.0)}))
    with fwAD.dual_level():
        d = fwAD.make_dual(mt.ones(3), mt.ones(3))
        with pytest.raises(NotImplementedError) as ours:
            d.frac()
    with tfwAD.dual_level():
        with pytest.raises(NotImplementedError) as theirs:
            torch.nn.functional.ctc_loss(tfwAD.make_dual(torch.zeros(3, 1, 2), torch.ones(3, 1, 2)).log_softmax(2),
                                         torch.zeros(1, 1, dtype=torch.long), [3], [1])
    assert str(ours.value) == str(theirs.value).replace("_ctc_loss", "frac")


# ---------------------------------------------------------------------------------------------
# Views and in-place ops
# ---------------------------------------------------------------------------------------------

def _inplace_scenarios():
    def view_of_dual(L, fw, x, t):
        d = fw.make_dual(x, t).clone()
        v = d[1:]
        same_storage = fw.unpack_dual(v).tangent._base is fw.unpack_dual(d).tangent
        v.mul_(3)
        return fw.unpack_dual(d).tangent, same_storage

    def inplace_keeps_tangent_object(L, fw, x, t):
        c = fw.make_dual(x, t).clone()
        before = fw.unpack_dual(c).tangent
        c.exp_()
        c.mul_(2)
        return fw.unpack_dual(c).tangent, fw.unpack_dual(c).tangent is before

    def plain_self_dual_other(L, fw, x, t):
        a = L.zeros(3)
        a.add_(fw.make_dual(x, t))
        a.mul_(fw.make_dual(x, t))
        return fw.unpack_dual(a).tangent, True

    def view_of_plain_base(L, fw, x, t):
        b = L.zeros(2, 3)
        early = b[1]                    # made before the base has a tangent
        b[0].copy_(fw.make_dual(x, t))
        b[1] += fw.make_dual(x, t) * 2
        return fw.unpack_dual(b).tangent + 0 * fw.unpack_dual(early).tangent.sum(), \
            fw.unpack_dual(early).tangent._base is fw.unpack_dual(b).tangent

    def setitem_and_index_put(L, fw, x, t):
        b = L.ones(4, dtype=L.float64)
        b[L.tensor([0, 2])] = fw.make_dual(x, t)[:2]
        b[3] = fw.make_dual(x, t)[2]
        return fw.unpack_dual(b).tangent, True

    def base_updated_after_view(L, fw, x, t):
        r = L.zeros(2, 3)
        flat = r.view(6)
        r.mul_(fw.make_dual(x, t))
        r.add_(fw.make_dual(x, t).exp())
        return fw.unpack_dual(flat).tangent, True

    def detached_view_keeps_no_tangent(L, fw, x, t):
        b = L.zeros(3, dtype=L.float64)
        det = b.detach()
        b.add_(fw.make_dual(x, t))
        return fw.unpack_dual(b).tangent, fw.unpack_dual(det).tangent is None

    def random_fill_zeroes_tangent(L, fw, x, t):
        d = fw.make_dual(x, t).clone()
        d[:2].uniform_()
        return fw.unpack_dual(d).tangent, True

    return {f.__name__: f for f in (view_of_dual, inplace_keeps_tangent_object, plain_self_dual_other,
                                    view_of_plain_base, setitem_and_index_put, base_updated_after_view,
                                    random_fill_zeroes_tangent, detached_view_keeps_no_tangent)}


INPLACE = _inplace_scenarios()


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_views_and_inplace_like_torch(name):
    rng = np.random.default_rng(1)
    x, t = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    with fwAD.dual_level():
        ours, ours_flag = INPLACE[name](mt, fwAD, mt.tensor(x), mt.tensor(t))
        ours = _np(ours)
    with tfwAD.dual_level():
        theirs, their_flag = INPLACE[name](torch, tfwAD, torch.tensor(x), torch.tensor(t))
        theirs = _np(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    assert ours_flag == their_flag


# ---------------------------------------------------------------------------------------------
# Interplay with reverse mode
# ---------------------------------------------------------------------------------------------

def test_backward_through_dual_computation_like_torch():
    rng = np.random.default_rng(2)
    x, t, w = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3, 3))
    grads = []
    for L, fw in ((mt, fwAD), (torch, tfwAD)):
        xr = L.tensor(x, requires_grad=True)
        tr = L.tensor(t, requires_grad=True)
        wr = L.tensor(w, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(xr, tr)
            out = (d @ wr).tanh() * d.sin() + d.pow(2).sum(0) + d.prod(0) * d.var(1, keepdim=True)  # prod, var: fallback
            p, tangent = fw.unpack_dual(out)
            assert p.requires_grad and tangent.requires_grad
            (p.sum() + (tangent * tangent).sum()).backward()
        grads.append([xr.grad, tr.grad, wr.grad])
    for a, b in zip(*grads):
        _close(a, b, rtol=1e-6, atol=1e-8)


def test_functional_jvp_agrees_with_forward_ad():
    rng = np.random.default_rng(3)
    x, v = mt.tensor(rng.uniform(-1, 1, (3,))), mt.tensor(rng.uniform(-1, 1, (3,)))

    def f(a):
        return (a.exp() * a.sin()).cumsum(0)

    _, jv = mt.autograd.functional.jvp(f, x, v)
    with fwAD.dual_level():
        fw = fwAD.unpack_dual(f(fwAD.make_dual(x, v))).tangent
    _close(jv, fw)
    _close(fw, torch.func.jvp(lambda a: (a.exp() * a.sin()).cumsum(0), (torch.tensor(_np(x)),),
                              (torch.tensor(_np(v)),))[1])


def _custom_functions(L):
    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.x, ctx.k = x, k
            return x.pow(3) * k, (x > 0).sum()

        @staticmethod
        def backward(ctx, g, _):
            return 3 * ctx.x.pow(2) * ctx.k * g, None

        @staticmethod
        def jvp(ctx, x_t, k_t):
            assert k_t is None                  # non-tensor inputs get None
            return 3 * ctx.x.pow(2) * ctx.k * x_t, None

    class NoJvp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Cube, NoJvp


def test_custom_function_jvp_like_torch():
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    results = []
    for L, fw in ((mt, fwAD), (torch, tfwAD)):
        Cube, NoJvp = _custom_functions(L)
        with fw.dual_level():
            d = fw.make_dual(L.tensor(x), L.tensor(t))
            out, count = Cube.apply(d, 2.0)
            results.append((fw.unpack_dual(out).tangent, fw.unpack_dual(count).tangent,
                            _error(lambda f=NoJvp, d=d: f.apply(d)), NoJvp.apply(L.tensor(x)).sum().item()))
    (ours_t, ours_c, ours_err, ours_plain), (th_t, th_c, th_err, th_plain) = results
    _close(ours_t, th_t)
    assert ours_c is None and th_c is None
    assert ours_err == th_err and th_err is not None     # no jvp: PyTorch's NotImplementedError
    assert ours_plain == th_plain                         # without a tangent, jvp is not needed


def test_repr_shows_tangent_like_torch():
    reprs = []
    for L, fw in ((mt, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            scalar = fw.make_dual(L.tensor(1.5), L.tensor(0.25))
            vec = fw.make_dual(L.tensor([1.0, 2.0]), L.tensor([0.5, -1.0], dtype=L.float64))
            reprs.append([repr(scalar), repr(vec * 2), repr(vec.argmax())])
        reprs[-1].append(repr(vec))      # after the level: no tangent
    assert reprs[0] == reprs[1]


def test_gradcheck_check_forward_ad_like_torch():
    x = np.array([[0.3, -0.7, 1.1], [0.2, 0.5, -0.4]])

    def f(L):
        return lambda a: (L.softmax(a, 1) * a.exp()).cumsum(0).prod(1)   # formulas and the fallback

    for L in (mt, torch):
        a = L.tensor(x, requires_grad=True)
        assert L.autograd.gradcheck(f(L), (a,), check_forward_ad=True)

    messages = []
    for L in (mt, torch):
        class WrongJvp(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 3

        a = L.tensor(x[0], requires_grad=True)
        assert L.autograd.gradcheck(WrongJvp.apply, (a,))     # reverse mode alone is right
        assert not L.autograd.gradcheck(WrongJvp.apply, (a,), check_forward_ad=True, check_backward_ad=False,
                                        raise_exception=False)
        with pytest.raises(Exception) as info:
            L.autograd.gradcheck(WrongJvp.apply, (a,), check_forward_ad=True)
        messages.append((type(info.value).__name__, str(info.value).split("numerical")[0]))
    assert messages[0] == messages[1]

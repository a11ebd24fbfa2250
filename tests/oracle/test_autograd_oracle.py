"""Oracle: gradients, graph structure and autograd errors against PyTorch 2.13.

The main test draws random *programs* with hypothesis: a few float64 leaves of broadcastable
shapes, then a sequence of steps (pointwise ops, broadcasting binary ops, reductions with
dim/keepdim, views, indexing, matmul, in-place ops on intermediates and on views of them). Each
step is run in torch as it is drawn (steps torch rejects are dropped), then the whole program is
replayed in minitorch_nn. We compare every intermediate's ``grad_fn`` name, the leaves' gradients,
and second-order gradients through ``create_graph=True``.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _weights(L, t):
    # Fixed, asymmetric weights so that no gradient cancels by symmetry.
    n = t.numel()
    return (L.arange(n, dtype=L.float64) * 0.37 + 0.1).sin().reshape(tuple(t.shape))


def _softmax(L, t):
    return L.softmax(t, -1)


def _log_softmax(L, t):
    return L.log_softmax(t, -1)


UNARY = {
    "tanh": lambda L, t: t.tanh(),
    "sin": lambda L, t: t.sin(),
    "sigmoid": lambda L, t: t.sigmoid(),
    "square": lambda L, t: t * t,
    "exp_tanh": lambda L, t: t.tanh().exp(),
    "neg": lambda L, t: -t,
    "relu": lambda L, t: t.relu(),
    "abs": lambda L, t: t.abs(),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "sqrt": lambda L, t: (t * t + 1).sqrt(),
    "log": lambda L, t: (t * t + 1).log(),
    "pow": lambda L, t: t.pow(3),
    "clamp": lambda L, t: t.clamp(-0.5, 0.7),
    "scalar_ops": lambda L, t: (2 - t) / 3 + 1.5 * t,
    "clone": lambda L, t: t.clone(),
    "reciprocal": lambda L, t: 1 / (t * t + 1),
}

BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (b * b + 1),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "where": lambda L, a, b: L.where(a > b, a, b),
    "atan2": lambda L, a, b: L.atan2(a, b * b + 1),
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=0.5),
}


def _dim(t, k):
    return k % t.dim() if t.dim() else 0


REDUCE = {
    "sum_all": lambda L, t, k, keep: t.sum(),
    "sum_dim": lambda L, t, k, keep: t.sum(_dim(t, k), keepdim=keep),
    "mean_dim": lambda L, t, k, keep: t.mean(_dim(t, k), keepdim=keep),
    "amax": lambda L, t, k, keep: t.amax(_dim(t, k), keepdim=keep),
    "max_dim": lambda L, t, k, keep: t.max(_dim(t, k), keepdim=keep)[0],
    "logsumexp": lambda L, t, k, keep: t.logsumexp(_dim(t, k), keepdim=keep),
    "norm": lambda L, t, k, keep: (t * t + 1).norm(dim=_dim(t, k), keepdim=keep),
    "var": lambda L, t, k, keep: t.var(_dim(t, k), keepdim=keep, correction=0),
    "prod": lambda L, t, k, keep: (t.tanh() + 2).prod(_dim(t, k), keepdim=keep),
}

VIEW = {
    "transpose": lambda L, t, k: t.transpose(0, -1),
    "unsqueeze": lambda L, t, k: t.unsqueeze(k % (t.dim() + 1)),
    "flatten": lambda L, t, k: t.reshape(-1),
    "expand": lambda L, t, k: t.unsqueeze(0).expand(2, *t.shape),
    "slice": lambda L, t, k: t[..., k % 2::2],
    "select": lambda L, t, k: t[k % t.shape[0]],
    "flip": lambda L, t, k: t.flip(0),
    "permute": lambda L, t, k: t.permute(*reversed(range(t.dim()))),
    "squeeze": lambda L, t, k: t.squeeze(),
    "narrow": lambda L, t, k: t.narrow(-1, 0, max(t.shape[-1] - 1, 1)),
    "t_matmul": lambda L, t, k: t @ t.transpose(-1, -2),
    "cat": lambda L, t, k: L.cat([t, t * 2], _dim(t, k)),
    "stack": lambda L, t, k: L.stack([t, -t], _dim(t, k)),
    "index": lambda L, t, k: t[L.tensor([k % t.shape[0], 0, k % t.shape[0]])],
    "gather": lambda L, t, k: t.gather(-1, L.zeros(t.shape, dtype=L.int64)),
    "index_select": lambda L, t, k: t.index_select(0, L.tensor([0, k % t.shape[0]])),
    "masked_fill": lambda L, t, k: t.masked_fill(t > 0.3, 0.5),
    "split": lambda L, t, k: t.split(1, -1)[k % t.shape[-1]],
    "unbind": lambda L, t, k: t.unbind(0)[k % t.shape[0]],
    "cumsum": lambda L, t, k: t.cumsum(_dim(t, k)),
    "repeat": lambda L, t, k: t.repeat(*([2] + [1] * (t.dim() - 1))),
    "double_to": lambda L, t, k: t.to(L.float32).to(L.float64),
    "chunk": lambda L, t, k: t.chunk(2, -1)[0],
    "movedim": lambda L, t, k: t.movedim(0, -1),
    "diagonal": lambda L, t, k: t.diagonal(0, 0, -1),
    "expand_as": lambda L, t, k: t[..., :1].expand_as(t),
    "roll": lambda L, t, k: t.roll(1, 0),
    "tril": lambda L, t, k: t.tril(),
}


def _inplace_mul(L, t, b):
    u = t.clone()
    u.mul_(b)
    return u


def _inplace_add_view(L, t, b):
    u = t * 1
    u[..., :1].mul_(2)
    u[0] += b.sum()
    return u


def _inplace_setitem(L, t, b):
    u = t.clone()
    u[0] = b.sum()
    u[L.tensor([0])] = 3.0
    return u


def _inplace_chain(L, t, b):
    u = t.tanh()
    u.add_(b).exp_()
    return u


def _inplace_pointwise(L, t, b):
    u = t * 1
    u.sigmoid_()
    u.sub_(b, alpha=0.5).div_(b * b + 1)
    u.clamp_(-0.8, 0.9)
    return u


def _inplace_slices(L, t, b):
    u = t.clone()
    u[..., :1].zero_()
    u[-1:].copy_(b[-1:] * 3)
    u.masked_fill_(u > 0.7, 0.25)
    return u


def _inplace_index_put(L, t, b):
    u = t.clone()
    u.index_put_((L.tensor([0, 0]),), b[:1].sum(0) * 2, accumulate=True)
    u[0].fill_(b.mean())
    return u


def _inplace_stale_views(L, t, b):
    u = t * 1
    first, rest = u[:1], u[-1:]
    u.mul_(b.tanh() + 2)          # other views of u must see this change
    first.add_(1)
    return (first * 2 + rest).expand_as(u) + u


INPLACE = {"stale_views": _inplace_stale_views, "mul_": _inplace_mul, "view_mul_": _inplace_add_view, "setitem": _inplace_setitem, "chain": _inplace_chain,
           "pointwise_": _inplace_pointwise, "slices_": _inplace_slices, "index_put_": _inplace_index_put}


def _leaf_shapes():
    dim = st.integers(1, 3)
    return st.lists(dim, min_size=1, max_size=3).map(tuple)


def _draw_program(data):
    """Leaves, then steps, each checked by running it in torch as it is drawn."""
    n_leaves = data.draw(st.integers(1, 3), label="n_leaves")
    base = data.draw(_leaf_shapes(), label="base_shape")
    shapes = []
    for _ in range(n_leaves):
        # a suffix of base with some dims set to 1: broadcastable against base
        cut = data.draw(st.integers(0, len(base) - 1))
        shape = tuple(1 if data.draw(st.booleans()) else s for s in base[cut:])
        shapes.append(shape)
    seed = data.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    values = list(leaves)
    program = []
    n_steps = data.draw(st.integers(1, 7), label="n_steps")
    for _ in range(n_steps):
        kind = data.draw(st.sampled_from(["unary", "binary", "reduce", "view", "inplace"]))
        i = data.draw(st.integers(0, len(values) - 1))
        j = data.draw(st.integers(0, len(values) - 1))
        k = data.draw(st.integers(0, 5))
        keep = data.draw(st.booleans())
        table = {"unary": UNARY, "binary": BINARY, "reduce": REDUCE, "view": VIEW, "inplace": INPLACE}[kind]
        name = data.draw(st.sampled_from(sorted(table)))
        step = (kind, name, i, j, k, keep)
        try:
            out = _run_step(torch, values, step)
        except (RuntimeError, IndexError, ValueError):
            continue
        if out.numel() == 0 or out.dim() == 0 and kind in ("view", "inplace"):
            continue
        values.append(out)
        program.append(step)
    return arrays, program


def _run_step(L, values, step):
    kind, name, i, j, k, keep = step
    t = values[i]
    if kind == "unary":
        return UNARY[name](L, t)
    if kind == "binary":
        return BINARY[name](L, t, values[j])
    if kind == "reduce":
        return REDUCE[name](L, t, k, keep)
    if kind == "view":
        if t.dim() == 0:
            raise IndexError("needs a dim")
        return VIEW[name](L, t, k)
    b = values[j]
    if kind == "inplace" and t.dim() == 0:
        raise IndexError("needs a dim")
    # Only broadcast b *into* t's shape, as in-place ops require.
    if tuple(np.broadcast_shapes(tuple(t.shape), tuple(b.shape))) != tuple(t.shape):
        raise RuntimeError("would change shape")
    return INPLACE[name](L, t, b)


def _replay(L, arrays, program, create_graph=False):
    leaves = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    values = list(leaves)
    for step in program:
        values.append(_run_step(L, values, step))
    loss = sum((v * _weights(L, v)).sum() for v in values[len(leaves):] if v.requires_grad) if program else None
    return leaves, values, loss


def _np(t):
    return None if t is None else np.array(t.detach().numpy(force=True))


@SETTINGS
@given(st.data())
def test_random_programs_match_torch(data):
    arrays, program = _draw_program(data)
    if not program:
        return
    tl, tv, tloss = _replay(torch, arrays, program)
    ml, mv, mloss = _replay(mt, arrays, program)
    for step, a, b in zip(program, tv[len(tl):], mv[len(ml):]):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-7, atol=1e-9, err_msg=str(step))
        ta = type(a.grad_fn).__name__ if a.grad_fn is not None else None
        mb = type(b.grad_fn).__name__ if b.grad_fn is not None else None
        # torch reshapes a viewable non-contiguous tensor with _reshape_alias; minitorch_nn's
        # reshape (in _functions/shape.py) uses view for every viewable tensor.
        ta = "ViewBackward0" if ta == "ReshapeAliasBackward0" else ta
        assert (mb, b.requires_grad) == (ta, a.requires_grad), step
    if not isinstance(tloss, torch.Tensor) or not tloss.requires_grad:
        return
    try:
        tg = torch.autograd.grad(tloss, tl, create_graph=True, allow_unused=True)
    except RuntimeError as e:   # e.g. an in-place op overwrote a saved tensor: same error expected
        with pytest.raises(RuntimeError) as info:
            mt.autograd.grad(mloss, ml, create_graph=True, allow_unused=True)
        assert str(info.value) == str(e)
        return
    mg = mt.autograd.grad(mloss, ml, create_graph=True, allow_unused=True)
    for a, b in zip(tg, mg):
        if a is None:
            assert b is None
            continue
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6, atol=1e-9, err_msg=str(program))
    # Second order: differentiate a weighted sum of the first-order gradients.
    _compare_second_order(tl, tg, ml, mg, str(program))


def _second_order(L, leaves, grads):
    """Gradients of a weighted sum of first-order gradients (None where nothing depends on a leaf)."""
    graded = [g for g in grads if g is not None and g.requires_grad]
    if not graded:
        return [None] * len(leaves)
    total = sum((g * _weights(L, g)).sum() for g in graded)
    return L.autograd.grad(total, leaves, allow_unused=True)


def _compare_second_order(tl, tg, ml, mg, msg):
    # A path whose second derivative is exactly zero may be kept by one library and pruned by
    # the other (torch's relu/hardtanh backward ops take their input; our formulas mask with it):
    # None on one side must then be all zeros on the other.
    for a, b in zip(_second_order(torch, tl, tg), _second_order(mt, ml, mg)):
        if a is None or b is None:
            other = a if b is None else b
            assert other is None or not np.any(_np(other)), msg
            continue
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-5, atol=1e-8, err_msg=msg)


# ---------------------------------------------------------------------------------------------
# Single ops with their own shapes: linear algebra, nn ops, higher order
# ---------------------------------------------------------------------------------------------


def _la(L, name):
    if L is torch:
        return {"solve": torch.linalg.solve, "matrix_exp": torch.linalg.matrix_exp, "qr": torch.linalg.qr,
                "inv": torch.linalg.inv, "det": torch.linalg.det, "eigh": torch.linalg.eigh,
                "svdvals": torch.linalg.svdvals, "svd": torch.linalg.svd}[name]
    a = mt.ops.aten
    return {"solve": a.linalg_solve.default, "matrix_exp": a.linalg_matrix_exp.default, "qr": a.linalg_qr.default,
            "inv": a.linalg_inv.default, "det": a.linalg_det.default, "eigh": a.linalg_eigh.default,
            "svdvals": a.linalg_svdvals.default, "svd": a.linalg_svd.default}[name]


def _well_conditioned(L, a):
    return a + 4 * L.eye(a.shape[-1], dtype=L.float64)


def _qr_sum(L, a):
    q, r = _la(L, "qr")(a)
    return (q * _weights(L, q)).sum() + (r * _weights(L, r)).sum()


SINGLE = {
    "mm": (lambda L, a, b: a @ b, [(2, 3), (3, 4)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "matmul_broadcast": (lambda L, a, b: a @ b, [(2, 2, 3), (3, 4)]),
    "mv": (lambda L, a, b: a @ b, [(2, 3), (3,)]),
    "dot": (lambda L, a, b: a @ b, [(3,), (3,)]),
    "addmm": (lambda L, a, b, c: L.addmm(a, b, c, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    "baddbmm": (lambda L, a, b, c: L.baddbmm(a, b, c, beta=0.5, alpha=2), [(1, 4), (2, 2, 3), (2, 3, 4)]),
    "outer": (lambda L, a, b: L.outer(a, b), [(3,), (2,)]),
    "solve": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(3, 3), (3, 2)]),
    "solve_vector": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(3, 3), (3,)]),
    "solve_batched": (lambda L, a, b: _la(L, "solve")(_well_conditioned(L, a), b), [(2, 3, 3), (2, 3, 2)]),
    "matrix_exp": (lambda L, a: _la(L, "matrix_exp")(a), [(3, 3)]),
    "qr": (_qr_sum, [(4, 3)]),
    "qr_square": (_qr_sum, [(3, 3)]),
    "inv": (lambda L, a: _la(L, "inv")(_well_conditioned(L, a)), [(3, 3)]),
    "det": (lambda L, a: _la(L, "det")(a), [(3, 3)]),
    "softmax_dim0": (lambda L, a: L.softmax(a, 0), [(3, 4)]),
    "std": (lambda L, a: a.std(1), [(3, 4)]),
    "var_mean": (lambda L, a: L.var_mean(a, 1)[0] + L.var_mean(a, 1)[1], [(3, 4)]),
    "sort": (lambda L, a: a.sort(1)[0], [(3, 4)]),
    "topk": (lambda L, a: a.topk(2, 1)[0], [(3, 4)]),
    "diagonal": (lambda L, a: a.diagonal(1), [(3, 4)]),
    "diag_embed": (lambda L, a: L.diag_embed(a), [(2, 3)]),
    "triu": (lambda L, a: a.triu(1), [(3, 4)]),
    "lerp": (lambda L, a, b, c: L.lerp(a, b, c), [(3,), (3,), (3,)]),
    "addcmul": (lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [(3,), (2, 3), (3,)]),
    "addcdiv": (lambda L, a, b, c: L.addcdiv(a, b, c * c + 1, value=0.5), [(3,), (2, 3), (3,)]),
    "erf_atan": (lambda L, a: a.erf() + a.atan() + a.sinh() + a.cosh(), [(5,)]),
    "expm1_log1p": (lambda L, a: a.expm1() + (a * a).log1p() + a.exp2(), [(5,)]),
    "gelu_silu": (lambda L, a: L.ops.aten.gelu.default(a) + L.ops.aten.silu.default(a), [(5,)]),
    "gelu_tanh": (lambda L, a: L.ops.aten.gelu.default(a, approximate="tanh"), [(5,)]),
    "leaky_elu": (lambda L, a: L.ops.aten.leaky_relu.default(a, 0.1) + L.ops.aten.elu.default(a), [(6,)]),
    "softplus": (lambda L, a: L.ops.aten.softplus.default(a, 2, 1), [(6,)]),
    "hardtanh": (lambda L, a: L.ops.aten.hardtanh.default(a, -0.5, 0.5), [(6,)]),
    "pow_tensor": (lambda L, a, b: (a * a + 0.5).pow(b), [(4,), (4,)]),
    "rpow": (lambda L, a: 2 ** a, [(4,)]),
    "min_all": (lambda L, a: a.min() + a.max(), [(4, 3)]),
    "index_put": (lambda L, a, b: L.ops.aten.index_put.default(a, [L.tensor([0, 2])], b, False), [(3, 4), (4,)]),
    "index_put_acc": (lambda L, a, b: L.ops.aten.index_put.default(a, [L.tensor([0, 0])], b, True), [(3, 4), (4,)]),
    "scatter": (lambda L, a, b: a.scatter(1, L.tensor([[0, 2], [1, 3]]), b), [(2, 4), (2, 2)]),
    "scatter_add": (lambda L, a, b: a.scatter_add(1, L.tensor([[0, 0], [1, 3]]), b), [(2, 4), (2, 2)]),
    "index_add": (lambda L, a, b: a.index_add(0, L.tensor([1, 1]), b, alpha=2), [(3, 4), (2, 4)]),
    "masked_select": (lambda L, a: a.masked_select(a > 0), [(3, 4)]),
    "roll_pad": (lambda L, a: L.ops.aten.constant_pad_nd.default(a.roll(1, 0), [1, 2]), [(3, 4)]),
    "mse": (lambda L, a, b: L.ops.aten.mse_loss.default(a, b), [(3, 4), (3, 4)]),
    "bce_logits": (lambda L, a, b: L.ops.aten.binary_cross_entropy_with_logits.default(a, b.sigmoid()), [(3, 4), (3, 4)]),
    "as_strided": (lambda L, a: a.as_strided((2, 2), (1, 3), 1), [(3, 4)]),
    "to_float32": (lambda L, a: a.float().double() * 2, [(3,)]),
    "cumprod": (lambda L, a: (a.tanh() + 2).cumprod(1), [(3, 4)]),
    "unfold": (lambda L, a: a.unfold(1, 3, 2), [(2, 7)]),
    "eigh": (lambda L, a: _eigh(L, a), [(3, 3)]),
    "svdvals": (lambda L, a: _la(L, "svdvals")(a), [(4, 3)]),
    "svd_values_only": (lambda L, a: _la(L, "svd")(a, full_matrices=False)[1], [(3, 4)]),
    "svd_tall": (lambda L, a: _svd_invariant(L, a, False), [(4, 3)]),
    "svd_wide": (lambda L, a: _svd_invariant(L, a, False), [(3, 5)]),
    "svd_batched": (lambda L, a: _svd_invariant(L, a, False), [(2, 3, 3)]),
    "svd_full": (lambda L, a: _svd_invariant(L, a, True), [(4, 3)]),
}


def _svd_invariant(L, a, full):
    # Singular vectors are defined up to sign: squares do not depend on it.
    u, s, vh = _la(L, "svd")(a, full_matrices=full)
    return L.cat([(u * u).reshape(-1), (vh * vh).reshape(-1), s.reshape(-1)])


def _eigh(L, a):
    lam, v = _la(L, "eigh")(a + a.transpose(-1, -2))
    v = v * v[..., :1, :].sign()     # eigenvectors are defined up to sign: fix it
    return v + 0.3 * lam


def _grads(L, fn, arrays, create_graph=False):
    xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    out = fn(L, *xs)
    loss = (out * _weights(L, out)).sum()
    grads = (L.autograd.grad(loss, xs, create_graph=create_graph, allow_unused=True))
    return xs, out, grads


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_op_gradients_and_second_order(name):
    fn, shapes = SINGLE[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    arrays = [rng.standard_normal(s) for s in shapes]
    txs, tout, tg = _grads(torch, fn, arrays, create_graph=True)
    mxs, mout, mg = _grads(mt, fn, arrays, create_graph=True)
    np.testing.assert_allclose(_np(mout), _np(tout), rtol=1e-7, atol=1e-9)
    assert type(mout.grad_fn).__name__ == type(tout.grad_fn).__name__ or name in _DECOMPOSED_IN_TORCH
    for a, b in zip(tg, mg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6, atol=1e-9)
    if name in _NO_SECOND_ORDER:
        return
    _compare_second_order(txs, tg, mxs, mg, name)


# torch implements these as compositions, so the last node has another name.
_DECOMPOSED_IN_TORCH = {"outer", "matmul_broadcast", "gelu_silu", "leaky_elu", "var_mean", "min_all", "mse",
                        "bce_logits", "roll_pad", "to_float32", "rpow", "lerp", "masked_select", "erf_atan",
                        "expm1_log1p", "solve", "solve_vector", "solve_batched", "inv", "qr", "qr_square", "eigh",
                        "svd_values_only", "svd_tall", "svd_wide", "svd_batched", "svd_full"}
# Ops whose second derivative is not compared (none at the moment).
_NO_SECOND_ORDER: set = set()   # every op here is differentiated twice, like torch


# ---------------------------------------------------------------------------------------------
# Graph structure, names, errors
# ---------------------------------------------------------------------------------------------


def _structure(fn, depth=3):
    """(name, [children...]) of a node, down to ``depth``."""
    if fn is None or depth == 0:
        return None
    return (fn.name(), [(_structure(c, depth - 1), nr) for c, nr in fn.next_functions])


GRAPHS = {
    "add_scalar": lambda L, x, y: x + 1,
    "mul_both": lambda L, x, y: x * y,
    "mm": lambda L, x, y: x @ y.t(),
    "sum_view": lambda L, x, y: x.view(-1).sum(),
    "expand": lambda L, x, y: x.expand(2, 2, 3) * 2,
    "inplace": lambda L, x, y: (x * 1).add_(y),
    "setitem": lambda L, x, y: _setitem(L, x, y),
    "view_inplace": lambda L, x, y: _view_inplace(L, x, y),
    "cat": lambda L, x, y: L.cat([x, y.detach()]),
    "max_dim": lambda L, x, y: x.max(1)[0],
    "getitem": lambda L, x, y: x[0, 1:],
    "copy_": lambda L, x, y: x.clone().copy_(y),
}


def _setitem(L, x, y):
    z = x.clone()
    z[0] = 5
    return z


def _view_inplace(L, x, y):
    z = x.clone()
    z[1:].mul_(y[1:])
    return z


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_structure_matches_torch(name):
    results = []
    for L in (torch, mt):
        x = L.ones(2, 3, requires_grad=True)
        y = L.ones(2, 3, requires_grad=True)
        out = GRAPHS[name](L, x, y)
        results.append((_structure(out.grad_fn), out.requires_grad, out.is_leaf, out.output_nr))
    assert results[1] == results[0]


def _error(fn, L):
    try:
        fn(L)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _modified_saved_output(L):
    x = L.randn(3, requires_grad=True)
    y = (x * 2).exp()
    with L.no_grad():
        y.add_(1)
    y.sum().backward()


def _modified_saved_leaf(L):
    x = L.randn(2, 3, requires_grad=True)
    y = x * x
    with L.no_grad():
        x.mul_(2)
    y.sum().backward()


def _modified_after_rebase(L):
    x = L.randn(2, 3, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


def _backward_twice(L):
    x = L.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _saved_after_free(L):
    x = L.randn(3, requires_grad=True)
    y = x * x
    y.sum().backward()
    return y.grad_fn._saved_self


def _grad_unused(L):
    x = L.randn(3, requires_grad=True)
    L.autograd.grad((x * 2).sum(), [x, L.randn(2, requires_grad=True)])


def _grad_no_requires(L):
    x = L.randn(3, requires_grad=True)
    L.autograd.grad((x * 2).sum(), [L.randn(2)])


def _shape_mismatch(L):
    x = L.randn(3, requires_grad=True)
    (x * 2).backward(L.ones(2))


def _function_wrong_count(L):
    class F(L.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = L.randn(2, requires_grad=True)
    F.apply(x, 2, L.randn(2)).sum().backward()


def _requires_grad_int(L):
    L.tensor([1, 2]).requires_grad_()


def _non_leaf_requires_grad_false(L):
    x = L.randn(2, requires_grad=True)
    (x * 2).requires_grad_(False)


def _hook_no_grad(L):
    L.randn(2).register_hook(lambda g: g)


def _retain_no_grad(L):
    L.randn(2).retain_grad()


def _post_hook_non_leaf(L):
    x = L.randn(2, requires_grad=True)
    (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def _no_grad_view_inplace(L):
    y = L.randn(3, requires_grad=True) * 1
    with L.no_grad():
        v = y[:2]
    v.mul_(2)


class _AddOne:
    """An in-place custom Function (mark_dirty), built for either library."""

    @staticmethod
    def make(L):
        class AddOne(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return AddOne


def _mark_dirty_leaf(L):
    _AddOne.make(L).apply(L.randn(2, requires_grad=True))


def _mark_dirty_outcome(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = _AddOne.make(L).apply(y)
    (z * 3).sum().backward()
    return z is y, type(y.grad_fn).__name__, y._version, x.grad.tolist()


def test_function_mark_dirty_matches_torch():
    assert _mark_dirty_outcome(mt) == _mark_dirty_outcome(torch)


def _scalar_saved_backward_twice(L):
    a = L.randn(2, requires_grad=True)
    o = (a * 2).sum()     # the 2 is saved as a wrapped 0-d tensor, freed by the first backward
    o.backward()
    o.backward()


def _hook_capture_order(L):
    """What autograd.grad captures when the tensor has hooks (PyTorch's ordering rules)."""
    out = []
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum()
    y.register_hook(lambda g: g + 1)
    out.append([g.tolist() for g in L.autograd.grad(z, [y, x], retain_graph=True)])
    out.append([g.tolist() for g in L.autograd.grad(z, [y], retain_graph=True)])
    z.backward(inputs=[y])
    out.append((y.grad.tolist(), x.grad))
    x.register_hook(lambda g: g * 100)
    out.append(L.autograd.grad((x * 3).sum(), x)[0].tolist())
    return out


def test_grad_capture_and_tensor_hook_order_matches_torch():
    assert _hook_capture_order(mt) == _hook_capture_order(torch)


def _save_non_tensor(L):
    class F(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g

    F.apply(L.randn(2, requires_grad=True))


ERRORS = {
    "save_non_tensor": _save_non_tensor,
    "scalar_saved_backward_twice": _scalar_saved_backward_twice,
    "mark_dirty_leaf": _mark_dirty_leaf,
    "no_grad_view_inplace": _no_grad_view_inplace,
    "leaf_inplace": lambda L: L.randn(3, requires_grad=True).add_(1),
    "view_of_leaf_inplace": lambda L: L.randn(3, requires_grad=True)[0].add_(1),
    "non_scalar": lambda L: (L.randn(3, requires_grad=True) * 2).backward(),
    "no_grad_fn": lambda L: L.randn(2).backward(),
    "backward_twice": _backward_twice,
    "saved_after_free": _saved_after_free,
    "modified_saved_output": _modified_saved_output,
    "modified_saved_leaf": _modified_saved_leaf,
    "modified_after_rebase": _modified_after_rebase,
    "grad_unused": _grad_unused,
    "grad_no_requires": _grad_no_requires,
    "shape_mismatch": _shape_mismatch,
    "function_wrong_count": _function_wrong_count,
    "requires_grad_int": _requires_grad_int,
    "non_leaf_requires_grad_false": _non_leaf_requires_grad_false,
    "hook_no_grad": _hook_no_grad,
    "retain_no_grad": _retain_no_grad,
    "post_hook_non_leaf": _post_hook_non_leaf,
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    t = _error(ERRORS[name], torch)
    m = _error(ERRORS[name], mt)
    assert t is not None
    assert m is not None, f"minitorch_nn did not raise; torch raised {t}"
    assert m[0] == t[0]
    assert m[1] == t[1]


# ---------------------------------------------------------------------------------------------
# swap_tensors: use counts and poisoning (behaviours 9-12)
# ---------------------------------------------------------------------------------------------


def _use_counts(L):
    counts = []
    x = L.randn(3, requires_grad=True)
    counts.append(x._use_count())              # fresh leaf
    y = x * 2                                  # not saved: + AccumulateGrad
    counts.append(x._use_count())
    z = x * x                                  # saved twice
    counts.append(x._use_count())
    z.sum().backward()                         # saved tensors freed
    counts.append(x._use_count())
    del y, z
    counts.append(x._use_count())              # graph gone
    p = L.randn(2, 2, requires_grad=True)
    w = p.exp()                                # exp saves its output, not its input
    counts.append(p._use_count())
    v = p.t()                                  # a view holds the payload (as base)
    counts.append(p._use_count())
    del w, v
    return counts


def test_use_counts_match_torch():
    assert _use_counts(mt) == _use_counts(torch)


def _swap_outcomes(L):
    out = []
    x = L.randn(3, requires_grad=True)
    y = x * 2
    L.utils.swap_tensors(x, L.randn(3, requires_grad=True))
    out.append(_error(lambda L: y.sum().backward(), L))
    a = L.randn(3, requires_grad=True)
    b = a * a
    out.append(_error(lambda L: L.utils.swap_tensors(a, L.randn(3)), L))
    del b
    c = L.randn(3, requires_grad=True)
    d = (c * 2).sum()
    d.backward()
    L.utils.swap_tensors(c, L.randn(3, requires_grad=True))   # graph alive: poisoned again
    out.append(_error(lambda L: (c * 3).sum().backward(), L))  # c now has a fresh payload: fine
    return out


def test_swap_tensors_poisoning_matches_torch():
    assert _swap_outcomes(mt) == _swap_outcomes(torch)


# ---------------------------------------------------------------------------------------------
# autograd.functional
# ---------------------------------------------------------------------------------------------


def _f_vec(x):
    return (x * x).sin() * x.sum()


def _f_two(x, y):
    return x @ y, (x * 2).sum(1)


def _f_scalar(x, y):
    return (x.tanh() @ y).pow(2).sum()


FUNCTIONAL = {
    "jacobian_vec": lambda F, L, x, y: F.jacobian(_f_vec, x),
    "jacobian_two": lambda F, L, x, y: F.jacobian(_f_two, (x, y.t())),
    "hessian": lambda F, L, x, y: F.hessian(_f_scalar, (x, y.t())),
    "hessian_single": lambda F, L, x, y: F.hessian(lambda a: (a.exp() * a).sum(), x),
    "vjp": lambda F, L, x, y: F.vjp(_f_vec, x, L.ones(2, 3, dtype=L.float64) * 0.5),
    "jvp": lambda F, L, x, y: F.jvp(_f_vec, x, y),
    "vhp": lambda F, L, x, y: F.vhp(lambda a: (a.exp() * a).sum(), x, y),
    "hvp": lambda F, L, x, y: F.hvp(lambda a: (a.sin() * a).sum(), x, y),
}


def _flatten(obj):
    if isinstance(obj, (tuple, list)):
        return [v for o in obj for v in _flatten(o)]
    return [_np(obj)]


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_matches_torch(name):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    results = []
    for L, F in ((torch, torch.autograd.functional), (mt, mt.autograd.functional)):
        x, y = L.tensor(a, dtype=L.float64), L.tensor(b, dtype=L.float64)
        results.append(_flatten(FUNCTIONAL[name](F, L, x, y)))
    assert len(results[0]) == len(results[1])
    for t, m in zip(*results):
        assert t.shape == m.shape
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-10)

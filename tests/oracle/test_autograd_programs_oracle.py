"""Oracle: gradients of random programs against PyTorch 2.13.

The test draws random *programs* with hypothesis: a few float64 leaves of broadcastable
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
from tests.oracle._autograd_helpers import as_np, asym_weights, compare_second_order  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


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
    loss = sum((v * asym_weights(L, v)).sum() for v in values[len(leaves):] if v.requires_grad) if program else None
    return leaves, values, loss


@SETTINGS
@given(st.data())
def test_random_programs_match_torch(data):
    arrays, program = _draw_program(data)
    if not program:
        return
    tl, tv, tloss = _replay(torch, arrays, program)
    ml, mv, mloss = _replay(mt, arrays, program)
    for step, a, b in zip(program, tv[len(tl):], mv[len(ml):]):
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-7, atol=1e-9, err_msg=str(step))
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
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-6, atol=1e-9, err_msg=str(program))
    # Second order: differentiate a weighted sum of the first-order gradients.
    compare_second_order(tl, tg, ml, mg, str(program))

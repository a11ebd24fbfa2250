"""Oracle: autograd graph structure, node names and errors against PyTorch 2.13.

``next_functions`` trees, the errors of modified saved tensors, double backward, hooks and
custom ``Function`` misuse, hook order, and ``swap_tensors`` use counts and poisoning
(behaviours 9-12).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")


import minitorch_nn as mt  # noqa: E402

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

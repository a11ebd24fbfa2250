"""Oracle: the order in which the backward engine runs nodes, against PyTorch 2.13.

PyTorch runs the ready node with the highest sequence number first (nodes made later in the
forward pass run earlier), ``AccumulateGrad`` nodes before anything else, and breaks ties
between them the way ``std::priority_queue`` does. Hooks observe that order, so every scenario
here records hook calls (node post-hooks, node pre-hooks, tensor hooks, post-accumulate-grad
hooks) on a branchy graph and compares the log with torch's.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402


def _tag(t, name, log, pre=False):
    """Log when ``t``'s node runs (post-hook), and, with ``pre``, when it is about to (pre-hook)."""
    t.grad_fn.register_hook(lambda gi, go: log.append(name))
    if pre:
        t.grad_fn.register_prehook(lambda go: log.append("pre_" + name))
    return t


def _leaves(L, n, log, shape=(3,)):
    out = []
    for i in range(n):
        leaf = L.ones(shape, requires_grad=True)
        leaf.register_post_accumulate_grad_hook(lambda t, i=i: log.append(f"acc{i}"))
        out.append(leaf)
    return out


def _diamonds(L):
    log = []
    a, b, c = _leaves(L, 3, log)
    p = _tag(a * 2, "p", log)
    q = _tag(b.exp(), "q", log, pre=True)
    r = _tag(p + q, "r", log)
    s = _tag(c * 3, "s", log)
    u = _tag(r.sin(), "u", log)
    v = _tag(s * r, "v", log, pre=True)
    w = _tag(u + v, "w", log)
    w.sum().backward()
    return log


def _tensor_hooks(L):
    log = []
    x, y = _leaves(L, 2, log)
    x.register_hook(lambda g: log.append("hook_x"))
    y.register_hook(lambda g: log.append("hook_y"))
    z = _tag(x * y, "z", log)
    z.register_hook(lambda g: log.append("hook_z"))
    z2 = _tag(y * x, "z2", log)
    z3 = _tag(x + y, "z3", log)
    _tag(z + z2 + z3, "top", log).sum().backward()
    return log


def _stacked_leaves(L):
    # Six AccumulateGrad nodes become ready at once with equal priority: the tie order is
    # std::priority_queue's, not first-in-first-out.
    log = []
    leaves = _leaves(L, 6, log, shape=(2,))
    L.stack(leaves).sum().backward()
    sum(leaf * 1 for leaf in leaves).sum().backward()
    L.cat(leaves[::-1] + leaves[:2]).sum().backward()
    return log


def _several_roots(L):
    log = []
    a, b, c = _leaves(L, 3, log, shape=(2,))
    t1 = _tag(a * 2, "t1", log)
    t2 = _tag(b * 3, "t2", log)
    t3 = _tag(t1 * c, "t3", log)
    L.autograd.backward([t2.sum(), t1.sum(), t3.sum()])
    return log


def _grad_with_inputs(L):
    log = []
    a, b = _leaves(L, 2, log)
    m = _tag(a * b, "m", log)
    m.register_hook(lambda g: log.append("hook_m"))
    n = _tag(m.exp(), "n", log)
    o = _tag(a.sin() + n, "o", log)
    L.autograd.grad(o.sum(), [m, b])
    return log


def _backward_with_inputs(L):
    log = []
    a, b, c = _leaves(L, 3, log)
    h = _tag(a * b, "h", log)
    k = _tag(h * c + a, "k", log)
    k.sum().backward(inputs=[b, a])
    return log


def _multi_output(L):
    log = []
    (x,) = _leaves(L, 1, log, shape=(6,))
    parts = x.split(2)
    outs = [_tag(p * (i + 1), f"part{i}", log) for i, p in enumerate(parts)]
    _tag(outs[2] + outs[0] * outs[1], "join", log).sum().backward()
    return log


SCENARIOS = [_diamonds, _tensor_hooks, _stacked_leaves, _several_roots, _grad_with_inputs,
             _backward_with_inputs, _multi_output]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_hooks_see_torchs_node_order(scenario):
    assert scenario(mt) == scenario(torch)


# -- random graphs --------------------------------------------------------------------------------

_UNARY = ["exp", "sin", "neg"]
_BINARY = ["add", "mul", "sub"]


def _random_program(L, steps, n_leaves):
    log = []
    values = _leaves(L, n_leaves, log, shape=(2,))
    for k, (kind, i, j, op_index) in enumerate(steps):
        x, y = values[i % len(values)], values[j % len(values)]
        if kind == "unary":
            out = getattr(x, _UNARY[op_index % len(_UNARY)])()
        else:
            out = getattr(L, _BINARY[op_index % len(_BINARY)])(x, y)
        _tag(out, f"n{k}", log, pre=(k % 3 == 0))
        values.append(out)
    sum(v.sum() for v in values[n_leaves:]).backward()
    return log


_step = st.tuples(st.sampled_from(["unary", "binary"]), st.integers(0, 20), st.integers(0, 20), st.integers(0, 5))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(steps=st.lists(_step, min_size=1, max_size=8), n_leaves=st.integers(1, 4))
def test_random_graphs_run_in_torchs_order(steps, n_leaves):
    assert _random_program(mt, steps, n_leaves) == _random_program(torch, steps, n_leaves)


# -- sequence numbers -----------------------------------------------------------------------------


def test_sequence_numbers_grow_and_accumulate_grad_has_the_largest():
    def numbers(L):
        x = L.ones(2, requires_grad=True)
        y = x * 2
        z = y.exp()
        acc = y.grad_fn.next_functions[0][0]
        return z.grad_fn._sequence_nr() > y.grad_fn._sequence_nr(), acc._sequence_nr()

    assert numbers(mt) == numbers(torch)


def test_nodes_take_no_new_attributes():
    def attempt(L):
        node = (L.ones(2, requires_grad=True) * 2).grad_fn
        with pytest.raises(AttributeError) as info:
            node.foo = 1
        return str(info.value)

    assert attempt(mt) == attempt(torch)

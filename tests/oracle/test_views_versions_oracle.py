"""Oracle: when a view's ``grad_fn`` goes stale, judged by the version counter, as in PyTorch 2.13.

A view shares its base's version counter. PyTorch remembers the counter's value when the view's
node was made; once the counter has moved on (an in-place write to the base or to any other view
of it, with grad mode on or off, or through ``detach()``; not through ``.data``, which has a
counter of its own), reading ``view.grad_fn`` or using the view in an op makes a fresh
``AsStridedBackward0`` leading to the base's current history, or raises for views that cannot have
one (made under no_grad or inference_mode, outputs of ``unbind``/``split``...).

Each scenario runs in PyTorch and in minitorch_nn (twice: with the compiled recorder and fast
paths, and with the readable reference layer of ``autograd/recording.py`` and the full dispatch
chain), and the transcripts (values, node names, gradients, versions, errors) must be identical.
See ``minitorch_nn/autograd/graph.py:current_grad_fn`` and ``autograd/inplace.py``.
"""

import pytest

import minitorch_nn as mt
from tests.oracle._scenario_helpers import keep_global_rng_state, scenarios, torch, transcript  # noqa: F401
from tests.test_fast_record import reference_path

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def graph(fn, depth=4):
    """A node and the nodes below it, by name: ``Name(Child(...), None)``."""
    if fn is None:
        return "None"
    name = fn.name().rsplit("::", 1)[-1]
    if depth == 0:
        return name
    kids = ", ".join(graph(f, depth - 1) for f, _ in fn.next_functions)
    return f"{name}({kids})"


def leaf_and_base(t, *shape):
    """A leaf that requires grad and a non-leaf copy of it (the usual base of these scenarios)."""
    a = t.arange(float(t.Size(shape).numel())).reshape(*shape).requires_grad_()
    return a, a * 1


def weights(t, *shape):
    return t.arange(float(t.Size(shape).numel())).reshape(*shape) + 1


# -- the base written in place, then the view read ------------------------------------------------


@case
def base_written_then_view_grad_fn(t):
    a, b = leaf_and_base(t, 3, 4)
    v = b[0]
    print(graph(v.grad_fn), v._version)
    b.mul_(2)
    print(graph(v.grad_fn), v._version, b._version)
    (v * weights(t, 4)).sum().backward()
    print(a.grad)


@case
def base_written_under_no_grad(t):
    a, b = leaf_and_base(t, 3, 4)
    v = b.view(12)
    with t.no_grad():
        b.mul_(2)
    print(graph(b.grad_fn), graph(v.grad_fn))
    (v * weights(t, 12)).sum().backward()
    print(a.grad)


@case
def view_grad_fn_read_inside_no_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[1]
    with t.no_grad():
        b.add_(1)
        print(graph(v.grad_fn))
    print(graph(v.grad_fn), v.grad_fn is v.grad_fn)


@case
def base_written_through_detach(t):
    a, b = leaf_and_base(t, 3, 4)
    v = b.t()
    b.detach().mul_(2)
    print(b._version, v._version, graph(v.grad_fn))
    (v * weights(t, 4, 3)).sum().backward()
    print(a.grad)


@case
def base_written_through_data(t):
    a, b = leaf_and_base(t, 3, 4)
    v = b.t()
    b.data.mul_(2)
    print(b._version, v._version, b.data._version, graph(v.grad_fn))
    (v * weights(t, 4, 3)).sum().backward()
    print(a.grad)


@case
def data_has_its_own_version_counter(t):
    x = t.ones(3)
    x.add_(1)
    d = x.data
    print(x._version, d._version)
    d.add_(1)
    print(x._version, d._version, x)
    x.mul_(2)
    print(x._version, d._version, d)


@case
def data_assignment_keeps_view_node(t):
    a, b = leaf_and_base(t, 3, 4)
    v = b.t()
    b.data = t.zeros(3, 4)
    print(b._version, v._version, graph(v.grad_fn), v._base is b)


@case
def plain_tensor_view_never_gets_a_node(t):
    x = t.ones(2, 3)
    v = x[0]
    x.mul_(2)
    print(v.grad_fn, v.requires_grad, v._version)


@case
def base_written_twice_node_renewed(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[:, 1]
    b.add_(1)
    first = v.grad_fn
    print(graph(first), v.grad_fn is first)
    b.mul_(3)
    second = v.grad_fn
    print(graph(second), second is first, v._version)
    (v * weights(t, 2)).sum().backward()
    print(a.grad)


@case
def stale_view_used_without_reading_grad_fn(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[1]
    b.mul_(2)
    y = v.pow(3)
    print(graph(y.grad_fn))
    y.sum().backward()
    print(a.grad)


@case
def stale_view_as_backward_root(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[1:]
    b.pow_(2)
    v.backward(weights(t, 1, 3))
    print(a.grad, graph(v.grad_fn))


@case
def stale_view_through_autograd_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b.select(1, 2)
    b.mul_(5)
    (g,) = t.autograd.grad(v.sum(), a)
    print(g)


@case
def base_written_under_inference_mode(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[0]
    with t.inference_mode():
        b.mul_(2)
    print(graph(v.grad_fn), b._version)


@case
def parameter_initialised_in_place_after_a_view_was_made(t):
    p = t.nn.Parameter(t.ones(2, 3))
    v = p.t()
    t.nn.init.zeros_(p)
    print(graph(v.grad_fn), p._version, v._version)
    (v * weights(t, 3, 2)).sum().backward()
    print(p.grad)


@case
def base_written_with_copy_under_no_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b[0]
    w = v.view(3)
    with t.no_grad():
        b.copy_(t.zeros(2, 3))
    print(graph(w.grad_fn), graph(v.grad_fn), w._base is b)


@case
def chunk_sibling_written_under_no_grad(t):
    a, b = leaf_and_base(t, 4)
    c = b.chunk(2)
    with t.no_grad():
        c[0].mul_(2)
    print(graph(c[1].grad_fn))


@case
def expanded_view_of_unsqueezed_base_written(t):
    a, b = leaf_and_base(t, 3)
    z = b.unsqueeze(0).expand(2, 3)
    b.add_(1)
    print(graph(z.grad_fn))
    (z * weights(t, 2, 3)).sum().backward()
    print(a.grad)


# -- chains of views and views of views -----------------------------------------------------------


@case
def chain_of_views_base_written(t):
    a, b = leaf_and_base(t, 2, 3, 4)
    v1 = b.permute(2, 0, 1)
    v2 = v1[1]
    v3 = v2.reshape(6)
    print(graph(v3.grad_fn))
    b.add_(1)
    print(graph(v1.grad_fn), graph(v2.grad_fn), graph(v3.grad_fn), v3._base is b)
    (v3 * weights(t, 6)).sum().backward()
    print(a.grad)


@case
def view_of_view_written_in_place(t):
    a, b = leaf_and_base(t, 4, 3)
    v = b[1:3]
    w = v[0]
    w.add_(1)
    print(graph(b.grad_fn), graph(v.grad_fn), graph(w.grad_fn))
    print(b._version, v._version, w._version)
    (b * weights(t, 4, 3)).sum().backward()
    print(a.grad)


@case
def view_written_then_base_grad_fn(t):
    a, b = leaf_and_base(t, 4, 3)
    v = b[1:3]
    v.mul_(weights(t, 2, 3))
    print(graph(b.grad_fn), graph(v.grad_fn))
    b.sum().backward()
    print(a.grad)


@case
def sibling_view_after_write_through_other(t):
    a, b = leaf_and_base(t, 2, 3)
    v1 = b[0]
    v2 = b[:, 1]
    v1.mul_(3)
    print(graph(b.grad_fn), graph(v1.grad_fn), graph(v2.grad_fn))
    v2.sum().backward()
    print(a.grad)


@case
def setitem_on_base_makes_views_stale(t):
    a, b = leaf_and_base(t, 3, 3)
    d = b.diagonal()
    b[0] = 7.0
    print(graph(b.grad_fn), graph(d.grad_fn))
    (d * weights(t, 3)).sum().backward()
    print(a.grad)


@case
def expanded_view_gradient_sums_overlap(t):
    a, b = leaf_and_base(t, 3)
    v = b.expand(2, 3)
    b.mul_(2)
    print(graph(v.grad_fn))
    (v * weights(t, 2, 3)).sum().backward()
    print(a.grad)


@case
def transposed_slice_written_under_no_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    v = b.t()[1:]
    with t.no_grad():
        b[0, 0] = 5
    (v * weights(t, 2, 2)).sum().backward()
    print(graph(v.grad_fn), a.grad)


@case
def diagonal_view_base_written(t):
    a, b = leaf_and_base(t, 4, 4)
    d = b.diagonal()
    b.add_(1)
    (d * weights(t, 4)).sum().backward()
    print(a.grad)


@case
def stale_view_double_backward(t):
    a, b = leaf_and_base(t, 3)
    v = b[1:]
    b.mul_(2)
    y = (v * v).sum()
    (g,) = t.autograd.grad(y, a, create_graph=True)
    print(g, graph(g.grad_fn, 5))
    g.sum().backward()
    print(a.grad)


# -- views of leaves ------------------------------------------------------------------------------


@case
def leaf_written_under_no_grad_view_renewed(t):
    a = t.arange(6.0).reshape(2, 3).requires_grad_()
    v = a[0]
    with t.no_grad():
        a.mul_(2)
    print(graph(v.grad_fn))
    (v * weights(t, 3)).sum().backward()
    print(a.grad)


@case
def weight_transpose_after_optimizer_step(t):
    w = t.arange(6.0).reshape(2, 3).requires_grad_()
    wt = w.t()
    with t.no_grad():
        w.sub_(0.5 * t.ones(2, 3))
    x = weights(t, 1, 3)
    (x @ wt).sum().backward()
    print(graph(wt.grad_fn), w.grad)


@case
def view_of_leaf_written_in_place(t):
    a = t.ones(2, 3, requires_grad=True)
    a[0].mul_(2)


@case
def view_of_leaf_written_in_place_under_no_grad(t):
    a = t.ones(2, 3, requires_grad=True)
    with t.no_grad():
        a[0].mul_(2)
    print(a.grad_fn, a._version, a)


@case
def view_made_before_requires_grad(t):
    x = t.ones(2, 3)
    v = x[0]
    x.requires_grad_()
    print(v.grad_fn, v.is_leaf)
    v.mul_(2)


# -- functions returning several views -----------------------------------------------------------


@case
def unbind_outputs_read_after_base_written(t):
    a, b = leaf_and_base(t, 2, 3)
    u = b.unbind(0)
    print(graph(u[1].grad_fn))
    b.mul_(2)
    print(graph(u[1].grad_fn))


@case
def unbind_outputs_read_after_write_under_no_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    u = b.unbind(0)
    with t.no_grad():
        b.mul_(2)
        print(graph(u[0].grad_fn))


@case
def unbind_output_written_in_place(t):
    a, b = leaf_and_base(t, 2, 3)
    u = b.unbind(0)
    u[1].mul_(2)


@case
def split_output_written_in_place(t):
    a, b = leaf_and_base(t, 4, 3)
    s = b.split(2)
    s[1].add_(1)


@case
def split_with_sizes_output_read_after_sibling_write(t):
    a, b = leaf_and_base(t, 5, 2)
    s = b.split([2, 3])
    b[0].zero_()
    print(graph(s[1].grad_fn))


@case
def chunk_output_view_written_in_place(t):
    a, b = leaf_and_base(t, 4, 3)
    c = b.chunk(2)
    c[0][0].mul_(2)


@case
def chunk_output_unwritten_backward(t):
    a, b = leaf_and_base(t, 4, 3)
    c = b.chunk(2)
    print(graph(c[0].grad_fn), graph(c[1].grad_fn))
    (c[0] * 2 + c[1]).sum().backward()
    print(a.grad)


# -- views made under no_grad / inference_mode ----------------------------------------------------


@case
def no_grad_view_written_with_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.no_grad():
        v = b[0]
    print(v.grad_fn, v.is_leaf)
    v.mul_(2)


@case
def no_grad_view_of_parameter_prints_requires_grad(t):
    w = t.nn.Parameter(t.arange(6.0).reshape(2, 3))
    with t.no_grad():
        v = w[0]
        print(v)
        print(w.t(), w * 2)
    print(v.requires_grad, v.is_leaf, v.grad_fn, v.grad)
    v.requires_grad_(False)
    print(v.requires_grad, v.detach().requires_grad, w.detach()[0].requires_grad)


@case
def view_made_before_base_requires_grad_reports_it(t):
    x = t.ones(2, 3)
    v = x[0]
    print(v.requires_grad)
    x.requires_grad_()
    print(v.requires_grad, v.is_leaf, v)


@case
def no_grad_view_read_after_base_written(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.no_grad():
        v = b[0]
    b.mul_(2)
    print(v.grad_fn)


@case
def no_grad_view_and_write_both_inside(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.no_grad():
        v = b[0]
        v.mul_(2)
    print(graph(b.grad_fn), b._version)
    print(v.grad_fn)


@case
def no_grad_view_read_inside_no_grad_after_write(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.no_grad():
        v = b[0]
        b.mul_(2)
        print(v.grad_fn)


@case
def no_grad_view_of_plain_tensor(t):
    x = t.ones(2, 3)
    with t.no_grad():
        v = x[0]
    x.mul_(2)
    v.add_(1)
    print(v.grad_fn, x)


@case
def inference_view_read_after_base_written(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.inference_mode():
        v = b[0]
    print(v.is_inference())
    b.mul_(2)
    print(v.grad_fn)


@case
def inference_view_written_with_grad(t):
    a, b = leaf_and_base(t, 2, 3)
    with t.inference_mode():
        v = b[0]
    v.mul_(2)


# -- custom Functions writing a view in place ------------------------------------------------------


def _dirty_functions(t):
    class Double(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class AddInto(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            x.add_(y)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g * 3

    return Double, AddInto


@case
def mark_dirty_on_a_view(t):
    Double, _ = _dirty_functions(t)
    a, b = leaf_and_base(t, 2, 3)
    v, w = b[0], b[:, 1]
    y = Double.apply(v)
    print(y is v, graph(v.grad_fn), graph(b.grad_fn), graph(w.grad_fn), b._version)
    b.sum().backward()
    print(a.grad)


@case
def mark_dirty_on_a_view_with_another_input(t):
    _, AddInto = _dirty_functions(t)
    a, b = leaf_and_base(t, 2, 3)
    c = t.ones(3, requires_grad=True)
    y = AddInto.apply(b[1], c)
    print(graph(y.grad_fn), graph(b.grad_fn))
    (b * weights(t, 2, 3)).sum().backward()
    print(a.grad, c.grad)


# -- saved tensors and versions -------------------------------------------------------------------


@case
def saved_view_modified_through_base(t):
    a, b = leaf_and_base(t, 3)
    v = b[1:]
    y = v.pow(3)
    b.mul_(2)
    y.sum().backward()


@case
def versions_shared_by_views(t):
    a, b = leaf_and_base(t, 2, 3)
    v, w = b[0], b.t()
    print(b._version, v._version, w._version)
    v.add_(1)
    w.mul_(2)
    with t.no_grad():
        b.sub_(1)
    print(b._version, v._version, w._version)
    print(graph(v.grad_fn), graph(w.grad_fn))
    b.sum().backward()
    print(a.grad)


@pytest.mark.parametrize("layer", ["compiled", "reference"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_views_versions_match_torch(name, layer):
    fn = CASES[name]
    expected = transcript(fn, torch)
    if layer == "compiled":
        got = transcript(fn, mt)
    else:
        with reference_path():
            got = transcript(fn, mt)
    assert got == expected, f"\n--- PyTorch ---\n{expected}\n--- minitorch_nn ({layer}) ---\n{got}"

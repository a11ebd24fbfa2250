"""Behaviour tests for minitorch_nn.autograd (no PyTorch needed).

Expected gradients come from calculus worked out with numpy on the same values; the oracle
comparison against PyTorch lives in tests/oracle/test_autograd_*_oracle.py.
"""

import gc
import warnings

import numpy as np
import pytest

import minitorch_nn as torch
from minitorch_nn import autograd
from minitorch_nn.autograd import graph


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype or torch.float64, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# Grad mode
# ---------------------------------------------------------------------------------------------


def test_no_grad_context_and_decorators():
    x = leaf([1.0, 2.0])
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def called(t):
        return t * 2

    @torch.no_grad
    def bare(t):
        return t * 2

    assert not called(x).requires_grad and not bare(x).requires_grad
    assert torch.is_grad_enabled()


def test_no_grad_on_generator_restores_mode_between_steps():
    x = leaf([1.0])

    @torch.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 2).requires_grad

    g = gen()
    assert next(g) is False
    assert torch.is_grad_enabled()
    assert next(g) is False


def test_set_grad_enabled_as_call_and_context():
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_inference_mode():
    x = leaf([1.0])
    with torch.inference_mode():
        assert not (x * 2).requires_grad
        assert autograd.is_inference_mode_enabled()
    with torch.inference_mode(False):
        assert (x * 2).requires_grad

    @torch.inference_mode()
    def f():
        return (x * 2).requires_grad

    assert f() is False


# ---------------------------------------------------------------------------------------------
# Backward, accumulation, grad()
# ---------------------------------------------------------------------------------------------


def test_backward_matches_calculus_and_accumulates():
    x = leaf([0.5, -1.0, 2.0])
    a = np.array([0.5, -1.0, 2.0])
    y = (x * x.sin()).sum()
    y.backward(retain_graph=True)
    expected = np.sin(a) + a * np.cos(a)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected)


def test_broadcast_gradients_are_summed_to_input_shape():
    a = leaf([[1.0], [2.0]])          # (2, 1)
    b = leaf([1.0, 2.0, 3.0])         # (3,)
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[6.0], [6.0]])
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 3.0, 3.0])
    assert a.grad.shape == a.shape and b.grad.shape == b.shape


def test_dtype_of_gradient_follows_the_input():
    a = leaf([1.0, 2.0], dtype=torch.float32)
    b = leaf([3.0, 4.0], dtype=torch.float64)
    (a * b).sum().backward()
    assert a.grad.dtype is torch.float32 and b.grad.dtype is torch.float64


def test_grad_returns_without_touching_dot_grad():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = autograd.grad((x ** 2).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    assert x.grad is None


def test_higher_order_through_create_graph():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = autograd.grad(g.sum(), x, create_graph=True)
    (k,) = autograd.grad(h.sum(), x)
    np.testing.assert_allclose(h.detach().numpy(), [6.0, 12.0, 18.0])
    np.testing.assert_allclose(k.numpy(), [6.0, 6.0, 6.0])


def test_backward_with_inputs_only_fills_those():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad is not None and b.grad is None


def test_grad_allow_unused_and_materialize():
    x, unused = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, unused])
    g = autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert g[1] is None
    g = autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    np.testing.assert_allclose(g[1].numpy(), [0.0])


@pytest.mark.parametrize("make, message", [
    (lambda: (leaf([1.0, 2.0]) * 2).backward(), "grad can be implicitly created only for scalar outputs"),
    (lambda: torch.ones(2).sum().backward(), "element 0 of tensors does not require grad and does not have a grad_fn"),
    (lambda: leaf([1.0]).add_(1), "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda: leaf([1.0, 2.0])[0].mul_(2), "a view of a leaf Variable that requires grad is being used in an in-place"),
    (lambda: (leaf([1.0]) * 2).requires_grad_(False), "you can only change requires_grad flags of leaf variables"),
])
def test_error_messages(make, message):
    with pytest.raises(RuntimeError) as info:
        make()
    assert message in str(info.value)


def test_backward_twice_without_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_in_place_modification_of_saved_tensor_is_detected():
    x = leaf([1.0, 2.0, 3.0])
    y = x.exp()
    z = y * 1      # keeps the graph through y
    with torch.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    msg = str(info.value)
    assert "modified by an inplace operation: [torch.DoubleTensor [3]], which is output 0 of Exp" in msg
    assert "is at version 1; expected version 0 instead" in msg


# ---------------------------------------------------------------------------------------------
# Graph structure
# ---------------------------------------------------------------------------------------------


def test_node_names_repr_and_next_functions():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x + 1
    fn = y.grad_fn
    assert fn.name() == "AddBackward0" and type(fn).__name__ == "AddBackward0"
    assert repr(fn).startswith("<AddBackward0 object at 0x")
    (acc, nr), (none, zero) = fn.next_functions
    assert isinstance(acc, graph.AccumulateGrad) and nr == 0 and none is None and zero == 0
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x
    assert "grad_fn=<AddBackward0>" in repr(y)
    names = {
        "MulBackward0": x * x, "MmBackward0": x @ x, "SumBackward0": x.sum(), "SumBackward1": x.sum(0),
        "ViewBackward0": x.view(4), "TBackward0": x.t(), "ExpandBackward0": x.expand(3, 2, 2),
        "SelectBackward0": x[0], "SliceBackward0": x[:, :1], "IndexBackward0": x[torch.tensor([0, 0])],
        "SoftmaxBackward0": torch.softmax(x, 1), "TransposeBackward0": x.transpose(0, 1),
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name


def test_accumulate_grad_is_cached_weakly():
    x = leaf([1.0])
    a = (x * 2).grad_fn.next_functions[0][0]
    b = (x * 3).grad_fn.next_functions[0][0]
    assert a is b
    del a, b
    gc.collect()
    assert x._use_count() == 1


def test_inplace_rebases_history_and_views_get_copyslices():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    z = x.clone()
    z[1:].mul_(3)
    assert z.grad_fn.name() == "torch::autograd::CopySlices"
    (z * torch.tensor([1.0, 10.0, 100.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 30.0, 300.0])


def test_setitem_gradient():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf([5.0])
    z = x.clone()
    z[1] = v[0] * 2
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(v.grad.numpy(), [2.0])


def test_saved_tensor_accessors():
    x = leaf([1.0, 2.0])
    y = x * x
    assert y.grad_fn._saved_self is x
    assert isinstance(y.grad_fn._raw_saved_other, graph.SavedTensor)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = y.grad_fn._saved_self


def test_detach_and_detach_():
    x = leaf([1.0])
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d._base is None
    y = x * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


# ---------------------------------------------------------------------------------------------
# Hooks and retain_grad
# ---------------------------------------------------------------------------------------------


def test_tensor_hooks_and_removal():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [30.0, 30.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    h.remove()
    (x * 1).sum().backward()
    assert len(seen) == 1


def test_retain_grad_and_non_leaf_grad_warning():
    x = leaf([1.0, 2.0])
    y = x * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert y.grad is None
    assert "is not a leaf Tensor is being accessed" in str(w[0].message)
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])


def test_post_accumulate_grad_hook_sees_the_tensor():
    x = leaf([1.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.item())))
    (x * 5).sum().backward()
    assert seen == [(True, 5.0)]


def test_node_pre_and_post_hooks():
    x = leaf([1.0])
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.sum().backward()
    assert calls == ["pre", "post"]


# ---------------------------------------------------------------------------------------------
# Use counts and swap_tensors (behaviours 9-12)
# ---------------------------------------------------------------------------------------------


def test_use_counts():
    x = leaf([1.0, 2.0])
    assert x._use_count() == 1
    y = x * 2
    assert x._use_count() == 2
    z = x * x
    assert x._use_count() == 4
    del y, z
    gc.collect()
    assert x._use_count() == 1


def test_swap_poisons_accumulate_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    torch.utils.swap_tensors(x, leaf([3.0, 4.0]))
    with pytest.raises(RuntimeError, match="Trying to execute AccumulateGrad node that was poisoned by swap_tensors"):
        y.sum().backward()
    # the swapped-in payload gets a fresh, healthy node
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ---------------------------------------------------------------------------------------------
# autograd.Function
# ---------------------------------------------------------------------------------------------


class Cube(autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2 * ctx.scale, None


def test_custom_function_forward_backward_and_node():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 24.0])


def test_custom_function_higher_order_and_gradcheck():
    x = leaf([0.5, -1.5])
    assert autograd.gradcheck(lambda t: Cube.apply(t, 2.0), (x,))
    assert autograd.gradgradcheck(lambda t: Cube.apply(t, 2.0), (x,))


def test_custom_function_needs_input_grad_and_non_differentiable():
    seen = {}

    class Split(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            idx = (a > 0).to(torch.int64)
            mask = a * 0
            ctx.mark_non_differentiable(mask)
            return a + b, mask, idx

        @staticmethod
        def backward(ctx, g, g_mask, g_idx):
            return g, g

    a = leaf([1.0, -1.0])
    out, mask, idx = Split.apply(a, torch.ones(2))
    assert seen["needs"] == (True, False)
    assert out.requires_grad and not mask.requires_grad and not idx.requires_grad


def test_custom_function_setup_context_and_once_differentiable():
    class Double(autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark = "set"

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, g):
            assert ctx.mark == "set" and not torch.is_grad_enabled()
            return g * 2

    x = leaf([1.0])
    Double.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0])


def test_custom_function_wrong_number_of_gradients():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        Bad.apply(leaf([1.0]), leaf([2.0])).sum().backward()


# ---------------------------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda a, b: (a * b).sin().sum(1),
    lambda a, b: torch.softmax(a @ b.t(), 0),
    lambda a, b: (a / (b * b + 1)).amax(0),
    lambda a, b: torch.cat([a, b]).log_softmax(1)[torch.tensor([0, 3])],
])
def test_gradcheck_and_gradgradcheck_on_ops(fn):
    rng = np.random.default_rng(0)
    a = leaf(rng.standard_normal((2, 3)))
    b = leaf(rng.standard_normal((2, 3)))
    assert autograd.gradcheck(fn, (a, b))
    assert autograd.gradgradcheck(fn, (a, b))


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g   # should be 2 x g

    x = leaf([1.0, 2.0])
    with pytest.raises(autograd.gradcheck.__globals__["GradcheckError"], match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (x,))
    assert autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


# ---------------------------------------------------------------------------------------------
# Views made under no_grad, saved-tensor hooks, retain_grad through in-place ops
# ---------------------------------------------------------------------------------------------


def test_inplace_on_view_made_under_no_grad_is_refused():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(2)
    with torch.no_grad():
        v.mul_(2)   # fine when both happen under no_grad


def test_saved_tensors_hooks_pack_and_unpack():
    x = leaf([0.5, 1.5])
    log = []

    def pack(t):
        log.append("pack")
        return t.clone()

    def unpack(p):
        log.append("unpack")
        return p

    with graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()
    assert log == ["pack", "pack", "pack"]   # x twice by mul, the result of exp once
    y.sum().backward()
    assert log.count("unpack") == 3
    a = np.array([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), 2 * a * np.exp(a * a))


def test_retain_grad_follows_in_place_ops():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    assert y.retains_grad
    np.testing.assert_allclose(y.grad.numpy(), [12.0, 24.0])


def test_saved_python_number_reads_back_as_tensor():
    x = leaf([1.0])
    saved = (x * 2).grad_fn._saved_other
    assert isinstance(saved, torch.Tensor) and saved.item() == 2


def test_views_see_later_in_place_changes_of_their_base():
    x = leaf([1.0, 2.0, 3.0])
    y = x.clone()
    v = y[0:2]
    y.mul_(2)                       # v was made before: its history is refreshed
    assert v.grad_fn.name() == "AsStridedBackward0"
    (v * torch.tensor([1.0, 10.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0, 0.0])


def test_leaf_grads_never_alias_each_other_or_the_callers_gradient():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = torch.tensor([1.0, 1.0], dtype=torch.float64)
    (a + b).backward(g)            # AddBackward0 sends the same tensor to both inputs
    a.grad.add_(5)
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])
    x = leaf([1.0, 2.0])
    x.sum().backward()             # the incoming gradient is an expanded view
    assert x.grad.is_contiguous() and x.grad._base is None


def test_legacy_variable():
    v = autograd.Variable(torch.ones(2), requires_grad=True)
    assert v.requires_grad and v.is_leaf and isinstance(v, autograd.Variable)
    assert isinstance(torch.ones(1), autograd.Variable) and not isinstance(3, autograd.Variable)

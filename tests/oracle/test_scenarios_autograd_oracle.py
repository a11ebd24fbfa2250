"""Scenario sweep: autograd API corners (hooks, retain_grad, grad modes, custom Functions with
ctx.mark_dirty / mark_non_differentiable / once_differentiable / setup_context, gradcheck results
and messages, autograd.grad options, in-place and version-counter errors).

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``. Inference tensors are not modelled (``autograd/grad_mode.py`` says why),
so scenarios that rely on them are not here.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


@case
def retain_grad(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.sum()
    z.backward()
    print(y.grad, x.grad, y.retains_grad, x.retains_grad, y.is_leaf)


@case
def nonleaf_grad_warn(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    y.sum().backward()
    print(y.grad)


@case
def backward_twice(t):
    x = t.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


@case
def backward_nonscalar(t):
    x = t.ones(2, requires_grad=True)
    (x * 2).backward()


@case
def backward_nograd(t):
    t.ones(2).sum().backward()


@case
def hooks(t):
    x = t.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 3)
    y = (x * 2).sum()
    y.backward()
    print(x.grad)
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    print(x.grad)


@case
def hook_nograd(t):
    t.ones(2).register_hook(lambda g: g)


@case
def post_acc_hook(t):
    x = t.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: print("acc", p.grad))
    (x * 2).sum().backward()


@case
def no_grad_deco(t):
    @t.no_grad()
    def f(x):
        return x * 2

    x = t.ones(2, requires_grad=True)
    print(f(x).requires_grad, t.is_grad_enabled())
    with t.enable_grad():
        print(t.is_grad_enabled())
    with t.set_grad_enabled(False):
        print((x * 2).requires_grad)


@case
def function_custom(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k, None

    x = t.ones(2, requires_grad=True)
    y = F.apply(x, 3.0)
    print(y)
    y.sum().backward()
    print(x.grad, type(y.grad_fn).__name__, y.grad_fn.name())


@case
def function_mark_dirty(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = t.ones(2, requires_grad=True)
    x = a.clone()
    y = F.apply(x)
    print(y is x, y, x._version)
    y.sum().backward()
    print(a.grad)


@case
def function_mark_dirty_leaf(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = t.ones(2, requires_grad=True)
    F.apply(a)


@case
def function_nondiff(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax().reshape(1)
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, gi):
            print("gi", gi)
            return g * 2

    a = t.ones(2, requires_grad=True)
    y, i = F.apply(a)
    print(y.requires_grad, i.requires_grad, i)
    (y.sum()).backward()
    print(a.grad)


@case
def function_wrong_num_grads(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    a = t.ones(2, requires_grad=True)
    F.apply(a, a).sum().backward()


@case
def function_wrong_shape(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return t.ones(3)

    a = t.ones(2, requires_grad=True)
    F.apply(a).sum().backward()


@case
def function_once_diff(t):
    class F(t.autograd.Function):
        @staticmethod
        @t.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def forward(ctx, x):
            return x * 2

    a = t.ones(2, requires_grad=True)
    F.apply(a).sum().backward()
    print(a.grad)


@case
def function_setup_ctx(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = t.ones(2, requires_grad=True)
    y = F.apply(a)
    y.sum().backward()
    print(a.grad, y.grad_fn.name())


@case
def function_no_backward(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    a = t.ones(2, requires_grad=True)
    F.apply(a).sum().backward()


@case
def function_call_direct(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    F()(t.ones(2))


@case
def gradcheck_ok(t):
    x = t.randn(3, dtype=t.float64, requires_grad=True)
    print(t.autograd.gradcheck(lambda a: (a * a).sin(), (x,)))
    print(t.autograd.gradgradcheck(lambda a: (a * a).sin(), (x,)))


@case
def gradcheck_bad(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = t.ones(2, dtype=t.float64, requires_grad=True)
    print(t.autograd.gradcheck(F.apply, (x,), raise_exception=False))
    t.autograd.gradcheck(F.apply, (x,))


@case
def gradcheck_float32(t):
    x = t.ones(2, requires_grad=True)
    t.autograd.gradcheck(lambda a: a * 2, (x,))


@case
def autograd_grad(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = t.autograd.grad(y, x, create_graph=True)
    print(g)
    (g2,) = t.autograd.grad(g.sum(), x)
    print(g2)


@case
def autograd_grad_unused(t):
    x = t.ones(2, requires_grad=True)
    z = t.ones(2, requires_grad=True)
    t.autograd.grad((x * 2).sum(), [x, z])


@case
def autograd_grad_allow_unused(t):
    x = t.ones(2, requires_grad=True)
    z = t.ones(2, requires_grad=True)
    print(t.autograd.grad((x * 2).sum(), [x, z], allow_unused=True))
    print(t.autograd.grad((x * 2).sum(), [x, z], allow_unused=True, materialize_grads=True))


@case
def inplace_leaf(t):
    x = t.ones(2, requires_grad=True)
    x.add_(1)


@case
def inplace_saved(t):
    x = t.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


@case
def inplace_saved2(t):
    x = t.ones(2, requires_grad=True)
    a = x * 1
    y = a * a
    a.add_(1)
    y.sum().backward()


@case
def detach_(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    z = y.detach()
    print(z.requires_grad, z._base is None, z.is_leaf)
    y.detach_()
    print(y.requires_grad, y.grad_fn)


@case
def requires_grad_int(t):
    t.ones(2, dtype=t.int64).requires_grad_()


@case
def requires_grad_int2(t):
    t.tensor([1, 2], requires_grad=True)


@case
def set_requires_grad_nonleaf(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    y.requires_grad = False


@case
def grad_assign_wrong(t):
    x = t.ones(2, requires_grad=True)
    x.grad = t.ones(3)


@case
def grad_assign_dtype(t):
    x = t.ones(2, requires_grad=True)
    x.grad = t.ones(2, dtype=t.float64)


@case
def grad_accumulate(t):
    x = t.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    print(x.grad)
    x.grad.zero_()
    print(x.grad)


@case
def backward_inputs(t):
    x = t.ones(2, requires_grad=True)
    w = t.ones(2, requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    print(x.grad, w.grad)


@case
def anomaly(t):
    with t.autograd.set_detect_anomaly(True):
        print(t.is_anomaly_enabled())
    print(t.is_anomaly_enabled())


@case
def saved_tensors_hooks(t):
    def pack(x):
        print("pack", x.shape)
        return x

    def unpack(x):
        print("unpack")
        return x

    x = t.ones(2, requires_grad=True)
    with t.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    y.sum().backward()
    print(x.grad)


@case
def node_hooks(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: print("hook", len(gi), len(go)))
    y.grad_fn.register_prehook(lambda go: print("pre", go[0]))
    y.sum().backward()


@case
def version_counter(t):
    x = t.ones(2)
    print(x._version)
    x.add_(1)
    print(x._version)
    x[0] = 5
    print(x._version)
    v = x[1:]
    v.mul_(2)
    print(x._version, v._version)


@case
def functional_jac(t):
    print(t.autograd.functional.jacobian(lambda a: a**2, t.tensor([1.0, 2.0])))
    print(t.autograd.functional.hessian(lambda a: (a**3).sum(), t.tensor([1.0, 2.0])))


@case
def vjp(t):
    print(t.autograd.functional.vjp(lambda a: a**2, t.tensor([1.0, 2.0]), t.ones(2)))


@case
def grad_fn_next_functions(t):
    x = t.ones(2, requires_grad=True)
    y = (x * 2).sum()
    nxt = y.grad_fn.next_functions
    print(y.grad_fn.name(), len(nxt), nxt[0][0].name(), nxt[0][1])
    acc = nxt[0][0].next_functions[0][0]
    print(type(acc).__name__, acc.variable is x, nxt[0][0].next_functions[1], x.grad_fn)


@case
def mode_flags(t):
    print(t.is_inference_mode_enabled(), t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled())
    with t.inference_mode():
        x = t.ones(2, requires_grad=True) * 2
        print(t.is_inference_mode_enabled(), t.is_grad_enabled(), x.requires_grad)
    with t.inference_mode(False):
        print(t.is_inference_mode_enabled(), t.is_grad_enabled())
    with t.autograd.set_detect_anomaly(True, check_nan=False):
        print(t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled())
    print(t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled())


@case
def gradcheck_non_square_mismatch(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return t.cat([x * 2, x[:1] * 3])

        @staticmethod
        def backward(ctx, g):
            return g[:2] * 2

    x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
    t.autograd.gradcheck(F.apply, (x,))


@case
def gradcheck_no_input_requires_grad(t):
    t.autograd.gradcheck(lambda a: a * 2, (t.ones(2, dtype=t.float64),))


@case
def retain_graph_double_backward(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = (x**2).sum()
    y.backward(retain_graph=True)
    y.backward()
    print(x.grad)


@case
def hooks_modify_and_order(t):
    x = t.ones(2, requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: print("y hook", g))
    x.register_hook(lambda g: print("x hook 1", g))
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: print("x hook 3", g))
    y.sum().backward()
    print(x.grad)


@case
def module_hooks_print(t):
    nn = t.nn
    m = nn.Linear(2, 1)
    m.register_forward_pre_hook(lambda mod, inp: print("pre", type(mod).__name__, len(inp)))
    m.register_forward_hook(lambda mod, inp, out: print("fwd", out.shape))
    m.register_full_backward_hook(
        lambda mod, gi, go: print("bwd", [g.shape if g is not None else None for g in gi], go[0].shape)
    )
    m.register_full_backward_pre_hook(lambda mod, go: print("bwd pre", go[0].shape))
    m(t.ones(3, 2, requires_grad=True)).sum().backward()


def _fn_with_saved_inputs(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            print("needs", ctx.needs_input_grad)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    return F


@case
def needs_input_grad(t):
    F = _fn_with_saved_inputs(t)
    x = t.ones(2, requires_grad=True)
    y = t.ones(2)
    z = F.apply(x, y)
    z.sum().backward()
    print(x.grad, y.grad)


@case
def saved_after_free(t):
    F = _fn_with_saved_inputs(t)
    x = t.ones(2, requires_grad=True)
    z = F.apply(x, t.ones(2))
    z.sum().backward()
    print(z.grad_fn.saved_tensors)


@case
def save_non_tensor(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    F.apply(t.ones(1, requires_grad=True))


@case
def return_non_tensor_from_backward(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3

    F.apply(t.ones(1, requires_grad=True)).sum().backward()


@case
def function_returns_input(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = t.ones(2, requires_grad=True)
    y = F.apply(x)
    print(y is x, y.grad_fn.name() if y.grad_fn else None)
    y.sum().backward()
    print(x.grad)


@case
def function_set_materialize_grads(t):
    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            print("g2", g2)
            return g1 * 2

    x = t.ones(2, requires_grad=True)
    a, b = F.apply(x)
    a.sum().backward()
    print(x.grad)


@case
def grad_of_int(t):
    x = t.tensor([1, 2])
    t.autograd.grad(x.sum(), x)


@case
def grad_not_requiring(t):
    x = t.ones(2)
    y = t.ones(2, requires_grad=True)
    t.autograd.grad((y * 2).sum(), x)


@case
def grad_outputs_shape(t):
    x = t.ones(2, requires_grad=True)
    t.autograd.grad(x * 2, x, grad_outputs=t.ones(3))


@case
def backward_gradient_arg(t):
    x = t.ones(2, requires_grad=True)
    (x * 2).backward(gradient=t.tensor([1.0, 0.5]))
    print(x.grad)


@case
def backward_wrong_grad_shape(t):
    x = t.ones(2, requires_grad=True)
    (x * 2).backward(t.ones(3))


@case
def double_backward_no_create(t):
    x = t.ones(2, requires_grad=True)
    (g,) = t.autograd.grad((x**2).sum(), x)
    t.autograd.grad(g.sum(), x)


@case
def hook_returns_wrong_shape(t):
    x = t.ones(2, requires_grad=True)
    x.register_hook(lambda g: t.ones(3))
    (x * 2).sum().backward()


@case
def retain_grad_leaf(t):
    x = t.ones(2, requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    print(x.grad, x.retains_grad)


@case
def retain_grad_nograd(t):
    t.ones(2).retain_grad()


@case
def grad_mode_in_backward_hook(t):
    x = t.ones(2, requires_grad=True)
    x.register_hook(lambda g: print("enabled", t.is_grad_enabled()))
    (x * 2).sum().backward()


@case
def checkpoint_like_detach_requires_grad(t):
    x = t.ones(2, requires_grad=True)
    y = (x * 2).detach().requires_grad_()
    z = (y * 3).sum()
    z.backward()
    print(y.grad, x.grad)


@case
def zero_dim_ops(t):
    x = t.tensor(2.0, requires_grad=True)
    y = x**3
    y.backward()
    print(x.grad, y, y.dim(), y.shape)


@case
def nan_grad(t):
    x = t.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt().sum()
    y.backward()
    print(x.grad)
    x = t.tensor([0.0, 4.0], requires_grad=True)
    (x.norm() * 0).backward()
    print(x.grad)
    x = t.zeros(2, requires_grad=True)
    x.norm().backward()
    print(x.grad)


@case
def abs_relu_at_zero(t):
    x = t.tensor([0.0, -1.0, 2.0], requires_grad=True)
    (x.abs().sum() + x.relu().sum() + x.clamp(0, 1).sum() + x.max()).backward()
    print(x.grad)


def _chain(fn, depth=6):
    out = []
    while fn is not None and depth:
        out.append(fn.name().replace("torch::autograd::", ""))
        nxt = [n[0] for n in fn.next_functions if n[0] is not None]
        fn = nxt[0] if nxt else None
        depth -= 1
    return out


# (1-D @ 2-D is left out: PyTorch ends it with an in-place squeeze_, SqueezeBackward4, which
# minitorch_nn does not have; it uses squeeze, SqueezeBackward1.)
MATMUL_SHAPES = [
    ((2, 3), (3,)),
    ((4, 2, 3), (3,)),
    ((4, 2, 3), (3, 2)),
    ((3,), (4, 3, 2)),
    ((2, 3), (4, 3, 2)),
    ((4, 2, 3), (4, 3, 2)),
    ((1, 2, 3), (4, 3, 2)),
    ((4, 2, 3), (1, 3, 2)),
    ((2, 1, 2, 3), (4, 3, 2)),
    ((3,), (3,)),
]


@case
def matmul_graphs_and_layouts(t):
    # which ops matmul decomposes into (fold into mm/mv, squeeze a batch of one, bmm) depends on
    # the shapes and on which operand needs a gradient, as in ATen's _matmul_impl
    for a, b in MATMUL_SHAPES:
        for ra, rb in ((True, True), (True, False), (False, True)):
            x, y = t.ones(*a, requires_grad=ra), t.ones(*b, requires_grad=rb)
            z = x @ y
            names = [n for n in _chain(z.grad_fn) if n not in ("ReshapeAliasBackward0", "ViewBackward0")]
            print(a, b, ra, rb, names, tuple(z.shape), z.stride())


@case
def matmul_nd_gradients(t):
    t.manual_seed(0)
    x = t.randn(4, 2, 3, requires_grad=True)
    v = t.randn(3, requires_grad=True)
    w = t.randn(2, 3, requires_grad=True)
    b = t.randn(4, 3, 2, requires_grad=True)
    ((x @ v).sum() + (w @ b).pow(2).sum() + (v @ b).sum()).backward()
    print(x.grad.sum(), v.grad, w.grad, b.grad.sum())


@pytest.mark.parametrize("name", sorted(CASES))
def test_autograd_scenario_matches_torch(name):
    assert_same_transcript(CASES[name])

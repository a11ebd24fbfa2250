"""Scenario sweep: parametrizations (register, cached, right_inverse, removal, orthogonal, weight_norm, spectral_norm) and lazy modules: printed modules and tensors, state_dict keys, errors.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts (stdout, returned
repr, error type and text, warnings) must be identical; see ``_scenario_helpers.py``.
Building an optimizer before a lazy module's first forward is refused on purpose (a clear
error instead of silently untrained weights), so that scenario is not here.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def P(t):
    return t.nn.utils.parametrize


@case
def param_basic(t):
    nn = t.nn

    class Sym(nn.Module):
        def forward(s, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    m = nn.Linear(3, 3)
    P(t).register_parametrization(m, "weight", Sym())
    print(m)
    print(list(m.state_dict()))
    print(type(m).__name__, type(m).__mro__[1].__name__)
    print(P(t).is_parametrized(m), P(t).is_parametrized(m, "weight"), P(t).is_parametrized(m, "bias"))
    print([n for n, _ in m.named_parameters()])
    print(m.parametrizations)
    print(m.parametrizations.weight)
    P(t).remove_parametrizations(m, "weight")
    print(m)
    print(type(m).__name__, list(m.state_dict()))


@case
def param_cached(t):
    nn = t.nn

    class Dbl(nn.Module):
        def forward(s, X):
            print("called")
            return X * 2

    m = nn.Linear(2, 2)
    P(t).register_parametrization(m, "weight", Dbl())
    with P(t).cached():
        a = m.weight
        b = m.weight
        print(a is b)
    print(m.weight.shape)  # outside cached(): the parametrization runs again (prints "called")


@case
def param_right_inverse(t):
    nn = t.nn

    class Dbl(nn.Module):
        def forward(s, X):
            return X * 2

        def right_inverse(s, X):
            return X / 2

    m = nn.Linear(2, 2)
    w0 = m.weight.detach().clone()
    P(t).register_parametrization(m, "weight", Dbl())
    print(t.allclose(m.weight, w0))
    m.weight = t.ones(2, 2)
    print(m.parametrizations.weight.original)
    print(m.weight)


@case
def param_remove_no_leave(t):
    nn = t.nn

    class Dbl(nn.Module):
        def forward(s, X):
            return X * 2

    m = nn.Linear(2, 2)
    P(t).register_parametrization(m, "weight", Dbl())
    o = m.parametrizations.weight.original
    P(t).remove_parametrizations(m, "weight", leave_parametrized=False)
    print(m.weight is o)


@case
def param_remove_missing(t):
    P(t).remove_parametrizations(t.nn.Linear(2, 2), "weight")


@case
def param_shape_change(t):
    nn = t.nn

    class Bad(nn.Module):
        def forward(s, X):
            return X[0]

    P(t).register_parametrization(nn.Linear(2, 2), "weight", Bad())


@case
def param_dtype_change(t):
    nn = t.nn

    class Bad(nn.Module):
        def forward(s, X):
            return X.double()

    P(t).register_parametrization(nn.Linear(2, 2), "weight", Bad())


@case
def param_unsafe(t):
    nn = t.nn

    class Bad(nn.Module):
        def forward(s, X):
            return X[0]

    m = nn.Linear(2, 2)
    P(t).register_parametrization(m, "weight", Bad(), unsafe=True)
    print(m.weight.shape)


@case
def param_nonexistent(t):
    nn = t.nn
    P(t).register_parametrization(nn.Linear(2, 2), "foo", nn.Identity())


@case
def param_chain(t):
    nn = t.nn
    m = nn.Linear(2, 2)
    P(t).register_parametrization(m, "weight", nn.Identity())
    P(t).register_parametrization(m, "weight", nn.Tanh())
    print(m.parametrizations.weight)
    print(len(m.parametrizations.weight))
    print(list(m.state_dict()))


@case
def param_buffer(t):
    nn = t.nn
    m = nn.BatchNorm1d(2)
    P(t).register_parametrization(m, "running_mean", nn.Identity())
    print(list(m.state_dict()))
    print([n for n, _ in m.named_buffers()], [n for n, _ in m.named_parameters()])


@case
def orthogonal(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 3)
    nn.utils.parametrizations.orthogonal(m)
    print(m)
    print(list(m.state_dict()))
    w = m.weight
    print(t.allclose(w @ w.T, t.eye(3), atol=1e-5))


@case
def weight_norm(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    nn.utils.parametrizations.weight_norm(m)
    print(m)
    print(list(m.state_dict()))
    print(m.parametrizations.weight.original0.shape, m.parametrizations.weight.original1.shape)
    print(m.weight)


@case
def weight_norm_dim(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    nn.utils.parametrizations.weight_norm(m, dim=1)
    print(m.parametrizations.weight.original0.shape)
    print(m.weight)


@case
def spectral_norm(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    nn.utils.parametrizations.spectral_norm(m)
    print(m)
    print(list(m.state_dict()))
    print(m.weight)
    m.eval()
    print(m.weight)


@case
def lazy_linear(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.LazyLinear(3)
    print(m)
    print(m.weight)
    print(type(m).__name__, type(m.weight).__name__)
    print(list(m.state_dict()))
    y = m(t.ones(2, 4))
    print(m)
    print(type(m).__name__, m.weight.shape, y.shape)
    print(m.weight)


@case
def lazy_sd(t):
    nn = t.nn
    m = nn.LazyLinear(3)
    sd = m.state_dict()
    print(sd)
    m2 = nn.Linear(4, 3)
    r = m.load_state_dict(m2.state_dict())
    print(r, m.weight.shape, type(m).__name__)


@case
def lazy_conv(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.LazyConv2d(2, 3)
    print(m)
    m(t.ones(1, 3, 5, 5))
    print(m)
    print(m.weight.shape)


@case
def lazy_bn(t):
    nn = t.nn
    m = nn.LazyBatchNorm1d()
    print(m)
    print(list(m.state_dict()))
    m(t.ones(2, 3))
    print(m, m.running_mean)


@case
def lazy_seq(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    print(m)
    m(t.ones(1, 3))
    print(m)
    print([p.shape for p in m.parameters()])


@case
def lazy_params_access(t):
    nn = t.nn
    m = nn.LazyLinear(3)
    print(m.weight.shape)


@case
def lazy_params_op(t):
    nn = t.nn
    m = nn.LazyLinear(3)
    m.weight + 1


@case
def lazy_has_uninit(t):
    nn = t.nn
    m = nn.LazyLinear(3)
    print(m.has_uninitialized_params())
    m(t.ones(1, 2))
    print(m.has_uninitialized_params())


@case
def lazy_param_repr(t):
    nn = t.nn
    p = nn.UninitializedParameter()
    print(p)
    print(repr(p))
    b = nn.UninitializedBuffer()
    print(b)
    p.materialize((2, 3))
    print(type(p).__name__, p.shape)


@case
def param_lazy_combo(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.LazyLinear(3)
    m(t.ones(1, 2))
    nn.utils.parametrizations.weight_norm(m)
    print(m)
    print(list(m.state_dict()))


@case
def param_sd_load(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(2, 2)
    nn.utils.parametrizations.weight_norm(m)
    sd = m.state_dict()
    m2 = nn.Linear(2, 2)
    nn.utils.parametrizations.weight_norm(m2)
    print(m2.load_state_dict(sd))
    print(t.equal(m.weight, m2.weight))
    m3 = nn.Linear(2, 2)
    print(m3.load_state_dict(sd, strict=False))


@case
def param_deepcopy(t):
    import copy

    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(2, 2)
    nn.utils.parametrizations.weight_norm(m)
    m2 = copy.deepcopy(m)
    print(m2)
    print(t.equal(m.weight, m2.weight))


@case
def weight_norm_grad_fn_per_dim(t):
    t.manual_seed(0)
    for dim in (0, 1, None, -1):
        m = t.nn.Linear(3, 2)
        t.nn.utils.parametrizations.weight_norm(m, dim=dim)
        print(dim, m.weight.grad_fn.name(), m.parametrizations.weight.original0.shape)
    for dim in (0, 1, 3):
        m = t.nn.Conv2d(2, 3, 2)
        t.nn.utils.parametrizations.weight_norm(m, dim=dim)
        print(dim, m.weight.grad_fn.name())


@case
def weight_norm_training_step(t):
    t.manual_seed(0)
    m = t.nn.Linear(4, 3)
    t.nn.utils.parametrizations.weight_norm(m)
    opt = t.optim.SGD(m.parameters(), lr=0.1)
    m(t.randn(5, 4)).pow(2).sum().backward()
    print(m.parametrizations.weight.original0.grad.shape, m.parametrizations.weight.original1.grad.shape)
    opt.step()
    print(m.weight)


@case
def weight_norm_double_backward(t):
    t.manual_seed(0)
    v = t.randn(2, 3, dtype=t.float64, requires_grad=True)
    g = t.randn(2, 1, dtype=t.float64, requires_grad=True)
    w = t._weight_norm(v, g, 0)
    gv, gg = t.autograd.grad(w, (v, g), t.ones(2, 3, dtype=t.float64), create_graph=True)
    print(w, gv, gg)
    print(t.autograd.grad(gv.sum() + (gg**2).sum(), (v, g)))


@case
def lazy_uninitialized_use_message(t):
    p = t.nn.UninitializedParameter()
    for f in (lambda: p + 1, lambda: p.sum(), lambda: p.view(2), lambda: p.mul_(2)):
        try:
            f()
        except ValueError as e:
            print(str(e)[:100])


@case
def lazy_module_state_dict_round_trip(t):
    t.manual_seed(0)
    m = t.nn.Sequential(t.nn.LazyLinear(3), t.nn.ReLU(), t.nn.LazyLinear(1))
    m(t.ones(2, 4))
    sd = m.state_dict()
    fresh = t.nn.Sequential(t.nn.LazyLinear(3), t.nn.ReLU(), t.nn.LazyLinear(1))
    print(fresh.load_state_dict(sd), fresh)
    print(t.equal(fresh(t.ones(2, 4)), m(t.ones(2, 4))))


@case
def old_weight_norm(t):
    t.manual_seed(0)
    m = t.nn.utils.weight_norm(t.nn.Linear(3, 2))
    print(
        m,
        list(m.state_dict()),
        [n for n, _ in m.named_parameters()],
        m.weight_g.shape,
        m.weight_v.shape,
        type(m.weight).__name__,
        m.weight.grad_fn.name(),
        "weight" in m._parameters,
    )
    y = m(t.ones(1, 3))
    print(y)
    y.sum().backward()
    print(m.weight_g.grad, m.weight_v.grad)
    t.nn.utils.remove_weight_norm(m)
    print(list(m.state_dict()), type(m.weight).__name__, len(m._forward_pre_hooks), m.weight)


@case
def old_weight_norm_errors(t):
    m = t.nn.Linear(3, 2)
    try:
        t.nn.utils.remove_weight_norm(m)
    except Exception as e:
        print(type(e).__name__, e)
    m2 = t.nn.utils.weight_norm(t.nn.Linear(3, 2), name="weight", dim=None)
    print(m2.weight_g.shape)
    try:
        t.nn.utils.weight_norm(m2)
    except Exception as e:
        print(type(e).__name__, e)


@case
def old_weight_norm_checkpoint_into_parametrization(t):
    t.manual_seed(0)
    old = t.nn.utils.weight_norm(t.nn.Linear(3, 2))
    new = t.nn.utils.parametrizations.weight_norm(t.nn.Linear(3, 2))
    print(new.load_state_dict(old.state_dict()), t.equal(new.weight, old.weight))


@case
def old_weight_norm_conv_dim(t):
    t.manual_seed(0)
    m = t.nn.utils.weight_norm(t.nn.Conv2d(2, 3, 2), dim=1)
    print(m.weight_g.shape, m.weight.grad_fn.name(), m(t.ones(1, 2, 3, 3)).sum())


@pytest.mark.parametrize("name", sorted(CASES))
def test_parametrize_and_lazy_match_torch(name):
    assert_same_transcript(CASES[name])

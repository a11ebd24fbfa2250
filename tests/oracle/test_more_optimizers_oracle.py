"""Oracle: Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop and LBFGS against PyTorch 2.13
(``foreach=False``, the single-tensor path PyTorch takes on cpu).

* trajectories: the same parameters and hand-set gradients for 50 steps; parameters and every
  state tensor must be *bit-identical* (those that take a square root: to 1e-6, see
  ``ROUNDED_DIFFERENTLY``);
* state dicts load in both directions (PyTorch's into ours and ours into PyTorch's) and the two
  optimizers then continue identically;
* param-group defaults, ``repr`` and the argument errors match;
* LBFGS (with and without the strong-Wolfe line search): the same iterations and evaluations
  as PyTorch, values to float64 rounding (the closure's own matmul and sums round differently),
  state dicts both ways, convergence to the least-squares solution, the strong-Wolfe conditions
  on random problems (hypothesis), and a ``gradcheck`` of the gradient its closure feeds it.
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.optim  # noqa: E402,F401  (mt.optim)
from minitorch_nn.optim.lbfgs import _strong_wolfe  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402

SHAPES = [(3, 4), (5,), (2, 3, 2)]

# PyTorch's cpu ``sqrt`` is not correctly rounded: on this build about 0.6% of float32 inputs
# get a result one unit in the last place away from the exact square root (numpy's, and ours).
# The optimizers that take a square root of their state every step can therefore drift by a
# few ulps; all the others are checked bit for bit.
ROUNDED_DIFFERENTLY = {"Adadelta", "NAdam", "RAdam"}

CONFIGS = [
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10, weight_decay=0.01)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 1), maximize=True)),
]


def _grads(step, dtype):
    rng = np.random.default_rng(1000 + step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _kw(lib, kwargs):
    kw = dict(kwargs)
    if lib is torch:
        kw["foreach"] = False
    return kw


def run(lib, name, kwargs, steps=50, dtype=np.float32, groups=False, skip_grad=None):
    rng = np.random.default_rng(0)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]
    spec = [{"params": params[:2]}, {"params": params[2:], "lr": 0.03}] if groups else params
    opt = getattr(lib.optim, name)(spec, **_kw(lib, kwargs))
    for step in range(steps):
        take_steps(lib, opt, params, step, dtype, skip_grad)
    return params, opt


def take_steps(lib, opt, params, step, dtype, skip_grad=None):
    opt.zero_grad()
    for i, (p, g) in enumerate(zip(params, _grads(step, dtype))):
        if skip_grad is not None and i == skip_grad and step % 3 == 0:
            continue   # a parameter without a gradient this step is left alone
        p.grad = lib.tensor(g)
    opt.step()


def snapshot(params, opt):
    out = [("param", p.detach().numpy().copy()) for p in params]
    for p in params:
        for k, v in sorted(opt.state[p].items()):
            out.append((k, v.detach().numpy().copy()))
    return out


def assert_same(theirs, ours, exact):
    assert [k for k, _ in theirs] == [k for k, _ in ours]
    for (k, a), (_, b) in zip(theirs, ours):
        assert a.dtype == b.dtype, k
        if exact:
            np.testing.assert_array_equal(b, a, err_msg=k)
        else:
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=str)
def test_trajectory_50_steps(name, kwargs):
    assert_same(snapshot(*run(torch, name, kwargs)), snapshot(*run(mt, name, kwargs)),
                exact=name not in ROUNDED_DIFFERENTLY)


@pytest.mark.parametrize("name,kwargs", CONFIGS[::2], ids=str)
def test_trajectory_float64_groups_and_missing_grads(name, kwargs):
    t = run(torch, name, kwargs, steps=30, dtype=np.float64, groups=True, skip_grad=1)
    m = run(mt, name, kwargs, steps=30, dtype=np.float64, groups=True, skip_grad=1)
    assert_same(snapshot(*t), snapshot(*m), exact=name not in ROUNDED_DIFFERENTLY)


def convert(value, lib):
    """A state dict with every tensor turned into ``lib``'s (same values, dtype and shape)."""
    if isinstance(value, (torch.Tensor, mt.Tensor)):
        return lib.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: convert(v, lib) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(convert(v, lib) for v in value)
    return value


@pytest.mark.parametrize("direction", ["torch_to_ours", "ours_to_torch"])
@pytest.mark.parametrize("name,kwargs", CONFIGS[1::2], ids=str)
def test_state_dict_loads_both_ways(name, kwargs, direction):
    src_lib, dst_lib = (torch, mt) if direction == "torch_to_ours" else (mt, torch)
    src_params, src_opt = run(src_lib, name, kwargs, steps=7, groups=True)
    sd = src_opt.state_dict()
    dst_params = [dst_lib.nn.Parameter(dst_lib.tensor(p.detach().numpy().copy())) for p in src_params]
    dst_opt = getattr(dst_lib.optim, name)(
        [{"params": dst_params[:2]}, {"params": dst_params[2:], "lr": 0.03}], **_kw(dst_lib, kwargs))
    dst_opt.load_state_dict(convert(sd, dst_lib))
    groups = [{k: v for k, v in g.items() if k != "foreach"} for g in dst_opt.state_dict()["param_groups"]]
    assert groups == [{k: v for k, v in g.items() if k != "foreach"} for g in sd["param_groups"]]
    for step in range(7, 12):   # both continue from the same state
        take_steps(src_lib, src_opt, src_params, step, np.float32)
        take_steps(dst_lib, dst_opt, dst_params, step, np.float32)
    assert_same(snapshot(src_params, src_opt), snapshot(dst_params, dst_opt), exact=name not in ROUNDED_DIFFERENTLY)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop", "LBFGS"])
def test_defaults_and_repr(name):
    def make(lib):
        opt = getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))])
        return {k: v for k, v in opt.param_groups[0].items() if k != "params"}, repr(opt)

    assert make(mt) == make(torch)


BAD_ARGS = [
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)),
    ("Adamax", dict(lr=-1)), ("Adamax", dict(betas=(1.0, 0.9))), ("Adamax", dict(betas=(0.9, -0.1))),
    ("Adamax", dict(eps=-1)), ("Adamax", dict(weight_decay=-1)),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(momentum_decay=-1)), ("NAdam", dict(betas=(0.9, 1.0))),
    ("RAdam", dict(eps=-1)), ("RAdam", dict(betas=(-0.1, 0.9))), ("RAdam", dict(weight_decay=-1)),
    ("Rprop", dict(lr=-1)), ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("LBFGS", dict(lr=-1)),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS, ids=str)
def test_argument_errors(name, kwargs):
    def make(lib):
        return getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **kwargs)

    assert error_of(lambda: make(mt)) == error_of(lambda: make(torch))


def test_lbfgs_structure_errors():
    def groups(lib):
        a, b = lib.nn.Parameter(lib.zeros(1)), lib.nn.Parameter(lib.zeros(1))
        return lib.optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])

    def bad_search(lib):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.LBFGS([w], line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        return opt.step(closure)

    for case in (groups, bad_search):
        assert error_of(lambda: case(mt)) == error_of(lambda: case(torch))


# -- LBFGS -------------------------------------------------------------------------------------
def lbfgs_problem(lib, line_search_fn, history_size, steps=5, max_iter=20, lr=1, dtype=np.float64):
    rng = np.random.default_rng(0)
    A = lib.tensor(rng.standard_normal((20, 6)).astype(dtype))
    b = lib.tensor(rng.standard_normal(20).astype(dtype))
    w = lib.nn.Parameter(lib.tensor(np.zeros(6, dtype=dtype)))
    c = lib.nn.Parameter(lib.tensor(np.ones(2, dtype=dtype)))
    opt = lib.optim.LBFGS([w, c], lr=lr, line_search_fn=line_search_fn, history_size=history_size, max_iter=max_iter)

    def closure():
        opt.zero_grad()
        r = A @ w - b
        loss = (r * r).sum() + ((c - 3) ** 4).sum() + (w**4).sum() * 0.1
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    return opt, [w, c], losses


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [100, 3])
def test_lbfgs_matches(line_search_fn, history_size):
    t_opt, t_params, t_losses = lbfgs_problem(torch, line_search_fn, history_size)
    m_opt, m_params, m_losses = lbfgs_problem(mt, line_search_fn, history_size)
    ts, ms = t_opt.state[t_params[0]], m_opt.state[m_params[0]]
    assert sorted(ts) == sorted(ms)
    for key in ("func_evals", "n_iter"):
        assert ts[key] == ms[key], key
    assert len(ts["old_dirs"]) == len(ms["old_dirs"]) and type(ms["H_diag"]) is mt.Tensor
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-12)
    for a, b in zip(t_params, m_params):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    for x, y in zip(ts["old_dirs"] + ts["old_stps"], ms["old_dirs"] + ms["old_stps"]):
        # (differences of nearly equal gradients: compared relative to the vector's size)
        np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=0, atol=1e-5 * np.abs(x.numpy()).max())


@pytest.mark.parametrize("direction", ["torch_to_ours", "ours_to_torch"])
def test_lbfgs_state_dict_loads_both_ways(direction):
    src_lib, dst_lib = (torch, mt) if direction == "torch_to_ours" else (mt, torch)
    src_opt, src_params, _ = lbfgs_problem(src_lib, "strong_wolfe", 5, steps=1, max_iter=4)
    sd = src_opt.state_dict()
    dst_opt, dst_params, _ = lbfgs_problem(dst_lib, "strong_wolfe", 5, steps=0, max_iter=4)
    with dst_lib.no_grad():
        for d, s in zip(dst_params, src_params):
            d.copy_(dst_lib.tensor(s.detach().numpy().copy()))
    dst_opt.load_state_dict(convert(sd, dst_lib))
    state = dst_opt.state[dst_params[0]]
    assert state["n_iter"] == 4 and len(state["old_dirs"]) == len(sd["state"][0]["old_dirs"])
    # one more step on each side, from the same point and the same memory
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 6))
    b = rng.standard_normal(20)
    for lib, opt, (w, c) in ((src_lib, src_opt, src_params), (dst_lib, dst_opt, dst_params)):
        At, bt = lib.tensor(A), lib.tensor(b)

        def closure(opt=opt, w=w, c=c, At=At, bt=bt):
            opt.zero_grad()
            r = At @ w - bt
            loss = (r * r).sum() + ((c - 3) ** 4).sum() + (w**4).sum() * 0.1
            loss.backward()
            return loss

        opt.step(closure)
    for a, b_ in zip(src_params, dst_params):
        np.testing.assert_allclose(b_.detach().numpy(), a.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert src_opt.state[src_params[0]]["n_iter"] == dst_opt.state[dst_params[0]]["n_iter"] > 4


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_solves_least_squares(line_search_fn):
    rng = np.random.default_rng(3)
    A, b = rng.standard_normal((30, 5)), rng.standard_normal(30)
    At, bt = mt.tensor(A), mt.tensor(b)
    w = mt.nn.Parameter(mt.zeros(5, dtype=mt.float64))
    opt = mt.optim.LBFGS([w], line_search_fn=line_search_fn, max_iter=100, tolerance_grad=1e-12,
                         tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = ((At @ w - bt) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-6, atol=1e-7)


def test_lbfgs_closure_gradient_passes_gradcheck():
    # The gradient LBFGS reads (_gather_flat_grad after closure()) is the true one.
    rng = np.random.default_rng(4)
    A = mt.tensor(rng.standard_normal((8, 4)))

    def loss_fn(w):
        r = A @ w - 1.0
        return (r * r).sum() + (w**4).sum()

    w0 = mt.tensor(rng.standard_normal(4), requires_grad=True)
    assert mt.autograd.gradcheck(loss_fn, (w0,))
    w = mt.nn.Parameter(w0.detach().clone())
    opt = mt.optim.LBFGS([w], max_iter=1)

    def closure():
        opt.zero_grad()
        loss = loss_fn(w)
        loss.backward()
        return loss

    closure()
    flat = opt._gather_flat_grad()
    numeric = np.zeros(4)
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        plus = loss_fn(mt.tensor(w0.detach().numpy() + e)).item()
        minus = loss_fn(mt.tensor(w0.detach().numpy() - e)).item()
        numeric[i] = (plus - minus) / 2e-6
    np.testing.assert_allclose(flat.numpy(), numeric, rtol=1e-6, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 6), t0=st.sampled_from([0.01, 1.0, 30.0]))
def test_strong_wolfe_conditions_hold(seed, n, t0):
    # a convex quadratic plus a quartic: the search must return a step meeting both conditions
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M @ M.T + np.eye(n)
    x0 = rng.standard_normal(n)

    def f_and_g(x):
        return float(0.5 * x @ Q @ x + 0.25 * np.sum(x**4)), Q @ x + x**3

    f0, g0 = f_and_g(x0)
    d = -g0
    gtd = float(g0 @ d)

    def obj_func(x, t, d):
        f, g = f_and_g(x0 + float(t) * d.numpy())
        return f, mt.tensor(g)

    f_new, g_new, t, evals = _strong_wolfe(obj_func, None, t0, mt.tensor(d), f0, mt.tensor(g0), mt.tensor(gtd))
    t = float(t)
    assert f_new <= f0 + 1e-4 * t * gtd + 1e-12
    assert abs(float(g_new.dot(mt.tensor(d)))) <= 0.9 * abs(gtd) + 1e-9
    assert 1 <= evals <= 25
    np.testing.assert_allclose(f_new, f_and_g(x0 + t * d)[0], rtol=1e-12)


def test_lbfgs_trains_a_model_like_pytorch():
    def train(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).double()
        x = lib.tensor(np.linspace(-1, 1, 24).reshape(8, 3))
        y = lib.tensor(np.sin(np.arange(8.0)).reshape(8, 1))
        opt = lib.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe", max_iter=10)

        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        losses = [opt.step(closure).item() for _ in range(3)]
        return losses, opt.state[next(iter(model.parameters()))]["func_evals"]

    (t_losses, t_evals), (m_losses, m_evals) = train(torch), train(mt)
    assert t_evals == m_evals
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-9)


def test_deepcopy_and_pickle_of_new_optimizers():
    for name in ("Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop"):
        params, opt = run(mt, name, {}, steps=2)
        clone = copy.deepcopy(opt)
        assert sorted(clone.state_dict()["state"]) == sorted(opt.state_dict()["state"])

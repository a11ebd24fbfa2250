"""Oracle: Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop and LBFGS against PyTorch 2.13.

The same parameters and the same gradients at every step (from a seeded numpy stream, no
autograd), then parameters and every state tensor must be PyTorch's (``foreach=False``, the path
PyTorch takes for cpu tensors): bit for bit for the optimizers whose arithmetic we reproduce
(Adamax, ASGD, Rprop), and within a few ulps for those that take a square root (Adadelta, NAdam,
RAdam): PyTorch's cpu ``sqrt`` is a vectorised approximation that differs from the correctly
rounded square root in about one element in a hundred, by one ulp. LBFGS minimises a small least-squares
problem through a closure, with and without the strong-Wolfe line search. State dicts load both
ways: a run resumed from the other library's state continues exactly.
"""

import copy

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.optim  # noqa: E402,F401

SHAPES = [(3, 4), (5,), (2, 3, 2)]


def _params(lib, dtype):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]


def _grads(step, dtype):
    rng = np.random.default_rng(1000 + step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def run(lib, name, kwargs, steps=30, dtype=np.float32, groups=False, params=None, opt=None, start=0):
    params = params if params is not None else _params(lib, dtype)
    if opt is None:
        spec = [{"params": params[:2]}, {"params": params[2:], "lr": 0.03}] if groups else params
        kw = dict(kwargs)
        if lib is torch:
            kw["foreach"] = False
        opt = getattr(lib.optim, name)(spec, **kw)
    for step in range(start, start + steps):
        opt.zero_grad()
        for i, (p, g) in enumerate(zip(params, _grads(step, dtype))):
            if groups and i == 1 and step % 4 == 0:
                continue   # a parameter without a gradient this step is skipped
            p.grad = lib.tensor(g)
        opt.step()
    return params, opt


def _state(opt, params):
    out = []
    for p in params:
        for key, value in sorted(opt.state[p].items()):
            out.append((key, value.detach().numpy().copy() if hasattr(value, "numpy") else value))
    return out


EXACT = {"Adamax", "ASGD", "Rprop"}   # no square root in their update


def assert_same(t_run, m_run, exact=True):
    (tp, topt), (mp, mopt) = t_run, m_run
    check = np.testing.assert_array_equal if exact else (
        lambda b, a, err_msg="": np.testing.assert_allclose(b, a, rtol=2e-6, atol=1e-12, err_msg=err_msg))
    for a, b in zip(tp, mp):
        check(b.detach().numpy(), a.detach().numpy())
    ts, ms = _state(topt, tp), _state(mopt, mp)
    assert [k for k, _ in ts] == [k for k, _ in ms]
    for (key, a), (_, b) in zip(ts, ms):
        assert np.asarray(a).dtype == np.asarray(b).dtype, key
        check(b, a, err_msg=key)


CONFIGS = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.05, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.02)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=10, weight_decay=0.01, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.05, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.85, 0.9), weight_decay=0.05)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 0.2), maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=str)
def test_trajectory(name, kwargs):
    assert_same(run(torch, name, kwargs), run(mt, name, kwargs), exact=name in EXACT)


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::2], ids=str)
def test_trajectory_float64_groups_and_missing_grads(name, kwargs):
    assert_same(run(torch, name, kwargs, dtype=np.float64, groups=True),
                run(mt, name, kwargs, dtype=np.float64, groups=True), exact=name in EXACT)


def _to(lib, value):
    """A state-dict value carried over to the other library."""
    if hasattr(value, "detach"):
        return lib.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to(lib, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to(lib, v) for v in value]
    return copy.deepcopy(value)


@pytest.mark.parametrize("name,kwargs", [c for c in CONFIGS if c[1]], ids=str)
def test_state_dicts_load_both_ways(name, kwargs):
    t_params, t_opt = run(torch, name, kwargs, steps=7, groups=True)
    m_params, m_opt = run(mt, name, kwargs, steps=7, groups=True)
    t_sd, m_sd = t_opt.state_dict(), m_opt.state_dict()
    assert sorted(t_sd["state"]) == sorted(m_sd["state"])
    for key in t_sd["state"]:
        assert sorted(t_sd["state"][key]) == sorted(m_sd["state"][key])
    for tg, mg in zip(t_sd["param_groups"], m_sd["param_groups"]):
        assert {k: v for k, v in tg.items() if k != "foreach"} == {k: v for k, v in mg.items() if k != "foreach"}
    # each library resumes from the other's state dict, and the two runs stay identical
    t_params2 = [torch.nn.Parameter(torch.tensor(p.detach().numpy().copy())) for p in m_params]
    m_params2 = [mt.nn.Parameter(mt.tensor(p.detach().numpy().copy())) for p in t_params]
    spec = lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.03}]  # noqa: E731
    t_opt2 = getattr(torch.optim, name)(spec(t_params2), **kwargs, foreach=False)
    m_opt2 = getattr(mt.optim, name)(spec(m_params2), **kwargs)
    t_opt2.load_state_dict(_to(torch, m_sd))
    m_opt2.load_state_dict(_to(mt, t_sd))
    assert_same(run(torch, name, kwargs, steps=5, groups=True, params=t_params2, opt=t_opt2, start=7),
                run(mt, name, kwargs, steps=5, groups=True, params=m_params2, opt=m_opt2, start=7),
                exact=name in EXACT)


@pytest.mark.parametrize("name,bad,message", [
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("ASGD", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("Rprop", dict(etas=(1.2, 0.5)), "Invalid eta values: 1.2, 0.5"),
    ("LBFGS", dict(lr=-0.5), "Invalid learning rate: -0.5"),
])
def test_errors(name, bad, message):
    for lib in (torch, mt):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **bad)


def test_defaults_and_repr():
    for name in ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop", "LBFGS"]:
        t = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))])
        m = getattr(mt.optim, name)([mt.nn.Parameter(mt.zeros(2))])
        assert t.defaults == m.defaults, name
        assert repr(t) == repr(m), name


# -- LBFGS ---------------------------------------------------------------------------------------

def _lbfgs_run(lib, steps=4, **kwargs):
    rng = np.random.default_rng(7)
    a = lib.tensor(rng.standard_normal((8, 3)))
    b = lib.tensor(rng.standard_normal(8))
    w = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
    c = lib.nn.Parameter(lib.tensor([0.5], dtype=lib.float64))
    opt = lib.optim.LBFGS([w, c], **kwargs)
    losses = []

    def closure():
        opt.zero_grad()
        r = a @ w + c - b
        loss = (r * r).sum() + (w.pow(4)).sum() * 0.1
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(float(opt.step(closure).detach()))
    state = opt.state[w]
    return losses, w.detach().numpy().copy(), c.detach().numpy().copy(), state["func_evals"], state["n_iter"]


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", max_iter=7, history_size=2, tolerance_change=1e-12),
], ids=str)
def test_lbfgs_matches_torch(kwargs):
    # float64 throughout; the line search's cubic takes one square root of a 0-d tensor
    t, m = _lbfgs_run(torch, **kwargs), _lbfgs_run(mt, **kwargs)
    np.testing.assert_allclose(m[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(m[1], t[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m[2], t[2], rtol=1e-10, atol=1e-12)
    assert t[3:] == m[3:], "function evaluations and iterations"


def test_lbfgs_closure_gradients_pass_gradcheck():
    # L-BFGS trusts the gradients the closure leaves in .grad: those of the objective above are
    # checked against finite differences
    rng = np.random.default_rng(7)
    a, b = mt.tensor(rng.standard_normal((8, 3))), mt.tensor(rng.standard_normal(8))

    def objective(w, c):
        r = a @ w + c - b
        return (r * r).sum() + (w.pow(4)).sum() * 0.1

    w = mt.tensor(rng.standard_normal(3), requires_grad=True)
    c = mt.tensor([0.5], dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(objective, (w, c))
    assert mt.autograd.gradgradcheck(objective, (w, c))


def test_lbfgs_converges_on_a_quadratic():
    w = mt.nn.Parameter(mt.tensor([3.0, -2.0], dtype=mt.float64))
    target = mt.tensor([1.0, 4.0], dtype=mt.float64)
    opt = mt.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), [1.0, 4.0], atol=1e-8)


def test_lbfgs_refuses_groups_and_unknown_line_search():
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="doesn't support per-parameter options"):
            lib.optim.LBFGS([{"params": [lib.nn.Parameter(lib.zeros(1))]}, {"params": [lib.nn.Parameter(lib.zeros(1))]}])
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.LBFGS([p], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)

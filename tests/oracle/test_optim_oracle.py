"""Oracle: optimizers and learning-rate schedules against PyTorch 2.13 (``foreach=False``).

Trajectories: the same parameters, the same gradients at every step (set by hand from a seeded
numpy stream, so no autograd is involved), 50 steps, then parameters and every state tensor must
match PyTorch's. Also state_dict round trips, param groups, reprs, errors and the schedules.
"""

import copy
import importlib
import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.optim  # noqa: E402,F401  (mt.optim)

SHAPES = [(3, 4), (5,), (2, 3, 2)]


def _params(lib, dtype=np.float32):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]


def _grads(step, dtype=np.float32):
    rng = np.random.default_rng(1000 + step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def run(lib, opt_name, kwargs, steps=50, dtype=np.float32, groups=False, sched=None, skip_grad=None):
    params = _params(lib, dtype)
    if groups:
        spec = [{"params": params[:2]}, {"params": params[2:], "lr": 0.03}]
    else:
        spec = params
    kw = dict(kwargs)
    if lib is torch and opt_name != "Optimizer":
        kw["foreach"] = False
    opt = getattr(lib.optim, opt_name)(spec, **kw)
    scheduler = sched(lib, opt) if sched else None
    lrs = []
    for step in range(steps):
        opt.zero_grad()
        for i, (p, g) in enumerate(zip(params, _grads(step, dtype))):
            if skip_grad is not None and i == skip_grad and step % 3 == 0:
                continue  # a parameter without a gradient this step is left alone
            p.grad = lib.tensor(g)
        opt.step()
        if scheduler is not None:
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
    return params, opt, lrs


def _state_arrays(opt, params):
    out = []
    for p in params:
        for k, v in sorted(opt.state[p].items()):
            out.append((k, v.detach().numpy().copy() if hasattr(v, "numpy") else v))
    return out


def compare(t_run, m_run, rtol=1e-6, atol=1e-6):
    (tp, topt, tl), (mp, mopt, ml) = t_run, m_run
    for a, b in zip(tp, mp):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)
    ts, ms = _state_arrays(topt, tp), _state_arrays(mopt, mp)
    assert [k for k, _ in ts] == [k for k, _ in ms]
    for (k, a), (_, b) in zip(ts, ms):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=k)
    assert tl == ml  # the same float arithmetic, so exactly equal


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True)),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=str)
def test_trajectory_50_steps(name, kwargs):
    compare(run(torch, name, kwargs), run(mt, name, kwargs))


@pytest.mark.parametrize("name,kwargs", [CONFIGS[2], CONFIGS[6], CONFIGS[10]], ids=str)
def test_trajectory_float64_groups_and_missing_grads(name, kwargs):
    t = run(torch, name, kwargs, steps=30, dtype=np.float64, groups=True, skip_grad=1)
    m = run(mt, name, kwargs, steps=30, dtype=np.float64, groups=True, skip_grad=1)
    compare(t, m, rtol=1e-12, atol=1e-12)


SCHEDULES = {
    "step": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.5),
    "cosine": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=0.001),
    "multistep": lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[5, 20, 20, 31], gamma=0.3),
    "exponential": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.93),
    "lambda": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1 / (1 + e), lambda e: 0.97**e]),
}


@pytest.mark.parametrize("sched", list(SCHEDULES))
@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[9]], ids=str)
def test_trajectory_with_schedule(sched, name, kwargs):
    # 50 steps: the cosine schedule passes T_max and climbs back up (its periodic branch)
    t = run(torch, name, kwargs, groups=True, sched=SCHEDULES[sched])
    m = run(mt, name, kwargs, groups=True, sched=SCHEDULES[sched])
    compare(t, m)
    assert t[1].param_groups[1]["initial_lr"] == m[1].param_groups[1]["initial_lr"]


def test_schedule_epoch_argument_and_state_dict():
    out = []
    for lib in (torch, mt):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=1.0)
        s = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.step()  # before optimizer.step(): PyTorch warns
            s.step(5)  # closed form, with the deprecation warning
        sd = s.state_dict()
        out.append((opt.param_groups[0]["lr"], s.get_last_lr(), s.last_epoch, sorted(sd),
                    [str(x.message)[:40] for x in w]))
    assert out[0] == out[1]


def test_state_dict_roundtrip_matches_and_resumes():
    results = []
    for lib in (torch, mt):
        params, opt, _ = run(lib, "Adam", dict(lr=0.01, amsgrad=True), steps=5, groups=True)
        sd = opt.state_dict()
        results.append((sorted(sd["state"]), sd["param_groups"],
                        {k: sorted(v) for k, v in sd["state"].items()},
                        float(sd["state"][0]["step"]), sd["state"][0]["step"].dtype == lib.float32))
        # a fresh optimizer over other parameters continues exactly
        params2 = [lib.nn.Parameter(p.detach().clone()) for p in params]
        kw = {"foreach": False} if lib is torch else {}
        opt2 = lib.optim.Adam([{"params": params2[:2]}, {"params": params2[2:], "lr": 0.03}], lr=0.01, amsgrad=True,
                              **kw)
        # load a copy: like PyTorch's, load_state_dict shares the tensors it is given
        opt2.load_state_dict(copy.deepcopy(sd))
        for o, ps in ((opt, params), (opt2, params2)):
            for p, g in zip(ps, _grads(99)):
                p.grad = lib.tensor(g)
            o.step()
        for a, b in zip(params, params2):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    t, m = results
    assert t[0] == m[0] and t[2] == m[2] and t[3] == m[3] and t[4] and m[4]
    tg, mg = t[1], m[1]
    for a, b in zip(tg, mg):
        a = {k: v for k, v in a.items() if k not in ("foreach",)}
        b = {k: v for k, v in b.items() if k not in ("foreach",)}
        assert a == b


def test_repr_and_defaults():
    for name, kwargs in [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict()), ("AdamW", dict(lr=0.5))]:
        reprs = []
        for lib in (torch, mt):
            opt = getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **kwargs)
            reprs.append(repr(opt))
        assert reprs[0] == reprs[1]


def test_zero_grad():
    for lib in (torch, mt):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SGD([p], lr=0.1)
        p.grad = lib.ones(3)
        opt.zero_grad(set_to_none=False)
        assert p.grad is not None and p.grad.sum().item() == 0
        opt.zero_grad()
        assert p.grad is None


@pytest.mark.parametrize("bad", [
    lambda lib, ps: lib.optim.SGD(ps, lr=-1),
    lambda lib, ps: lib.optim.SGD(ps, momentum=-0.5),
    lambda lib, ps: lib.optim.SGD(ps, weight_decay=-1),
    lambda lib, ps: lib.optim.SGD(ps, nesterov=True),
    lambda lib, ps: lib.optim.Adam(ps, betas=(1.0, 0.9)),
    lambda lib, ps: lib.optim.Adam(ps, betas=(0.9, -0.1)),
    lambda lib, ps: lib.optim.Adam(ps, eps=-1.0),
    lambda lib, ps: lib.optim.AdamW(ps, lr=-0.1),
    lambda lib, ps: lib.optim.SGD([], lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps[0], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": set(ps)}], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": ps}, {"params": ps[:1]}], lr=0.1),
    lambda lib, ps: lib.optim.SGD([ps[0] * 2], lr=0.1),
    lambda lib, ps: lib.optim.SGD([1.0], lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1).add_param_group(ps),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1).load_state_dict(lib.optim.SGD([{"params": ps}, {"params": []}]).state_dict()),
    lambda lib, ps: lib.optim.lr_scheduler.StepLR(None, 3),
    lambda lib, ps: lib.optim.lr_scheduler.StepLR(lib.optim.SGD(ps, lr=0.1), 3, last_epoch=4),
])
def test_errors(bad):
    errors = []
    for lib in (torch, mt):
        ps = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))]
        with pytest.raises(Exception) as info:
            bad(lib, ps)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0])
    assert str(errors[0]).split("torch.")[0] in str(errors[1])


def test_training_with_autograd_matches():
    """The optimizers on gradients from backward(): a tiny regression, 20 Adam steps."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((32, 5)).astype(np.float32), rng.standard_normal((32, 1)).astype(np.float32)
    finals = []
    for lib in (torch, mt):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 16), lib.nn.Tanh(), lib.nn.Linear(16, 1))
        kw = {"foreach": False} if lib is torch else {}
        opt = lib.optim.AdamW(model.parameters(), lr=0.01, **kw)
        sched = lib.optim.lr_scheduler.StepLR(opt, 5)
        X, Y = lib.tensor(x), lib.tensor(y)
        for _ in range(20):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(X), Y)
            loss.backward()
            opt.step()
            sched.step()
        finals.append([p.detach().numpy().copy() for p in model.parameters()] + [loss.item()])
    for a, b in zip(*finals):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_step_hooks_order_and_arguments():
    logs = []
    for lib in (torch, mt):
        log = []
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.5)
        module = importlib.import_module(lib.optim.__name__ + ".optimizer")
        h1 = module.register_optimizer_step_pre_hook(lambda o, a, k, log=log: log.append(("global pre", len(a))))
        h2 = module.register_optimizer_step_post_hook(lambda o, a, k, log=log: log.append(("global post", len(a))))
        opt.register_step_pre_hook(lambda o, a, k, log=log: log.append(("pre", type(o).__name__, sorted(k))))
        handle = opt.register_step_post_hook(lambda o, a, k, log=log, opt=opt: log.append(("post", o is opt)))
        try:
            p.grad = lib.ones(2)
            opt.step()
            handle.remove()
            opt.step(closure=None)
        finally:
            h1.remove()
            h2.remove()
        opt.step()
        log.append(p.detach().numpy().tolist())
        logs.append(log)
    assert logs[0] == logs[1]

"""Scenario sweep: learning-rate schedulers (MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR,
OneCycleLR with momentum and Adam's beta1, ReduceLROnPlateau, CosineAnnealingWarmRestarts with
fractional epochs, SequentialLR, ChainedScheduler), their errors and state dicts.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical (the
rates compared as printed floats, so to the last bit); see ``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def opt(t, **kw):
    a = t.ones(2, requires_grad=True)
    b = t.ones(1, requires_grad=True)
    return t.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, **kw)


def run(t, o, s, n, metric=None):  # noqa: ARG001
    out = []
    for i in range(n):
        o.step()
        s.step(metric[i]) if metric else s.step()
        out.append([g["lr"] for g in o.param_groups] + [s.get_last_lr()])
    print(out)


@case
def linear(t):
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=3), 6)
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=4), 6)


@case
def constant(t):
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2), 4)


@case
def multiplicative(t):
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9), 4)


@case
def polynomial(t):
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.PolynomialLR(o, total_iters=4, power=2.0), 6)


@case
def onecycle(t):
    o = opt(t, momentum=0.9)
    s = t.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=7)
    run(t, o, s, 6)
    print([g["momentum"] for g in o.param_groups])
    a = t.ones(1, requires_grad=True)
    o = t.optim.Adam([a], lr=0.1)
    s = t.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, epochs=2, steps_per_epoch=3, anneal_strategy="linear", three_phase=True
    )
    run(t, o, s, 6)
    print(o.param_groups[0]["betas"])


@case
def onecycle_too_many(t):
    o = opt(t, momentum=0.9)
    s = t.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=2)
    run(t, o, s, 3)


@case
def onecycle_no_momentum(t):
    a = t.ones(1, requires_grad=True)
    o = t.optim.SGD([a], lr=0.1)
    t.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5)
    print(o.param_groups[0]["momentum"])


@case
def plateau(t):
    o = opt(t)
    s = t.optim.lr_scheduler.ReduceLROnPlateau(o, patience=1)
    run(t, o, s, 7, [1, 1, 1, 1, 0.5, 0.6, 0.7])
    print(s.num_bad_epochs, s.best, s.state_dict().keys())
    o = opt(t)
    s = t.optim.lr_scheduler.ReduceLROnPlateau(
        o, mode="max", factor=0.5, patience=0, cooldown=1, min_lr=[0.03, 0.2], threshold_mode="abs"
    )
    run(t, o, s, 6, [1, 0.9, 0.8, 0.7, 0.6, 2])


@case
def scheduler_errors(t):
    o = opt(t)
    for f in [
        lambda: t.optim.lr_scheduler.LinearLR(o, start_factor=0),
        lambda: t.optim.lr_scheduler.ConstantLR(o, factor=2),
        lambda: t.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0),
        lambda: t.optim.lr_scheduler.ReduceLROnPlateau(o, mode="avg"),
        lambda: t.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0),
        lambda: t.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=3, pct_start=1),
        lambda: t.optim.lr_scheduler.MultiplicativeLR(o, [lambda e: 1]),
        lambda: t.optim.lr_scheduler.MultiplicativeLR(o, 3),
        lambda: t.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0], total_steps=3),
        lambda: t.optim.lr_scheduler.ReduceLROnPlateau(3),
    ]:
        try:
            f()
            print("ok")
        except Exception as e:
            print(type(e).__name__, e)


@case
def closed_form_epoch(t):
    o = opt(t)
    s = t.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4)
    o.step()
    s.step(3)
    print(s.get_last_lr())


@case
def sched_state_dict(t):
    o = opt(t)
    s = t.optim.lr_scheduler.LinearLR(o)
    o.step()
    s.step()
    print(sorted(s.state_dict().keys()))
    o = opt(t)
    s = t.optim.lr_scheduler.ReduceLROnPlateau(o)
    print(sorted(s.state_dict().keys()))


@case
def warm_restarts(t):
    o = opt(t)
    run(t, o, t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01), 8)
    o = opt(t)
    s = t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3)
    for e in [0.5, 1.25, 3.5, 7.0, 2]:
        o.step()
        s.step(e)
        print(s.get_last_lr(), s.T_cur, s.T_i, s.last_epoch)
    o = opt(t)
    s = t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3)
    for e in [5.0, 9, 20]:
        o.step()
        s.step(e)
        print(s.get_last_lr(), s.T_cur, s.T_i)


@case
def sequential_warmup_cosine(t):
    o = opt(t)
    w = t.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3)
    c = t.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4)
    s = t.optim.lr_scheduler.SequentialLR(o, [w, c], milestones=[3])
    print(s.get_last_lr())
    run(t, o, s, 8)
    print(sorted(s.state_dict()), s.last_epoch)


@case
def sequential_three(t):
    o = opt(t)
    a = t.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2)
    b = t.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)
    c = t.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
    s = t.optim.lr_scheduler.SequentialLR(o, [a, b, c], milestones=[2, 5])
    run(t, o, s, 8)


@case
def chained(t):
    o = opt(t)
    s = t.optim.lr_scheduler.ChainedScheduler(
        [
            t.optim.lr_scheduler.ConstantLR(o, factor=0.1, total_iters=2),
            t.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
        ]
    )
    print(s.get_last_lr())
    run(t, o, s, 5)
    print(sorted(s.state_dict()))


@case
def composed_errors(t):
    o = opt(t)
    for f in [
        lambda: t.optim.lr_scheduler.SequentialLR(o, [], []),
        lambda: t.optim.lr_scheduler.SequentialLR(o, [t.optim.lr_scheduler.StepLR(o, 1)], [1]),
        lambda: t.optim.lr_scheduler.SequentialLR(o, [t.optim.lr_scheduler.ReduceLROnPlateau(o)], []),
        lambda: t.optim.lr_scheduler.ChainedScheduler([]),
        lambda: t.optim.lr_scheduler.ChainedScheduler([t.optim.lr_scheduler.StepLR(o, 1), 3]),
        lambda: t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda: t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
        lambda: t.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="a"),
    ]:
        try:
            f()
            print("ok")
        except Exception as e:
            print(type(e).__name__, e)


@case
def sequential_state_round_trip(t):
    o = opt(t)
    s = t.optim.lr_scheduler.SequentialLR(
        o, [t.optim.lr_scheduler.LinearLR(o, total_iters=2), t.optim.lr_scheduler.ExponentialLR(o, 0.5)], milestones=[2]
    )
    run(t, o, s, 3)
    sd = s.state_dict()
    o2 = opt(t)
    s2_ = t.optim.lr_scheduler.SequentialLR(
        o2,
        [t.optim.lr_scheduler.LinearLR(o2, total_iters=2), t.optim.lr_scheduler.ExponentialLR(o2, 0.5)],
        milestones=[2],
    )
    s2_.load_state_dict(sd)
    print(s2_.last_epoch, s2_._schedulers[1].last_epoch, s2_.get_last_lr())


@pytest.mark.parametrize("name", sorted(CASES))
def test_lr_scheduler_matches_torch(name):
    assert_same_transcript(CASES[name])

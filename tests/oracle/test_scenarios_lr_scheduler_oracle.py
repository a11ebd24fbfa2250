"""Scenario sweep: learning-rate schedulers (MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR,
OneCycleLR with momentum and Adam's beta1, ReduceLROnPlateau), their errors and state dicts.

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


@pytest.mark.parametrize("name", sorted(CASES))
def test_lr_scheduler_matches_torch(name):
    assert_same_transcript(CASES[name])

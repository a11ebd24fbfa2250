"""Scenario sweep: RMSprop (plain, centered, momentum, weight decay, maximize, float64) and Adagrad
(lr_decay, initial accumulator, weight decay, maximize) trained a few steps in both libraries, with
their reprs, state dicts, errors and a OneCycleLR driving RMSprop's momentum.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical (the
trained weights printed to 4 decimals, the state compared through the printed state dict); see
``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def train(t, make, steps=4, dtype=None):
    t.manual_seed(0)
    m = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.Tanh(), t.nn.Linear(4, 2))
    if dtype is not None:
        m = m.to(dtype)
    opt = make(m.parameters())
    x = t.randn(5, 3, dtype=dtype or t.float32)
    for _ in range(steps):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    print(m[0].weight, m[2].bias)  # (printed: matmul sums in another order than BLAS, last bits may differ)
    sd = opt.state_dict()
    print(sd["param_groups"], {k: sorted(v) for k, v in sd["state"].items()}, sd["state"][0]["step"])
    return opt


@case
def rmsprop_plain(t):
    o = train(t, lambda p: t.optim.RMSprop(p, lr=0.01))
    print(o)


@case
def rmsprop_all_options(t):
    train(
        t,
        lambda p: t.optim.RMSprop(
            p, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5, centered=True, maximize=True
        ),
    )


@case
def rmsprop_float64(t):
    train(t, lambda p: t.optim.RMSprop(p, lr=0.02, momentum=0.9), dtype=t.float64)


@case
def adagrad_plain(t):
    o = train(t, lambda p: t.optim.Adagrad(p, lr=0.1))
    print(o)


@case
def adagrad_all_options(t):
    train(
        t,
        lambda p: t.optim.Adagrad(
            p, lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1, eps=1e-8, maximize=True
        ),
    )


@case
def adagrad_state_before_step(t):
    p = t.nn.Parameter(t.ones(2))
    o = t.optim.Adagrad([p], initial_accumulator_value=0.5)
    print(o.state[p], o.state_dict())


@case
def optimizer_errors(t):
    p = [t.nn.Parameter(t.ones(1))]
    for f in [
        lambda: t.optim.RMSprop(p, lr=-1),
        lambda: t.optim.RMSprop(p, alpha=-1),
        lambda: t.optim.RMSprop(p, momentum=-1),
        lambda: t.optim.RMSprop(p, eps=-1),
        lambda: t.optim.Adagrad(p, lr_decay=-1),
        lambda: t.optim.Adagrad(p, initial_accumulator_value=-1),
        lambda: t.optim.Adagrad(p, eps=-1),
        lambda: t.optim.Adagrad(p, weight_decay=-1),
    ]:
        try:
            f()
            print("ok")
        except Exception as e:
            print(type(e).__name__, e)


@case
def rmsprop_load_state(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 2)
    o = t.optim.RMSprop(m.parameters(), momentum=0.9)
    m(t.ones(1, 2)).sum().backward()
    o.step()
    o2 = t.optim.RMSprop(m.parameters(), momentum=0.9)
    o2.load_state_dict(o.state_dict())
    print(o2.state[m.weight]["momentum_buffer"], o2.state[m.weight]["step"])


@case
def sched_with_rmsprop(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 1)
    o = t.optim.RMSprop(m.parameters(), lr=0.1, momentum=0.9)
    s = t.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=4)
    for _ in range(3):
        o.zero_grad()
        m(t.ones(1, 2)).sum().backward()
        o.step()
        s.step()
    print(o.param_groups[0]["lr"], o.param_groups[0]["momentum"], m.weight)


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_torch(name):
    assert_same_transcript(CASES[name])

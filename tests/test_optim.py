"""Unit tests for ``minitorch_nn.optim`` that need no PyTorch: the update rules written out in
numpy, param groups, state dicts and the schedules' closed forms."""

import math
import pickle

import numpy as np
import pytest

import minitorch_nn as mt
import minitorch_nn.optim as optim
from minitorch_nn.optim.lr_scheduler import CosineAnnealingLR, StepLR

RNG = np.random.default_rng(0)


def param(*shape):
    return mt.nn.Parameter(mt.tensor(RNG.standard_normal(shape)))


def test_sgd_nesterov_weight_decay_by_hand():
    p = param(4)
    p0 = p.detach().numpy().copy()
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    grads = [RNG.standard_normal(4) for _ in range(3)]
    x, buf = p0.copy(), None
    for g in grads:
        p.grad = mt.tensor(g)
        opt.step()
        d = g + 0.01 * x
        buf = d.copy() if buf is None else 0.9 * buf + d
        x = x - 0.1 * (d + 0.9 * buf)
    np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), buf, rtol=1e-12)


@pytest.mark.parametrize("cls,decoupled", [(optim.Adam, False), (optim.AdamW, True)])
def test_adam_by_hand(cls, decoupled):
    p = param(3, 2)
    x = p.detach().numpy().copy()
    opt = cls([p], lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)
    m = v = np.zeros_like(x)
    for step in range(1, 6):
        g = RNG.standard_normal(x.shape)
        p.grad = mt.tensor(g)
        opt.step()
        if decoupled:
            x = x * (1 - 0.05 * 0.1)
        else:
            g = g + 0.1 * x
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        denom = np.sqrt(v) / math.sqrt(1 - 0.9**step) + 1e-6
        x = x - 0.05 / (1 - 0.8**step) * m / denom
    np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-10)
    state = opt.state[p]
    assert state["step"].item() == 5 and state["step"].dtype is mt.float32


def test_minimizes_a_quadratic_with_autograd():
    target = mt.tensor([1.0, -2.0, 3.0])
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.5), lambda ps: optim.Adam(ps, lr=0.1)):
        w = mt.nn.Parameter(mt.zeros(3))
        opt = make([w])
        for _ in range(300):
            opt.zero_grad()
            loss = ((w - target) ** 2).sum()
            loss.backward()
            opt.step()
        np.testing.assert_allclose(w.detach().numpy(), target.numpy(), atol=1e-2)


def test_param_groups_defaults_and_errors():
    a, b = param(2), param(3)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list") as info:
        optim.Adam([])
    assert "Hint:" in str(info.value) and "ModuleList" in str(info.value)
    gen = (p for p in [a])
    list(gen)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD(gen)  # an exhausted generator
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(a)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2])
    named = optim.SGD([("w", a), ("v", b)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "v"]


def test_params_without_grad_are_skipped():
    a, b = param(2), param(2)
    before = b.detach().numpy().copy()
    opt = optim.Adam([a, b])
    a.grad = mt.ones_like(a)
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), before)
    assert b not in opt.state and "exp_avg" in opt.state[a]


def test_state_dict_roundtrip_and_pickle():
    a, b = param(2), param(3)
    opt = optim.AdamW([a, b], lr=0.01)
    a.grad, b.grad = mt.ones_like(a), mt.ones_like(b)
    opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    assert sd["param_groups"][0]["decoupled_weight_decay"] is True
    c, d = param(2), param(3)
    other = optim.AdamW([c, d], lr=0.5)
    other.load_state_dict(pickle.loads(pickle.dumps(sd)))
    assert other.param_groups[0]["lr"] == 0.01 and other.param_groups[0]["params"] == [c, d]
    np.testing.assert_array_equal(other.state[c]["exp_avg"].numpy(), opt.state[a]["exp_avg"].numpy())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict({"state": {}, "param_groups": []})


def test_zero_grad_modes():
    a = param(2)
    opt = optim.SGD([a], lr=0.1)
    a.grad = mt.ones_like(a)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.numpy(), 0)
    opt.zero_grad()
    assert a.grad is None


def test_step_lr_and_cosine_closed_forms():
    a = param(1)
    opt = optim.SGD([a], lr=1.0)
    sched = StepLR(opt, step_size=3, gamma=0.5)
    lrs = []
    for _ in range(10):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [0.5 ** ((e + 1) // 3) for e in range(10)]

    opt = optim.SGD([param(1)], lr=2.0)
    cos = CosineAnnealingLR(opt, T_max=8, eta_min=0.1)
    for epoch in range(1, 9):
        opt.step()
        cos.step()
        closed = 0.1 + (2.0 - 0.1) * (1 + math.cos(math.pi * epoch / 8)) / 2
        assert cos.get_last_lr()[0] == pytest.approx(closed, rel=1e-12)
    assert opt.param_groups[0]["initial_lr"] == 2.0


def test_scheduler_warns_when_stepped_before_optimizer():
    opt = optim.SGD([param(1)], lr=1.0)
    sched = StepLR(opt, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        sched.step()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        StepLR([], 2)

"""The optimizers added after SGD/Adam, without PyTorch: each one minimises a quadratic, keeps the
state its docstring names, and resumes exactly from its own state dict. (Trajectories against
PyTorch are in tests/oracle/test_optim_more_oracle.py.)"""

import copy

import numpy as np
import pytest

import minitorch_nn as mt

STATE_KEYS = {
    "Adadelta": {"step", "square_avg", "acc_delta"},
    "Adamax": {"step", "exp_avg", "exp_inf"},
    "ASGD": {"step", "eta", "mu", "ax"},
    "NAdam": {"step", "mu_product", "exp_avg", "exp_avg_sq"},
    "RAdam": {"step", "exp_avg", "exp_avg_sq"},
    "Rprop": {"step", "prev", "step_size"},
}
LR = {"Adadelta": 20.0, "Adamax": 0.1, "ASGD": 0.05, "NAdam": 0.05, "RAdam": 0.05, "Rprop": 0.05}


def _loss(w, target):
    return ((w - target) ** 2).sum()


@pytest.mark.parametrize("name", sorted(STATE_KEYS))
def test_minimises_a_quadratic_and_keeps_its_state(name):
    target = mt.tensor([1.0, -2.0, 0.5], dtype=mt.float64)
    w = mt.nn.Parameter(mt.zeros(3, dtype=mt.float64))
    opt = getattr(mt.optim, name)([w], lr=LR[name])
    start = _loss(w, target).item()
    for _ in range(300):
        opt.zero_grad()
        _loss(w, target).backward()
        opt.step()
    assert _loss(w, target).item() < 0.05 * start, name
    assert set(opt.state[w]) == STATE_KEYS[name]
    assert opt.state[w]["step"].item() == 300


@pytest.mark.parametrize("name", sorted(STATE_KEYS))
def test_resumes_exactly_from_a_state_dict(name):
    def make():
        torch_like = mt
        w = torch_like.nn.Parameter(torch_like.tensor([0.3, -0.7, 1.1]))
        return w, getattr(torch_like.optim, name)([w], lr=LR[name] / 10)

    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(3).astype(np.float32) for _ in range(8)]
    w1, opt1 = make()
    for g in grads[:4]:
        w1.grad = mt.tensor(g)
        opt1.step()
    w2, opt2 = make()
    with mt.no_grad():
        w2.copy_(w1)
    opt2.load_state_dict(copy.deepcopy(opt1.state_dict()))
    for g in grads[4:]:
        for w, opt in ((w1, opt1), (w2, opt2)):
            w.grad = mt.tensor(g)
            opt.step()
    np.testing.assert_array_equal(w1.detach().numpy(), w2.detach().numpy())


def test_lbfgs_minimises_rosenbrock():
    xy = mt.nn.Parameter(mt.tensor([-1.5, 2.0], dtype=mt.float64))
    opt = mt.optim.LBFGS([xy], line_search_fn="strong_wolfe", max_iter=100)

    def closure():
        opt.zero_grad()
        x, y = xy[0], xy[1]
        loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(xy.detach().numpy(), [1.0, 1.0], atol=1e-5)
    assert opt.state[xy]["func_evals"] > 0 and opt.state[xy]["n_iter"] > 0

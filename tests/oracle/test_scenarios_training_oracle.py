"""Scenario sweep: optimizers, learning-rate schedulers, ``nn.init`` and layer initialisation under
``manual_seed``, random sampling, gradient clipping and parameter/vector conversion.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``. Optimizer errors where minitorch_nn adds a hint after PyTorch's text
(an empty parameter list, a non-leaf tensor) are tested with the hint elsewhere.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


@case
def init_seed(t):
    nn = t.nn
    for fn in [
        "uniform_",
        "normal_",
        "xavier_uniform_",
        "xavier_normal_",
        "kaiming_uniform_",
        "kaiming_normal_",
        "trunc_normal_",
        "orthogonal_",
        "zeros_",
        "ones_",
    ]:
        t.manual_seed(0)
        w = t.empty(3, 4)
        getattr(nn.init, fn)(w)
        print(fn, w)
    t.manual_seed(0)
    w = t.empty(3, 4)
    nn.init.constant_(w, 0.3)
    print(w)
    t.manual_seed(0)
    w = t.empty(4, 4)
    nn.init.sparse_(w, 0.5) if hasattr(nn.init, "sparse_") else None
    print(
        nn.init.calculate_gain("relu"),
        nn.init.calculate_gain("leaky_relu", 0.2),
        nn.init.calculate_gain("tanh"),
        nn.init.calculate_gain("selu"),
    )


@case
def init_kaiming_modes(t):
    nn = t.nn
    t.manual_seed(1)
    w = t.empty(2, 3, 3, 3)
    nn.init.kaiming_uniform_(w, a=0.1, mode="fan_out", nonlinearity="leaky_relu")
    print(w.sum(), w[0, 0])
    t.manual_seed(1)
    w = t.empty(2, 3)
    nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("relu"))
    print(w)


@case
def init_errors(t):
    t.nn.init.xavier_uniform_(t.empty(3))


@case
def init_gain_err(t):
    t.nn.init.calculate_gain("foo")


@case
def init_eye(t):
    w = t.empty(2, 3)
    t.nn.init.eye_(w)
    print(w)
    w = t.empty(2, 2, 3)
    t.nn.init.dirac_(w)
    print(w)


@case
def module_init_seed(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Sequential(
        nn.Linear(3, 2),
        nn.Conv2d(1, 2, 2),
        nn.Embedding(3, 2),
        nn.BatchNorm1d(2),
        nn.LayerNorm(2),
        nn.Conv1d(2, 2, 2),
        nn.ConvTranspose2d(2, 1, 2),
    )
    for k, v in m.state_dict().items():
        print(k, v)


@case
def randoms(t):
    t.manual_seed(3)
    print(
        t.rand(3),
        t.randn(2, 2),
        t.randint(0, 10, (5,)),
        t.randperm(6),
        t.rand(2, dtype=t.float64),
        t.randn(3).bernoulli_() if False else 0,
    )
    g = t.Generator().manual_seed(5)
    print(t.rand(2, generator=g), t.randn(2, generator=g))
    t.manual_seed(3)
    x = t.empty(4).uniform_(-1, 1)
    print(
        x,
        t.empty(3).normal_(2, 0.5),
        t.bernoulli(t.full((5,), 0.5)),
        t.multinomial(t.tensor([0.2, 0.8]), 4, replacement=True),
    )
    t.manual_seed(3)
    print(t.nn.functional.dropout(t.ones(8), 0.5))


@case
def dropout_module(t):
    t.manual_seed(0)
    d = t.nn.Dropout(0.3)
    print(d(t.ones(10)))
    d.eval()
    print(d(t.ones(3)))


@case
def sgd_steps(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = t.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    x = t.randn(4, 3)
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    print(m.weight, m.bias)
    print(opt.state_dict()["param_groups"])
    print(opt)


@case
def adam_steps(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = t.optim.Adam(m.parameters(), lr=0.01, amsgrad=True, weight_decay=0.1)
    x = t.randn(4, 3)
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    print(m.weight)
    sd = opt.state_dict()
    print(sd["param_groups"])
    print(sorted(sd["state"][0].keys()), sd["state"][0]["step"])
    print(opt)


@case
def adamw_steps(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = t.optim.AdamW(m.parameters(), lr=0.01, betas=(0.8, 0.9))
    x = t.randn(4, 3)
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    print(m.weight)
    print(opt)


@case
def optim_load_sd(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(2, 2)
    opt = t.optim.Adam(m.parameters(), lr=0.01)
    m(t.ones(1, 2)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    opt2 = t.optim.Adam(m.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    print(opt2.param_groups[0]["lr"], opt2.state[m.weight]["exp_avg"])


@case
def optim_errors(t):
    t.optim.SGD([t.ones(2, requires_grad=True)], lr=-1)


@case
def optim_errors2(t):
    t.optim.SGD(t.ones(2, requires_grad=True), lr=0.1)


@case
def optim_errors3(t):
    t.optim.Adam([t.ones(2, requires_grad=True)], betas=(1.0, 0.9))


@case
def optim_dup(t):
    x = t.ones(2, requires_grad=True)
    t.optim.SGD([x, x], lr=0.1)


@case
def optim_groups(t):
    a = t.ones(2, requires_grad=True)
    b = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    print(opt)
    opt.add_param_group({"params": t.ones(1, requires_grad=True)})
    print(len(opt.param_groups), opt.param_groups[2]["lr"])


@case
def optim_zero_grad(t):
    a = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([a], lr=0.1)
    (a * 2).sum().backward()
    opt.zero_grad()
    print(a.grad)
    (a * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    print(a.grad)


@case
def sched_step(t):
    a = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    out = []
    for _ in range(5):
        opt.step()
        s.step()
        out.append(s.get_last_lr()[0])
    print(out, s.state_dict())


@case
def sched_cos(t):
    a = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    out = []
    for _ in range(6):
        opt.step()
        s.step()
        out.append(opt.param_groups[0]["lr"])
    print(out)


@case
def sched_multistep_exp_lambda(t):
    a = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.MultiStepLR(opt, [1, 3], gamma=0.1)
    out = []
    for _ in range(4):
        opt.step()
        s.step()
        out.append(s.get_last_lr())
    print(out)
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1))
    out = []
    for _ in range(3):
        opt.step()
        s.step()
        out.append(s.get_last_lr())
    print(out, opt.param_groups[0]["initial_lr"])
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.ExponentialLR(opt, 0.9)
    out = []
    for _ in range(3):
        opt.step()
        s.step()
        out.append(s.get_last_lr())
    print(out)


@case
def sched_order_warn(t):
    a = t.ones(2, requires_grad=True)
    opt = t.optim.SGD([a], lr=0.1)
    s = t.optim.lr_scheduler.StepLR(opt, 1)
    s.step()


@case
def clip_grad_norm_training_step(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = t.optim.SGD(m.parameters(), lr=0.1)
    m(t.randn(5, 3)).pow(2).sum().backward()
    total = nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.5)
    print(total, [p.grad.norm() for p in m.parameters()])
    print(nn.utils.get_total_norm([p.grad for p in m.parameters()]))
    opt.step()
    print(m[0].weight)


@case
def clip_grad_norm_variants(t):
    nn = t.nn
    t.manual_seed(1)
    ps = [nn.Parameter(t.randn(3)), nn.Parameter(t.randn(2, 2)), nn.Parameter(t.randn(1))]
    for p in ps[:2]:
        p.grad = t.randn_like(p) * 10
    print(nn.utils.clip_grad_norm_(ps, 1.0, norm_type=float("inf")), [p.grad for p in ps[:2]])
    print(nn.utils.clip_grad_norm_(ps[0], 100.0, norm_type=1), ps[0].grad)
    print(nn.utils.clip_grad_norm_(iter([]), 1.0), nn.utils.clip_grad_norm_([ps[2]], 1.0))
    print(nn.utils.clip_grad_norm_((p for p in []), 1.0))


@case
def clip_grad_norm_nonfinite(t):
    p = t.nn.Parameter(t.ones(2))
    p.grad = t.tensor([float("inf"), 1.0])
    print(t.nn.utils.clip_grad_norm_([p], 1.0), p.grad)
    t.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


@case
def clip_grad_value(t):
    t.manual_seed(2)
    p = t.nn.Parameter(t.randn(4))
    p.grad = t.randn(4) * 3
    print(t.nn.utils.clip_grad_value_([p], 0.5), p.grad)
    q = t.nn.Parameter(t.ones(2))
    q.grad = t.tensor([3.0, -0.25])
    print(t.nn.utils.clip_grad_value_(q, 1), q.grad)


@case
def clip_grad_norm_deprecated_name(t):
    p = t.nn.Parameter(t.ones(2))
    p.grad = t.full((2,), 3.0)
    print(t.nn.utils.clip_grad_norm([p], 1.0), p.grad)


@case
def parameters_vector_round_trip(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Linear(2, 3)
    v = nn.utils.parameters_to_vector(m.parameters())
    print(v, v.shape)
    nn.utils.vector_to_parameters(t.arange(9.0), m.parameters())
    print(m.weight, m.bias, type(m.weight).__name__, m.weight.requires_grad)


@case
def vector_to_parameters_wrong_type(t):
    t.nn.utils.vector_to_parameters([1.0, 2.0], t.nn.Linear(1, 1).parameters())


@case
def top_level_sampling(t):
    t.manual_seed(0)
    print(t.bernoulli(t.full((4,), 0.5)), t.bernoulli(t.full((3,), 0.3), 0.9))
    print(
        t.normal(t.zeros(3), t.ones(3)), t.normal(2.0, 3.0, (2,)), t.normal(t.zeros(2), 2.0), t.normal(1.0, t.ones(2))
    )
    g = t.Generator().manual_seed(1)
    print(t.normal(0.0, 1.0, size=(2,), generator=g), t.normal(t.zeros(2, 1), t.ones(3) * 2))


@case
def normal_negative_std(t):
    t.normal(t.zeros(2), -1.0)


@case
def normal_negative_std_tensor(t):
    t.normal(t.zeros(2), -t.ones(2))


@case
def optimizer_repr_and_state_after_steps(t):
    t.manual_seed(0)
    w = t.nn.Parameter(t.randn(2))
    opt = t.optim.SGD([w], lr=0.1, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (w**2).sum().backward()
        opt.step()
    print(opt.state[w], opt.state_dict()["state"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_utilities_match_torch(name):
    assert_same_transcript(CASES[name])

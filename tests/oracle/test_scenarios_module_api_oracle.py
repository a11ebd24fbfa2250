"""Scenario sweep: the nn.Module API a course uses (containers, registration rules, hooks, train/eval,
apply/init, deepcopy, repr of custom and repeated modules), Parameter and tensor basics, dtype
promotion, numpy interop, tensor subclasses and ``torch.export`` basics.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``. Errors where minitorch_nn adds a hint line after PyTorch's text (assigning
before ``super().__init__()``) are tested with the hint elsewhere.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


@case
def module_api(t):
    nn = t.nn
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
    print(
        [n for n, _ in m.named_modules()], [type(c).__name__ for c in m.children()], [n for n, _ in m.named_children()]
    )
    print(m.training, m.eval().training, m[2].training, m.train().training)
    print(m[0], m[-1], m[1:], len(m), m[2][0].weight.shape)
    m.requires_grad_(False)
    print([p.requires_grad for p in m.parameters()])
    m.zero_grad()
    print(m.get_submodule("2.0"), m.get_parameter("2.0.bias").shape)
    m.register_buffer("buf", t.ones(2), persistent=False)
    print(list(m.state_dict()), [n for n, _ in m.named_buffers()])
    del m[1]
    print(m)
    m.append(nn.Tanh())
    m.insert(0, nn.Identity())
    print(m)


@case
def module_setattr_rules(t):
    nn = t.nn
    m = nn.Module()
    m.a = nn.Parameter(t.ones(1))
    m.b = nn.Linear(1, 1)
    m.register_buffer("c", t.zeros(1))
    m.c = t.ones(1)
    print(list(m._parameters), list(m._modules), list(m._buffers), m.c)
    m.a = None
    print(m.a, list(m.state_dict()))
    try:
        m.b = 3
    except Exception as e:
        print(type(e).__name__, e)
    try:
        m.c = 3
    except Exception as e:
        print(type(e).__name__, e)
    del m.b
    print(hasattr(m, "b"))


@case
def module_forward_hooks_kwargs(t):
    nn = t.nn
    m = nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args, kwargs: print("pre", len(args), kwargs) or None, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: print("post", out.shape, kwargs), with_kwargs=True)
    m(input=t.ones(1, 2))


@case
def deepcopy_module(t):
    import copy

    nn = t.nn
    t.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m2 = copy.deepcopy(m)
    print(
        m2,
        m2[0].weight is m[0].weight,
        t.equal(m2[0].weight, m[0].weight),
        type(m2[0].weight).__name__,
        m2[0].weight.requires_grad,
    )


@case
def parameter_ops(t):
    nn = t.nn
    p = nn.Parameter(t.ones(2, 2))
    print(
        type(p * 2).__name__,
        (p * 2).grad_fn.name(),
        type(p.data).__name__,
        type(p.detach()).__name__,
        type(p[0]).__name__,
        p.is_leaf,
        type(p.clone()).__name__,
    )
    print(isinstance(p, t.Tensor), isinstance(p, nn.Parameter), type(p.T).__name__)


@case
def tensor_methods_misc(t):
    x = t.arange(6.0).reshape(2, 3)
    print(
        x.T,
        x.mT,
        x.numel(),
        x.dim(),
        x.ndim,
        x.nelement(),
        x.element_size(),
        x.is_floating_point(),
        x.type(),
        x.long().type(),
        x.int().dtype,
        x.bool(),
    )
    print(
        x.max(dim=1),
        x.min(0),
        x.sort(descending=True),
        x.topk(2),
        x.argmax(1),
        x.cumsum(1),
        x.std(),
        x.var(1, unbiased=False),
    )
    print(
        x.view(-1).unsqueeze(0).squeeze(),
        x.flip(0),
        x.roll(1, 1),
        x.repeat(2, 1),
        x.t().contiguous().view(3, 2),
        x.split([1, 2], dim=1),
    )


@case
def tensor_named_tuples(t):
    x = t.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    r = x.max(1)
    print(r.values, r.indices, r[0], type(r).__name__, repr(r))
    print(t.sort(x, 1))
    print(x.topk(1, dim=0))
    print(t.std_mean(x) if hasattr(t, "std_mean") else None)


@case
def dtype_promotion(t):
    print(
        (t.tensor([1]) + 1.5).dtype,
        (t.tensor([1], dtype=t.int32) + t.tensor([1])).dtype,
        (t.tensor([1.0], dtype=t.float16) + 1000.0).dtype,
        (t.tensor(1.0) + t.tensor([1], dtype=t.int8)).dtype,
        (t.ones(1, dtype=t.bool) + True).dtype,
        (t.tensor([3]) / t.tensor([2])).dtype,
        t.tensor([True]).sum().dtype,
        t.tensor([1, 2], dtype=t.uint8).sum().dtype,
    )
    print(
        t.result_type(t.tensor([1]), 1.0),
        t.promote_types(t.int32, t.float16),
        t.can_cast(t.float32, t.int32),
        t.finfo(t.float16).max,
        t.finfo(t.bfloat16).eps,
        t.iinfo(t.int8).min,
        t.finfo().tiny,
    )


@case
def tensor_creation(t):
    import numpy as np

    a = np.arange(3)
    x = t.from_numpy(a)
    a[0] = 9
    print(x, x.dtype)
    print(
        t.tensor(a),
        t.as_tensor(a).dtype,
        t.tensor([1, 2.5]),
        t.tensor([[True]]),
        t.tensor(3),
        t.tensor([]),
        t.zeros_like(t.ones(2, dtype=t.int8)),
        t.full((2,), 7),
        t.full((2,), True).dtype,
        t.arange(0, 1, 0.25),
        t.linspace(0, 1, 5),
        t.eye(2, 3),
        t.empty(2).shape,
    )
    print(t.tensor(t.ones(2)))  # (copy-constructing warns)


@case
def tensor_warn_copy_construct(t):
    print(t.tensor(t.ones(2, requires_grad=True)))


@case
def numpy_interop(t):
    x = t.ones(2, 2)
    n = x.numpy()
    n[0, 0] = 5
    print(x, type(n).__name__, n.dtype)
    print(t.ones(2, dtype=t.bfloat16).float().numpy().dtype)


@case
def item_errors(t):
    t.ones(0).item()


@case
def in_place_view_of_leaf(t):
    x = t.ones(3, requires_grad=True)
    v = x[:2]
    v.mul_(2)


@case
def view_inplace_non_leaf(t):
    x = t.ones(3, requires_grad=True)
    y = x * 1
    v = y[:2]
    v.mul_(2)
    print(v.grad_fn.name(), y.grad_fn.name(), y)
    y.sum().backward()
    print(x.grad)


@case
def no_grad_inplace_leaf(t):
    x = t.ones(2, requires_grad=True)
    with t.no_grad():
        x.mul_(2)
    print(x, x.requires_grad, x.grad_fn, x._version)


@case
def detach_shares(t):
    x = t.ones(2, requires_grad=True)
    d = x.detach()
    d[0] = 5
    print(x)
    y = x * 2
    y.sum().backward()
    print(x.grad)


@case
def data_assign(t):
    x = t.ones(2, requires_grad=True)
    x.data = t.zeros(3)
    print(x, x.requires_grad)
    x.data = t.zeros(3, dtype=t.float64)
    print(x.dtype)


@case
def subclass_repr(t):
    class MyT(t.Tensor):
        pass

    x = t.ones(2).as_subclass(MyT)
    print(x, repr(x), type(x + 1).__name__, type(x.sum()).__name__, type(x[0]).__name__)
    y = x.requires_grad_()
    print(y * 2)


@case
def torch_function_subclass_log(t):
    class Log(t.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", str(func))
            print("tf", name)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = t.ones(2).as_subclass(Log)
    y = x + 1
    z = t.nn.functional.relu(y)
    print(type(z).__name__)


@case
def export_basic(t):
    class M(t.nn.Module):
        def __init__(s):
            super().__init__()
            s.l = t.nn.Linear(2, 2)

        def forward(s, x):
            return s.l(x).relu()

    t.manual_seed(0)
    m = M()
    ep = t.export.export(m, (t.ones(1, 2),))
    print(type(ep).__name__, list(ep.state_dict), ep.graph_signature.user_inputs, ep.graph_signature.parameters)
    print(ep.module()(t.ones(1, 2)))


@case
def register_module_buffer_parameter_fns(t):
    m = t.nn.Module()
    m.register_module("a", t.nn.Linear(1, 1))
    print(m)
    print(t.nn.Buffer(t.ones(2)), type(t.nn.Buffer(t.ones(2))).__name__)
    m.b = t.nn.Buffer(t.zeros(1))
    print(list(m.state_dict()))


@case
def module_half_forward(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 2).half()
    print(m(t.ones(1, 2, dtype=t.float16)))


@case
def bf16_ops(t):
    x = t.tensor([1.5, 2.25, 3.0], dtype=t.bfloat16)
    print(x * 3, x.sum(), x.mean(), x.exp(), (x @ x))


@case
def sequential_ordered_dict(t):
    from collections import OrderedDict

    m = t.nn.Sequential(OrderedDict([("fc", t.nn.Linear(1, 2)), ("act", t.nn.ReLU())]))
    print(m, m.fc, list(m.state_dict()))


@case
def modulelist_extend_index(t):
    ml = t.nn.ModuleList([t.nn.ReLU()])
    ml.extend([t.nn.Tanh(), t.nn.Sigmoid()])
    ml += [t.nn.ELU()]
    print(ml, ml[1:3], ml[-1])


@case
def parameterlist_dict(t):
    pl = t.nn.ParameterList([t.nn.Parameter(t.ones(1)), t.ones(2)])
    print(pl, [type(p).__name__ for p in pl])
    pd = t.nn.ParameterDict({"a": t.ones(1)})
    pd["b"] = t.nn.Parameter(t.zeros(2))
    print(pd, list(pd.keys()))


@case
def missing_attr(t):
    print(t.nn.Linear(1, 1).foo)


@case
def forward_not_implemented(t):
    class M(t.nn.Module):
        pass

    M()(1)


@case
def multiline_extra_repr(t):
    class M(t.nn.Module):
        def __init__(s):
            super().__init__()
            s.c = t.nn.Conv2d(1, 1, 1)

        def extra_repr(s):
            return "a=1\nb=2"

    print(M())

    class N(t.nn.Module):
        def extra_repr(s):
            return "x\ny"

    print(N())


@case
def repeated_module_repr(t):
    print(t.nn.Sequential(*[t.nn.Linear(2, 2) for _ in range(5)]))
    l = t.nn.Linear(2, 2)
    print(t.nn.Sequential(l, l, t.nn.ReLU(), t.nn.ReLU()))
    print(t.nn.ModuleList([t.nn.Sequential(t.nn.Linear(1, 1), t.nn.ReLU()) for _ in range(3)]))


@case
def train_eval_modes(t):
    m = t.nn.Sequential(t.nn.Dropout(), t.nn.BatchNorm1d(2))
    m.eval()
    print([c.training for c in m.modules()])
    m.train(False)
    m.train()
    print(m.training)
    try:
        m.train("yes")
    except Exception as e:
        print(type(e).__name__, e)


@case
def module_apply_init(t):
    def init(mod):
        if isinstance(mod, t.nn.Linear):
            t.nn.init.constant_(mod.weight, 0.5)
            t.nn.init.zeros_(mod.bias)

    m = t.nn.Sequential(t.nn.Linear(2, 2), t.nn.ReLU(), t.nn.Linear(2, 1))
    m.apply(init)
    print(m(t.ones(1, 2)))


@case
def init_no_grad_errors(t):
    w = t.ones(2, 2, requires_grad=True) * 1
    t.nn.init.uniform_(w)
    print(w.grad_fn.name() if w.grad_fn else None)


@case
def init_fan_errors(t):
    t.nn.init.kaiming_uniform_(t.empty(0, 3))


@case
def init_trunc(t):
    t.manual_seed(0)
    print(t.nn.init.trunc_normal_(t.empty(5), mean=0, std=1, a=-0.5, b=0.5))
    t.manual_seed(0)
    print(t.nn.init.orthogonal_(t.empty(2, 4), gain=2))


@case
def init_return_and_modes(t):
    t.manual_seed(0)
    w = t.empty(3, 5)
    r = t.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    print(r is w, w)
    t.manual_seed(0)
    print(t.nn.init.xavier_normal_(t.empty(2, 3, 4), gain=0.5))
    try:
        t.nn.init.kaiming_normal_(t.empty(3, 5), mode="fan")
    except Exception as e:
        print(type(e).__name__, e)
    print(
        t.nn.init.calculate_gain("conv2d"), t.nn.init.calculate_gain("sigmoid"), t.nn.init.calculate_gain("leaky_relu")
    )
    try:
        t.nn.init.calculate_gain("leaky_relu", "a")
    except Exception as e:
        print(type(e).__name__, e)


@case
def forward_hook_replaces_output(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 2)
    h = m.register_forward_hook(lambda mod, i, o: o * 0)
    print(m(t.ones(1, 2)))
    h.remove()
    print(m(t.ones(1, 2)).abs().sum() > 0)
    m.register_forward_pre_hook(lambda mod, i: (i[0] * 0,))
    print(m(t.ones(1, 2)) - m.bias)


@case
def transformer_layer(t):
    t.manual_seed(0)
    m = t.nn.TransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=8, dropout=0.0, batch_first=True)
    print(m)
    print(list(m.state_dict())[:6])
    x = t.randn(1, 3, 4)
    print(m(x).shape)
    e = t.nn.TransformerEncoder(m, num_layers=2, enable_nested_tensor=False)
    print(e)


@case
def mha(t):
    t.manual_seed(0)
    a = t.nn.MultiheadAttention(4, 2, batch_first=True) if hasattr(t.nn, "MultiheadAttention") else None
    print(a)
    print([n for n, _ in a.named_parameters()])
    q = t.randn(1, 3, 4)
    out, w = a(q, q, q)
    print(out.shape, w.shape, w.sum(-1))


@case
def conv_transpose_outputs(t):
    t.manual_seed(0)
    m = t.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    print(m(t.randn(1, 2, 4, 4)).shape, m)


@case
def embedding_padding(t):
    t.manual_seed(0)
    e = t.nn.Embedding(5, 3, padding_idx=1)
    print(e.weight[1])
    out = e(t.tensor([[1, 2]]))
    out.sum().backward()
    print(e.weight.grad)
    e2 = t.nn.Embedding.from_pretrained(t.arange(6.0).reshape(3, 2))
    print(e2, e2.weight.requires_grad, e2(t.tensor([2])))


@case
def batchnorm_running(t):
    t.manual_seed(0)
    bn = t.nn.BatchNorm1d(2)
    x = t.randn(4, 2)
    bn(x)
    print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
    bn.eval()
    print(bn(x).sum())
    bn2 = t.nn.BatchNorm1d(2, momentum=None)
    bn2(x)
    bn2(x * 2)
    print(bn2.running_mean, bn2.num_batches_tracked)
    bn3 = t.nn.BatchNorm1d(2, track_running_stats=False)
    print(bn3, bn3.running_mean, list(bn3.state_dict()))


@case
def dropout_train_eval(t):
    t.manual_seed(1)
    d = t.nn.Dropout(0.5)
    x = t.ones(6)
    print(d(x))
    d.eval()
    print(d(x))
    print(t.nn.functional.dropout(x, 0.5, training=False))
    t.manual_seed(1)
    print(t.nn.Dropout2d(0.5)(t.ones(1, 4, 1, 1)).flatten())


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_api_matches_torch(name):
    assert_same_transcript(CASES[name])

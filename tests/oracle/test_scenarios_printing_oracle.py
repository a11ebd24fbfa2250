"""Scenario sweep: what a person sees printed (tensors, sizes, modules, state dicts, load results).

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts (stdout, returned
repr, error type and text, warnings) must be identical; see ``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


@case
def tensor_with_grad_fn(t):
    x = t.ones(2, 2, requires_grad=True)
    y = x * 2
    for v in (y, y.sum(), x, y.mean(), x.t(), x[0], x.view(4), x.exp(), x @ x):
        print(v)


@case
def dtype_suffixes(t):
    for d in (t.float16, t.bfloat16, t.float64, t.int32, t.int64, t.uint8, t.bool, t.int8, t.int16):
        print(t.ones(3, dtype=d), t.zeros(0, dtype=d), t.tensor(3, dtype=d))


@case
def default_dtype_float64_suffixes(t):
    old = t.get_default_dtype()
    t.set_default_dtype(t.float64)
    try:
        print(t.ones(2), t.ones(2, dtype=t.float32), t.tensor([1, 2]), t.arange(3.0))
    finally:
        t.set_default_dtype(old)


@case
def large_tensors_are_summarised(t):
    print(t.arange(2000))
    print(t.arange(3000.0).reshape(30, 100))
    print(t.arange(12.0).reshape(2, 3, 2) / 7)
    print(t.linspace(-1, 1, 1001, dtype=t.float64))


@case
def empty_tensors(t):
    print(t.zeros(2, 0), t.zeros(0, 3, dtype=t.int64), t.empty(0, requires_grad=True))


@case
def parameters_print(t):
    nn = t.nn
    print(nn.Parameter(t.ones(2)))
    print(repr(nn.Parameter(t.ones(2), requires_grad=False)))
    print(nn.Parameter(t.ones(2, dtype=t.float64)))
    print(nn.Parameter(t.arange(4.0).reshape(2, 2)).t())


@case
def meta_tensors_print(t):
    print(t.empty(2, 3, device="meta"))
    print(t.empty(2, device="meta", dtype=t.int64))
    print(t.empty(2, device="meta", requires_grad=True))
    print(t.empty(3000, device="meta"), t.empty(0, device="meta"))


@case
def special_values(t):
    print(t.tensor([float("nan"), float("inf"), -float("inf"), 1e-10, 1e10]))
    print(t.tensor([1e-5, 1.0]), t.tensor([123456789.0]), t.tensor([0.1, 0.25]).double())
    print(t.tensor([-0.0, 0.0]), t.tensor([1.5, -2.25], dtype=t.bfloat16), t.tensor([65504.0], dtype=t.float16))


@case
def print_options(t):
    try:
        t.set_printoptions(precision=2)
        print(t.tensor([1.23456, 2.5]))
        t.set_printoptions(profile="default")
        t.set_printoptions(sci_mode=True)
        print(t.tensor([1.5, 2.5]))
        t.set_printoptions(profile="default")
        t.set_printoptions(threshold=5, edgeitems=1)
        print(t.arange(10), t.arange(20.0).reshape(4, 5))
        t.set_printoptions(profile="default")
        t.set_printoptions(linewidth=20)
        print(t.arange(20.0))
    finally:
        t.set_printoptions(profile="default")


@case
def grad_fn_names(t):
    x = t.ones(2, 3, requires_grad=True)
    outs = [
        x.relu(),
        x.sigmoid(),
        x.tanh(),
        x.sum(0),
        x.mean(1),
        x.max(),
        x.reshape(3, 2),
        x.unsqueeze(0),
        x.permute(1, 0),
        x[:, 1:],
        x.clone(),
        x.to(t.float64),
        x.abs(),
        x.pow(2),
        x**2,
        2**x,
        x / 3,
        x - 1,
        -x,
        x.softmax(0),
        x.log_softmax(1),
        x.expand(2, 2, 3),
        x.transpose(0, 1).contiguous(),
        x.squeeze(),
        x.flatten(),
        t.cat([x, x]),
        t.stack([x, x]),
        x.norm(),
        x.sqrt(),
        x.masked_fill(x > 0, 0),
        t.where(x > 0, x, x * 2),
        x.split(1)[0],
        x.chunk(2, 1)[1],
        x @ x.t(),
        x.t() @ x[0],
    ]
    for y in outs:
        print(y.grad_fn.name(), type(y.grad_fn).__name__)


@case
def in_place_on_non_leaf(t):
    x = t.ones(2, requires_grad=True).clone()
    x.add_(1)
    print(x)
    x.mul_(2)
    print(x, x.grad_fn.name(), x._version)


@case
def sizes_dtypes_devices(t):
    print(t.ones(2, 3).shape, repr(t.Size([1, 2])), t.Size([]), t.ones(2, 3).size(1), t.ones(2, 3).stride())
    print(t.float32, t.int64, repr(t.float32), t.device("cpu"), repr(t.device("cpu")), repr(t.device("meta")))
    print(t.ones(2, 3).shape == (2, 3), t.Size([2, 3]).numel(), t.ones(2, 3).shape + (4,))


@case
def tolist_and_item(t):
    print(t.tensor([1.5]).item(), t.tensor([[1, 2]]).tolist(), t.tensor(True).item())
    print(t.tensor([1.1], dtype=t.float16).tolist(), t.tensor([0.1]).tolist(), t.tensor(2, dtype=t.int8).item())


@case
def module_reprs(t):
    nn = t.nn
    m = nn.Sequential(
        nn.Linear(3, 4),
        nn.ReLU(),
        nn.Dropout(0.2),
        nn.Conv2d(1, 2, 3, stride=2, padding=1),
        nn.BatchNorm2d(2),
        nn.LayerNorm(4),
        nn.Embedding(10, 3),
        nn.Linear(2, 2, bias=False),
        nn.Softmax(dim=1),
        nn.Flatten(),
        nn.MaxPool2d(2),
        nn.Identity(),
        nn.ModuleList([nn.Tanh()]),
        nn.ModuleDict({"a": nn.Sigmoid()}),
        nn.GELU(),
        nn.LeakyReLU(0.1),
        nn.Conv1d(2, 3, 1),
        nn.AvgPool2d(2),
        nn.CrossEntropyLoss(),
        nn.MSELoss(),
        nn.BatchNorm1d(3, affine=False),
        nn.GroupNorm(2, 4),
        nn.ELU(),
        nn.SiLU(),
    )
    print(m)


@case
def container_reprs(t):
    nn = t.nn
    print(nn.Sequential(), nn.ModuleList())
    print(nn.ParameterList([nn.Parameter(t.ones(2))]))
    print(nn.ParameterDict({"a": nn.Parameter(t.ones(2, 3))}))
    print(nn.Conv2d(2, 4, (3, 5), dilation=2, groups=2, bias=False, padding_mode="reflect", padding=2))
    print(nn.Embedding(5, 2, padding_idx=0), nn.Dropout(inplace=True))


@case
def custom_module_repr(t):
    nn = t.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.act = nn.ReLU()
            self.register_buffer("scale", t.ones(1))

        def extra_repr(self):
            return "scaled=True"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.head = nn.Linear(2, 1)

    print(Net())
    print([n for n, _ in Net().named_modules()])


@case
def state_dict_keys_metadata_and_results(t):
    nn = t.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Sequential(nn.Linear(4, 2)))
    sd = m.state_dict()
    print(list(sd.keys()), sd._metadata, type(sd).__name__)
    r = m.load_state_dict(sd)
    print(r, repr(r), r == ([], []), type(r).__name__)
    del sd["0.bias"]
    sd["foo"] = t.ones(1)
    r = m.load_state_dict(sd, strict=False)
    print(r, r.missing_keys, r.unexpected_keys, str(r))


@case
def load_state_dict_size_mismatch(t):
    m = t.nn.Linear(2, 3)
    sd = m.state_dict()
    sd["weight"] = t.ones(3, 3)
    m.load_state_dict(sd)


@case
def load_state_dict_missing_and_non_tensor(t):
    m = t.nn.Sequential(t.nn.Linear(2, 3))
    sd = m.state_dict()
    del sd["0.weight"]
    sd["x"] = 1
    m.load_state_dict(sd)


@case
def named_parameters_and_buffers_print(t):
    nn = t.nn
    t.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    for n, p in m.named_parameters():
        print(n, p.shape, p.requires_grad)
    for n, b in m.named_buffers():
        print(n, b)
    print(sum(p.numel() for p in m.parameters()))


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_output_matches_torch(name):
    assert_same_transcript(CASES[name])

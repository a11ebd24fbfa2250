"""Scenario sweep: ``save``/``load`` round trips (tensors, views, Parameters, dtypes, state dicts
with ``_metadata``, optimizer state, files, ``map_location``, ``mmap``) and ``weights_only``.

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``. minitorch_nn refuses to save whole modules or arbitrary objects (it never
pickles code; ``serialization.py`` says why), so those scenarios are not here.
"""

import io
import os
import tempfile

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401
from tests.oracle._scenario_helpers import torch as torch_mod

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


@case
def save_load_tensor(t):
    b = io.BytesIO()
    x = t.arange(6.0).reshape(2, 3)
    t.save(x, b)
    b.seek(0)
    y = t.load(b)
    print(y, type(y).__name__)


@case
def save_load_dict(t):
    b = io.BytesIO()
    t.manual_seed(0)
    m = t.nn.Linear(2, 2)
    t.save({"sd": m.state_dict(), "epoch": 3, "name": "x", "l": [1, 2.5]}, b)
    b.seek(0)
    d = t.load(b)
    print(d["epoch"], d["name"], d["l"], list(d["sd"]), type(d["sd"]).__name__, d["sd"]["weight"])


@case
def save_load_views(t):
    b = io.BytesIO()
    x = t.arange(6.0)
    v = x[2:4]
    t.save([x, v], b)
    b.seek(0)
    a, w = t.load(b)
    w[0] = 100
    print(a, w)


@case
def save_load_param(t):
    b = io.BytesIO()
    p = t.nn.Parameter(t.ones(2))
    t.save(p, b)
    b.seek(0)
    q = t.load(b)
    print(type(q).__name__, q.requires_grad, q)


@case
def save_load_rg(t):
    b = io.BytesIO()
    p = t.ones(2, requires_grad=True)
    t.save(p, b)
    b.seek(0)
    q = t.load(b)
    print(q.requires_grad, q)


@case
def save_load_dtypes(t):
    b = io.BytesIO()
    xs = [t.ones(2, dtype=d) for d in [t.float16, t.bfloat16, t.float64, t.int8, t.uint8, t.bool, t.int32]]
    t.save(xs, b)
    b.seek(0)
    print(t.load(b))


@case
def save_load_file(t):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.pt")
        t.save({"a": t.ones(2)}, p)
        print(t.load(p, weights_only=True))
        print(t.load(p, map_location="cpu"))


@case
def load_missing_file(t):
    t.load("/nonexistent/file.pt")


@case
def save_load_optim(t):
    b = io.BytesIO()
    t.manual_seed(0)
    m = t.nn.Linear(2, 2)
    opt = t.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    t.save(opt.state_dict(), b)
    b.seek(0)
    sd = t.load(b)
    print(sd)


@case
def save_sd_metadata(t):
    b = io.BytesIO()
    m = t.nn.Sequential(t.nn.Linear(2, 2), t.nn.BatchNorm1d(2))
    t.save(m.state_dict(), b)
    b.seek(0)
    sd = t.load(b)
    print(sd._metadata)


@case
def save_meta(t):
    b = io.BytesIO()
    t.save(t.empty(2, device="meta"), b)
    b.seek(0)
    print(t.load(b))


@case
def load_mmap(t):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.pt")
        t.save({"a": t.arange(3.0)}, p)
        print(t.load(p, mmap=True))


@case
def save_noncontig(t):
    b = io.BytesIO()
    x = t.arange(6.0).reshape(2, 3).t()
    t.save(x, b)
    b.seek(0)
    y = t.load(b)
    print(y, y.stride(), y.is_contiguous())


@case
def save_int_args(t):
    b = io.BytesIO()
    t.save({"size": t.Size([2, 3]), "dt": t.float16, "dev": t.device("cpu"), "tup": (1, None, True), "set": {1}}, b)
    b.seek(0)
    print(t.load(b))


@case
def load_map_location_meta(t):
    b = io.BytesIO()
    t.save(t.ones(2), b)
    b.seek(0)
    print(t.load(b, map_location="meta"))


@case
def load_weights_only_refuses_unknown_global(t):
    import pickle

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    b = io.BytesIO()
    # a checkpoint made by real torch (the only library here that can pickle arbitrary objects)
    torch_mod.save({"x": Evil()}, b)
    b.seek(0)
    try:
        t.load(b)
    except pickle.UnpicklingError as e:
        print(type(e).__name__, "Unsupported global" in str(e))


@case
def checkpoint_dict_training_resume(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 2)
    opt = t.optim.Adam(m.parameters(), lr=0.01)
    m(t.ones(3, 2)).sum().backward()
    opt.step()
    b = io.BytesIO()
    t.save({"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 1}, b)
    b.seek(0)
    ck = t.load(b)
    m2 = t.nn.Linear(2, 2)
    opt2 = t.optim.Adam(m2.parameters(), lr=0.5)
    print(m2.load_state_dict(ck["model"]), ck["epoch"])
    opt2.load_state_dict(ck["optim"])
    print(opt2.param_groups[0]["lr"], opt2.state[m2.weight]["step"], opt2.state[m2.weight]["exp_avg_sq"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_serialization_matches_torch(name):
    assert_same_transcript(CASES[name])

"""Oracle: lazy modules' state dicts, replication, pickle and deepcopy against PyTorch 2.13
(torch_behaviours.md items 126-134).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)
import minitorch_nn as mt  # noqa: E402
from tests.oracle._lazy_helpers import arr, assert_same, both, err  # noqa: E402

# ------------------------------------------------------------------------------------------------
# State dicts (126-131)
# ------------------------------------------------------------------------------------------------


def test_state_dict_holds_the_placeholders_themselves():
    def run(lib):
        n = lib.nn
        m = n.LazyLinear(4)
        sd = m.state_dict()
        bn = n.LazyBatchNorm2d()
        bsd = bn.state_dict()
        return (
            repr(sd),
            sd["weight"] is m.weight,
            m.state_dict(keep_vars=True)["bias"] is m.bias,
            repr(list(bsd.items())[:4]),
            str(bsd["num_batches_tracked"]),
            list(bsd),
        )

    assert_same(*both(run))


def test_extra_state_quirk():
    def run(lib):
        class LazyWithExtra(lib.nn.LazyLinear):
            def get_extra_state(self):
                return {"k": 1}

            def set_extra_state(self, state):
                self.got = state

        m = LazyWithExtra(2)
        sd = m.state_dict()
        return list(sd), err(lambda: LazyWithExtra(2).load_state_dict(sd))

    assert_same(*both(run))


def test_load_initialized_into_lazy_then_forward():
    def run(lib):
        n = lib.nn
        lib.manual_seed(6)
        src = n.Linear(5, 10)
        lazy = n.LazyLinear(10)
        res = lazy.load_state_dict(src.state_dict())
        step1 = (
            repr(res),
            type(lazy).__name__,
            lazy.in_features,
            repr(lazy),
            lazy.has_uninitialized_params(),
            hasattr(lazy, "_initialize_hook"),
            [type(p).__name__ for p in lazy.parameters()],
            np.array_equal(arr(lazy.weight), arr(src.weight)),
        )
        bad = n.LazyLinear(10)
        bad.load_state_dict(src.state_dict())
        e = err(lambda: bad(lib.ones(2, 6)))
        y = lazy(lib.ones(2, 5))
        step2 = (
            type(lazy).__name__,
            lazy.in_features,
            repr(lazy),
            np.allclose(arr(y), arr(src(lib.ones(2, 5)))),
        )
        return step1, e, step2

    assert_same(*both(run))


@pytest.mark.parametrize(
    "name,shape",
    [
        ("Conv2d", (2, 3, 5, 5)),
        ("ConvTranspose2d", (2, 3, 4, 4)),
        ("BatchNorm1d", (4, 3)),
        ("InstanceNorm1d", (2, 3, 6)),
    ],
)
def test_load_into_lazy_conv_and_norm_keeps_size_zero(name, shape):
    def run(lib):
        n = lib.nn
        lib.manual_seed(8)
        if "Conv" in name:
            src = getattr(n, name)(3, 4, 3)
            lazy = getattr(n, "Lazy" + name)(4, 3)
        elif name.startswith("Instance"):
            src = getattr(n, name)(3, affine=True, track_running_stats=True)
            lazy = getattr(n, "Lazy" + name)()
        else:
            src = getattr(n, name)(3)
            lazy = getattr(n, "Lazy" + name)()
        lazy.load_state_dict(src.state_dict())
        shapes = [(k, tuple(v.shape)) for k, v in lazy.state_dict().items()]
        src.eval()
        lazy.eval()
        x = lib.randn(*shape)
        r = err(lambda: lazy(x))
        out = None if r else np.allclose(arr(lazy(x)), arr(src(x)), atol=1e-6)
        return shapes, type(lazy).__name__, repr(lazy), r, out

    assert_same(*both(run))


def test_load_lazy_into_initialized_and_lazy_into_lazy():
    def run(lib):
        n = lib.nn
        e1 = err(lambda: n.Linear(5, 10).load_state_dict(n.LazyLinear(10).state_dict()))
        lazy = n.LazyLinear(10)
        lazy.load_state_dict(n.LazyLinear(10).state_dict())
        e2 = err(lambda: n.BatchNorm1d(3).load_state_dict(n.LazyBatchNorm1d().state_dict()))
        return e1, repr(lazy.weight), lazy.has_uninitialized_params(), e2

    t, m = both(run)
    assert_same(t, m)
    assert t[0][0] == "RuntimeError" and "shape of an uninitialized" in t[0][1]


def test_custom_module_parameter_and_buffer_load():
    # test_lazy_module_parameter / _buffer of PyTorch's suite, run in both libraries.
    def run(lib, kind):
        n = lib.nn

        class M(n.modules.lazy.LazyModuleMixin, n.Module):
            def __init__(self):
                super().__init__()
                if kind == "param":
                    self.test_param = n.UninitializedParameter()
                else:
                    self.register_buffer("test_buffer", n.UninitializedBuffer())

        class Full(n.Module):
            def __init__(self):
                super().__init__()
                if kind == "param":
                    self.test_param = n.Parameter(lib.ones(5, 5))
                else:
                    self.register_buffer("test_buffer", lib.ones(5, 5))

        m = M()
        sd = m.state_dict()
        e = err(lambda: Full().load_state_dict(sd))
        m2 = M()
        m2.load_state_dict(Full().state_dict())
        t = next(iter(m2.state_dict().values()))
        m3 = M()
        m3.load_state_dict(M().state_dict())
        return (
            m.has_uninitialized_params(),
            repr(next(iter(sd.values()))),
            e,
            m2.has_uninitialized_params(),
            type(t).__name__,
            arr(t),
            m3.has_uninitialized_params(),
        )

    for kind in ("param", "buffer"):
        assert_same(*both(run, kind))


# ------------------------------------------------------------------------------------------------
# Replication, pickle, deepcopy (132, 134)
# ------------------------------------------------------------------------------------------------


def test_data_parallel_replication_error():
    assert_same(*both(lambda lib: err(lambda: lib.nn.LazyLinear(2)._replicate_for_data_parallel())))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize(
    "name,args,shape",
    [
        ("LazyLinear", (3,), (2, 4)),
        ("LazyConv2d", (2, 3), (1, 2, 5, 5)),
        ("LazyBatchNorm1d", (), (3, 2)),
    ],
)
def test_pickle_and_deepcopy(how, name, args, shape):
    if how == "deepcopy" and name == "LazyBatchNorm1d":
        # PyTorch cannot deep-copy an UninitializedBuffer (no __deepcopy__; Tensor's is refused);
        # minitorch_nn can, documented in nn/parameter_lazy.py.
        with pytest.raises(ValueError, match="uninitialized parameter"):
            copy.deepcopy(torch.nn.LazyBatchNorm1d())
        m = mt.nn.LazyBatchNorm1d(momentum=0.3).double()
        d = copy.deepcopy(m)
        assert [repr(b) for b in d.buffers()][:2] == ["<UninitializedBuffer>"] * 2
        assert d.running_mean is not m.running_mean and d.running_mean.dtype == mt.float64
        assert "running_mean" in d.state_dict() and d.momentum == 0.3
        d(mt.ones(3, 2, dtype=mt.float64))
        assert type(d).__name__ == "BatchNorm1d" and tuple(d.running_var.shape) == (2,)
        assert type(m).__name__ == "LazyBatchNorm1d" and m.has_uninitialized_params()
        return

    def run(lib):
        lib.manual_seed(9)
        dup = pickle.loads(pickle.dumps(getattr(lib.nn, name)(*args))) if how == "pickle" else None
        m = getattr(lib.nn, name)(*args)
        if dup is None:
            dup = copy.deepcopy(m)
        before = (type(dup).__name__, repr(dup), [repr(p) for p in dup.parameters()])
        y = dup(lib.ones(*shape))  # the copy keeps its hooks: its first forward converts it
        conv = (type(dup).__name__, [type(p).__name__ for p in dup.parameters()], tuple(y.shape))
        m(lib.ones(*shape))
        dup2 = pickle.loads(pickle.dumps(m)) if how == "pickle" else copy.deepcopy(m)
        after = (
            type(dup2).__name__,
            [(type(p).__name__, arr(p)) for p in dup2.parameters()],
            hasattr(dup2, "_initialize_hook"),
        )
        return before, conv, after

    assert_same(*both(run))


def test_placeholder_deepcopy_and_pickle_keep_dtype_and_flag():
    def run(lib):
        p = lib.nn.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        d = copy.deepcopy(p)
        q = pickle.loads(pickle.dumps(p))
        b = pickle.loads(pickle.dumps(lib.nn.UninitializedBuffer()))
        return (
            repr(d),
            str(d.dtype),
            d.requires_grad,
            d is p,
            repr(q),
            str(q.dtype),
            q.requires_grad,
            repr(b),
        )

    assert_same(*both(run))

"""Oracle: lazy modules against PyTorch 2.13: the LazyMLP walk-through, classes, constructors
and reprs, the hooks and the mixin, inference errors (torch_behaviours.md items 109-118, 138, 139).

Values drawn at initialization are compared exactly: the RNG and ``nn.init`` match PyTorch bit
for bit, so a lazy network after its dry run must equal PyTorch's.
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

from tests.oracle._lazy_helpers import LIBS, Approx, arr, assert_same, both, err, sd_summary  # noqa: E402

# ------------------------------------------------------------------------------------------------
# The LazyMLP walk-through of torch/nn/modules/lazy.py prints the same text
# ------------------------------------------------------------------------------------------------

WALKTHROUGH = textwrap.dedent(
    """
    torch.manual_seed(SEED)

    class LazyMLP(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.LazyLinear(10)
            self.relu1 = torch.nn.ReLU()
            self.fc2 = torch.nn.LazyLinear(1)
            self.relu2 = torch.nn.ReLU()

        def forward(self, input):
            x = self.relu1(self.fc1(input))
            y = self.relu2(self.fc2(x))
            return y

    # constructs a network with lazy modules, then moves it (before any dry run)
    lazy_mlp = LazyMLP()
    lazy_mlp = lazy_mlp.to("cpu")
    print(lazy_mlp)
    # a dry run initializes the lazy modules, which become regular Linear modules
    print(lazy_mlp(torch.ones(10, 10)))
    print(lazy_mlp)
    print(lazy_mlp.fc1.weight)

    # the state dict of a fresh lazy network shows the placeholders
    lazy_mlp = LazyMLP()
    print(lazy_mlp.state_dict())
    full_mlp = LazyMLP()
    print(full_mlp.forward(torch.ones(10, 1)))
    # load an initialized state into the lazy network
    print(lazy_mlp.load_state_dict(full_mlp.state_dict()))
    print(lazy_mlp.state_dict())
    print(lazy_mlp)
    print(lazy_mlp(torch.ones(3, 1) * 2 - 5))
    print(lazy_mlp)
    """
)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_lazy_mlp_walkthrough_prints_what_pytorch_prints(seed):
    outputs = []
    for lib in LIBS:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(WALKTHROUGH, {"torch": lib, "SEED": seed})  # noqa: S102
        outputs.append(buf.getvalue())
    assert outputs[0] == outputs[1]
    assert (
        "<UninitializedParameter>" in outputs[0]
        and "Linear(in_features=10, out_features=1" in outputs[0]
    )


# ------------------------------------------------------------------------------------------------
# Classes, constructors and reprs (items 109-112)
# ------------------------------------------------------------------------------------------------

LAZY_CASES = [
    # (lazy class, constructor args, kwargs, input shape)
    ("LazyLinear", (10,), {}, (5, 4)),
    ("LazyLinear", (3,), {"bias": False}, (2, 7)),
    ("LazyConv1d", (4, 3), {}, (2, 3, 9)),
    ("LazyConv2d", (4, 3), {}, (2, 2, 6, 5)),
    (
        "LazyConv2d",
        (4, 2),
        {"stride": 2, "padding": 1, "dilation": 2, "groups": 2, "bias": False},
        (2, 6, 7, 7),
    ),
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 3)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {}, (2, 2, 4, 5)),
    ("LazyConvTranspose3d", (2, 2), {"groups": 1}, (1, 3, 3, 3, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"eps": 1e-3}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 3, 2)),
    # the four affine x track_running_stats combinations of PyTorch's _check_lazy_norm
    ("LazyBatchNorm1d", (), {"affine": False}, (4, 3, 2)),
    ("LazyBatchNorm1d", (), {"track_running_stats": False}, (4, 3)),
    ("LazyBatchNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 2, 2)),
    ("LazyInstanceNorm1d", (), {"affine": False, "track_running_stats": False}, (2, 3, 5)),
    ("LazyBatchNorm1d", (), {"bias": False}, (4, 3)),
]


def _lifecycle(lib, name, args, kwargs, shape, seed=0):
    lib.manual_seed(seed)
    cls = getattr(lib.nn, name)
    m = cls(*args, **kwargs)
    before = {
        "repr": repr(m),
        "class": type(m).__name__,
        "becomes": cls.cls_to_become.__name__,
        "is_target": isinstance(m, cls.cls_to_become),
        # (the lazy norms are not subclasses of their targets: they derive from _BatchNorm/_InstanceNorm)
        "mixin_first": [c.__name__ for c in type(m).__mro__].index("LazyModuleMixin")
        < [c.__name__ for c in type(m).__mro__].index("Module"),
        "params": [(n, type(p).__name__) for n, p in m.named_parameters()],
        "buffers": [(n, type(b).__name__) for n, b in m.named_buffers()],
        "hooks": (
            hasattr(m, "_initialize_hook"),
            hasattr(m, "_load_hook"),
            len(m._forward_pre_hooks),
            len(m._forward_pre_hooks_with_kwargs),
            len(m._load_state_dict_pre_hooks),
        ),
        "has_uninit": m.has_uninitialized_params(),
    }
    x = lib.randn(*shape)
    y = m(x)
    after = {
        "repr": repr(m),
        "class": type(m).__name__,
        "is_lazy_class": isinstance(m, cls),
        "hooks": (
            hasattr(m, "_initialize_hook"),
            hasattr(m, "_load_hook"),
            len(m._forward_pre_hooks),
            len(m._load_state_dict_pre_hooks),
        ),
        "params": [(n, type(p).__name__, tuple(p.shape), arr(p)) for n, p in m.named_parameters()],
        "buffers": [
            (n, type(b).__name__, tuple(b.shape), Approx(arr(b))) for n, b in m.named_buffers()
        ],
        "out": (tuple(y.shape), y.dtype == lib.float32),
        "state_dict": sd_summary(lib, m.state_dict()),
    }
    return before, after, arr(y)


@pytest.mark.parametrize("case", LAZY_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY_CASES)])
def test_lifecycle_matches(case):
    (tb, ta, ty), (mb, ma, my) = both(_lifecycle, *case)
    assert_same(tb, mb)
    assert_same(ta, ma)
    # Outputs come from kernels whose float rounding may differ in the last bits (not from init).
    np.testing.assert_allclose(my, ty, rtol=1e-5, atol=1e-5)


def test_parent_repr_shows_converted_child():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyBatchNorm1d())
        r0 = repr(net)
        net(lib.ones(4, 2))
        return r0, repr(net), [type(c).__name__ for c in net]

    assert_same(*both(run))


def test_constructor_defaults_and_signatures():
    def run(lib):
        n = lib.nn
        out = {}
        for name in ("LazyBatchNorm1d", "LazyInstanceNorm1d"):
            m = getattr(n, name)()
            out[name] = (m.eps, m.momentum, m.affine, m.track_running_stats)
        out["InstanceNorm1d"] = (
            n.InstanceNorm1d(3).affine,
            n.InstanceNorm1d(3).track_running_stats,
        )
        ct = n.LazyConvTranspose2d(
            4, 3, 2, 1, 1, 1, True, 2
        )  # positional: stride, padding, output_padding...
        out["ct"] = (repr(ct), ct.dilation, ct.output_padding)
        out["bn_nobias"] = repr(n.LazyBatchNorm2d(bias=False))
        return out

    assert_same(*both(run))


# ------------------------------------------------------------------------------------------------
# The hooks and the mixin (113-116)
# ------------------------------------------------------------------------------------------------


def _custom_lazy(lib, cls_to_become=None, fully=True):
    class LazyScale(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = lib.nn.UninitializedParameter()
            self.t = lib.nn.UninitializedParameter()

        def initialize_parameters(self, x, *, scale=2.0):
            self.s.materialize(x.shape[-1:])
            if fully:
                self.t.materialize(1)
            with lib.no_grad():
                self.s.fill_(scale)
                if fully:
                    self.t.fill_(1.0)

        def forward(self, x, *, scale=2.0):
            return x * self.s + self.t

    LazyScale.cls_to_become = cls_to_become
    return LazyScale()


def test_custom_lazy_module_keeps_its_class_and_gets_kwargs():
    def run(lib):
        m = _custom_lazy(lib)
        y = m(lib.ones(2, 3), scale=3.0)
        return type(m).__name__, arr(y), hasattr(m, "_initialize_hook"), len(m._forward_pre_hooks)

    assert_same(*both(run))


def test_not_fully_initialized_and_not_implemented_errors():
    def run(lib):
        m = _custom_lazy(lib, fully=False)
        e1 = err(lambda: m(lib.ones(2, 3)))

        class Bare(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.UninitializedParameter()

        e2 = err(lambda: Bare()(lib.ones(1)))
        return e1, e2

    assert_same(*both(run))


def test_user_hooks_coexist_with_the_init_hook():
    def run(lib):
        lib.manual_seed(3)
        m = lib.nn.LazyLinear(2)
        order = []
        m.register_forward_pre_hook(
            lambda mod, inp: (order.append(type(mod).__name__), inp[0] + 1)[1]
        )
        m.register_forward_hook(lambda mod, inp, out: out * 0 + inp[0].sum())
        y1 = m(lib.ones(2, 3))
        y2 = m(lib.ones(2, 3))
        return order, arr(y1), arr(y2), len(m._forward_pre_hooks), len(m._forward_hooks)

    assert_same(*both(run))


# ------------------------------------------------------------------------------------------------
# Inference errors and chains (117, 118, 138, 139)
# ------------------------------------------------------------------------------------------------


def test_inference_errors():
    def run(lib):
        n = lib.nn
        return [
            err(lambda: n.LazyConv2d(4, 3)(lib.ones(2, 3))),
            err(lambda: n.LazyConvTranspose1d(4, 3)(lib.ones(2, 3, 4, 5))),
            err(lambda: n.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5))),
        ]

    t, m = both(run)
    assert_same(t, m)
    assert all(e is not None for e in t)


def test_unbatched_conv_input():
    def run(lib):
        lib.manual_seed(1)
        m = lib.nn.LazyConv1d(2, 2)
        m(lib.ones(3, 6))
        return repr(m), tuple(m.weight.shape), arr(m.weight)

    assert_same(*both(run))


def test_rng_order_and_chained_initialization():
    def run(lib):
        n = lib.nn
        lib.manual_seed(0)
        lazy = n.Sequential(n.LazyLinear(3), n.Linear(3, 2))
        lazy(lib.ones(1, 4))
        lib.manual_seed(0)
        eager = n.Sequential(n.Linear(4, 3), n.Linear(3, 2))
        lib.manual_seed(5)
        chain = n.Sequential(n.LazyLinear(15), n.LazyLinear(10))
        chain(lib.ones(5, 10))
        return (
            [arr(p) for p in lazy.parameters()],
            [arr(p) for p in eager.parameters()],
            [tuple(p.shape) for p in chain.parameters()],
            [arr(p) for p in chain.parameters()],
        )

    t, m = both(run)
    assert_same(t, m)
    assert not np.array_equal(t[0][2], t[1][2])  # the eager layer got other numbers (item 118)


@pytest.mark.parametrize("name", ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyInstanceNorm1d"])
def test_norm_keyword_input(name):
    def run(lib):
        lib.manual_seed(2)
        shape = (
            (4, 3)
            if name == "LazyBatchNorm1d"
            else (4, 3, 5)
            if name == "LazyInstanceNorm1d"
            else (4, 3, 2, 2)
        )
        x = lib.randn(*shape)
        m = getattr(lib.nn, name)()
        y = m(**{"input": x})
        return type(m).__name__, Approx(arr(m.running_mean)), Approx(arr(y))

    assert_same(*both(run))

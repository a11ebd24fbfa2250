"""Lazy modules without PyTorch: the dry run step by step, the placeholders, and what we add
(``describe_lazy``, ``check_initialized``, atomic loads). ``tests/oracle/test_lazy_*_oracle.py``
compares the shared behaviour with PyTorch."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn import nn
from minitorch_nn.nn.modules.lazy import LazyModuleMixin, check_initialized, describe_lazy
from minitorch_nn.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

ALL_LAZY = {
    "LazyLinear": ((4,), (3, 5)),
    "LazyConv1d": ((4, 3), (2, 3, 7)),
    "LazyConv2d": ((4, 3), (2, 3, 5, 5)),
    "LazyConv3d": ((2, 2), (1, 3, 3, 3, 3)),
    "LazyConvTranspose1d": ((4, 3), (2, 3, 5)),
    "LazyConvTranspose2d": ((4, 3), (2, 3, 4, 4)),
    "LazyConvTranspose3d": ((2, 2), (1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": ((), (4, 3)),
    "LazyBatchNorm2d": ((), (4, 3, 2, 2)),
    "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), (2, 3, 5)),
    "LazyInstanceNorm2d": ((), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": ((), (2, 3, 2, 2, 2)),
}


# ------------------------------------------------------------------------------------------------
# One dry run, step by step (the order of nn/modules/lazy.py's docstring)
# ------------------------------------------------------------------------------------------------


def test_dry_run_step_by_step():
    m = nn.LazyLinear(10)
    # step 1: placeholders and two hooks
    assert isinstance(m.weight, UninitializedParameter) and isinstance(
        m.bias, UninitializedParameter
    )
    assert (
        m._initialize_hook.id in m._forward_pre_hooks
        and m._initialize_hook.id in m._forward_pre_hooks_with_kwargs
    )
    assert m._load_hook.id in m._load_state_dict_pre_hooks
    # step 2: a conversion keeps the placeholders and changes the dtype they will get
    w = m.weight
    m.double()
    assert m.weight is w and type(w) is UninitializedParameter and w.dtype == mt.float64
    # steps 3-6
    y = m(mt.ones(5, 3, dtype=mt.float64))
    assert (
        m.weight is w
        and type(w) is nn.Parameter
        and tuple(w.shape) == (10, 3)
        and w.dtype == mt.float64
    )
    assert type(m) is nn.Linear and m.in_features == 3
    assert not hasattr(m, "_initialize_hook") and not hasattr(m, "_load_hook")
    assert (
        not m._forward_pre_hooks
        and not m._load_state_dict_pre_hooks
        and not m._forward_pre_hooks_with_kwargs
    )
    assert tuple(y.shape) == (5, 10)
    # the values were drawn: not the zeros/garbage of an empty tensor
    bound = 1 / np.sqrt(3)
    assert np.all(np.abs(w.detach().numpy()) <= bound) and np.unique(w.detach().numpy()).size == 30


@pytest.mark.parametrize("name", list(ALL_LAZY))
def test_every_lazy_layer_converts(name):
    args, shape = ALL_LAZY[name]
    cls = getattr(nn, name)
    m = cls(*args)
    assert m.has_uninitialized_params()
    assert repr(m).startswith(name + "(")
    m(mt.randn(*shape))
    assert type(m) is cls.cls_to_become
    assert not any(is_lazy(t) for t in [*m.parameters(), *m.buffers()])
    assert repr(m).startswith(cls.cls_to_become.__name__ + "(")


def test_has_uninitialized_params_looks_at_own_tensors_only():
    net = nn.Sequential(nn.LazyLinear(3))
    assert not hasattr(net, "has_uninitialized_params")
    assert net[0].has_uninitialized_params()


def test_init_hook_runs_before_later_pre_hooks_and_sees_their_input():
    m = nn.LazyLinear(2)
    seen = []
    m.register_forward_pre_hook(lambda mod, args: seen.append(type(mod).__name__))
    m(mt.ones(1, 4))
    assert seen == ["Linear"]  # the init hook already converted the module


def test_prepended_pre_hook_can_reshape_the_input_before_inference():
    m = nn.LazyLinear(2)
    m.register_forward_pre_hook(
        lambda mod, args: args[0].reshape(args[0].shape[0], -1), prepend=True
    )
    m(mt.ones(2, 3, 4))
    assert m.in_features == 12


def test_conv_transpose_passes_output_size_to_inference():
    # output_size reaches ConvTranspose2d.forward after inference, which picks the output padding.
    m = nn.LazyConvTranspose2d(4, 3, stride=2)
    assert tuple(m(mt.ones(1, 2, 4, 4), output_size=(10, 10)).shape) == (1, 4, 10, 10)
    assert type(m) is nn.ConvTranspose2d and tuple(m.weight.shape) == (2, 4, 3, 3)


def test_regular_targets_exist_for_the_3d_layers():
    x = mt.randn(1, 2, 3, 3, 3)
    assert tuple(nn.ConvTranspose3d(2, 4, 2)(x).shape) == (1, 4, 4, 4, 4)
    assert tuple(nn.InstanceNorm3d(2)(x).shape) == (1, 2, 3, 3, 3)
    assert (
        "ConvTranspose3d" in nn.__all__
        and "InstanceNorm3d" in nn.__all__
        and "LazyLinear" in nn.__all__
    )


# ------------------------------------------------------------------------------------------------
# Placeholders
# ------------------------------------------------------------------------------------------------


def test_materialize_keeps_identity_for_outside_references():
    m = nn.LazyLinear(3)
    held = list(m.parameters())  # what an optimizer would keep
    m(mt.ones(2, 2))
    assert [p is q for p, q in zip(held, m.parameters())] == [True, True]
    assert all(type(p) is nn.Parameter for p in held)


def test_refused_and_allowed_operations():
    p = UninitializedParameter()
    for f in (
        lambda: p.dim(),
        lambda: p.numel(),
        lambda: p + 1,
        lambda: mt.add(p, p),
        lambda: p.detach(),
        lambda: mt.empty_like(p),
        lambda: p.sum(),
        lambda: p.clone(),
    ):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
            f()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape  # noqa: B018
    assert tuple(p.size()) == (0,) and p.is_floating_point() and not p.is_complex()
    assert p.requires_grad and p.dtype == mt.float32 and str(p.device) == "cpu"
    assert type(p.half()) is mt.Tensor and p.half().dtype == mt.float16


def test_placeholder_refusal_does_not_leak_into_kernels():
    # Allowed ops run kernels that read .shape of their inputs: that must not trip the refusal.
    b = UninitializedBuffer()
    assert type(b.to(mt.float64)) is UninitializedBuffer
    with mt.no_grad():
        UninitializedParameter().copy_(UninitializedParameter())


def test_materialize_errors_and_defaults():
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        UninitializedParameter().materialize(3, dtype=mt.int64)
    p = UninitializedParameter()
    p.materialize(3)
    assert tuple(p.shape) == (3,) and p.dtype == mt.get_default_dtype()
    b = UninitializedBuffer(persistent=False)
    b.materialize((2, 2), dtype=mt.int32)
    assert type(b) is mt.Tensor and b.dtype == mt.int32 and b.persistent is False


def test_placeholder_deepcopy_pickle():
    b = UninitializedBuffer(dtype=mt.float64, persistent=False)
    d = copy.deepcopy(b)
    assert (
        d is not b
        and type(d) is UninitializedBuffer
        and d.dtype == mt.float64
        and d.persistent is False
    )
    q = pickle.loads(pickle.dumps(UninitializedParameter(requires_grad=False)))
    assert type(q) is UninitializedParameter and not q.requires_grad


def test_is_lazy():
    assert is_lazy(UninitializedParameter()) and is_lazy(UninitializedBuffer())
    assert not is_lazy(nn.Parameter(mt.ones(1))) and not is_lazy(mt.ones(1)) and not is_lazy(None)


# ------------------------------------------------------------------------------------------------
# Errors of the mixin
# ------------------------------------------------------------------------------------------------


def test_initialize_parameters_must_be_written():
    class Bare(LazyModuleMixin, nn.Module):
        pass

    with pytest.raises(
        NotImplementedError, match="initialize_parameters is not implemented for Bare"
    ):
        Bare()(mt.ones(1))


def test_partial_initialization_is_an_error():
    class Half(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.a = UninitializedParameter()
            self.b = UninitializedParameter()

        def initialize_parameters(self, x):
            self.a.materialize(1)

        def forward(self, x):
            return x

    m = Half()
    with pytest.raises(RuntimeError, match="module Half has not been fully initialized"):
        m(mt.ones(1))
    assert hasattr(m, "_initialize_hook")  # still lazy: a later call tries again


def test_data_parallel_and_share_memory_errors():
    with pytest.raises(RuntimeError, match="can't be used with `DataParallel`"):
        nn.LazyLinear(2)._replicate_for_data_parallel()
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        nn.LazyLinear(2).share_memory()


def test_inference_errors():
    with pytest.raises(
        RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"
    ):
        nn.LazyConv2d(4, 3)(mt.ones(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(mt.ones(1, 3, 5, 5))
    m = nn.LazyLinear(3)
    m.load_state_dict(nn.Linear(5, 3).state_dict())
    with pytest.raises(AssertionError, match="The in_features inferred from input: 6 is not equal"):
        m(mt.ones(1, 6))


# ------------------------------------------------------------------------------------------------
# State dicts, and a failed load leaves the module lazy (beyond PyTorch)
# ------------------------------------------------------------------------------------------------


def test_state_dict_roundtrip_into_lazy():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert type(m) is nn.LazyLinear and m.in_features == 0 and not m.has_uninitialized_params()
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    m(mt.ones(2, 5))
    assert type(m) is nn.Linear and m.in_features == 5


def test_failed_load_leaves_module_lazy():
    sd = nn.Linear(5, 3).state_dict()
    sd["surprise"] = mt.ones(1)
    m = nn.LazyLinear(3)
    w = m.weight
    with pytest.raises(RuntimeError, match="Unexpected key"):
        m.load_state_dict(sd)
    assert m.weight is w and type(w) is UninitializedParameter and m.has_uninitialized_params()
    assert repr(m.state_dict()["weight"]) == "<UninitializedParameter>"
    del sd["surprise"]
    m.load_state_dict(sd)
    assert tuple(m.weight.shape) == (3, 5)


def test_lazy_state_dict_into_initialized_module():
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        nn.Linear(5, 3).load_state_dict(nn.LazyLinear(3).state_dict())


# ------------------------------------------------------------------------------------------------
# Beyond PyTorch: describe_lazy and the optimizer check
# ------------------------------------------------------------------------------------------------


def test_describe_lazy():
    net = nn.Sequential(
        nn.LazyLinear(4), nn.ReLU(), nn.Sequential(nn.LazyBatchNorm1d(), nn.Linear(4, 2))
    )
    text = describe_lazy(net)
    assert text.splitlines() == [
        "2 lazy submodules (run one forward pass with a dummy batch to initialize):",
        "  0: LazyLinear, uninitialized weight, bias",
        "  2.0: LazyBatchNorm1d, uninitialized weight, bias, running_mean, running_var",
    ]
    net(mt.ones(3, 5))
    assert "no lazy submodules" in describe_lazy(net)


def test_check_initialized():
    net = nn.Sequential(nn.Linear(2, 3), nn.LazyLinear(4))
    with pytest.raises(
        ValueError, match=r"(?s)uninitialized parameter \(index 2.*dummy batch.*describe_lazy"
    ):
        check_initialized(net.parameters())
    net(mt.ones(1, 2))
    check_initialized(net.parameters())


def test_optimizer_accepts_placeholders_and_refuses_to_step_them():
    from minitorch_nn import optim
    net = nn.Sequential(nn.LazyLinear(4))
    opt = optim.SGD(net.parameters(), lr=0.1)   # accepted, as in PyTorch
    with pytest.raises(RuntimeError, match=r"(?s)SGD.step\(\) got an uninitialized parameter.*before calling step"):
        opt.step()
    net(mt.ones(2, 3)).sum().backward()
    assert opt.param_groups[0]["params"][0] is net[0].weight
    before = net[0].weight.detach().clone()
    opt.step()
    assert not mt.equal(before, net[0].weight.detach())

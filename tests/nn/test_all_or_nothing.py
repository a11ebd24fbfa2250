"""A failed ``load_state_dict`` or module conversion changes nothing (a promise beyond PyTorch).

Each scenario snapshots every parameter, buffer and grad of the module -- the object's identity,
its class, dtype, values and version counter -- makes the load or conversion fail on the *last*
tensor it would touch (so every earlier one was already written), and compares after. The
scenarios cross the ``__future__`` flags, ``assign``, Parameter subclasses, hooks and the ways a
conversion can fail (a raising subclass, a weak reference or a live view that makes
``swap_tensors`` refuse, ``fn`` itself raising).
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np
import pytest

import minitorch_nn as torch
from minitorch_nn import nn


class MyParam(nn.Parameter):
    """A Parameter subclass (the undo log once skipped these)."""


class ConvertRefusingParam(nn.Parameter):
    """A Parameter subclass whose dtype conversions raise (a midway failure of ``.double()``)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("double", "half", "bfloat16", "to", "float", "empty_like", "type"):
            raise RuntimeError("this parameter refuses to be converted")
        return super().__torch_function__(func, types, args, kwargs or {})


def make_model(last_param_cls=nn.Parameter):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    m[0].weight = MyParam(m[0].weight.detach().clone())
    m[2].bias = last_param_cls(m[2].bias.detach().clone())
    for p in m.parameters():
        p.grad = torch.ones_like(p)
    return m


def snapshot(m):
    out = {}
    for name, t in itertools.chain(m.named_parameters(remove_duplicate=False), m.named_buffers(remove_duplicate=False)):
        grad = getattr(t, "grad", None)
        out[name] = (
            id(t),
            type(t),
            t.dtype,
            t.detach().clone().numpy().tolist() if not t.is_meta else None,
            t._version,
            None if grad is None else (id(grad), grad.dtype, grad._version, grad.numpy().tolist()),
        )
    return out


FLAGS = [(False, False), (True, False), (False, True), (True, True)]


@pytest.fixture
def flags(request):
    swap, overwrite = request.param
    torch.__future__.set_swap_module_params_on_conversion(swap)
    torch.__future__.set_overwrite_module_params_on_conversion(overwrite)
    yield swap, overwrite
    torch.__future__.set_swap_module_params_on_conversion(False)
    torch.__future__.set_overwrite_module_params_on_conversion(False)


import minitorch_nn.__future__  # noqa: E402  (torch.__future__ as an attribute)


def checkpoint_failing_at_the_end(m, how):
    sd = {k: (v.detach().clone() + 1) for k, v in m.state_dict().items()}
    last = "2.bias"
    if how == "size":
        sd[last] = torch.zeros(5)
    elif how == "missing":
        del sd[last]
    elif how == "unexpected":
        sd["2.extra"] = torch.zeros(1)
    elif how == "not a tensor":
        sd[last] = [1.0, 2.0]
    return sd


@pytest.mark.parametrize("flags", FLAGS, indirect=True)
@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("how", ["size", "missing", "unexpected", "not a tensor", "post hook", "module_load"])
def test_failed_load_state_dict_changes_nothing(flags, assign, how):
    m = make_model()
    sd = checkpoint_failing_at_the_end(m, how)
    if how == "post hook":
        def hook(module, keys):
            raise ValueError("post hook refuses")
        m.register_load_state_dict_post_hook(hook)
    if how == "module_load":
        class RefusingLoad(nn.Parameter):
            def module_load(self, other, assign=False):
                raise RuntimeError("module_load refuses")
        m[2].bias = RefusingLoad(m[2].bias.detach().clone())
        m[2].bias.grad = torch.ones(2)
        if not flags[0]:
            pytest.skip("module_load is only called under the swap flag (PyTorch's rule)")
    # a graph recorded before the load must still run backward afterwards
    x = torch.randn(5, 3)
    loss = m[0](x).sum()
    before = snapshot(m)
    with pytest.raises((RuntimeError, ValueError)):
        m.load_state_dict(sd, assign=assign)
    assert snapshot(m) == before
    loss.backward()   # "modified by an inplace operation" if a version counter moved


@pytest.mark.parametrize("flags", FLAGS, indirect=True)
def test_failed_load_rolls_back_parameter_subclasses(flags):
    m = make_model()
    sd = checkpoint_failing_at_the_end(m, "size")
    old = m[0].weight.detach().clone()
    with pytest.raises(RuntimeError, match="size mismatch for 2.bias"):
        m.load_state_dict(sd)
    assert type(m[0].weight) is MyParam
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), old.numpy())


CONVERSIONS = {
    "double": lambda m: m.double(),
    "half": lambda m: m.half(),
    "bfloat16": lambda m: m.bfloat16(),
    "to(float64)": lambda m: m.to(torch.float64),
    "to_empty": lambda m: m.to_empty(device="cpu"),
}


@pytest.mark.parametrize("flags", FLAGS, indirect=True)
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_conversion_failing_on_a_raising_subclass_changes_nothing(flags, conversion):
    m = make_model(last_param_cls=ConvertRefusingParam)
    before = snapshot(m)
    with pytest.raises(RuntimeError):
        CONVERSIONS[conversion](m)
    assert snapshot(m) == before


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
@pytest.mark.parametrize("holder", ["weakref", "live view"])
def test_swap_refusal_midway_changes_nothing(conversion, holder):
    m = make_model()
    keep = weakref.ref(m[2].bias) if holder == "weakref" else m[2].bias[:1]
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        before = snapshot(m)
        with pytest.raises(RuntimeError, match="Couldn't swap"):
            CONVERSIONS[conversion](m)
        assert snapshot(m) == before
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)
    assert keep is not None


@pytest.mark.parametrize("flags", FLAGS, indirect=True)
def test_apply_with_fn_raising_on_the_last_buffer_changes_nothing(flags):
    m = make_model()
    last_buffer = m[1].num_batches_tracked

    def fn(t):
        if t is last_buffer:
            raise ValueError("fn refuses")
        return t.double() if t.is_floating_point() else t

    before = snapshot(m)
    with pytest.raises(ValueError, match="fn refuses"):
        m._apply(fn)
    assert snapshot(m) == before
    m.double()   # and the module still converts normally afterwards
    assert all(p.dtype is torch.float64 for p in m.parameters())


class CopyCountingParam(nn.Parameter):
    """Counts the writes into it (``copy_`` through ``__torch_function__``)."""

    copies = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "copy_":
            CopyCountingParam.copies += 1
        return super().__torch_function__(func, types, args, kwargs or {})


@pytest.mark.parametrize("how", ["size", "missing", "unexpected", "not a tensor"])
def test_a_load_without_user_code_fails_before_its_first_write(how):
    m = make_model()
    m[0].weight = CopyCountingParam(m[0].weight.detach().clone())
    sd = checkpoint_failing_at_the_end(m, how)
    CopyCountingParam.copies = 0
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Sequential"):
        m.load_state_dict(sd)
    assert CopyCountingParam.copies == 0   # validated first: nothing was written, nothing undone
    m.load_state_dict({k: v for k, v in m.state_dict().items()})   # a good load still writes
    assert CopyCountingParam.copies == 1


def test_a_user_override_of_batchnorm_loading_is_not_dry_run():
    from minitorch_nn.nn.modules._state_dict import _writes_only_tensors

    class MyBN(nn.BatchNorm1d):
        def _load_from_state_dict(self, *args):
            super()._load_from_state_dict(*args)

    assert _writes_only_tensors(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    assert not _writes_only_tensors(nn.Sequential(nn.Linear(2, 2), MyBN(2)))
    m = nn.Linear(2, 2)
    m.register_load_state_dict_post_hook(lambda module, keys: None)
    assert not _writes_only_tensors(m)


def test_the_undo_journal_holds_no_payload_under_the_swap_flag():
    # the journal's own references must not count in swap_tensors' use-count check: conversions
    # of a module whose parameters have grads, one after another, all succeed
    m = make_model()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        for convert in (m.half, m.float, m.double, m.bfloat16, m.float):
            # a live graph gives each parameter its AccumulateGrad node: the second reference
            # swap_tensors allows, so any third one (the journal's) would make it refuse
            loss = sum((p.float() * 2).sum() for p in m.parameters())
            loss.backward()
            convert()
        assert all(p.dtype is torch.float32 and p.grad.dtype is torch.float32 for p in m.parameters())
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)

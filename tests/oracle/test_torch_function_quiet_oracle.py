"""When the public calls may skip the ``__torch_function__`` argument scan (``state.quiet``).

The package's own tensor classes (``nn.Buffer``, the lazy placeholders) must not switch the scan
on just by existing; an instance of a class whose handler can run must. The state is
process-wide and other tests define subclasses, so the first test clears the flag for a while.
"""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn as mnn
from minitorch_nn import _C_torch_function as tfc
from minitorch_nn import _tensor_subclass

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")


def test_package_classes_keep_the_scan_off_until_a_live_instance_exists():
    # Pretend no user class exists yet (other tests define some), then put the flag back.
    state = tfc.state
    saved = state.any_subclass
    state.any_subclass = False
    tfc._changed()
    try:
        assert state.quiet
        # what importing minitorch_nn.nn does for each of them
        for cls in (mnn.Buffer, mnn.parameter.UninitializedParameter, mnn.parameter.UninitializedBuffer):
            _tensor_subclass._register_subclass(cls)
        assert state.quiet
        mnn.Buffer(mt.ones(2))
        assert state.quiet
        mt.ones(2).as_subclass(mnn.Buffer) + 1
        assert state.quiet
        p = mnn.parameter.UninitializedParameter()
        assert not state.quiet  # its handler can run now: the scan is on
        with pytest.raises(ValueError, match="uninitialized parameter"):
            p + 1
    finally:
        state.any_subclass = state.any_subclass or saved
        tfc._changed()


def test_late_handler_wakes_on_first_instance():
    seen = []

    class Late(mt.Tensor):
        __torch_function__ = mt._C._disabled_torch_function_impl

    @classmethod
    def handler(cls, func, types, args=(), kwargs=None):
        seen.append(func)
        with mt._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    Late.__torch_function__ = handler
    mt.add(mt.ones(2).as_subclass(Late), 1)
    assert seen and seen[0] is mt.add


def test_buffer_instance_results_match_torch():
    for lib, nn in ((mt, mnn), (torch, torch.nn)):
        x = lib.ones(2).as_subclass(nn.Buffer)
        assert type(x + 1) is lib.Tensor
        assert type(x.detach()) is lib.Tensor
        assert nn.Buffer.__torch_function__ is lib._C._disabled_torch_function_impl

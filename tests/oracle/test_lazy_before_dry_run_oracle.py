"""Oracle: module operations on a lazy module before its dry run, against PyTorch 2.13: what
works, what is refused, and the swap-flag trap.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)
import minitorch_nn as mt  # noqa: E402
from tests.oracle._lazy_helpers import arr, assert_same, both, error_summary  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Module operations before the dry run: what works, what is refused, and the swap-flag trap
# ------------------------------------------------------------------------------------------------


def _outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001
        return error_summary((type(e).__name__, str(e)))


def _module_ops(lib):
    n = lib.nn
    out = []
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        # PyTorch's swap_tensors gives the placeholder the class Parameter: the module is broken
        # (an empty initialized weight) and its first forward fails; ours adds a hint to that error.
        m = n.LazyLinear(3)
        out.append(_outcome(lambda: (m.double(), type(m.weight).__name__, str(m.weight.dtype))[1:]))
        out.append(_outcome(lambda: m(lib.ones(2, 2, dtype=lib.float64))))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    m = n.LazyLinear(3)
    out.append(_outcome(lambda: m.to_empty(device="cpu") and None))
    m = n.LazyLinear(3)
    out.append(_outcome(lambda: (m.to("meta"), type(m.weight).__name__, str(m.weight.device))[1:]))
    out.append(
        _outcome(lambda: m(lib.ones(2, 2, device="meta")))
    )  # the meta weight came in as real
    out.append(_outcome(lambda: str(n.LazyLinear(3, device="meta").weight.device)))
    m = n.LazyLinear(3)
    out.append(_outcome(lambda: m.requires_grad_(False) and None))
    out.append(
        _outcome(
            lambda: (m.zero_grad(), m.train(False).training, [k for k, _ in m.named_parameters()])
        )
    )
    p = n.LazyLinear(3).weight
    for f in (
        lambda: sum(q.numel() for q in n.LazyLinear(3).parameters()),
        lambda: str(p),
        lambda: p.grad,
        lambda: p.is_leaf,
        lambda: p == 1,
        lambda: len(p),
    ):
        out.append(_outcome(f))
    m = n.LazyLinear(3)
    out.append(
        _outcome(
            lambda: (
                repr(m.load_state_dict(n.Linear(4, 3).state_dict(), assign=True)),
                type(m.weight).__name__,
                type(m).__name__,
                tuple(m(lib.ones(1, 4)).shape),
                type(m).__name__,
                m.in_features,
            )
        )
    )
    m = n.LazyLinear(3)
    out.append(
        _outcome(
            lambda: (
                repr(m.load_state_dict({"weight": lib.ones(3, 4)}, strict=False)),
                type(m.weight).__name__,
                type(m.bias).__name__,
            )
        )
    )
    out.append(_outcome(lambda: m(lib.ones(1, 4))))  # the bias is still a placeholder
    return out


def test_module_operations_before_the_dry_run():
    t, m = both(_module_ops)
    assert len(t) == len(m)
    for a, b in zip(t, m):
        if a[0] == "ok" or b[0] == "ok":
            assert_same(a, b)
        else:
            # same type, and our message starts with PyTorch's (ours may add a hint line)
            assert a[0] == b[0] and b[1].startswith(a[1]), (a, b)
    assert "Hint: the weight is an empty Parameter" in m[1][1]


def test_buffer_assigned_as_attribute_loads_twice():
    # The newer upstream test_lazy_module_buffer: nn.Buffer assignment, the load run twice.
    def run(lib):
        n = lib.nn

        class M(n.modules.lazy.LazyModuleMixin, n.Module):
            def __init__(self):
                super().__init__()
                self.test_buffer = n.UninitializedBuffer()

        class Full(n.Module):
            def __init__(self):
                super().__init__()
                self.test_buffer = n.Buffer(lib.ones(5, 5))

        m = M()
        r1 = repr(m.load_state_dict(Full().state_dict()))
        r2 = repr(m.load_state_dict(Full().state_dict()))
        return list(m._buffers), r1, r2, type(m.test_buffer).__name__, arr(m.test_buffer)

    assert_same(*both(run))


def test_optimizers_and_placeholders():
    # Both accept placeholders (they become Parameters in place, so the optimizer then holds the
    # real ones); stepping before the dry run: PyTorch updates nothing, minitorch_nn raises.
    m = torch.nn.LazyLinear(3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    assert type(opt.param_groups[0]["params"][0]).__name__ == "UninitializedParameter"
    ours = mt.nn.LazyLinear(3)
    o_opt = mt.optim.SGD(ours.parameters(), lr=0.1)
    assert type(o_opt.param_groups[0]["params"][0]).__name__ == "UninitializedParameter"
    opt.step()
    with pytest.raises(RuntimeError, match="(?s)uninitialized parameter.*dummy batch"):
        o_opt.step()
    for lib, mod in ((torch, m), (mt, ours)):
        mod(lib.ones(2, 4))
        o = lib.optim.SGD(mod.parameters(), lr=0.1)
        assert all(a is b for a, b in zip(o.param_groups[0]["params"], mod.parameters()))

"""Oracle: what the Python extension points see while the backward engine runs, against PyTorch.

* A ``TorchDispatchMode`` sees every aten op backward runs: the derivative formulas, summing
  gradients, and ``AccumulateGrad`` filling ``.grad`` (``aten.detach`` when it can keep the
  incoming gradient, a strided copy when the gradient is shared or laid out differently from
  the leaf, ``aten.add_`` for later accumulations, ``aten.add`` under ``create_graph``).
* ``__torch_function__`` (of subclasses and of modes) sees none of the engine's own ops, as
  PyTorch's C++ engine runs below the Python layer; hooks, which are user code, see it as usual.

One known difference is mapped before comparing: PyTorch makes the strided copy's empty tensor
with ``aten.new_empty_strided``, an op minitorch_nn does not have; we use ``aten.empty_strided``.
The ``aten.detach`` that saving and unpacking a node's own output (``exp``'s result) dispatches
is compared in ``test_dispatch_fidelity_oracle.py``.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from torch.utils._python_dispatch import TorchDispatchMode as TorchTorchDispatchMode  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode as MtTorchDispatchMode  # noqa: E402

_MODE_BASES = {torch: TorchTorchDispatchMode, mt: MtTorchDispatchMode}


def _recorded_ops(L, fn):
    class Recorder(_MODE_BASES[L]):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func).replace("aten.new_empty_strided", "aten.empty_strided"))
            return func(*args, **(kwargs or {}))

    setup = fn(L)   # builds the leaves; returns the part to record
    rec = Recorder()
    with rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")   # backward(create_graph=True) warns about cycles
        setup()
    return rec.ops


def _first_and_second_accumulation(L):
    x = L.ones(3, requires_grad=True)

    def run():
        (x * 2).sum().backward()
        (x * 3).sum().backward()
    return run


def _used_twice(L):
    x = L.ones(3, requires_grad=True)
    return lambda: (x * x).sum().backward()


def _expanded_gradient(L):
    x = L.ones(3, requires_grad=True)
    return lambda: x.sum().backward()


def _one_gradient_for_two_leaves(L):
    x, y = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
    return lambda: (x * 2 + y * 2).backward(L.ones(3) * 1)


def _gradient_given_by_the_caller(L):
    x = L.ones(3, requires_grad=True)
    g = L.ones(3)
    return lambda: x.backward(g)


def _gradient_the_caller_does_not_keep(L):
    x = L.ones(3, requires_grad=True)
    return lambda: (x * 2).backward(L.ones(3))


def _transposed_leaf(L):
    x = L.ones(3, 2).t().detach().requires_grad_()

    def run():
        (x * 2).sum().backward()
        (x * 2).sum().backward()
    return run


def _hook_keeps_the_gradient(L):
    x = L.ones(3, requires_grad=True)
    kept = []

    def run():
        t = x * 2
        t.register_hook(lambda g: kept.append(g))
        t.sum().backward()
    return run


def _retain_grad(L):
    x = L.ones(3, requires_grad=True)

    def run():
        t = x * 2
        t.retain_grad()
        t.sum().backward()
    return run


def _create_graph(L):
    x = L.ones(3, requires_grad=True)

    def run():
        (x * x).sum().backward(create_graph=True)
        (x * 2).sum().backward(create_graph=True)
    return run


def _backward_with_inputs(L):
    x, y = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
    return lambda: (x * y * 2).sum().backward(inputs=[x])


def _autograd_grad(L):
    x = L.ones(3, requires_grad=True)
    return lambda: L.autograd.grad((x * 2).sum(), x)


def _dtype_cast(L):
    x = L.ones(3, dtype=L.float64, requires_grad=True)
    return lambda: (x.float() * 2).sum().backward()


SCENARIOS = [_first_and_second_accumulation, _used_twice, _expanded_gradient, _one_gradient_for_two_leaves,
             _gradient_given_by_the_caller, _gradient_the_caller_does_not_keep, _transposed_leaf,
             _hook_keeps_the_gradient, _retain_grad, _create_graph, _backward_with_inputs, _autograd_grad,
             _dtype_cast]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_dispatch_mode_sees_torchs_ops_during_backward(scenario):
    assert _recorded_ops(mt, scenario) == _recorded_ops(torch, scenario)


def test_stolen_gradient_is_an_alias_and_copied_one_is_not():
    # The layout of .grad follows the leaf, and a stolen gradient is the formula's own result.
    def check(L):
        x = L.ones(3, 2).t().detach().requires_grad_()
        (x * 2).sum().backward()
        y = L.ones(3, requires_grad=True)
        g = L.ones(3)
        y.backward(g)
        return x.grad.stride(), y.grad.data_ptr() == g.data_ptr()

    assert check(mt) == check(torch)


# -- __torch_function__ during backward -----------------------------------------------------------


def _subclass_scenario(L):
    seen = []

    class Logged(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    x = L.ones(3, requires_grad=True)
    s = L.full((3,), 2.0).as_subclass(Logged)
    with L._C.DisableTorchFunctionSubclass():
        y = (x * s).exp()   # a plain tensor whose graph saved the subclass instance
    y.register_hook(lambda g: seen.append("hook") or g * s)   # user code: sees __torch_function__
    seen.clear()
    y.sum().backward()
    after_backward = list(seen)
    seen.clear()
    with L._C.DisableTorchFunctionSubclass():
        z = (x * s).sum()
    (gx,) = L.autograd.grad(z, x)
    return after_backward, list(seen), type(x.grad).__name__, type(gx).__name__


def test_subclass_torch_function_does_not_see_backward_formulas():
    assert _subclass_scenario(mt) == _subclass_scenario(torch)


def _mode_scenario(L):
    from_mode = []
    Base = L.overrides.TorchFunctionMode

    class Mode(Base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            from_mode.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    x = L.ones(3, requires_grad=True)
    y = (x * 2).exp().sum()
    with Mode():
        L.autograd.backward([y])
    return from_mode


def test_torch_function_mode_does_not_see_backward_formulas():
    assert _mode_scenario(mt) == _mode_scenario(torch)

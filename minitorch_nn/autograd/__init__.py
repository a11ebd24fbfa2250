"""``minitorch_nn.autograd``: reverse-mode automatic differentiation (mirrors ``torch.autograd``).

Read in this order:

* ``grad_mode.py``   -- ``no_grad`` and friends: the switch that says whether ops are recorded;
* ``graph.py``       -- nodes, edges, saved tensors, ``AccumulateGrad`` for leaves;
* ``recording.py``   -- the autograd layer of the dispatch chain: one node per differentiable op;
* ``derivatives.py`` -- the derivative formula of every op (PyTorch's derivatives.yaml);
* ``engine.py``      -- ``backward()`` and ``grad()``: run each node once all its gradients are in;
* ``ready_queue.py`` -- which ready node runs next (PyTorch's order: the latest made first);
* ``function.py``    -- ``autograd.Function``: a node whose forward and backward you write;
* ``gradcheck.py``   -- compare gradients against finite differences;
* ``functional.py``  -- ``jacobian``, ``hessian``, ``vjp``, ``jvp``... built on ``grad``;
* ``forward_ad.py``   -- forward mode: dual tensors that carry a tangent through every op, with
  the JVP formulas in ``derivatives_forward.py``.

Importing this package installs the autograd layer in ``minitorch_nn._dispatch`` and attaches
``backward``, ``register_hook``, ``retain_grad``... to ``Tensor`` (``_tensor_api.py``).
"""

from __future__ import annotations

import contextlib

from minitorch_nn import _dispatch
from minitorch_nn._functions import factories as _factories
from minitorch_nn.autograd import (
    _tensor_api,  # noqa: F401  (Tensor.backward, hooks, ...)
    forward_ad,
    functional,
    graph,
)
from minitorch_nn.autograd import derivatives as _derivatives  # noqa: F401  (registers the formulas)
from minitorch_nn.autograd import derivatives_forward as _derivatives_forward  # noqa: F401  (JVP formulas)
from minitorch_nn.autograd import derivatives_nn as _derivatives_nn  # noqa: F401  (conv, pooling, batch/group norm)
from minitorch_nn.autograd import derivatives_binary_math as _derivatives_binary_math  # noqa: F401  (xlogy, hypot, ...)
from minitorch_nn.autograd import derivatives_complex as _derivatives_complex  # noqa: F401  (angle, sgn, polar, views)
from minitorch_nn.autograd import derivatives_saved as _derivatives_saved  # noqa: F401  (grad_fn._saved_* as PyTorch)
from minitorch_nn.autograd.engine import backward, grad
from minitorch_nn.autograd.function import Function, FunctionCtx, once_differentiable
from minitorch_nn.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from minitorch_nn.autograd import engine as _engine
from minitorch_nn.autograd import inplace as _inplace
from minitorch_nn.autograd.gradcheck import gradcheck, gradgradcheck
from minitorch_nn.autograd.recording import installed_layer as _autograd_layer

# The layers below autograd call it through these slots rather than importing it, and autograd
# reaches the public zeros_like the same way.
_dispatch.autograd_layer = _autograd_layer
_dispatch.check_inplace_for_autograd = _inplace._check_inplace
_engine.zeros_like = _factories.zeros_like

_anomaly = False
_anomaly_check_nan = True


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from minitorch_nn._C import TensorBase

        return isinstance(other, TensorBase)


class Variable(metaclass=_VariableMeta):
    """Legacy ``torch.autograd.Variable``: every tensor is a "variable" now.

    ``Variable(t, requires_grad=True)`` gives a leaf sharing ``t``'s data, as old tutorials
    expect, and ``isinstance(t, Variable)`` is true for every tensor.
    """

    def __new__(cls, data, requires_grad=False, volatile=False):
        return data.detach().requires_grad_(requires_grad)


class set_detect_anomaly(contextlib.ContextDecorator):
    """Accepted for compatibility; minitorch_nn's errors already name the failing node's op."""

    def __init__(self, mode: bool, check_nan: bool = True):
        global _anomaly, _anomaly_check_nan
        self.prev = _anomaly, _anomaly_check_nan
        _anomaly, _anomaly_check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _anomaly, _anomaly_check_nan
        _anomaly, _anomaly_check_nan = self.prev


class detect_anomaly(set_detect_anomaly):
    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)


def is_anomaly_enabled() -> bool:
    return _anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly_check_nan


__all__ = [
    "Function", "FunctionCtx", "backward", "detect_anomaly", "enable_grad", "grad", "gradcheck", "gradgradcheck",
    "functional", "graph", "inference_mode", "is_grad_enabled", "no_grad", "once_differentiable", "set_detect_anomaly",
    "set_grad_enabled", "is_inference_mode_enabled", "Variable", "forward_ad",
]

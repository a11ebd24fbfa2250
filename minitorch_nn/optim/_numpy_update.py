"""The optimizers' fast path: updating plain cpu tensors with in-place numpy ops.

PyTorch's single-tensor optimizers (``foreach=False``) update each parameter with a handful of
in-place tensor ops (``buf.mul_(momentum).add_(grad)``, ``p.add_(buf, alpha=-lr)``). Here each
of those would pass through the whole dispatch chain, which on a small model costs more than
the arithmetic. When nothing could observe the difference -- plain cpu ``Tensor``/``Parameter``
objects of one 32- or 64-bit float dtype, none of them an inference tensor outside
``inference_mode`` (the ops refuse to write those), no ``__torch_function__`` or ``__torch_dispatch__``
mode or subclass, no forward-AD level, grad mode off -- ``sgd.py`` and ``adam.py`` instead run
the same arithmetic on the tensors' numpy views, operation for operation, with the same
rounding of Python-number operands as the cpu kernels (``backends/cpu/pointwise.py``), so the
results are bit-identical to the tensor-op path. Every tensor written is given a new version,
as an in-place op would.

This path is a twin of the tensor-op path, and answers to the same switch and guards as the
compiled twins (``backends/compiled.py``): it runs only while ``minitorch_nn.backends.compiled
.enabled`` is on and its :class:`~minitorch_nn.backends.compiled.Guard` holds -- the cpu kernels of
the in-place ops it reproduces are the registered ones, unchanged since the build, and so is the
optimizer's own tensor-op code. Otherwise the tensor ops run.

PyTorch has no such path (its per-op overhead is small enough); it is the analogue of its
``foreach`` implementations, which exist for the same reason: fewer trips through the dispatcher.
"""

from __future__ import annotations

import functools

import numpy as np

from minitorch_nn import _dispatch
from minitorch_nn import _dtype as dt
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._tensor import Tensor
from minitorch_nn.autograd import grad_mode
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.backends.cpu._fma import fma
from minitorch_nn.backends.cpu._numpy import fp_errors_off, fp_errors_restore
from minitorch_nn.nn.parameter import Parameter
from minitorch_nn.overrides import _state as _torch_function_state

_PLAIN_TYPES = (Tensor, Parameter)  # exact types: a subclass may override what an op does
_FLOAT_DTYPES = (dt.float32, dt.float64)  # 16-bit floats compute in float32 and round: not here


def numpy_views(*tensors, guard=None):
    """Numpy views of ``tensors`` when the fast path may compute on them, else ``None``.

    A ``None`` among ``tensors`` (state that does not exist) stays ``None``. ``guard``: the
    optimizer's :class:`~minitorch_nn.backends.compiled.Guard`; the views are given only while the
    switch is on and the guard holds.
    """
    if not _compiled_switch._enabled or (guard is not None and not guard.holds()):
        return None
    # (A __torch_dispatch__ *subclass* somewhere in the program does not matter: only exact
    # Tensor/Parameter objects pass below, and no subclass handler ever sees those.)
    if (
        grad_mode._enabled
        or _python_dispatch._modes
        or _dispatch.forward_ad_layer is not None
        or _torch_function_state.modes
    ):
        return None
    dtype = None
    views = []
    for t in tensors:
        if t is None:
            views.append(None)
            continue
        if type(t) not in _PLAIN_TYPES:
            return None
        impl = t._impl
        if impl.device.type != "cpu" or impl.dtype not in _FLOAT_DTYPES or (dtype is not None and impl.dtype is not dtype):
            return None
        if impl.version.inference and not grad_mode._inference:
            return None   # the tensor ops refuse to write into an inference tensor, with PyTorch's error
        view = impl.numpy_view()
        if not view.flags.writeable:  # (e.g. a tensor over a read-only buffer: let the op raise)
            return None
        dtype = impl.dtype
        views.append(view)
    return views


def plain_numbers(*values) -> bool:
    """True when every hyperparameter is a Python number (a tensor ``lr`` takes the tensor path)."""
    return all(type(v) in (int, float) for v in values)


def bump_versions(*tensors) -> None:
    """Record an in-place change of each tensor (what ``x.add_(...)`` does to ``x._version``)."""
    for t in tensors:
        t._impl.version.value += 1


def scalar(value, like):
    """A Python number as the cpu kernels read it: rounded to the array's dtype."""
    return np.asarray(value, dtype=like.dtype)


def add_scaled(x, y, alpha, out=None):
    """``x + alpha * y`` as ``Tensor.add(y, alpha=alpha)`` computes it (``out=x`` for ``add_``):
    one fused multiply-add, rounded once (``backends/cpu/_fma.py``)."""
    if type(alpha) is int and alpha == 1:
        return np.add(x, y, out=out)
    return fma(y, scalar(alpha, y), x, out=out)


def lerp_into(start, end, weight):
    """``start.lerp_(end, weight)`` for a number ``weight``, the cpu kernel's formula: a
    multiply-add from the nearer end (``weight`` 0.5 switches ends), rounded once."""
    w = scalar(weight, start)
    diff = end - start
    if abs(w) < 0.5:
        fma(w, diff, start, out=start)
    else:
        fma(w - scalar(1, start), diff, end, out=start)


def addcmul_into(x, t1, t2, value):
    """``x.addcmul_(t1, t2, value=value)``: ``(value * t1) * t2 + x``, the last multiply-add fused."""
    fma(scalar(value, x) * t1, t2, x, out=x)


def addcdiv_into(x, t1, t2, value):
    """``x.addcdiv_(t1, t2, value=value)``: ``x + (value * t1) / t2``, each step rounded."""
    np.add(x, (scalar(value, x) * t1) / t2, out=x)


def quiet_fp_errors(update):
    """Run ``update`` with numpy's floating-point warnings off: like the cpu kernels (and
    PyTorch), an update that overflows to inf or makes a nan does so silently."""

    @functools.wraps(update)
    def wrapper(*args):
        token = fp_errors_off()
        try:
            return update(*args)
        finally:
            fp_errors_restore(token)

    return wrapper

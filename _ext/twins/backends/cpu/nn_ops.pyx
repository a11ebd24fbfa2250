# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/nn_ops.py``: its ``mse_loss`` kernel.

``nn.functional.mse_loss(x, y)`` (``reduction`` "mean" or "sum") for two float tensors of one
dtype and shape, row-major: no size warning, ``broadcast_tensors`` hands both back as they are,
and the kernel computes ``(a - b) ** 2`` then ``.mean()``/``.sum()`` (numpy's warnings as the
kernel leaves them); here the same numpy expression on the same arrays, so the same bits, recorded
as ``aten.mse_loss.default(input, target, enum)`` with grad. It runs only while the kernel's
guard holds (see ``_ext/twins/_gate.pyx``); anything else takes the full path.
``tests/twins/test_fast_path_more.py`` compares both paths.
"""

cimport cython
cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.tuple cimport PyTuple_GET_SIZE

import numpy as np

from minitorch_nn._C cimport (TensorBase, TensorImpl, _fresh_impl, _is_contiguous, _mark_view_of,
                              _mtnn_mul_overflow, _wrap_payload)
from minitorch_nn._twins._gate cimport (_Tensor, _cpu, _cpu_payload, _dim_index, _elementwise_input,
                                        _f32, _f64, _fp_ignore, _fp_var, _fresh_tensor, _full,
                                        _grad_enabled, _i64, _nothing_intercepts, _plain, _plain_cpu,
                                        _record_mode, _record_mode3, _recorded, _recorded_with, _records,
                                        _row_major, _scalar_operand, _size_arg, _twin_ok, _typenum,
                                        _unary_like)
from minitorch_nn._twins.autograd.recording cimport (_NONDIFFERENTIABLE, _Recipe, _record,
                                                     _record_general, _recipe_for, _recipe_of,
                                                     recorder_ready)

cnp.import_array()

# -- F.mse_loss ---------------------------------------------------------------------------------------

cdef object _op_mse_loss = None


cdef bint _load() except -1:
    """Look up, once, the op (False while the cpu backend is not loaded yet: the full path runs)."""
    global _op_mse_loss
    import sys
    if sys.modules.get("minitorch_nn.backends.cpu.nn_ops") is None:
        return False
    from minitorch_nn._ops import aten
    _op_mse_loss = aten.mse_loss.default
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the op is looked up."""
    if not _nothing_intercepts():
        return False
    return _op_mse_loss is not None or _load()


cdef object _mse_loss_fast(object input, object target, object reduction):
    """``functional.mse_loss`` for two float tensors of one dtype and shape, row-major, reduced by
    ``"mean"`` or ``"sum"``: no size warning, ``broadcast_tensors`` hands both back as they are,
    and ``nn_ops.mse_loss`` computes ``(a - b) ** 2`` then ``.mean()``/``.sum()`` (numpy's warnings
    as the kernel leaves them); recorded as ``aten.mse_loss.default(input, target, enum)``."""
    cdef int enum
    if type(reduction) is not str:
        return None
    if reduction == "mean":
        enum = 1
    elif reduction == "sum":
        enum = 2
    else:
        return None
    cdef TensorImpl a = _elementwise_input(input, False), b = _elementwise_input(target, False)
    if a is None or b is None or b.dtype is not a.dtype or b.sizes != a.sizes or not _may_run():
        return None
    cdef int record = _record_mode(_op_mse_loss, a, b)
    if record < 0:
        return None
    try:
        loss = (a.numpy_view() - b.numpy_view()) ** 2
        r = loss.mean() if enum == 1 else loss.sum()
    except Exception:
        return None   # (a warning turned into an error: the full path raises it again)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(_op_mse_loss, (input, target, enum), out) if record else out


def functional_mse_loss(input, target, *args, **kwargs):
    """``nn.functional.mse_loss(input, target, reduction=...)``: the fast path, else the full path."""
    r = None
    if not args and (not kwargs or (len(kwargs) == 1 and "reduction" in kwargs)):
        r = _mse_loss_fast(input, target, kwargs.get("reduction", "mean") if kwargs else "mean")
    return _full("functional.mse_loss", (input, target), args, kwargs) if r is None else r


# the nn.functional function from this file (``nn/functional.py`` installs it)
METHODS = {}
FUNCTIONS = {}
FUNCTIONAL = {"mse_loss": functional_mse_loss}

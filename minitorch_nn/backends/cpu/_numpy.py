"""Moving between tensors and numpy arrays inside the cpu kernels.

Every cpu kernel reads its tensor inputs as numpy views (``t._array``, no copy), computes with
numpy, and wraps the resulting array as a new tensor (:func:`wrap`). 16-bit floats are computed
in float32 and rounded back at the end, which is what PyTorch's cpu kernels do too.
"""

from __future__ import annotations

import functools

import numpy as np

from minitorch_nn import _C
from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, TensorImpl
from minitorch_nn._device import CPU
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn._tensor import _STRIDES_CACHE as _ROW_MAJOR
from minitorch_nn._tensor import Tensor, _from_array, _wrap_array, contiguous_strides
from minitorch_nn.backends.common import compute_dtype

# -- floating-point error flags --------------------------------------------------------------------
# PyTorch computes 1/0, inf - inf, overflow... silently; numpy warns unless told not to. The usual
# ``with np.errstate(all="ignore"):`` costs several microseconds per op (it builds its settings on
# every entry), which is most of a tiny op's kernel time, so we build the "ignore" settings once
# and switch numpy's context variable to them directly. Older/newer numpy without that variable
# falls back to errstate.
try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _IGNORE_FP_ERRORS = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - depends on the numpy version
    _extobj_contextvar = None


if _extobj_contextvar is not None:
    # fp_errors_off() -> token: silence numpy's floating-point warnings (PyTorch never warns) until
    # fp_errors_restore(token). Both are the context variable's own (C) methods, bound once: on a
    # tiny tensor even a Python function frame around them is a measurable part of the op.
    fp_errors_off = functools.partial(_extobj_contextvar.set, _IGNORE_FP_ERRORS)
    fp_errors_restore = _extobj_contextvar.reset
else:  # pragma: no cover - depends on the numpy version

    def fp_errors_off():
        """Silence numpy's floating-point warnings until :func:`fp_errors_restore` (PyTorch never warns)."""
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def fp_errors_restore(token):
        token.__exit__(None, None, None)


def as_array(x, cdt: dt.dtype | None = None):
    """``x`` (tensor or Python number) as a numpy array/scalar in compute dtype ``cdt``."""
    if isinstance(x, TensorBase):
        impl = x._impl
        arr = impl.numpy_view()
        if cdt is not None and impl.dtype is not cdt:
            arr = arr.astype(cdt.numpy_dtype)
        return arr
    if cdt is None:
        return x
    try:
        return np.asarray(x, dtype=cdt.numpy_dtype)
    except OverflowError:
        # A Python int outside the dtype's range wraps around (uint8 tensor + -1 adds 255), as
        # PyTorch's cast of the scalar does; numpy refuses such a conversion.
        return np.asarray(x).astype(cdt.numpy_dtype)


def wrap(result, dtype: dt.dtype):
    """A fresh numpy result as a cpu tensor of ``dtype`` (casting back from compute dtype)."""
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    if result.dtype != dtype.numpy_dtype:
        result = cast(result, dtype)
    if _wrap_array is not None and result.flags.c_contiguous:
        # _tensor._from_array's common case, written out: every op result comes here
        shape = result.shape
        return _wrap_array(Tensor, result, dtype, CPU, _ROW_MAJOR.get(shape) or contiguous_strides(shape))
    return _from_array(result, dtype)


def wrap_strided(result, dtype: dt.dtype, strides, *, copy=False):
    """Like :func:`wrap`, but the tensor gets ``strides`` (from ``backends/layout.py``; None means
    contiguous): how an elementwise result keeps its operands' memory order.

    The values are copied into fresh memory laid out with those strides, unless numpy already
    produced exactly that layout (it often does: its ufuncs also follow the inputs' order).
    ``copy=True`` when ``result`` may be someone else's memory (an input's view, a broadcast
    constant): then the tensor never shares it.
    """
    if strides is None:
        if copy and np.asarray(result).dtype == dtype.numpy_dtype:  # (a cast makes new memory anyway)
            result = np.array(result, order="C", copy=True)
        return wrap(result, dtype)
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    shape = result.shape
    itemsize = dtype.itemsize
    byte_strides = tuple(s * itemsize for s in strides)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if 0 not in shape else 0
    if (result.flags.owndata and result.dtype == dtype.numpy_dtype and result.strides == byte_strides
            and extent and min(strides, default=0) >= 0):
        # numpy's layout is already PyTorch's, in memory of its own (so no input's): the flat
        # storage is that block of memory
        storage = np.lib.stride_tricks.as_strided(result, (extent,), (itemsize,))
        arr = result
    else:
        storage = np.empty(extent, dtype=dtype.numpy_dtype)
        arr = np.lib.stride_tricks.as_strided(storage, shape, byte_strides)
        token = fp_errors_off()
        try:
            np.copyto(arr, result, casting="unsafe")
        finally:
            fp_errors_restore(token)
    impl = TensorImpl(storage, tuple(shape), tuple(strides), 0, dtype, CPU)
    impl.array = arr
    return _C._wrap(Tensor, impl)


def cast(arr, dtype: dt.dtype):
    """``arr`` converted to ``dtype``'s numpy type, silently (overflow to inf, nan to int), as PyTorch casts."""
    if arr.dtype.kind == "c" and not dtype.is_complex:
        arr = arr.real  # (what numpy would keep, without its ComplexWarning)
    token = fp_errors_off()
    try:
        return arr.astype(dtype.numpy_dtype)
    finally:
        fp_errors_restore(token)


def write_into(out, result):
    """Copy ``result`` into tensor ``out``'s memory (an in-place op), casting as needed."""
    target = out._impl.numpy_view()
    try:
        np.copyto(target, result, casting="unsafe")
    except ValueError:
        shape = np.shape(result)
        if broadcast_shapes(tuple(target.shape), tuple(shape)) != tuple(target.shape):
            raise RuntimeError(
                f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                f"{list(broadcast_shapes(tuple(target.shape), tuple(shape)))}"
            ) from None
        raise
    out._impl.version.value += 1
    return out


def numpy_broadcast_error(*operands):
    """Re-raise a numpy broadcasting failure with PyTorch's message."""
    shapes = [tuple(o._impl.sizes) for o in operands if isinstance(o, TensorBase)]
    broadcast_shapes(*shapes)  # raises PyTorch's RuntimeError when they do not broadcast


__all__ = ["as_array", "wrap", "wrap_strided", "write_into", "compute_dtype", "numpy_broadcast_error", "fp_errors_off",
           "fp_errors_restore"]

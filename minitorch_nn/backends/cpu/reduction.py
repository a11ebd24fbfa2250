"""Reduction cpu kernels: ``sum``, ``mean``, ``max``, ``var``, ``logsumexp``, softmax, ...

Mirrors PyTorch's ``ReduceOps.cpp``. The dtype rules are PyTorch's: ``sum``/``prod`` of
integers and bools give int64; ``mean`` and ``var`` need a floating input; ``max(dim)`` returns
values and int64 indices. ``dim=None`` or ``[]`` means every dimension.

Where we differ: ``var_mean``/``std_mean`` return the plain mean. PyTorch computes both with a
Welford update, so when the input holds an infinity its mean can come out ``nan`` instead of
``inf`` depending on where the infinity sits; ours always says ``inf`` (as ``mean`` does).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim, wrap_dims
from minitorch_nn._warnings import warn_user
from minitorch_nn.backends.common import compute_dtype, mean_dtype, not_implemented, type_name
from minitorch_nn.backends.cpu._numpy import as_array, fp_errors_off, fp_errors_restore, wrap
from minitorch_nn.backends.cpu.complex import refuse_complex

# np.max(x, ...) is np.maximum.reduce(x, ...) behind a Python-level argument check that costs more
# than the reduction itself on a small tensor: the kernels call the ufunc's reduce directly.
_max = np.maximum.reduce
_min = np.minimum.reduce
_add_reduce = np.add.reduce


def _axes(self, dim):
    """numpy's ``axis`` for PyTorch's ``dim`` (an int or a list of ints); None means every dim."""
    if type(dim) is list and len(dim) == 1:
        # the common ``x.sum(1)`` (aten gets ``[1]``): no duplicate to look for
        ndim = len(self._impl.sizes)
        axis = wrap_dim(dim[0], ndim)  # (a dim out of range raises, for a 0-d tensor too)
        return (axis,) if ndim else None
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    if isinstance(dim, int):
        dim = [dim]
    axes = tuple(wrap_dims(dim, self.dim()))
    # a 0-d tensor accepts dim 0 / -1, but its numpy array has no axis to reduce
    return axes if self.dim() else None


def _sum_dtype(self, dtype):
    if dtype is not None:
        return dtype
    return self.dtype if (self.dtype.is_floating_point or self.dtype.is_complex) else dt.int64


@aten.sum.default.impl("cpu")
def sum_all(self, *, dtype=None):
    return sum_dim(self, None, dtype=dtype)


@aten.sum.dim_IntList.impl("cpu")
def sum_dim(self, dim, keepdim=False, *, dtype=None):
    """The cpu kernel of ``aten.sum.dim_IntList`` (and of ``sum()`` with ``dim=None``).

    Rules:

    * the result dtype is ``dtype`` when given, else the input's for floating inputs and ``int64``
      for bool and integer inputs (``_sum_dtype``);
    * the work is done in that dtype's computation type (``compute_dtype``: float32 for the
      16-bit floats) on the input as a numpy array (``as_array(self, cdt)``);
    * ``dim`` may be None or ``[]`` (sum everything), an int or a list of ints, negative ones
      counting from the end; ``_axes(self, dim)`` turns it into numpy axes (checking the range);
    * ``keepdim=True`` keeps each reduced dim with size 1;
    * the numpy result is wrapped back into a tensor of the result dtype with ``wrap``.
    """
    # BEGIN SOLUTION kernel-sum
    out = _sum_dtype(self, dtype)
    cdt = compute_dtype(out)
    # np.add.reduce is np.sum without its Python-level argument handling (a few microseconds)
    return wrap(np.add.reduce(as_array(self, cdt), axis=_axes(self, dim), keepdims=keepdim), out)
    # END SOLUTION


@aten.mean.default.impl("cpu")
def mean_all(self, *, dtype=None):
    return mean_dim(self, None, dtype=dtype)


@aten.mean.dim.impl("cpu")
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    d = mean_dtype(self, dtype)
    cdt = compute_dtype(d)
    x = as_array(self, cdt)
    axes = _axes(self, dim)
    count = x.size if axes is None else math.prod([x.shape[a] for a in axes])
    # sum / count rather than np.mean: an empty reduction is nan (0/0) without numpy's
    # "Mean of empty slice" warning, which PyTorch does not give
    token = fp_errors_off()
    try:
        r = np.add.reduce(x, axis=axes, keepdims=keepdim, dtype=cdt.numpy_dtype) / np.asarray(count, cdt.numpy_dtype)
    finally:
        fp_errors_restore(token)
    return wrap(r, d)


@aten.prod.default.impl("cpu")
def prod_all(self, *, dtype=None):
    out = _sum_dtype(self, dtype)
    return wrap(np.prod(as_array(self, compute_dtype(out))), out)


@aten.prod.dim_int.impl("cpu")
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    out = _sum_dtype(self, dtype)
    return wrap(np.prod(as_array(self, compute_dtype(out)), axis=wrap_dim(dim, self.dim()), keepdims=keepdim), out)


def _check_nonempty(self, name, dim=None):
    if self.numel() == 0:
        if dim is None:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        d = wrap_dim(dim, self.dim())
        if self.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@aten.max.default.impl("cpu")
def max_all(self):
    refuse_complex("max_all", self)
    if self.numel() == 0:
        raise RuntimeError(
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )
    return wrap(_max(as_array(self), axis=None), self.dtype)


@aten.min.default.impl("cpu")
def min_all(self):
    refuse_complex("min_all", self)
    if self.numel() == 0:
        raise RuntimeError(
            "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )
    return wrap(_min(as_array(self), axis=None), self.dtype)


def _max_min_dim(self, dim, keepdim, argpick, name):
    refuse_complex(name + "_dim", self)
    _check_nonempty(self, name, dim)
    ndim = self.dim()
    d = wrap_dim(dim, ndim)
    arr = as_array(self)
    if ndim == 0:
        return wrap(arr.copy(), self.dtype), wrap(np.zeros((), np.int64), dt.int64)
    # numpy's argmax/argmin give the first NaN of a row when it has one, which is PyTorch's answer
    # (NaN wins, and its index is reported), and the first of equal values otherwise
    idx = argpick(arr, axis=d)
    values = _take_along(arr, idx, d)
    if keepdim:
        kept = idx.shape[:d] + (1,) + idx.shape[d:]
        values, idx = values.reshape(kept), idx.reshape(kept)
    return wrap(values, self.dtype), wrap(idx, dt.int64)


def _take_along(arr, idx, d):
    """The element of ``arr`` at position ``idx`` along dim ``d`` (``idx`` has ``arr``'s other dims):
    ``np.take_along_axis`` without its general-purpose index building, which costs several
    microseconds. Rows of ``arr`` along ``d``, one picked from each."""
    rows = arr.transpose([i for i in range(arr.ndim) if i != d] + [d]).reshape(-1, arr.shape[d])
    return rows[np.arange(rows.shape[0]), idx.reshape(-1)].reshape(idx.shape)


@aten.max.dim.impl("cpu")
def max_dim(self, dim, keepdim=False):
    return _max_min_dim(self, dim, keepdim, np.ndarray.argmax, "max")


@aten.min.dim.impl("cpu")
def min_dim(self, dim, keepdim=False):
    return _max_min_dim(self, dim, keepdim, np.ndarray.argmin, "min")


def _amax_amin_axes(self, dim, name):
    """``_axes``, refusing (as PyTorch) to reduce an empty tensor over a dim of size 0: max/min
    of nothing has no value. The first such dim is named as the caller wrote it (-1 stays -1)."""
    if self.numel() == 0:
        dims = [dim] if isinstance(dim, int) else list(dim or ())
        if not dims:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        for d in dims:  # (in order: a dim out of range met first is reported first; repeats after)
            if self.shape[wrap_dim(d, self.dim())] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return _axes(self, dim)


@aten.amax.default.impl("cpu")
def amax(self, dim=(), keepdim=False):
    refuse_complex("amax", self)
    return wrap(_max(as_array(self), axis=_amax_amin_axes(self, dim, "amax"), keepdims=keepdim), self.dtype)


@aten.amin.default.impl("cpu")
def amin(self, dim=(), keepdim=False):
    refuse_complex("amin", self)
    return wrap(_min(as_array(self), axis=_amax_amin_axes(self, dim, "amin"), keepdims=keepdim), self.dtype)


def _arg(self, dim, keepdim, fn, name):
    refuse_complex(name, self)
    if self.dtype is dt.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if self.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = as_array(self).reshape(-1)
        r = fn(flat)
        if keepdim:
            return wrap(np.full((1,) * self.dim(), r), dt.int64)
        return wrap(np.asarray(r), dt.int64)
    _check_nonempty(self, name, dim)
    d = wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return wrap(np.zeros((), np.int64), dt.int64)
    r = fn(as_array(self), axis=d)
    return wrap(np.expand_dims(r, d) if keepdim else r, dt.int64)


@aten.argmax.default.impl("cpu")
def argmax(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, np.ndarray.argmax, "argmax")


@aten.argmin.default.impl("cpu")
def argmin(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, np.ndarray.argmin, "argmin")


def _var(self, dim, correction, keepdim, name):
    d = self.dtype
    if d.is_complex:
        # the variance of complex numbers is that of the real parts plus that of the imaginary
        # parts: a real result, computed on the real view
        from minitorch_nn.backends.complex_views import view_as_real

        parts = view_as_real(self)
        if dim is None or (isinstance(dim, (list, tuple)) and not dim):
            dims = list(range(self.dim()))
        else:
            dims = wrap_dims([dim] if isinstance(dim, int) else list(dim), self.dim())
        r, real = _var(parts, dims, correction, keepdim, name)
        return np.add.reduce(r, axis=-1), real
    if not d.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ddof = 1 if correction is None else correction
    cdt = compute_dtype(d)
    x = as_array(self, cdt)
    axes = _axes(self, dim)
    count = x.size if axes is None else math.prod([x.shape[a] for a in axes])
    if count - ddof > 0:
        # the usual case: nothing to warn about (PyTorch raises no floating-point warnings)
        token = fp_errors_off()
        try:
            r = _var_steps(x, axes, count, ddof, keepdim)
        finally:
            fp_errors_restore(token)
        return r, d
    with warnings.catch_warnings():
        # PyTorch's warning, instead of numpy's "Degrees of freedom <= 0 for slice"
        warn_user(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning,
        )
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(all="ignore"):
            r = np.var(x, axis=axes, ddof=ddof, keepdims=keepdim)
    return r, d


def _var_steps(x, axes, count, ddof, keepdim):
    """``np.var(x, axis=axes, ddof=ddof, keepdims=keepdim)`` for a float array, as the ufunc
    calls numpy makes for it (so the same bits), without ``np.var``'s argument handling, which
    costs more than the arithmetic on a small tensor: the mean (a sum kept as an array, divided by
    the count), the squared deviations in one temporary, their sum divided by ``count - ddof``.
    ``tests/test_reduction_kernels.py`` compares it with ``np.var`` bit for bit.

    The counts are numpy scalars (``intp``; ``float64`` for a fractional ``ddof``), as in numpy:
    dividing a float32 array or scalar by one runs numpy's float64 division, rounded back to
    float32 (a Python int would divide in float32). A scalar result is divided in Python floats,
    which is that same float64 division."""
    mean = _add_reduce(x, axes, None, None, True)
    if type(mean) is np.ndarray:
        np.true_divide(mean, np.intp(count), mean)
    else:   # (a 0-d input)
        mean = mean.dtype.type(mean / np.intp(count))
    dev = np.subtract(x, mean, out=...)
    np.square(dev, dev)
    r = _add_reduce(dev, axes, None, None, keepdim)
    if type(ddof) is int:
        dof = count - ddof   # (> 0: the caller checked)
    elif type(ddof) is float:
        dof = float(count) - ddof
    else:
        dof = np.maximum(np.intp(count) - ddof, 0)
    if type(r) is np.ndarray:
        n = np.intp(dof) if type(dof) is int else np.float64(dof) if type(dof) is float else dof
        return np.true_divide(r, n, r)
    if type(dof) is int or type(dof) is float:
        return r.dtype.type(float(r) / dof)
    return r.dtype.type(r / dof)


@aten.var.correction.impl("cpu")
def var(self, dim=None, *, correction=None, keepdim=False):
    return wrap(*_var(self, dim, correction, keepdim, "var"))


@aten.std.correction.impl("cpu")
def std(self, dim=None, *, correction=None, keepdim=False):
    r, d = _var(self, dim, correction, keepdim, "std")
    return wrap(np.sqrt(r), d)


@aten.var_mean.correction.impl("cpu")
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    r, d = _var(self, dim, correction, keepdim, "var_mean")
    return wrap(r, d), mean_dim(self, dim if dim is not None else [], keepdim)


@aten.std_mean.correction.impl("cpu")
def std_mean(self, dim=None, *, correction=None, keepdim=False):
    r, d = _var(self, dim, correction, keepdim, "std_mean")
    return wrap(np.sqrt(r), d), mean_dim(self, dim if dim is not None else [], keepdim)


@aten.logsumexp.default.impl("cpu")
def logsumexp(self, dim, keepdim=False):
    d = self.dtype if (self.dtype.is_floating_point or self.dtype.is_complex) else dt.get_default_dtype()
    cdt = compute_dtype(d)
    x = as_array(self, cdt)
    axes = _axes(self, dim)
    if x.size == 0:
        return wrap(np.log(np.sum(np.exp(x), axis=axes, keepdims=keepdim)), d)
    # (complex numbers: the shift is the largest real part, which is what scales exp)
    m = _max(x.real if d.is_complex else x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    token = fp_errors_off()
    try:
        r = np.log(np.add.reduce(np.exp(x - m), axis=axes, keepdims=True)) + m
    finally:
        fp_errors_restore(token)
    if not keepdim:
        r = np.squeeze(r, axis=axes) if axes is not None else r.reshape(())
    return wrap(r, d)


def _logical_dtype(self):
    # all/any of a uint8 tensor stay uint8 (a PyTorch backward-compatibility rule); others give bool
    return dt.uint8 if self.dtype is dt.uint8 else dt.bool


@aten.all.default.impl("cpu")
def all_(self):
    return wrap(np.all(as_array(self)), _logical_dtype(self))


@aten.any.default.impl("cpu")
def any_(self):
    return wrap(np.any(as_array(self)), _logical_dtype(self))


@aten.all.dim.impl("cpu")
def all_dim(self, dim, keepdim=False):
    return wrap(np.all(as_array(self), axis=_axes(self, dim), keepdims=keepdim), _logical_dtype(self))


@aten.any.dim.impl("cpu")
def any_dim(self, dim, keepdim=False):
    return wrap(np.any(as_array(self), axis=_axes(self, dim), keepdims=keepdim), _logical_dtype(self))


@aten.linalg_vector_norm.default.impl("cpu")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {type_name(self.dtype)}"
        )
    d = dtype if dtype is not None else self.dtype
    cdt = compute_dtype(d)
    x = np.abs(as_array(self, cdt))
    d = d.to_real()  # (the norm of complex numbers is real)
    axes = _axes(self, dim)
    token = fp_errors_off()
    try:
        if ord == 2:  # (the usual one: clip_grad_norm_ asks it of every parameter)
            r = np.sqrt(np.add.reduce(x * x, axis=axes, keepdims=keepdim))
        elif ord == float("inf"):
            r = np.max(x, axis=axes, keepdims=keepdim)
        elif ord == float("-inf"):
            r = np.min(x, axis=axes, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(cdt.numpy_dtype)
        elif ord == 1:
            r = np.sum(x, axis=axes, keepdims=keepdim)
        else:
            r = np.sum(x ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    finally:
        fp_errors_restore(token)
    return wrap(r, d)


def _scan(fn, self, dim, dtype):
    out = _sum_dtype(self, dtype)
    if out is dt.bool:  # (a bool input scans in int64; only an asked-for bool result has no loop)
        raise not_implemented(f"{fn.__name__}_out_cpu", out)
    d = wrap_dim(dim, self.dim())
    x = as_array(self, compute_dtype(out))
    # numpy's scans flatten a 0-d input to shape (1,); the result keeps the input's shape
    return wrap(fn(x, axis=d if self.dim() else None).reshape(x.shape), out)


@aten.cumsum.default.impl("cpu")
def cumsum(self, dim, *, dtype=None):
    return _scan(np.cumsum, self, dim, dtype)


@aten.cumprod.default.impl("cpu")
def cumprod(self, dim, *, dtype=None):
    return _scan(np.cumprod, self, dim, dtype)


@aten.sort.default.impl("cpu")
def sort(self, dim=-1, descending=False):
    refuse_complex("sort", self)
    d = wrap_dim(dim, self.dim())
    arr = as_array(self)
    if self.dim() == 0:
        return wrap(arr.copy(), self.dtype), wrap(np.zeros((), np.int64), dt.int64)
    idx = _stable_argsort(arr, d, descending)
    return wrap(np.take_along_axis(arr, idx, axis=d), self.dtype), wrap(idx, dt.int64)


def _stable_argsort(arr, axis, descending):
    """Indices that sort ``arr`` along ``axis``; equal values keep their order; NaN counts as largest.

    Descending order sorts the reversed array ascending and reverses the answer, which keeps
    ties in their original order (negating the values would not work for bool or unsigned ints).
    """
    if not descending:
        return np.argsort(arr, axis=axis, kind="stable")
    n = arr.shape[axis]
    rev = np.argsort(np.flip(arr, axis=axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(rev, axis=axis)


@aten.topk.default.impl("cpu")
def topk(self, k, dim=-1, largest=True, sorted=True):
    refuse_complex("topk", self)
    d = wrap_dim(dim, self.dim())
    arr = as_array(self)
    if k > (arr.shape[d] if arr.ndim else 1) or k < 0:
        raise RuntimeError("selected index k out of range")
    idx = np.take(_stable_argsort(arr, d, largest), np.arange(k), axis=d)
    return wrap(np.take_along_axis(arr, idx, axis=d), self.dtype), wrap(idx, dt.int64)


def _empty_like_contiguous(t):
    """A fresh row-major tensor of ``t``'s (empty) shape and dtype."""
    return wrap(np.empty(tuple(t.shape), as_array(t).dtype), t.dtype)


def _softmax_impl(self, dim, log):
    impl = self._impl
    ndim = len(impl.sizes)
    d = wrap_dim(dim, ndim)
    dtype = impl.dtype
    if self.numel() == 0:
        return _empty_like_contiguous(self)  # no element to compute: any dtype passes, as in PyTorch
    if not dtype.is_floating_point:
        last = "lastdim_" if d == max(ndim - 1, 0) else ""
        raise not_implemented(f"{'log_' if log else ''}softmax_{last}kernel_impl", dtype)
    x = as_array(self, compute_dtype(dtype))
    r = None if _compiled_softmax is None else _compiled_softmax(x, d, log)
    if r is None:
        r = _softmax_numpy(x, d, log)
    return wrap(r, dtype)


try:
    # The compiled loops (_ext/_activation_kernels.pyx: PyTorch's order of operations, closer to
    # its bits than numpy's) are part of this kernel rather than a twin: they run with the switch
    # (backends.compiled) off too. Absent from a tree built without that file, where
    # _softmax_numpy does it all. The compiled fast path calls them too.
    from minitorch_nn._activation_kernels import softmax as _compiled_softmax
except ImportError:  # pragma: no cover - depends on the build
    _compiled_softmax = None


def _softmax_numpy(x, d, log):
    """The readable softmax (``log=False``) or log_softmax of the float array ``x`` along axis
    ``d``: the max, ``exp(x - max)``, its sum along ``d``, then ``e / sum`` or
    ``(x - max) - log(sum)``. The shift by the max keeps exp from overflowing. A fresh row-major
    array, as PyTorch's result is contiguous."""
    ndim = x.ndim
    if ndim == 0:
        x = x.reshape(1)
    token = fp_errors_off()
    try:
        shifted = np.ascontiguousarray(x - _max(x, axis=d, keepdims=True))
        if log:
            s = np.add.reduce(np.exp(shifted), axis=d, keepdims=True)
            r = np.subtract(shifted, np.log(s), out=shifted)
        else:
            e = np.exp(shifted, out=shifted)
            r = np.divide(e, np.add.reduce(e, axis=d, keepdims=True), out=e)
    finally:
        fp_errors_restore(token)
    return r.reshape(()) if ndim == 0 else r


def _softmax_backward_impl(grad_output, output, dim, log):
    """The gradient of softmax (``log=False``) or log_softmax from the forward's output y and
    the incoming gradient g: ``y * (g - sum(g * y))`` or ``g - exp(y) * sum(g)``, the sums along
    ``dim``. The result is contiguous, as PyTorch's."""
    name = f"{'log_' if log else ''}softmax_backward"
    dtype = grad_output.dtype
    ndim = grad_output.dim()
    d = wrap_dim(dim, ndim)
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError(
            f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but "
            f"{list(grad_output.shape)} does not equal {list(output.shape)} (while checking arguments for {name})")
    if output.dtype is not dtype:
        raise RuntimeError(f"expected scalar type {type_name(dtype)} but found {type_name(output.dtype)}")
    if grad_output.numel() == 0:
        return _empty_like_contiguous(grad_output)
    if not dtype.is_floating_point:
        last = "lastdim_" if d == max(ndim - 1, 0) else ""
        raise not_implemented(f"{name}_{last}kernel_impl", dtype)
    cdt = compute_dtype(dtype)
    g, y = as_array(grad_output, cdt), as_array(output, cdt)
    if ndim == 0:
        g, y = g.reshape(1), y.reshape(1)
    token = fp_errors_off()
    try:
        # The gradient of softmax along axis ``d`` (numpy arrays: ``g`` the incoming gradient,
        # ``y`` the forward's output). With y = softmax(x), dy_i/dx_j = y_i (delta_ij - y_j), so
        #   softmax:      r = y * (g - sum(g * y))       (the sum along d, kept as a size-1 axis)
        #   log_softmax:  r = g - exp(y) * sum(g)        (y = log_softmax(x), so exp(y) = softmax)
        # Sum with np.add.reduce(..., axis=d, keepdims=True) so the shapes broadcast back.
        # BEGIN SOLUTION autograd-softmax-backward
        if log:
            r = g - np.exp(y) * np.add.reduce(g, axis=d, keepdims=True)
        else:
            r = y * (g - np.add.reduce(g * y, axis=d, keepdims=True))
        # END SOLUTION
    finally:
        fp_errors_restore(token)
    return wrap(r.reshape(()) if ndim == 0 else np.ascontiguousarray(r), dtype)


@aten._softmax_backward_data.default.impl("cpu")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward_impl(grad_output, output, dim, log=False)


@aten._log_softmax_backward_data.default.impl("cpu")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward_impl(grad_output, output, dim, log=True)


@aten._softmax.default.impl("cpu")
def _softmax(self, dim, half_to_float):
    return _softmax_impl(self, dim, log=False)


@aten._log_softmax.default.impl("cpu")
def _log_softmax(self, dim, half_to_float):
    return _softmax_impl(self, dim, log=True)

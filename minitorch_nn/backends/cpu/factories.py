"""cpu kernels that create or copy whole tensors: factories, ``_to_copy``, ``copy_``, ``clone``, ``cat``.

Mirrors PyTorch's ``TensorFactories.cpp`` and ``Copy.cpp`` for the cpu device. Random factories
draw from ``minitorch_nn.random``'s generator, which reproduces PyTorch's cpu stream.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, checked_numel
from minitorch_nn._device import canonical
from minitorch_nn._ops import aten
from minitorch_nn._shape import check_size_nonnegative, wrap_dim
from minitorch_nn._tensor import _from_array, contiguous_strides
from minitorch_nn.backends.common import (
    complex_to_real_warning,
    compute_dtype,
    not_implemented,
    real_scalar,
    result_type,
)
from minitorch_nn.backends.cpu import libm
from minitorch_nn.backends.cpu._numpy import as_array, wrap, wrap_strided, write_into
from minitorch_nn.backends.layout import check_inplace_overlap, format_strides, like_strides


def _dtype_or_default(dtype, fallback=None):
    if dtype is not None:
        return dtype
    return fallback if fallback is not None else dt.get_default_dtype()


@aten.empty.memory_format.impl("cpu")
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    check_size_nonnegative(size)
    strides = format_strides(size, memory_format)
    if strides is not None:  # channels_last(_3d): the same storage, read in that order
        return empty_strided(size, strides, dtype=dtype)
    d = _dtype_or_default(dtype)
    return _from_array(np.zeros(tuple(size), dtype=d.numpy_dtype), d)


@aten.empty_strided.default.impl("cpu")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = _dtype_or_default(dtype)
    size, stride = tuple(size), tuple(stride)
    from minitorch_nn._C import check_geometry

    check_geometry(size, stride, 0, d.itemsize)
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    storage = np.zeros(extent, dtype=d.numpy_dtype)
    from minitorch_nn._C import TensorImpl, _wrap
    from minitorch_nn._device import CPU
    from minitorch_nn._tensor import Tensor

    return _wrap(Tensor, TensorImpl(storage, size, stride, 0, d, CPU))


@aten.zeros.default.impl("cpu")
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = _dtype_or_default(dtype)
    return _from_array(np.zeros(tuple(size), dtype=d.numpy_dtype), d)


@aten.ones.default.impl("cpu")
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = _dtype_or_default(dtype)
    return _from_array(np.ones(tuple(size), dtype=d.numpy_dtype), d)


@aten.full.default.impl("cpu")
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = dtype if dtype is not None else result_type(fill_value)
    return _from_array(np.full(tuple(size), real_scalar(fill_value, d), dtype=d.numpy_dtype), d)


@aten.scalar_tensor.default.impl("cpu")
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    d = _dtype_or_default(dtype)
    return _from_array(np.asarray(real_scalar(s, d), dtype=d.numpy_dtype), d)


def _like(self, dtype):
    return dtype if dtype is not None else self.dtype


def filled_like(self, values, dtype, memory_format=None):
    """A fresh tensor shaped like ``self`` holding ``values`` (broadcast), laid out as
    ``empty_like(self, memory_format=...)`` is: a permuted ``self`` gives a permuted result."""
    strides = like_strides(self, memory_format)
    if strides is None and values.dtype == dtype.numpy_dtype:
        # contiguous (the usual case): fill fresh memory directly, no broadcast view to copy from
        out = np.empty(tuple(self._impl.sizes), dtype=values.dtype)
        out[...] = values
        return wrap(out, dtype)
    return wrap_strided(np.broadcast_to(values, tuple(self._impl.sizes)), dtype, strides, copy=True)


def _constant(value, numpy_dtype):
    """A read-only 0-d array of ``value`` (0 or 1), made once per dtype: ``zeros_like``/``ones_like``
    run for every backward (its first gradient) and np.zeros/np.ones cost more than the fill."""
    key = (value, numpy_dtype)
    arr = _CONSTANTS.get(key)
    if arr is None:
        arr = _CONSTANTS[key] = np.full((), value, dtype=numpy_dtype)
        arr.flags.writeable = False
    return arr


_CONSTANTS: dict = {}


@aten.empty_like.default.impl("cpu")
@aten.zeros_like.default.impl("cpu")
def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    d = _like(self, dtype)
    return filled_like(self, _constant(0, d.numpy_dtype), d, memory_format)


@aten.ones_like.default.impl("cpu")
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    d = _like(self, dtype)
    return filled_like(self, _constant(1, d.numpy_dtype), d, memory_format)


@aten.full_like.default.impl("cpu")
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    d = _like(self, dtype)
    return filled_like(self, np.full((), real_scalar(fill_value, d), dtype=d.numpy_dtype), d, memory_format)


def _arange_dtype(start, end, step, dtype):
    if dtype is not None:
        return dtype
    if any(isinstance(v, float) or (isinstance(v, TensorBase) and v.dtype.is_floating_point) for v in (start, end, step)):
        return dt.get_default_dtype()
    return dt.int64


def _vector_fill(n, dtype, start, step, acc):
    """``arange``'s values as PyTorch's vectorised cpu kernel writes them.

    The kernel fills AVX2 vectors (32 bytes), two per loop step: each vector starts from
    ``start + step * first_index`` rounded to the tensor's dtype, then adds ``lane * step`` in the
    accumulate type ``acc``; the elements after the last pair of vectors are computed one by one
    as ``start + step * index``. That rounding of each vector's base is why a float32
    ``arange(0, 5, 0.1)`` differs in the last bit from ``start + i * step``. (Past 32768
    elements PyTorch splits the range between threads, which moves the vector boundaries; we do
    not follow that, so very long float ranges can differ in the last bit.)
    """
    T = dtype.numpy_dtype
    idx = np.arange(n)
    width = max(32 // T.itemsize, 1)
    lane = idx % width
    base = (start + step * (idx - lane).astype(acc)).astype(T)
    out = (base.astype(acc) + lane.astype(acc) * step).astype(T)
    whole = n - n % (2 * width)
    out[whole:] = (start + step * idx[whole:].astype(acc)).astype(T)
    return out


def _fma(a, b, c, wide):
    """``a * b + c`` rounded once, like the fused multiply-add PyTorch's compiled kernels use.

    Computed in the wider numpy type ``wide`` (float64 for float32 work, long double for
    float64 work) where the product is exact, then rounded by the caller's cast.
    """
    return np.asarray(a, dtype=wide) * np.asarray(b, dtype=wide) + np.asarray(c, dtype=wide)


def _wide(st):
    return np.longdouble if np.dtype(st).itemsize >= 8 else np.float64


def _to_dtype_scalar(value, dtype):
    # Scalar.to<T>(): 16-bit floats are built from a float, so a double is rounded twice
    value = real_scalar(value, dtype)
    if dtype in (dt.float16, dt.bfloat16):
        return np.asarray(np.float32(value)).astype(dtype.numpy_dtype)
    return np.asarray(value).astype(dtype.numpy_dtype)


def arange_values(start, end, step, dtype):
    """PyTorch's arange: length ceil((end - start) / step), values start + i * step."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    length = np.ceil((end - start) / step)
    if not 0 <= length <= 2**63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    n = int(length)
    if not dtype.is_floating_point:
        # the length comes from the real bounds, the values from start and step cast to integers
        # (arange(0, 2.3, 0.3, dtype=int32) is eight zeros in PyTorch)
        start, step = int(start), int(step)
        return (start + np.arange(n, dtype=np.int64) * step).astype(dtype.numpy_dtype)
    # accumulate in double for float32/float64 and in float for 16-bit floats, as PyTorch does
    acc = np.float64 if dtype.itemsize >= 4 else np.float32
    return _vector_fill(n, dtype, acc(start), acc(step), acc)


def linspace_values(start, end, steps, dtype):
    """PyTorch's linspace: the first half counts up from start, the second half down from end."""
    if steps == 0:
        return np.empty(0, dtype=dtype.numpy_dtype)
    s, e = _to_dtype_scalar(start, dtype), _to_dtype_scalar(end, dtype)
    if steps == 1:
        return np.full(1, s, dtype=dtype.numpy_dtype)
    # the step is held in the tensor's dtype for floats and in double for integers
    st = dtype.numpy_dtype if (dtype.is_floating_point or dtype.is_complex) else np.dtype(np.float64)
    s, e = s.astype(st), e.astype(st)
    step = (e - s) / np.asarray(steps - 1).astype(st)
    i = np.arange(steps)
    if dtype in (dt.float16, dt.bfloat16) or dtype.is_complex:
        # 16-bit arithmetic rounds after every operation (c10::Half/BFloat16 operators); complex
        # arithmetic has no fused multiply-add
        up = s + step * i.astype(st)
        down = e - step * (steps - 1 - i).astype(st)
    else:
        # the compiler fuses start + step * i into one fused multiply-add
        wide = _wide(st)
        up = _fma(step, i, s, wide)
        down = _fma(-step, steps - 1 - i, e, wide)
    return np.where(i < steps // 2, up, down).astype(st).astype(dtype.numpy_dtype)


def logspace_values(start, end, steps, base, dtype):
    """PyTorch's logspace: ``base ** e`` in double for linspace-like exponents ``e`` (counted up
    from start for the first half, down from end for the second), then cast to ``dtype``."""
    if steps == 0:
        return np.empty(0, dtype=dtype.numpy_dtype)
    if steps == 1:
        return libm.pow_float64(base, [start]).astype(dtype.numpy_dtype)
    s, e = _to_dtype_scalar(start, dtype), _to_dtype_scalar(end, dtype)
    # end - start is taken in the tensor's dtype, everything after in double (no fused multiply-add)
    step = np.float64(e - s) / np.float64(steps - 1)
    i = np.arange(steps)
    up = np.float64(s) + step * i
    down = np.float64(e) - step * (steps - 1 - i)
    with np.errstate(all="ignore"):
        return libm.pow_float64(base, np.where(i < steps // 2, up, down)).astype(dtype.numpy_dtype)


@aten.arange.default.impl("cpu")
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype)


@aten.arange.start.impl("cpu")
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype)


@aten.arange.start_step.impl("cpu")
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    d = _arange_dtype(start, end, step, dtype)
    if d.is_complex:
        raise not_implemented("arange_cpu", d)  # PyTorch has no complex arange
    return _from_array(arange_values(start, end, step, d), d)


@aten.linspace.default.impl("cpu")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        d = dt.get_default_complex_dtype()
    else:
        d = _dtype_or_default(dtype)
    if d is dt.bool:
        raise not_implemented("linspace_cpu", d)
    return _from_array(linspace_values(start, end, steps, d), d)


@aten.logspace.default.impl("cpu")
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dtype_or_default(dtype)
    if d is dt.bool:
        raise not_implemented("logspace_cpu", d)
    return _from_array(logspace_values(start, end, steps, base, d), d)


@aten.eye.default.impl("cpu")
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype)


@aten.eye.m.impl("cpu")
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    d = _dtype_or_default(dtype)
    return _from_array(np.eye(n, m, dtype=d.numpy_dtype), d)


# -- copies ---------------------------------------------------------------------------------------

@aten.clone.default.impl("cpu")
def clone(self, *, memory_format=None):
    # preserve_format (the default) keeps a permuted tensor's memory order; see backends/layout.py
    return wrap_strided(as_array(self), self.dtype, like_strides(self, memory_format), copy=True)


@aten.lift_fresh.default.impl("any")
def lift_fresh(self):
    return self


@aten._to_copy.default.impl("cpu")
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    target = self.dtype if dtype is None else dtype
    dev = self.device if device is None else canonical(device)
    src = self
    if dev.type != "cpu":
        # cpu -> other device: that device's backend does the transfer (keeping the layout), so a
        # memory_format asked for is applied here first
        from minitorch_nn.backends import transfer

        if memory_format is not None and memory_format is not dt.preserve_format:
            src = wrap_strided(as_array(src), src.dtype, like_strides(src, memory_format), copy=True)
        return transfer.to_device(src, dev, target)
    values = as_array(src)
    if src.dtype.is_complex and not target.is_complex:
        complex_to_real_warning()
        values = values.real
    # the copy is laid out like empty_like(self, memory_format=...) (wrap_strided casts as it copies)
    return wrap_strided(values, target, like_strides(src, memory_format), copy=True)


@aten.copy_.default.impl("cpu")
def copy_(self, src, non_blocking=False):
    if isinstance(src, TensorBase):
        check_inplace_overlap(self, src)
    if isinstance(src, TensorBase) and src.device.type != "cpu":
        if src.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        src = src.cpu()
    r = as_array(src)
    if np.iscomplexobj(r) and not self.dtype.is_complex:
        complex_to_real_warning()
        r = np.real(r)
    if np.shape(r) != tuple(self.shape):
        from minitorch_nn._shape import broadcast_shapes

        try:
            if broadcast_shapes(tuple(self.shape), np.shape(r)) != tuple(self.shape):
                raise ValueError
        except (RuntimeError, ValueError):
            raise RuntimeError(
                f"The size of tensor a ({self.shape[-1] if self.dim() else 1}) must match the size of tensor b "
                f"({np.shape(r)[-1] if np.ndim(r) else 1}) at non-singleton dimension {max(self.dim() - 1, 0)}"
            ) from None
    return write_into(self, r)


@aten.resize_.default.impl("cpu")
def resize_(self, size, *, memory_format=None):
    """Give this tensor ``size`` with contiguous strides, growing its storage if it is too small.

    As in PyTorch, the elements that were there keep their place in storage and new ones are
    uninitialised (zeros here); views of the old storage stop seeing a grown tensor.
    """
    size = tuple(size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    impl = self._impl
    from minitorch_nn._C import check_geometry

    check_geometry(size, contiguous_strides(size), impl.offset, impl.dtype.itemsize)  # (overflow)
    needed = impl.offset + checked_numel(size)
    if needed > impl.storage.shape[0]:
        grown = np.zeros(needed, dtype=impl.storage.dtype)
        grown[: impl.storage.shape[0]] = impl.storage
        impl.storage = grown
    impl.set_metadata(size, contiguous_strides(size), impl.offset)
    return self


@aten._local_scalar_dense.default.impl("cpu")
def _local_scalar_dense(self):
    v = as_array(self).reshape(-1)[0]
    if self.dtype is dt.bool:
        return bool(v)
    if self.dtype.is_complex:
        return complex(v)
    return float(v) if self.dtype.is_floating_point else int(v)


@aten.zero_.default.impl("cpu")
def zero_(self):
    return write_into(self, 0)


@aten.fill_.Scalar.impl("cpu")
def fill_scalar_(self, value):
    value = real_scalar(value, self.dtype)
    return write_into(self, np.asarray(value).astype(compute_dtype(self.dtype).numpy_dtype))


@aten.fill_.Tensor.impl("cpu")
def fill_tensor_(self, value):
    if value.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
        )
    return write_into(self, as_array(value))


# -- joining -------------------------------------------------------------------------------------

def _check_cat(tensors, dim, name="torch.cat"):
    if len(tensors) == 0:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    ref = next((t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)), tensors[0])
    d = wrap_dim(dim, ref.dim())
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    for i, t in enumerate(tensors):
        if t.dim() == 1 and t.shape[0] == 0:
            continue
        if t.dim() != ref.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}"
            )
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {ref.shape[k]} but "
                    f"got size {t.shape[k]} for tensor number {i} in the list."
                )
    return d


@aten.cat.default.impl("cpu")
def cat(tensors, dim=0):
    d = _check_cat(tensors, dim)
    dtype = result_type(*tensors)
    parts = [as_array(t, dtype) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not parts:
        return _from_array(np.zeros((0,), dtype=dtype.numpy_dtype), dtype)
    return wrap(np.concatenate(parts, axis=d), dtype)


@aten.stack.default.impl("cpu")
def stack(tensors, dim=0):
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape0 = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape0:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape0)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shape0) + 1)
    dtype = result_type(*tensors)
    return wrap(np.stack([as_array(t, dtype) for t in tensors], axis=d), dtype)


@aten.flip.default.impl("cpu")
def flip(self, dims):
    axes = tuple(wrap_dim(d, self.dim()) for d in dims)
    if not self.dim():   # a 0-d tensor takes dim 0 / -1, but its array has no axis to flip
        return wrap(as_array(self).copy(), self.dtype)
    return wrap(np.flip(as_array(self), axis=axes).copy(), self.dtype)


@aten.roll.default.impl("cpu")
def roll(self, shifts, dims=()):
    dims = [wrap_dim(d, self.dim()) for d in dims]   # (PyTorch's IndexError for a bad dim)
    if not dims:
        return wrap(np.roll(as_array(self).reshape(-1), shifts).reshape(tuple(self.shape)), self.dtype)
    return wrap(np.roll(as_array(self), shifts, axis=tuple(dims)), self.dtype)


@aten.repeat.default.impl("cpu")
def repeat(self, repeats):
    if len(repeats) < self.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    arr = as_array(self).reshape((1,) * (len(repeats) - self.dim()) + tuple(self.shape))
    return wrap(np.tile(arr, tuple(repeats)), self.dtype)


@aten.constant_pad_nd.default.impl("cpu")
def constant_pad_nd(self, pad, value=0):
    n = self.dim()
    widths = [(0, 0)] * n
    for i in range(len(pad) // 2):
        widths[n - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    arr = as_array(self)
    # negative padding crops
    slices = tuple(slice(max(-a, 0), arr.shape[k] - max(-b, 0)) for k, (a, b) in enumerate(widths))
    arr = arr[slices]
    widths = [(max(a, 0), max(b, 0)) for a, b in widths]
    return wrap(np.pad(arr, widths, constant_values=value), self.dtype)


__all__ = ["arange_values", "contiguous_strides"]

"""Tensor factories on the GPU: ``arange``, ``linspace``, ``eye``, ``full``, ``scalar_tensor``,
``empty_strided``, and ``fill_`` with a tensor value.

Mirrors PyTorch's ``RangeFactories.cu`` and ``TensorFactories.cu``: the values are computed where
they are stored, one thread per element, from the element's number ``i``:

* ``arange``: ``start + i * step``;
* ``linspace``: ``start + i * step`` for the first half and ``end - (steps - 1 - i) * step`` for the
  second, so that both ends are exact (PyTorch's kernel does the same);
* ``eye``: 1 where the row equals the column.

The arithmetic is done in float64 and rounded once to the result dtype (integers truncate, as on
cpu). PyTorch's cpu kernels round differently in the last bit (its vectorised ``arange``; the
fused multiply-add of ``linspace``), which ``backends/cpu/factories.py`` mimics; so a float32
range on cuda may differ from cpu's in the last bit -- as it does in PyTorch between devices.
Argument checks and dtype inference are the cpu backend's.
"""

from __future__ import annotations

import math

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import result_type
from minitorch_nn.backends.cpu.factories import _arange_dtype, _dtype_or_default
from minitorch_nn.backends.cuda import copy as _copy
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous, copy_into
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()


@_cuda.jit
def _arange(out, n, start, step):
    i = _cuda.grid(1)
    if i < n:
        out[i] = start + i * step


@_cuda.jit
def _linspace(out, n, start, end, step):
    i = _cuda.grid(1)
    if i < n:
        if i < n // 2:
            out[i] = start + i * step
        else:
            out[i] = end - (n - 1 - i) * step


@_cuda.jit
def _eye(out, rows, cols):
    i = _cuda.grid(1)
    if i < rows * cols:
        out[i] = 1 if i // cols == i % cols else 0


def _in_dtype(values_f64, d):
    """A float64 result of a factory kernel as dtype ``d`` (integers truncate toward zero)."""
    return values_f64 if d is dt.float64 else cast_contiguous(values_f64, d)


def _arange_length(start, end, step):
    """None when the arguments are bad (the host path raises the cpu error)."""
    if step == 0 or (step > 0 and start > end) or (step < 0 and start < end):
        return None
    return int(math.ceil((end - start) / step))


_host_arange = host_kernel(aten.arange.start_step)


@aten.arange.start_step.impl("cuda")
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in (start, end, step)):
        return _host_arange(start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    n = _arange_length(start, end, step)
    if n is None:
        return _host_arange(start, end, step, dtype=dtype)
    d = _arange_dtype(start, end, step, dtype)
    if not d.is_floating_point:  # integer ranges start and step from the truncated values
        start, step = int(start), int(step)
    out = storage.empty((n,), dt.float64)
    if n:
        _arange[blocks_for(n), THREADS](out._impl.storage, n, float(start), float(step))
    return _in_dtype(out, d)


@aten.arange.default.impl("cuda")
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype)


@aten.arange.start.impl("cuda")
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype)


_host_linspace = host_kernel(aten.linspace.default)
# logspace is computed on the host and copied over (it is rare, and small)
aten.logspace.default.impl("cuda")(host_kernel(aten.logspace.default))


@aten.linspace.default.impl("cuda")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0 or any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in (start, end)):
        return _host_linspace(start, end, steps, dtype=dtype)
    d = _dtype_or_default(dtype)
    out = storage.empty((steps,), dt.float64)
    if steps:
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        _linspace[blocks_for(steps), THREADS](out._impl.storage, steps, float(start), float(end), float(step))
    return _in_dtype(out, d)


_host_eye = host_kernel(aten.eye.m)


@aten.eye.m.impl("cuda")
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0 or m < 0:
        return _host_eye(n, m, dtype=dtype)
    d = _dtype_or_default(dtype)
    out = storage.empty((n, m), dt.float64 if d is dt.bfloat16 else d)  # bfloat16 words are set via float
    if n * m:
        _eye[blocks_for(n * m), THREADS](out._impl.storage, n, m)
    return out if out.dtype is d else cast_contiguous(out, d)


@aten.eye.default.impl("cuda")
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype)


_host_full = host_kernel(aten.full.default)


@aten.full.default.impl("cuda")
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if not all(type(s) is int and s >= 0 for s in size):
        return _host_full(size, fill_value, dtype=dtype)
    d = dtype if dtype is not None else result_type(fill_value)
    return _copy.fill_value(storage.empty(tuple(size), d), fill_value)


@aten.scalar_tensor.default.impl("cuda")
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _copy.fill_value(storage.empty((), _dtype_or_default(dtype)), s)


@aten.empty_strided.default.impl("cuda")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    d = _dtype_or_default(dtype)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    flat = storage.device_array(extent, storage.storage_dtype(d))
    return storage.wrap(flat, size, d, strides=stride)


_host_fill_tensor = host_kernel(aten.fill_.Tensor)


@aten.fill_.Tensor.impl("cuda")
def fill_tensor_(self, value):
    if value.dim() != 0 or value.device.type != "cuda":
        return _host_fill_tensor(self, value)  # the cpu error for a non-0-d value
    copy_into(self, value)  # the strided copy broadcasts the one element, casting it
    self._impl.version.value += 1
    return self

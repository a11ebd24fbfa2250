"""Masks on the GPU: ``masked_fill(_)``, and ``nonzero``/``masked_select`` by *count, then write*.

Mirrors PyTorch's ``Indexing.cu`` (``masked_fill``) and ``Nonzero.cu``. ``masked_fill`` is an
elementwise ``where(mask, value, self)`` (``elementwise.py``).

``nonzero`` and ``masked_select`` have a result whose *size depends on the data*: the GPU cannot
allocate it before it knows how many elements are selected. So they run in two passes, over
chunks of ``CHUNK`` consecutive elements, one thread per chunk:

1. **count**: each thread counts the selected elements of its chunk;
2. **scan**: an exclusive prefix sum of those counts gives where each chunk's output starts (and
   the total, which is copied to the host to allocate the result -- PyTorch syncs here too);
3. **write**: each thread walks its chunk again and writes the selected elements (``masked_select``)
   or their multi-indices (``nonzero``) from its start position on, in order.

The scan of the (few) chunk counts is one sequential thread: the counts are ``n / CHUNK`` numbers.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import contiguous, copy_into
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for, device_ints
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.layout import check_inplace_overlap, has_internal_overlap

_cuda = cuda()
CHUNK = 64


@_cuda.jit
def _count(counts, flags, n, chunks):
    t = _cuda.grid(1)
    if t < chunks:
        c = 0
        for i in range(t * CHUNK, min((t + 1) * CHUNK, n)):
            if flags[i]:
                c += 1
        counts[t] = c


@_cuda.jit
def _exclusive_scan(starts, counts, chunks):
    """starts[t] = counts[0] + ... + counts[t-1]; starts[chunks] = the total. One thread."""
    if _cuda.grid(1) == 0:
        s = 0
        for t in range(chunks):
            starts[t] = s
            s += counts[t]
        starts[chunks] = s


@_cuda.jit
def _write_values(out, values, flags, starts, n, chunks):
    t = _cuda.grid(1)
    if t < chunks:
        k = starts[t]
        for i in range(t * CHUNK, min((t + 1) * CHUNK, n)):
            if flags[i]:
                out[k] = values[i]
                k += 1


@_cuda.jit
def _write_indices(out, shape, flags, starts, n, chunks):
    """Row k of out (k, ndim) is the multi-index of the k-th selected element."""
    t = _cuda.grid(1)
    if t < chunks:
        nd = len(shape)
        k = starts[t]
        for i in range(t * CHUNK, min((t + 1) * CHUNK, n)):
            if flags[i]:
                rest = i
                for d in range(nd - 1, -1, -1):
                    out[k * nd + d] = rest % shape[d]
                    rest //= shape[d]
                k += 1


def _select_plan(flags):
    """Count pass + scan over contiguous bool ``flags``: (starts device array, chunks, total)."""
    n = flags.numel()
    chunks = max((n + CHUNK - 1) // CHUNK, 1)
    counts = storage.device_array(chunks, np.int64)
    starts = storage.device_array(chunks + 1, np.int64)
    fi = flags._impl
    f = fi.storage[fi.offset : fi.offset + n]
    _count[blocks_for(chunks), THREADS](counts, f, n, chunks)
    _exclusive_scan[1, 1](starts, counts, chunks)
    total = int(starts[chunks : chunks + 1].copy_to_host()[0])
    return f, starts, chunks, total


def _flags_of(t):
    """``t != 0`` as a contiguous (row-major) bool tensor."""
    if t.dtype is dt.bool:
        return contiguous(t)
    # the pointwise result keeps t's layout (a transposed t gives a transposed mask), but the
    # passes below walk the flags in storage order, which must be row-major order
    return contiguous(ew.pointwise(ew.f_ne, t, 0, kind="bool"))


@aten.nonzero.default.impl("cuda")
def nonzero(self):
    if self.dim() == 0 or self.numel() == 0:
        return host_kernel(aten.nonzero.default)(self)
    flags = _flags_of(self)
    f, starts, chunks, total = _select_plan(flags)
    out = storage.empty((total, self.dim()), dt.int64)
    if total:
        _write_indices[blocks_for(chunks), THREADS](out._impl.storage, device_ints(tuple(self.shape)), f, starts,
                                                    flags.numel(), chunks)
    return out


_host_masked_select = host_kernel(aten.masked_select.default)


@aten.masked_select.default.impl("cuda")
def masked_select(self, mask):
    if mask.dtype is not dt.bool or mask.device.type != "cuda" or self.dtype is dt.bfloat16:
        return _host_masked_select(self, mask)
    try:
        shape = tuple(broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    except (RuntimeError, ValueError):
        return _host_masked_select(self, mask)
    values, flags = storage.empty(shape, self.dtype), storage.empty(shape, dt.bool)
    copy_into(values, self)  # both broadcast to one shape, contiguous
    copy_into(flags, mask)
    if values.numel() == 0:
        return storage.empty((0,), self.dtype)
    f, starts, chunks, total = _select_plan(flags)
    out = storage.empty((total,), self.dtype)
    if total:
        _write_values[blocks_for(chunks), THREADS](out._impl.storage, values._impl.storage, f, starts, values.numel(),
                                                   chunks)
    return out


# -- masked_fill ------------------------------------------------------------------------------------


def _fill_ok(self, mask, value):
    if mask.dtype is not dt.bool or mask.device.type != "cuda" or self.dtype is dt.bool:
        return False
    return not isinstance(value, TensorBase) or value.dim() == 0


def _masked_fill(self, mask, value):
    cdt = compute_dtype(self.dtype)
    # PyTorch fills a contiguous clone of self, whatever self's layout: no operand orders the result
    return ew.launch(ew.f_where, [mask, ew._as_compute(value, cdt), ew._as_compute(self, cdt)], self.dtype, cdt,
                     cast=False, layout=())


def _register(op, inplace):
    host = host_kernel(op)

    def kernel(self, mask, value):
        if not _fill_ok(self, mask, value) or (inplace and has_internal_overlap(self)):
            return host(self, mask, value)  # PyTorch's errors and warnings
        r = _masked_fill(self, mask, value)
        if not inplace:
            return r
        check_inplace_overlap(self, mask, internal=False)
        if tuple(r.shape) != tuple(self.shape):
            return host(self, mask, value)  # a mask that would grow self: the cpu error
        copy_into(self, r)
        self._impl.version.value += 1
        return self

    op.impl("cuda")(kernel)


_register(aten.masked_fill.Scalar, False)
_register(aten.masked_fill.Tensor, False)
_register(aten.masked_fill_.Scalar, True)
_register(aten.masked_fill_.Tensor, True)

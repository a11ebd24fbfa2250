"""Reductions that return *where*: ``argmax``/``argmin`` and ``max.dim``/``min.dim`` on the GPU.

Mirrors PyTorch's ``ReduceArgMaxKernel.cu``: the same shared-memory tree as ``reduction.py``,
except that each slot holds a (value, index) pair and two pairs combine by these rules:

* a NaN beats every number (PyTorch's max/min propagate NaN), the first NaN wins;
* otherwise the larger (smaller for min) value wins;
* on a tie the smaller index wins, so the answer is the *first* extremum, as on cpu.

The reduced dim is moved last and made contiguous (``scan.rows``); then one thread block per row.
"""

from __future__ import annotations

import numba
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.scan import flat, rows

_cuda = cuda()
BLOCK = 8 if simulator() else 256
_KERNELS: dict = {}


@_cuda.jit(device=True)
def _better(b, ib, a, ia, largest):
    """Whether candidate (b, ib) beats the current (a, ia)."""
    a_nan = a != a
    b_nan = b != b
    if a_nan or b_nan:
        if a_nan and b_nan:
            return ib < ia
        return b_nan
    if b == a:
        return ib < ia
    return b > a if largest else b < a


def make_arg_reduce(np_dtype):
    key = np.dtype(np_dtype)
    if key in _KERNELS:
        return _KERNELS[key]
    value_type = numba.from_dtype(key)

    @_cuda.jit
    def arg_reduce_rows(values, indices, x, row_len, largest):
        row = _cuda.blockIdx.x
        tid = _cuda.threadIdx.x
        vbuf = _cuda.shared.array(BLOCK, value_type)
        ibuf = _cuda.shared.array(BLOCK, numba.int64)
        best_i = -1  # -1: this thread has seen nothing yet
        best = x[row * row_len]
        for j in range(tid, row_len, BLOCK):
            v = x[row * row_len + j]
            if best_i < 0 or _better(v, j, best, best_i, largest):
                best = v
                best_i = j
        vbuf[tid] = best
        ibuf[tid] = best_i
        _cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if tid < step:
                oi = ibuf[tid + step]
                if oi >= 0 and (ibuf[tid] < 0 or _better(vbuf[tid + step], oi, vbuf[tid], ibuf[tid], largest)):
                    vbuf[tid] = vbuf[tid + step]
                    ibuf[tid] = oi
            _cuda.syncthreads()
            step //= 2
        if tid == 0:
            values[row] = vbuf[0]
            indices[row] = ibuf[0]

    _KERNELS[key] = arg_reduce_rows
    return arg_reduce_rows


def arg_reduce(self, d, largest):
    """(values, indices) of the max (or min) of each row along dim ``d`` (keepdim=False), or over all when None."""
    work = dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else self.dtype  # compared as float32, exactly
    if d is None:
        x = contiguous(self) if work is self.dtype else cast_contiguous(self, work)
        x = storage.wrap(x._impl.storage, (1, self.numel()), work, offset=x._impl.offset)
        out_shape = ()
    else:
        x, _ = rows(self, d, work)
        out_shape = tuple(s for k, s in enumerate(self.shape) if k != d)
    row_len = x.shape[-1]
    n_rows = x.numel() // row_len
    values, indices = storage.empty(out_shape, work), storage.empty(out_shape, dt.int64)
    make_arg_reduce(storage.storage_dtype(work))[n_rows, BLOCK](values._impl.storage, indices._impl.storage, flat(x),
                                                                 row_len, largest)
    if work is not self.dtype:
        values = cast_contiguous(values, self.dtype)
    return values, indices


def _keep(t, shape):
    """Contiguous ``t`` viewed with the reduced dim kept as size 1."""
    return storage.wrap(t._impl.storage, shape, t.dtype, offset=t._impl.offset)


def _kept_shape(self, d):
    return tuple(1 if k == d else s for k, s in enumerate(self.shape))


def _ok(self):
    return self.numel() > 0 and self.dim() > 0 and self.dtype is not dt.bool


def _max_min(op, largest):
    host = host_kernel(op)

    def kernel(self, dim, keepdim=False):
        if not _ok(self):
            return host(self, dim, keepdim)  # empty dims, 0-d and bool: the cpu answers and errors
        d = wrap_dim(dim, self.dim())
        v, i = arg_reduce(self, d, largest)
        if keepdim:
            v, i = _keep(v, _kept_shape(self, d)), _keep(i, _kept_shape(self, d))
        return v, i

    op.impl("cuda")(kernel)


def _arg(op, largest):
    host = host_kernel(op)

    def kernel(self, dim=None, keepdim=False):
        if not _ok(self):
            return host(self, dim, keepdim)
        d = None if dim is None else wrap_dim(dim, self.dim())
        _, i = arg_reduce(self, d, largest)
        if keepdim:
            i = _keep(i, (1,) * self.dim() if d is None else _kept_shape(self, d))
        return i

    op.impl("cuda")(kernel)


_max_min(aten.max.dim, True)
_max_min(aten.min.dim, False)
_arg(aten.argmax.default, True)
_arg(aten.argmin.default, False)

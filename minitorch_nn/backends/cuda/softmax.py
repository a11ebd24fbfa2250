"""``softmax`` and ``log_softmax`` on the GPU: one thread block per row, three sweeps.

Mirrors PyTorch's ``SoftMax.cu`` (its "one block per row" kernel). For each row x:

1. m = max(x)                 (threads stride over the row, then a shared-memory tree)
2. s = sum(exp(x - m))        (same pattern; subtracting m keeps exp from overflowing)
3. y = exp(x - m) / s   or   y = x - m - log(s) for log_softmax.

The softmax dim is moved last and made contiguous first (``copy.py``), and the result is put back
in the input's dim order. float16/bfloat16 compute in float32. The cross-entropy pieces
(``nll_loss_forward`` and its backward) take the host path (``fallback.py``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous

_cuda = cuda()
THREADS = 8 if simulator() else 128  # a power of two; few on the simulator (Python threads)
_KERNELS: dict = {}


def make_softmax(np_dtype):
    key = np.dtype(np_dtype)
    if key in _KERNELS:
        return _KERNELS[key]
    shared_type = numba.from_dtype(key)

    @_cuda.jit
    def softmax_rows(out, x, row_len, log, neg_inf, zero):
        row = _cuda.blockIdx.x
        tid = _cuda.threadIdx.x
        base = row * row_len
        buf = _cuda.shared.array(THREADS, shared_type)
        # 1. the row's max
        m = neg_inf
        j = tid
        while j < row_len:
            v = x[base + j]
            if v > m or v != v:
                m = v
            j += THREADS
        buf[tid] = m
        _cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                other = buf[tid + step]
                if other > buf[tid] or other != other:
                    buf[tid] = other
            _cuda.syncthreads()
            step //= 2
        m = buf[0]
        _cuda.syncthreads()  # everyone has read the max before buf is reused
        # 2. sum of exp(x - m)
        s = zero
        j = tid
        while j < row_len:
            s += math.exp(x[base + j] - m)
            j += THREADS
        buf[tid] = s
        _cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            _cuda.syncthreads()
            step //= 2
        s = buf[0]
        # 3. write the row
        j = tid
        while j < row_len:
            if log:
                out[base + j] = x[base + j] - m - math.log(s)
            else:
                out[base + j] = math.exp(x[base + j] - m) / s
            j += THREADS

    _KERNELS[key] = softmax_rows
    return softmax_rows


def _softmax(self, dim, half_to_float, log):
    if not self.dtype.is_floating_point:
        from minitorch_nn.backends.cuda.fallback import host_kernel

        op = aten._log_softmax.default if log else aten._softmax.default
        return host_kernel(op)(self, dim, half_to_float)  # PyTorch's dtype error
    nd = self.dim()
    d = wrap_dim(dim, max(nd, 1))
    out_dtype = dt.float32 if half_to_float and self.dtype in (dt.float16, dt.bfloat16) else self.dtype
    cdt = compute_dtype(self.dtype)
    impl = self._impl
    if nd == 0:
        order = []
    else:
        order = [i for i in range(nd) if i != d] + [d]
    moved = _make_view(self, [impl.sizes[i] for i in order], [impl.strides[i] for i in order], impl.offset)
    x = cast_contiguous(moved, cdt) if self.dtype is not cdt else contiguous(moved)
    n = self.numel()
    row_len = impl.sizes[d] if nd else 1
    y = storage.empty(x.shape, cdt)
    if n:
        xi = x._impl
        np_dt = storage.storage_dtype(cdt)
        make_softmax(np_dt)[n // row_len, THREADS](
            y._impl.storage, xi.storage[xi.offset : xi.offset + n], row_len, bool(log),
            np.dtype(np_dt).type(-np.inf), np.dtype(np_dt).type(0),
        )
    if nd == 0 or d == nd - 1:
        return y if out_dtype is cdt else cast_contiguous(y, out_dtype)
    # back to the input's dim order: the inverse permutation of a contiguous result
    yi = y._impl
    inverse = [0] * nd
    for pos, i in enumerate(order):
        inverse[i] = pos
    back = _make_view(y, [yi.sizes[inverse[i]] for i in range(nd)], [yi.strides[inverse[i]] for i in range(nd)], 0)
    return cast_contiguous(back, out_dtype)


@aten._softmax.default.impl("cuda")
def softmax(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, log=False)


@aten._log_softmax.default.impl("cuda")
def log_softmax(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, log=True)

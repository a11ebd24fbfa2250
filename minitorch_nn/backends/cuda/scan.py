"""Scans on the GPU: ``cumsum`` and ``cumprod`` along one dim, one thread per row.

Mirrors PyTorch's ``ScanKernels.cu`` in its simplest form. The scanned dim is moved last and made
contiguous (``rows``), so that every row is a run of consecutive numbers, and each thread walks
one row left to right keeping the running total. The result is put back in the input's dim order
(``unrows``). ``sort.py`` uses the same two helpers.

A single thread per row is the readable version: it is fast when there are many rows (a batch
of sequences). PyTorch's kernel also splits long rows across a block (a parallel prefix sum);
``masked.py`` shows the chunked two-level idea on a count.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()


@_cuda.jit
def _scan_rows(out, x, rows, row_len, product):
    r = _cuda.grid(1)
    if r < rows:
        base = r * row_len
        if row_len > 0:
            acc = x[base]
            out[base] = acc
            for j in range(1, row_len):
                if product:
                    acc = acc * x[base + j]
                else:
                    acc = acc + x[base + j]
                out[base + j] = acc


def rows(t, dim, dtype):
    """``t`` with ``dim`` moved last, contiguous, as ``dtype``; plus the dim order used."""
    nd = t.dim()
    impl = t._impl
    order = [i for i in range(nd) if i != dim] + [dim]
    moved = _make_view(t, [impl.sizes[i] for i in order], [impl.strides[i] for i in order], impl.offset)
    x = contiguous(moved) if t.dtype is dtype else cast_contiguous(moved, dtype)
    return x, order


def unrows(y, order):
    """The inverse of :func:`rows`: contiguous ``y`` back in the original dim order (a contiguous copy)."""
    yi = y._impl
    nd = len(order)
    if order == list(range(nd)):
        return y
    inverse = [0] * nd
    for pos, i in enumerate(order):
        inverse[i] = pos
    back = _make_view(y, [yi.sizes[inverse[i]] for i in range(nd)], [yi.strides[inverse[i]] for i in range(nd)],
                      yi.offset)
    return contiguous(back)


def flat(t):
    i = t._impl
    return i.storage[i.offset : i.offset + t.numel()]


def _scan(op, product):
    host = host_kernel(op)

    def kernel(self, dim, *, dtype=None):
        out_dtype = dtype if dtype is not None else (self.dtype if self.dtype.is_floating_point else dt.int64)
        if self.dim() == 0 or self.numel() == 0 or out_dtype is dt.bool:
            return host(self, dim, dtype=dtype)
        d = wrap_dim(dim, self.dim())
        cdt = compute_dtype(out_dtype)
        x, order = rows(self, d, cdt)
        row_len = self.shape[d]
        n_rows = self.numel() // row_len
        y = storage.empty(tuple(x.shape), cdt)
        _scan_rows[blocks_for(n_rows), THREADS](y._impl.storage, flat(x), n_rows, row_len, product)
        y = unrows(y, order)
        return y if cdt is out_dtype else cast_contiguous(y, out_dtype)

    op.impl("cuda")(kernel)


_scan(aten.cumsum.default, False)
_scan(aten.cumprod.default, True)

"""Sorting on the GPU: ``sort`` and ``topk``, a stable merge sort with one thread block per row.

Mirrors what PyTorch's ``Sort.cu`` promises (not its radix/bitonic code): along the sorted dim,
values in order with the indices they came from; equal values keep their original order (a
*stable* sort, as the cpu backend does); NaN counts as larger than every number.

The dim is moved last and made contiguous (``scan.rows``). Each block sorts one row bottom-up:
runs of width 1, 2, 4, ... are merged pairwise; in each pass the block's threads merge different
pairs at once, then ``syncthreads`` before the next, wider pass. Values and indices ping-pong
between the row and a scratch copy. ``topk`` is the first ``k`` of a sort (descending when
``largest``), which matches the cpu backend's ordering of ties.

16-bit floats are sorted as float32 (exact: the values convert back unchanged).
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.scan import flat, rows, unrows

_cuda = cuda()
BLOCK = 4 if simulator() else 128


@_cuda.jit(device=True)
def _comes_first(a, b, descending):
    """Whether value ``a`` (from the right run) must go before ``b`` (from the left run)."""
    a_nan = a != a
    b_nan = b != b
    if descending:
        return (a_nan and not b_nan) or a > b
    return (b_nan and not a_nan) or a < b


@_cuda.jit(device=True)
def _merge(sv, si, dv, di, lo, mid, hi, descending):
    """Merge the sorted runs [lo, mid) and [mid, hi) of (sv, si) into (dv, di)."""
    i = lo
    j = mid
    for k in range(lo, hi):
        # take from the right run only when strictly first: ties keep the left (earlier) one
        if j < hi and (i >= mid or _comes_first(sv[j], sv[i], descending)):
            dv[k] = sv[j]
            di[k] = si[j]
            j += 1
        else:
            dv[k] = sv[i]
            di[k] = si[i]
            i += 1


@_cuda.jit
def _sort_rows(vals, idx, tmp_vals, tmp_idx, row_len, descending):
    row = _cuda.blockIdx.x
    tid = _cuda.threadIdx.x
    base = row * row_len
    for j in range(tid, row_len, BLOCK):
        idx[base + j] = j
    _cuda.syncthreads()
    width = 1
    in_tmp = False  # which buffer holds the current runs
    while width < row_len:
        for start in range(tid * 2 * width, row_len, BLOCK * 2 * width):
            lo = base + start
            mid = base + min(start + width, row_len)
            hi = base + min(start + 2 * width, row_len)
            if in_tmp:
                _merge(tmp_vals, tmp_idx, vals, idx, lo, mid, hi, descending)
            else:
                _merge(vals, idx, tmp_vals, tmp_idx, lo, mid, hi, descending)
        _cuda.syncthreads()
        in_tmp = not in_tmp
        width *= 2


def sort_rows(x, descending):
    """Sort contiguous ``x`` along its last dim: (values, int64 indices), both contiguous."""
    row_len = x.shape[-1]
    n_rows = x.numel() // row_len
    vals = cast_contiguous(x, x.dtype)  # sorted in place: work on a copy
    idx = storage.empty(tuple(x.shape), dt.int64)
    tmp_v, tmp_i = storage.empty(tuple(x.shape), x.dtype), storage.empty(tuple(x.shape), dt.int64)
    _sort_rows[n_rows, BLOCK](flat(vals), flat(idx), flat(tmp_v), flat(tmp_i), row_len, bool(descending))
    passes, width = 0, 1
    while width < row_len:
        passes, width = passes + 1, width * 2
    return (tmp_v, tmp_i) if passes % 2 else (vals, idx)


def _sorted(self, dim, descending):
    d = wrap_dim(dim, self.dim())
    work = dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else self.dtype
    x, order = rows(self, d, work)
    v, i = sort_rows(x, descending)
    return v, i, order


_host_sort = host_kernel(aten.sort.default)
_host_topk = host_kernel(aten.topk.default)


@aten.sort.default.impl("cuda")
def sort(self, dim=-1, descending=False):
    if self.dim() == 0 or self.numel() == 0:
        return _host_sort(self, dim, descending)
    v, i, order = _sorted(self, dim, descending)
    v = unrows(v, order)
    return (v if v.dtype is self.dtype else cast_contiguous(v, self.dtype)), unrows(i, order)


@aten.topk.default.impl("cuda")
def topk(self, k, dim=-1, largest=True, sorted=True):
    if self.dim() == 0 or self.numel() == 0 or k < 0 or k > self.shape[wrap_dim(dim, self.dim())]:
        return _host_topk(self, k, dim, largest, sorted)  # the cpu error for a bad k
    v, i, order = _sorted(self, dim, largest)
    first_k = [*v.shape[:-1], k]

    def head(t):  # the first k of every row (a view), made contiguous
        ti = t._impl
        return contiguous(_make_view(t, first_k, ti.strides, ti.offset))

    v, i = unrows(head(v), order), unrows(head(i), order)
    return (v if v.dtype is self.dtype else cast_contiguous(v, self.dtype)), i

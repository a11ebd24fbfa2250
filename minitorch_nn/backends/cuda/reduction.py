"""Reductions on the GPU: ``sum``, ``mean``, ``amax``/``amin``, ``max()``/``min()`` over any dims.

Mirrors PyTorch's ``Reduce.cuh`` in its simplest form. Every reduction becomes "reduce each row
of a contiguous (rows, row_len) matrix":

1. the reduced dims are moved last with a view (``permute``) and made contiguous (``copy.py``);
2. **pass 1**: a grid of (rows, chunks) blocks; block (r, c) reads chunk c of row r with a
   grid-stride loop, each thread keeping a running partial, then the block combines its THREADS
   partials in *shared memory* with a tree: at each step the first half adds the second half;
3. **pass 2**: if a row needed several chunks, the (rows, chunks) partials are reduced again the
   same way (one chunk per row this time).

The combining function (add, max, min) is a device function baked into the kernel, like the
elementwise functions. ``max``/``min`` propagate NaN, as PyTorch does. Reductions that return
indices (``max.dim``, ``argmax``) are in ``arg_reduction.py``; ``prod``, ``var``/``std``,
``logsumexp``, norms and ``any``/``all`` are built on :func:`reduce` in ``statistics.py``.
"""

from __future__ import annotations

import numba
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dims
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()
# threads per block (a power of two, for the tree): few on the simulator, where each is a Python thread
THREADS = 8 if simulator() else 256
CHUNK = 64 if simulator() else 4096  # elements of one row that one block reduces in pass 1


def f_max(x, y):
    if x != x or y != y:
        return x + y  # NaN wins
    return x if x > y else y


def f_min(x, y):
    if x != x or y != y:
        return x + y
    return x if x < y else y


_KERNELS: dict = {}


def make_reduce(fn, np_dtype):
    """The kernel reducing rows with ``fn`` in dtype ``np_dtype``."""
    key = (fn, np.dtype(np_dtype))
    if key in _KERNELS:
        return _KERNELS[key]
    combine = _cuda.jit(device=True)(fn)
    shared_type = numba.from_dtype(np.dtype(np_dtype))

    @_cuda.jit
    def reduce_rows(out, a, row_len, chunk, identity):
        row = _cuda.blockIdx.x
        c = _cuda.blockIdx.y
        tid = _cuda.threadIdx.x
        partial = _cuda.shared.array(THREADS, shared_type)
        # each thread folds the elements tid, tid + THREADS, ... of this block's chunk
        acc = identity
        start = c * chunk
        stop = min(start + chunk, row_len)
        j = start + tid
        while j < stop:
            acc = combine(acc, a[row * row_len + j])
            j += THREADS
        partial[tid] = acc
        _cuda.syncthreads()
        # tree in shared memory: THREADS -> THREADS/2 -> ... -> 1 partials
        step = THREADS // 2
        while step > 0:
            if tid < step:
                partial[tid] = combine(partial[tid], partial[tid + step])
            _cuda.syncthreads()
            step //= 2
        if tid == 0:
            out[row * _cuda.gridDim.y + c] = partial[0]

    _KERNELS[key] = reduce_rows
    return reduce_rows


def reduce_rows(flat, rows, row_len, fn, identity, np_dtype):
    """Reduce a contiguous device array of ``rows * row_len`` elements row by row; returns ``rows`` values."""
    kernel = make_reduce(fn, np_dtype)
    ident = np.dtype(np_dtype).type(identity)
    while True:
        chunks = max((row_len + CHUNK - 1) // CHUNK, 1)
        out = storage.device_array(rows * chunks, np_dtype)
        kernel[(rows, chunks), THREADS](out, flat, row_len, CHUNK, ident)
        if chunks == 1:
            return out
        flat, row_len = out, chunks  # pass 2: reduce the partials of each row


def _identity(kind, d):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if d.is_floating_point:
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(d.numpy_dtype) if d is not dt.bool else None
    return (info.min if kind == "max" else info.max) if info is not None else (kind != "max")


def reduce(t, dims, keepdim, kind, out_dtype):
    """``kind`` (sum / prod / max / min) of cuda tensor ``t`` over ``dims`` (None: all), as ``out_dtype``."""
    nd = t.dim()
    red = list(range(nd)) if dims is None or len(dims) == 0 else sorted(wrap_dims(list(dims), max(nd, 1)) if nd else [])
    keep = [d for d in range(nd) if d not in red]
    cdt = compute_dtype(out_dtype) if kind in ("sum", "prod") else compute_dtype(t.dtype)
    # move the reduced dims last, contiguously, in the compute dtype
    impl = t._impl
    order = keep + red
    moved = _make_view(t, [impl.sizes[d] for d in order], [impl.strides[d] for d in order], impl.offset)
    x = cast_contiguous(moved, cdt) if t.dtype is not cdt else contiguous(moved)
    rows = 1
    for d in keep:
        rows *= impl.sizes[d]
    row_len = 1
    for d in red:
        row_len *= impl.sizes[d]
    xi = x._impl
    flat = xi.storage[xi.offset : xi.offset + rows * row_len] if rows * row_len else xi.storage
    if rows == 0:
        values = storage.device_array(0, storage.storage_dtype(cdt))
    else:
        values = reduce_rows(flat, rows, row_len, {"sum": ew.f_add, "prod": ew.f_mul, "max": f_max, "min": f_min}[kind],
                             _identity(kind, cdt), storage.storage_dtype(cdt))
    sizes = [1 if d in red else impl.sizes[d] for d in range(nd)] if keepdim else [impl.sizes[d] for d in keep]
    r = storage.wrap(values, sizes, cdt)
    return r if out_dtype is cdt else cast_contiguous(r, out_dtype)


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


# -- registered kernels -------------------------------------------------------------------------------

_host_mean = host_kernel(aten.mean.dim)


@aten.sum.dim_IntList.impl("cuda")
def sum_dim(self, dim, keepdim=False, *, dtype=None):
    out = dtype if dtype is not None else (self.dtype if self.dtype.is_floating_point else dt.int64)
    return reduce(self, _dims(dim), keepdim, "sum", out)


@aten.sum.default.impl("cuda")
def sum_all(self, *, dtype=None):
    return sum_dim(self, None, dtype=dtype)


@aten.mean.dim.impl("cuda")
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    d = dtype if dtype is not None else self.dtype
    if not d.is_floating_point or self.numel() == 0:
        return _host_mean(self, dim, keepdim, dtype=dtype)  # PyTorch's dtype error / nan of empty
    cdt = compute_dtype(d)
    total = reduce(self, _dims(dim), keepdim, "sum", cdt)
    count = self.numel() // max(total.numel(), 1) if total.numel() else 1
    return ew.launch(ew.f_div, [total, count], d, cdt)


@aten.mean.default.impl("cuda")
def mean_all(self, *, dtype=None):
    return mean_dim(self, None, dtype=dtype)


def _minmax(kind, op, with_dim):
    host = host_kernel(op)

    def kernel(self, *args, **kwargs):
        if self.numel() == 0 or self.dtype is dt.bool:
            return host(self, *args, **kwargs)
        if not with_dim:
            return reduce(self, None, False, kind, self.dtype)
        dim = args[0] if args else kwargs.get("dim", [])
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        return reduce(self, _dims(dim), keepdim, kind, self.dtype)

    op.impl("cuda")(kernel)


_minmax("max", aten.max.default, False)
_minmax("min", aten.min.default, False)
_minmax("max", aten.amax.default, True)
_minmax("min", aten.amin.default, True)

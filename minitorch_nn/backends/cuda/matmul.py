"""Matrix products on the GPU: ``mm``, ``bmm``, ``addmm`` with a tiled shared-memory kernel.

Mirrors what cuBLAS does for PyTorch's ``mm``/``bmm`` in its most classic, readable form: the
output is cut into TPB x TPB tiles, one thread block per tile, one thread per output element.
The block walks along K one tile at a time: every thread loads one element of A's tile and one
of B's tile into *shared memory*, the block synchronises, each thread adds TPB products from
shared memory, the block synchronises again, and so on. Each element of A and B is read from
global memory K/TPB times fewer than in the naive kernel.

Inputs are read through their strides (a transposed weight, ``x @ w.t()``, needs no copy); the
batch dimension is the grid's z axis. 16-bit floats are multiplied in float32 and rounded once at
the end. ``dot``, ``mv``, ``outer``, ``addmm_`` and ``baddbmm`` are views around one ``bmm3`` (see
the end of the file); ``einsum`` and the linalg functions take the host path (``fallback.py``).

A second kernel, ``bmm_blocked``, is what makes large products fast (read ``bmm_tiled`` first):
each block computes a BM x BN tile with BM*BN/(TM*TN) threads, and each thread computes a TM x TN
patch of it, keeping its accumulators in registers (``cuda.local.array``). Per step along K, a
thread reads TM values of A and TN of B from shared memory and does TM*TN multiply-adds, so it
does TM*TN/(TM+TN) times more arithmetic per shared-memory read than ``bmm_tiled``. Large
matrices use it; ``KERNEL`` can force one or the other (the tests run both).
"""

from __future__ import annotations

import numba
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()
# tile width: 16 x 16 = 256 threads per block on a GPU; the simulator runs each thread as a Python
# thread, so smaller tiles keep it quick on the tiny shapes it is used with
TPB = 4 if simulator() else 16

_KERNELS: dict = {}


def make_matmul(np_dtype):
    """The tiled batched-matmul kernel for one element dtype."""
    key = np.dtype(np_dtype)
    if key in _KERNELS:
        return _KERNELS[key]
    tile_type = numba.from_dtype(key)

    @_cuda.jit
    def bmm_tiled(out, a, as0, as1, as2, a_off, b, bs0, bs1, bs2, b_off, M, K, N, zero):
        """out[z] = a[z] @ b[z] for z = blockIdx.z; a is (M, K), b is (K, N), out contiguous."""
        a_tile = _cuda.shared.array((TPB, TPB), tile_type)
        b_tile = _cuda.shared.array((TPB, TPB), tile_type)
        z = _cuda.blockIdx.z
        ty = _cuda.threadIdx.y
        tx = _cuda.threadIdx.x
        row = _cuda.blockIdx.y * TPB + ty
        col = _cuda.blockIdx.x * TPB + tx
        acc = zero
        for t in range((K + TPB - 1) // TPB):
            # load one element of each tile (zero outside the matrices)
            k = t * TPB + tx
            if row < M and k < K:
                a_tile[ty, tx] = a[a_off + z * as0 + row * as1 + k * as2]
            else:
                a_tile[ty, tx] = zero
            k = t * TPB + ty
            if k < K and col < N:
                b_tile[ty, tx] = b[b_off + z * bs0 + k * bs1 + col * bs2]
            else:
                b_tile[ty, tx] = zero
            _cuda.syncthreads()  # the tiles are complete
            for j in range(TPB):
                acc += a_tile[ty, j] * b_tile[j, tx]
            _cuda.syncthreads()  # everyone is done with the tiles before they are overwritten
        if row < M and col < N:
            out[(z * M + row) * N + col] = acc

    _KERNELS[key] = bmm_tiled
    return bmm_tiled


# bmm_blocked's shape: BM x BN output tile per block, BK along K per step, TM x TN per thread
if simulator():
    BM, BN, BK, TM, TN = 8, 8, 4, 2, 2
else:
    BM, BN, BK, TM, TN = 64, 64, 16, 4, 4
BLOCK_THREADS = (BM // TM) * (BN // TN)
A_LOADS = BM * BK // BLOCK_THREADS  # elements of the A tile each thread loads
B_LOADS = BK * BN // BLOCK_THREADS
BLOCKED_MIN = 0 if simulator() else 128 * 128  # outputs from which bmm_blocked is used
KERNEL = "auto"  # "auto", "tiled" or "blocked"

_BLOCKED: dict = {}


def make_matmul_blocked(np_dtype):
    """The register-blocked batched-matmul kernel for one element dtype."""
    key = np.dtype(np_dtype)
    if key in _BLOCKED:
        return _BLOCKED[key]
    elem = numba.from_dtype(key)

    @_cuda.jit
    def bmm_blocked(out, a, as0, as1, as2, a_off, b, bs0, bs1, bs2, b_off, M, K, N, zero):
        a_tile = _cuda.shared.array((BK, BM), elem)  # A's tile stored transposed: a column is a row
        b_tile = _cuda.shared.array((BK, BN), elem)
        acc = _cuda.local.array((TM, TN), elem)     # this thread's TM x TN outputs, in registers
        a_reg = _cuda.local.array(TM, elem)
        b_reg = _cuda.local.array(TN, elem)
        z = _cuda.blockIdx.z
        tx = _cuda.threadIdx.x  # which TN-wide column strip
        ty = _cuda.threadIdx.y  # which TM-high row strip
        tid = ty * (BN // TN) + tx
        row0 = _cuda.blockIdx.y * BM
        col0 = _cuda.blockIdx.x * BN
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = zero
        for k0 in range(0, K, BK):
            # the block loads A[row0:row0+BM, k0:k0+BK] and B[k0:k0+BK, col0:col0+BN] together
            for l in range(A_LOADS):
                e = tid + l * BLOCK_THREADS
                r = e // BK
                c = e % BK
                if row0 + r < M and k0 + c < K:
                    a_tile[c, r] = a[a_off + z * as0 + (row0 + r) * as1 + (k0 + c) * as2]
                else:
                    a_tile[c, r] = zero
            for l in range(B_LOADS):
                e = tid + l * BLOCK_THREADS
                r = e // BN
                c = e % BN
                if k0 + r < K and col0 + c < N:
                    b_tile[r, c] = b[b_off + z * bs0 + (k0 + r) * bs1 + (col0 + c) * bs2]
                else:
                    b_tile[r, c] = zero
            _cuda.syncthreads()
            for kk in range(BK):
                for i in range(TM):
                    a_reg[i] = a_tile[kk, ty * TM + i]
                for j in range(TN):
                    b_reg[j] = b_tile[kk, tx * TN + j]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += a_reg[i] * b_reg[j]
            _cuda.syncthreads()
        for i in range(TM):
            r = row0 + ty * TM + i
            if r < M:
                for j in range(TN):
                    c = col0 + tx * TN + j
                    if c < N:
                        out[(z * M + r) * N + c] = acc[i, j]

    _BLOCKED[key] = bmm_blocked
    return bmm_blocked


def bmm3(a, b, out_dtype):
    """(B, M, K) @ (B, K, N) for cuda tensors of one dtype; any strides; result contiguous."""
    cdt = compute_dtype(out_dtype)
    if a.dtype is not cdt:
        a = ew._as_compute(a, cdt)
    if b.dtype is not cdt:
        b = ew._as_compute(b, cdt)
    ai, bi = a._impl, b._impl
    B, M, K = ai.sizes
    N = bi.sizes[2]
    out = storage.empty((B, M, N), cdt)
    if out.numel():
        if K == 0:
            return ew.launch(ew.f_mul, [out, 0], out_dtype, cdt)  # an empty sum is 0
        np_dt = storage.storage_dtype(cdt)
        args = (out._impl.storage, ai.storage, *ai.strides, ai.offset, bi.storage, *bi.strides, bi.offset,
                M, K, N, np.dtype(np_dt).type(0))
        if KERNEL == "blocked" or (KERNEL == "auto" and M * N >= BLOCKED_MIN):
            grid = ((N + BN - 1) // BN, (M + BM - 1) // BM, B)
            make_matmul_blocked(np_dt)[grid, (BN // TN, BM // TM)](*args)
        else:
            grid = ((N + TPB - 1) // TPB, (M + TPB - 1) // TPB, B)
            make_matmul(np_dt)[grid, (TPB, TPB)](*args)
    if out_dtype is not cdt:
        from minitorch_nn.backends.cuda.copy import cast_contiguous

        out = cast_contiguous(out, out_dtype)
    return out


def _as3(t):
    """A 2-d tensor as a (1, M, K) view (same storage)."""
    from minitorch_nn._tensor import _make_view

    i = t._impl
    return _make_view(t, (1,) + tuple(i.sizes), (0,) + tuple(i.strides), i.offset)


_host_mm = host_kernel(aten.mm.default)
_host_bmm = host_kernel(aten.bmm.default)
_host_addmm = host_kernel(aten.addmm.default)


def _ok2(a, b):
    return a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0] and a.dtype is b.dtype and a.dtype is not dt.bool


@aten.mm.default.impl("cuda")
def mm(self, mat2):
    if not _ok2(self, mat2):
        return _host_mm(self, mat2)  # PyTorch's shape/dtype errors
    r = bmm3(_as3(self), _as3(mat2), self.dtype)
    return storage.wrap(r._impl.storage, (self.shape[0], mat2.shape[1]), r.dtype)


@aten.bmm.default.impl("cuda")
def bmm(self, mat2):
    if not (self.dim() == 3 and mat2.dim() == 3 and self.shape[0] == mat2.shape[0] and self.shape[2] == mat2.shape[1]
            and self.dtype is mat2.dtype and self.dtype is not dt.bool):
        return _host_bmm(self, mat2)
    return bmm3(self, mat2, self.dtype)


@aten.addmm.default.impl("cuda")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    if not _ok2(mat1, mat2) or self.dtype is not mat1.dtype:
        return _host_addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = ew.pointwise(ew.f_mul, prod, alpha)
    if beta == 0:
        return prod  # PyTorch ignores self (even its NaNs) when beta is 0
    bias = self if beta == 1 else ew.pointwise(ew.f_mul, self, beta)
    return ew.pointwise(ew.f_add, bias, prod)


# -- products built on bmm3: dot, mv, outer, addmm_, baddbmm -----------------------------------------
# Each is a view that makes its operands (batched) matrices, one bmm3, and a view of the result.

_host_dot = host_kernel(aten.dot.default)
_host_mv = host_kernel(aten.mv.default)
_host_outer = host_kernel(aten.outer.default)
_host_addmm_ = host_kernel(aten.addmm_.default)
_host_baddbmm = host_kernel(aten.baddbmm.default)


def _view(t, sizes, strides):
    from minitorch_nn._tensor import _make_view

    return _make_view(t, tuple(sizes), tuple(strides), t._impl.offset)


@aten.dot.default.impl("cuda")
def dot(self, tensor):
    if not (self.dim() == 1 and tensor.dim() == 1 and self.shape[0] == tensor.shape[0] and self.dtype is tensor.dtype
            and self.dtype is not dt.bool):
        return _host_dot(self, tensor)
    n = self.shape[0]
    # (1, 1, n) @ (1, n, 1): a row times a column
    r = bmm3(_view(self, (1, 1, n), (0, 0, self._impl.strides[0])),
             _view(tensor, (1, n, 1), (0, tensor._impl.strides[0], 0)), self.dtype)
    return storage.wrap(r._impl.storage, (), r.dtype)


@aten.mv.default.impl("cuda")
def mv(self, vec):
    if not (self.dim() == 2 and vec.dim() == 1 and self.shape[1] == vec.shape[0] and self.dtype is vec.dtype
            and self.dtype is not dt.bool):
        return _host_mv(self, vec)
    m, k = self.shape
    r = bmm3(_as3(self), _view(vec, (1, k, 1), (0, vec._impl.strides[0], 0)), self.dtype)
    return storage.wrap(r._impl.storage, (m,), r.dtype)


@aten.outer.default.impl("cuda")
def outer(self, vec2):
    if self.dim() != 1 or vec2.dim() != 1 or self.dtype is dt.bool or vec2.dtype is dt.bool:
        return _host_outer(self, vec2)
    # a (n, 1) column times a (1, m) row, broadcast elementwise; the result has self's dtype (as on cpu)
    col = _view(self, (self.shape[0], 1), (self._impl.strides[0], 0))
    row = _view(vec2, (1, vec2.shape[0]), (0, vec2._impl.strides[0]))
    return ew.launch(ew.f_mul, [col, row], self.dtype, compute_dtype(self.dtype))


@aten.addmm_.default.impl("cuda")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    if not _ok2(mat1, mat2) or self.dtype is not mat1.dtype or (self.shape[0], self.shape[1]) != (mat1.shape[0], mat2.shape[1]) \
            or self.dim() != 2:
        return _host_addmm_(self, mat1, mat2, beta=beta, alpha=alpha)
    from minitorch_nn.backends.cuda.copy import copy_into

    copy_into(self, addmm(self, mat1, mat2, beta=beta, alpha=alpha))
    self._impl.version.value += 1
    return self


@aten.baddbmm.default.impl("cuda")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    ok = (batch1.dim() == 3 and batch2.dim() == 3 and batch1.shape[0] == batch2.shape[0]
          and batch1.shape[2] == batch2.shape[1] and batch1.dtype is batch2.dtype is self.dtype
          and self.dtype is not dt.bool)
    if not ok:
        return _host_baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    prod = bmm3(batch1, batch2, self.dtype)
    if alpha != 1:
        prod = ew.pointwise(ew.f_mul, prod, alpha)
    if beta == 0:
        return prod
    bias = self if beta == 1 else ew.pointwise(ew.f_mul, self, beta)
    return ew.launch(ew.f_add, [bias, prod], self.dtype, compute_dtype(self.dtype))

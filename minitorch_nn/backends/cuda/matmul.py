"""Matrix products on the GPU: ``mm``, ``bmm``, ``addmm`` with a tiled shared-memory kernel.

Mirrors what cuBLAS does for PyTorch's ``mm``/``bmm`` in its most classic, readable form: the
output is cut into TPB x TPB tiles, one thread block per tile, one thread per output element.
The block walks along K one tile at a time: every thread loads one element of A's tile and one
of B's tile into *shared memory*, the block synchronises, each thread adds TPB products from
shared memory, the block synchronises again, and so on. Each element of A and B is read from
global memory K/TPB times fewer than in the naive kernel.

Inputs are read through their strides (a transposed weight, ``x @ w.t()``, needs no copy); the
batch dimension is the grid's z axis. 16-bit floats are multiplied in float32 and rounded once at
the end. ``dot``, ``mv``, ``outer``, ``baddbmm`` and the linalg functions take the host path.
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
        grid = ((N + TPB - 1) // TPB, (M + TPB - 1) // TPB, B)
        make_matmul(np_dt)[grid, (TPB, TPB)](
            out._impl.storage, ai.storage, *ai.strides, ai.offset, bi.storage, *bi.strides, bi.offset,
            M, K, N, np.dtype(np_dt).type(0),
        )
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

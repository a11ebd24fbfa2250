"""Ops that rearrange or pad elements on the GPU: ``flip``, ``roll``, ``repeat``, ``tril``/``triu``,
``diag_embed``, ``constant_pad_nd``.

Mirrors PyTorch's ``TensorTransformations.cu``, ``Repeat.cu``, ``TriangularOps.cu`` and
``ConstantPadNd``. All are *gathers*: one thread per output element computes which input element
(if any) it shows, from its multi-index (``elementwise.to_index``):

* ``remap`` covers three ops with one rule per dim ``d``: ``j = (i[d] - shift[d]) mod size[d]``,
  then ``j = size[d] - 1 - j`` if ``d`` is flipped. ``roll`` sets the shifts, ``flip`` the flips,
  and ``repeat`` neither: an output larger than the input wraps around (the ``mod``), which is a
  tiling;
* ``pad``: ``j = i[d] - left[d]``; outside ``[0, size[d])`` the output is the fill value (a
  negative pad crops, with the same formula);
* ``triangle``: keep ``x`` where ``col - row <= k`` (``tril``) or ``>= k`` (``triu``), else 0;
* ``diag_embed``: position ``(row, col)`` of each last-two-dims matrix shows ``x[..., k]`` when it
  is the ``k``-th entry of the ``offset`` diagonal, else 0.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.elementwise import (
    MAX_DIMS,
    THREADS,
    blocks_for,
    device_ints,
    index_to_position,
    scalar_operand,
    to_index,
)
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()


@_cuda.jit
def _remap(out, out_shape, n, x, x_shape, x_strides, x_off, shifts, flips):
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, at)
        for d in range(len(x_shape)):
            j = (at[d] - shifts[d]) % x_shape[d]  # Python's modulo: never negative
            if flips[d]:
                j = x_shape[d] - 1 - j
            at[d] = j
        out[i] = x[index_to_position(at, x_strides, x_off)]


@_cuda.jit
def _pad(out, out_shape, n, x, x_shape, x_strides, x_off, left, value):
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, at)
        for d in range(len(x_shape)):
            at[d] -= left[d]
            if at[d] < 0 or at[d] >= x_shape[d]:
                out[i] = value[0]
                return
        out[i] = x[index_to_position(at, x_strides, x_off)]


@_cuda.jit
def _triangle(out, out_shape, n, x, x_strides, x_off, k, lower, zero):
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, at)
        nd = len(out_shape)
        diff = at[nd - 1] - at[nd - 2]  # col - row
        keep = diff <= k if lower else diff >= k
        out[i] = x[index_to_position(at, x_strides, x_off)] if keep else zero


@_cuda.jit
def _diag_embed(out, out_shape, n, x, x_strides, x_off, offset, zero):
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, at)
        nd = len(out_shape)
        row = at[nd - 2]
        col = at[nd - 1]
        if col - row != offset:
            out[i] = zero
            return
        at[nd - 2] = row if offset >= 0 else col  # k: the position along the diagonal
        out[i] = x[index_to_position(at, x_strides, x_off)]


def _launch(kernel, out, x, *extra):
    n = out.numel()
    if n:
        xi = x._impl
        kernel[blocks_for(n), THREADS](out._impl.storage, device_ints(tuple(out.shape)), n, xi.storage,
                                       device_ints(tuple(xi.sizes)), device_ints(tuple(xi.strides)), xi.offset, *extra)
    return out


def _remap_op(x, out_shape, shifts, flips):
    out = storage.empty(tuple(out_shape), x.dtype)
    return _launch(_remap, out, x, device_ints(tuple(shifts)), device_ints(tuple(int(f) for f in flips)))


_host_flip = host_kernel(aten.flip.default)
_host_roll = host_kernel(aten.roll.default)
_host_repeat = host_kernel(aten.repeat.default)
_host_pad = host_kernel(aten.constant_pad_nd.default)
_host_tril = host_kernel(aten.tril.default)
_host_triu = host_kernel(aten.triu.default)
_host_diag_embed = host_kernel(aten.diag_embed.default)


@aten.flip.default.impl("cuda")
def flip(self, dims):
    if self.dim() == 0 or self.numel() == 0:
        return _host_flip(self, dims)
    axes = {wrap_dim(d, self.dim()) for d in dims}
    return _remap_op(self, self.shape, [0] * self.dim(), [d in axes for d in range(self.dim())])


@aten.roll.default.impl("cuda")
def roll(self, shifts, dims=()):
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if self.dim() == 0 or self.numel() == 0 or (dims and len(dims) != len(shifts)) or (not dims and len(shifts) != 1):
        return _host_roll(self, shifts, dims)  # the cpu answers and errors
    if not dims:  # roll the flattened tensor
        from minitorch_nn.backends.cuda.copy import contiguous

        flat = contiguous(self)
        flat = storage.wrap(flat._impl.storage, (self.numel(),), self.dtype, offset=flat._impl.offset)
        r = _remap_op(flat, flat.shape, [shifts[0]], [False])
        return storage.wrap(r._impl.storage, tuple(self.shape), self.dtype)
    per_dim = [0] * self.dim()
    for s, d in zip(shifts, dims):
        per_dim[wrap_dim(d, self.dim())] += s
    return _remap_op(self, self.shape, per_dim, [False] * self.dim())


@aten.repeat.default.impl("cuda")
def repeat(self, repeats):
    repeats = list(repeats)
    if len(repeats) < self.dim() or any(r < 0 for r in repeats) or self.numel() == 0 or 0 in repeats:
        return _host_repeat(self, repeats)
    lead = len(repeats) - self.dim()
    xi = self._impl
    # view the input with leading size-1 dims, then tile it: the output wraps around the input
    from minitorch_nn._tensor import _make_view

    x = _make_view(self, (1,) * lead + tuple(xi.sizes), (0,) * lead + tuple(xi.strides), xi.offset)
    out_shape = [r * s for r, s in zip(repeats, x.shape)]
    return _remap_op(x, out_shape, [0] * len(repeats), [False] * len(repeats))


@aten.constant_pad_nd.default.impl("cuda")
def constant_pad_nd(self, pad, value=0):
    nd = self.dim()
    if len(pad) % 2 or len(pad) // 2 > nd:
        return _host_pad(self, pad, value)
    left, right = [0] * nd, [0] * nd
    for i in range(len(pad) // 2):
        left[nd - 1 - i], right[nd - 1 - i] = pad[2 * i], pad[2 * i + 1]
    out_shape = [s + a + b for s, a, b in zip(self.shape, left, right)]
    if any(s < 0 for s in out_shape):
        return _host_pad(self, pad, value)
    out = storage.empty(tuple(out_shape), self.dtype)
    v = scalar_operand(value, self.dtype)
    return _launch(_pad, out, self, device_ints(tuple(left)), v._impl.storage)


def _triangle_op(self, diagonal, lower, host):
    if self.dim() < 2 or self.numel() == 0:
        return host(self, diagonal)
    out = storage.empty(tuple(self.shape), self.dtype)
    n = out.numel()
    xi = self._impl
    _triangle[blocks_for(n), THREADS](out._impl.storage, device_ints(tuple(self.shape)), n, xi.storage,
                                      device_ints(tuple(xi.strides)), xi.offset, diagonal, lower,
                                      np.dtype(storage.storage_dtype(self.dtype)).type(0))
    return out


@aten.tril.default.impl("cuda")
def tril(self, diagonal=0):
    return _triangle_op(self, diagonal, True, _host_tril)


@aten.triu.default.impl("cuda")
def triu(self, diagonal=0):
    return _triangle_op(self, diagonal, False, _host_triu)


@aten.diag_embed.default.impl("cuda")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    if self.dim() == 0 or self.numel() == 0 or (dim1, dim2) not in ((-2, -1), (self.dim() - 1, self.dim())):
        return _host_diag_embed(self, offset, dim1, dim2)
    size = self.shape[-1] + abs(offset)
    out = storage.empty(tuple(self.shape[:-1]) + (size, size), self.dtype)
    n = out.numel()
    xi = self._impl
    # x read with a zero stride for the (row) dim of the output that x does not have
    x_strides = tuple(xi.strides[:-1]) + (xi.strides[-1], 0)
    _diag_embed[blocks_for(n), THREADS](out._impl.storage, device_ints(tuple(out.shape)), n, xi.storage,
                                        device_ints(x_strides), xi.offset, offset,
                                        np.dtype(storage.storage_dtype(self.dtype)).type(0))
    return out

"""Convolution on the GPU: ``im2col`` / ``col2im`` kernels around the tiled matmul of ``matmul.py``.

Mirrors PyTorch's ``ConvolutionMM{2d,3d}.cu`` (its "unfold, then GEMM" path, not cuDNN), for 1, 2
and 3 spatial dims, with groups, stride, padding and dilation:

* **im2col** (one thread per column element): ``cols[n, c, k, p]`` is the input value that
  kernel offset ``k`` multiplies at output position ``p`` (0 where that lands in the padding).
  Laid out ``(N, G, Cg*K, P)``, a convolution is then one matmul per group:
  ``out[n, g] = W[g] (Og, Cg*K) @ cols[n, g] (Cg*K, P)``.
* **col2im** (one thread per output element, no atomics): the adjoint. A transposed convolution is
  a matmul that makes columns ``(N, G, Og*K, P_in)``, then every output position *gathers* the
  column entries that land on it: for each kernel offset it checks whether ``o + pad - k*dil`` is a
  multiple of the stride inside the input.

The backward kernels are the same pictures, as on cpu (``backends/cpu/nn_ops.py``): the input
gradient of a convolution is a transposed convolution of ``grad_output`` (and the other way round),
the weight gradient is ``grad_output @ cols^T`` summed over the batch, the bias gradient a sum.

Checks and error messages are the cpu backend's (``_check_conv``); integer convolutions take the
host path (``fallback.py``), as they are not what a GPU is for. float16/bfloat16 compute in float32.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cpu.nn_ops import _check_conv, _conv_out_size, _expand
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous, copy_into
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for, device_ints
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.matmul import bmm3
from minitorch_nn.backends.cuda.reduction import reduce

_cuda = cuda()
MAX_SPATIAL = 3  # conv1d, conv2d, conv3d


@_cuda.jit(device=True)
def _unravel(ordinal, sizes, nd, out):
    """Row-major multi-index of ``ordinal`` in the first ``nd`` entries of ``sizes``."""
    for d in range(nd - 1, -1, -1):
        out[d] = ordinal % sizes[d]
        ordinal = ordinal // sizes[d]


@_cuda.jit
def _im2col(cols, x, C, in_sizes, ksize, out_sizes, stride, padding, dilation, nd, K, P, n):
    """cols (N, C, K, P) contiguous from x (N, C, *in_sizes) contiguous."""
    i = _cuda.grid(1)
    if i < n:
        p = i % P
        k = (i // P) % K
        nc = i // (P * K)  # n * C + c: the (batch, channel) plane of x
        kidx = _cuda.local.array(MAX_SPATIAL, np.int64)
        oidx = _cuda.local.array(MAX_SPATIAL, np.int64)
        _unravel(k, ksize, nd, kidx)
        _unravel(p, out_sizes, nd, oidx)
        pos = 0
        for d in range(nd):
            at = oidx[d] * stride[d] - padding[d] + kidx[d] * dilation[d]
            if at < 0 or at >= in_sizes[d]:
                cols[i] = 0  # this offset reads the zero padding
                return
            pos = pos * in_sizes[d] + at
        plane = 1
        for d in range(nd):
            plane *= in_sizes[d]
        cols[i] = x[nc * plane + pos]


@_cuda.jit
def _col2im(out, cols, out_sizes, in_sizes, ksize, stride, padding, dilation, nd, K, P_in, n, zero):
    """out (N, C, *out_sizes) contiguous: the sum of the column entries (N, C, K, P_in) landing there."""
    i = _cuda.grid(1)
    if i < n:
        plane = 1
        for d in range(nd):
            plane *= out_sizes[d]
        nc = i // plane
        oidx = _cuda.local.array(MAX_SPATIAL, np.int64)
        kidx = _cuda.local.array(MAX_SPATIAL, np.int64)
        _unravel(i % plane, out_sizes, nd, oidx)
        acc = zero
        for k in range(K):
            _unravel(k, ksize, nd, kidx)
            pos = 0
            hit = True
            for d in range(nd):
                t = oidx[d] + padding[d] - kidx[d] * dilation[d]  # = input position * stride
                if t < 0 or t % stride[d] != 0 or t // stride[d] >= in_sizes[d]:
                    hit = False
                    break
                pos = pos * in_sizes[d] + t // stride[d]
            if hit:
                acc += cols[(nc * K + k) * P_in + pos]
        out[i] = acc


def _ints(v):
    return device_ints(tuple(int(a) for a in v))


def _prod(v):
    n = 1
    for a in v:
        n *= int(a)
    return n


def _flat(t):
    """The flat device array of a contiguous cuda tensor, from its offset."""
    i = t._impl
    return i.storage[i.offset : i.offset + t.numel()]


def im2col(x, ksize, stride, padding, dilation, out_sizes):
    """Columns (N, C*K, P) of contiguous x (N, C, *S); same memory as (N, G, Cg*K, P)."""
    n_, c = x.shape[:2]
    K, P = _prod(ksize), _prod(out_sizes)
    cols = storage.empty((n_, c * K, P), x.dtype)
    n = cols.numel()
    if n:
        _im2col[blocks_for(n), THREADS](
            cols._impl.storage, _flat(x), c, _ints(x.shape[2:]), _ints(ksize), _ints(out_sizes), _ints(stride),
            _ints(padding), _ints(dilation), len(ksize), K, P, n,
        )
    return cols


def col2im(cols, n_, c, out_sizes, in_sizes, ksize, stride, padding, dilation):
    """The adjoint of :func:`im2col`: (N, C*K, P_in) columns -> (N, C, *out_sizes)."""
    out = storage.empty((n_, c, *out_sizes), cols.dtype)
    n = out.numel()
    if n:
        _col2im[blocks_for(n), THREADS](
            out._impl.storage, _flat(cols), _ints(out_sizes), _ints(in_sizes), _ints(ksize), _ints(stride),
            _ints(padding), _ints(dilation), len(ksize), _prod(ksize), _prod(in_sizes), n,
            np.dtype(storage.storage_dtype(cols.dtype)).type(0),
        )
    return out


def _group_matmul(a_of, b_of, out_shape, groups, rows_per_group, cdt):
    """out[:, g*R:(g+1)*R] = a_of(g) @ b_of(g) for each group g, as one batched matmul per group."""
    if groups == 1:
        return bmm3(a_of(0), b_of(0), cdt)
    out = storage.empty(out_shape, cdt)
    oi = out._impl
    for g in range(groups):
        part = bmm3(a_of(g), b_of(g), cdt)
        dst = _make_view(out, part.shape, oi.strides, g * rows_per_group * oi.strides[1])
        copy_into(dst, part)
    return out


def conv_forward(x, w, stride, padding, dilation, groups):
    """x (N, C, *S), w (O, C/groups, *k), both contiguous of one compute dtype -> (N, O, *out)."""
    n_, c = x.shape[:2]
    o = w.shape[0]
    ksize = tuple(w.shape[2:])
    out_sizes = [_conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], ksize, stride, padding, dilation)]
    cols = im2col(x, ksize, stride, padding, dilation, out_sizes)  # (N, G*Cg*K, P)
    ck, og, P = (c // groups) * _prod(ksize), o // groups, _prod(out_sizes)
    # weights of group g: (Og, Cg*K), the same matrix for every sample (batch stride 0)
    wv = lambda g: _make_view(w, (n_, og, ck), (0, ck, 1), g * og * ck)  # noqa: E731
    cv = lambda g: _make_view(cols, (n_, ck, P), (groups * ck * P, P, 1), g * ck * P)  # noqa: E731
    out = _group_matmul(wv, cv, (n_, o, P), groups, og, x.dtype)
    return storage.wrap(out._impl.storage, (n_, o, *out_sizes), x.dtype)


def conv_transpose(x, w, stride, padding, dilation, groups, output_padding):
    """x (N, C, *S), w (C, O/groups, *k), contiguous, one dtype -> (N, O, *out): matmul then col2im."""
    n_, c = x.shape[:2]
    in_sizes = tuple(x.shape[2:])
    ksize = tuple(w.shape[2:])
    cg, og, K, P = c // groups, w.shape[1], _prod(ksize), _prod(in_sizes)
    # w of group g read as (Og*K, Cg): its transpose, by strides
    wv = lambda g: _make_view(w, (n_, og * K, cg), (0, 1, og * K), g * cg * og * K)  # noqa: E731
    xv = lambda g: _make_view(x, (n_, cg, P), (c * P, P, 1), g * cg * P)  # noqa: E731
    cols = _group_matmul(wv, xv, (n_, groups * og * K, P), groups, og * K, x.dtype)
    out_sizes = [(s - 1) * st + d * (k - 1) + 1 + op - 2 * p
                 for s, st, d, k, op, p in zip(in_sizes, stride, dilation, ksize, output_padding, padding)]
    return col2im(cols, n_, groups * og, out_sizes, in_sizes, ksize, stride, padding, dilation)


def conv_weight_grad(x, gy, wshape, stride, padding, dilation, groups):
    """d(loss)/d(weight) of a convolution: per group, grad_output @ cols^T summed over the batch."""
    n_, c = x.shape[:2]
    ksize = tuple(wshape[2:])
    out_sizes = tuple(gy.shape[2:])
    cols = im2col(x, ksize, stride, padding, dilation, out_sizes)
    o = wshape[0]
    ck, og, P = (c // groups) * _prod(ksize), o // groups, _prod(out_sizes)
    gv = lambda g: _make_view(gy, (n_, og, P), (o * P, P, 1), g * og * P)  # noqa: E731
    ct = lambda g: _make_view(cols, (n_, P, ck), (groups * ck * P, 1, P), g * ck * P)  # noqa: E731
    per_sample = _group_matmul(gv, ct, (n_, o, ck), groups, og, x.dtype)  # (N, O, Cg*K)
    gw = reduce(per_sample, [0], False, "sum", x.dtype)
    return storage.wrap(gw._impl.storage, tuple(wshape), x.dtype)


def _prepare(t, cdt):
    return contiguous(t) if t.dtype is cdt else cast_contiguous(t, cdt)


def _bias_shape(b, nd):
    return _make_view(b, (1, b.shape[0]) + (1,) * nd, (0, b._impl.strides[0]) + (0,) * nd, b._impl.offset)


_host_conv = host_kernel(aten.convolution.default)
_host_conv_backward = host_kernel(aten.convolution_backward.default)


def _on_gpu(*ts):
    return all(t is None or (t.device.type == "cuda" and t.dtype.is_floating_point) for t in ts)


@aten.convolution.default.impl("cuda")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if not _on_gpu(input, weight, bias) or input.dim() != weight.dim() or weight.dim() - 2 > MAX_SPATIAL:
        return _host_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    nd = _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups)
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    output_padding = _expand(output_padding, nd) if output_padding else [0] * nd
    d = input.dtype
    cdt = compute_dtype(d)
    x, w = _prepare(input, cdt), _prepare(weight, cdt)
    if transposed:
        out = conv_transpose(x, w, stride, padding, dilation, groups, output_padding)
    else:
        out = conv_forward(x, w, stride, padding, dilation, groups)
    if bias is not None:
        from minitorch_nn.backends.cuda import elementwise as ew

        out = ew.launch(ew.f_add, [out, _bias_shape(bias, nd)], cdt, cdt)
    return out if d is cdt else cast_contiguous(out, d)


@aten.convolution_backward.default.impl("cuda")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    if not _on_gpu(grad_output, input, weight) or weight.dim() - 2 > MAX_SPATIAL:
        return _host_conv_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                   output_padding, groups, output_mask)
    nd = weight.dim() - 2
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    output_padding = _expand(output_padding, nd) if output_padding else [0] * nd
    d = input.dtype
    cdt = compute_dtype(d)
    gy, x, w = _prepare(grad_output, cdt), _prepare(input, cdt), _prepare(weight, cdt)
    gx = gw = gb = None
    if not transposed:
        if output_mask[0]:
            # output_padding recovers the input rows that a strided forward never read
            extra = [s + 2 * p - ((o - 1) * st + dl * (k - 1) + 1)
                     for s, p, o, st, dl, k in zip(x.shape[2:], padding, gy.shape[2:], stride, dilation, w.shape[2:])]
            gx = conv_transpose(gy, w, stride, padding, dilation, groups, extra)
        if output_mask[1]:
            gw = conv_weight_grad(x, gy, tuple(w.shape), stride, padding, dilation, groups)
    else:
        # a transposed convolution is the adjoint of a convolution with the same weight
        if output_mask[0]:
            gx = conv_forward(gy, w, stride, padding, dilation, groups)
        if output_mask[1]:
            gw = conv_weight_grad(gy, x, tuple(w.shape), stride, padding, dilation, groups)
    if output_mask[2]:
        gb = reduce(gy, [0, *range(2, gy.dim())], False, "sum", cdt)
    return tuple(None if t is None else (t if t.dtype is out_d else cast_contiguous(t, out_d))
                 for t, out_d in ((gx, d), (gw, weight.dtype), (gb, d)))


# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled twin of the convolution kernels of ``minitorch_nn/backends/cpu/nn_ops.py``.

Function by function (each has the signature of its original and returns the same array):

* :func:`conv_forward_np` -- ``nn_ops.conv_forward_np`` (padding, ``_im2col``, one matmul);
* :func:`conv_transpose_np` -- ``nn_ops.conv_transpose_np`` (one matmul, ``_col2im``, the crop);
* :func:`conv_weight_grad` -- ``nn_ops._conv_weight_grad`` (padding, ``_im2col``, a matmul per
  sample, the sum over the batch).

Why compiled: in the readable kernels the arithmetic is one ``np.matmul``; everything around it
moves data -- ``np.pad`` copies the input, ``_im2col`` copies a six-dimensional strided view
(numpy's copy loop is slow on short innermost rows), ``_col2im`` makes one strided ``+=`` per
kernel offset -- and the column array (5 MB for LeNet-5's first layer at batch 64) does not stay
in the cache between being written and being multiplied. Here padding and im2col are one loop
that writes the columns of a few samples at a time into a buffer that stays in the cache, and the
same ``np.matmul`` multiplies that chunk; col2im is one loop that adds straight into the cropped
result.

Why bit-equal: the data movement is exact (copies, zeros), and the arithmetic is the original's.
numpy's ``matmul`` over a stack of matrices calls BLAS once per matrix; the twin calls it on a
chunk of the same stack -- the same matrices, with the same shapes, strides and transposition --
so every BLAS call, and so every sum, is the same. col2im adds each kernel offset's column in
the original's order (offset 0 first, from +0.0), and the weight gradient's per-sample products
are summed over the batch by the same ``sum(axis=0)``.

What it takes: 1-d and 2-d convolutions (a 1-d one is a 2-d one of height 1: the same memory
layout) of float32 or float64 arrays with at least one element everywhere; anything else returns
``None`` and the original's code runs. It runs only while ``backends.compiled`` is on and
:func:`guards_hold` (nn_ops.py checks both); source edits to the originals or their helpers turn it
off at import (their fingerprints, ``_twin_manifest.json``).
"""

from libc.string cimport memcpy, memset

import numpy as np

# The cache budget for one chunk of columns: a few samples' worth, well inside a core's L2.
cdef Py_ssize_t CHUNK_BYTES = 384 * 1024

ctypedef fused real:
    float
    double

# nn_ops.py's helpers the originals call (see setup() and guards_hold())
_HELPER_NAMES = ("_im2col", "_col2im", "_window_slices", "_conv_out_size")
cdef list _guards = []   # (namespace, name, the object it held at setup)


def setup(namespace):
    """Remember nn_ops.py's helpers (called once by nn_ops.py, at import)."""
    global _guards
    _guards = [(namespace, name, namespace[name]) for name in _HELPER_NAMES]


def guards_hold():
    """True while each helper the originals call is still the function it was set up with
    (identity checks): a replaced ``_im2col`` sends convolutions through the readable code."""
    cdef tuple guard
    if not _guards:
        return False
    for guard in _guards:
        if (<dict>guard[0]).get(guard[1]) is not guard[2]:
            return False
    return True


cdef inline Py_ssize_t _ceil_div(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    # a >= 0, b > 0
    return (a + b - 1) // b


cdef inline void _valid_range(Py_ssize_t offset, Py_ssize_t step, Py_ssize_t size, Py_ssize_t count,
                              Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """The positions q in [0, count) with 0 <= q*step + offset < size: [lo, hi)."""
    cdef Py_ssize_t a = 0 if offset >= 0 else _ceil_div(-offset, step)
    cdef Py_ssize_t b = 0 if size - 1 - offset < 0 else (size - 1 - offset) // step + 1
    if a > count:
        a = count
    if b > count:
        b = count
    if b < a:
        b = a
    lo[0] = a
    hi[0] = b


cdef void _im2col(const real[:, :, :, :] x, real[:, :, :, ::1] cols, Py_ssize_t n0, Py_ssize_t m,
                  Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t ph, Py_ssize_t pw,
                  Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t oh, Py_ssize_t ow) noexcept nogil:
    """Columns of samples n0..n0+m-1 of the unpadded ``x`` (N, C, H, W) into ``cols``
    (m, C, kh*kw, oh*ow): column (a, b) at output (r, q) reads input (r*sh - ph + a*dh,
    q*sw - pw + b*dw), or the zero padding."""
    cdef Py_ssize_t C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t i, c, a, b, r, q, ih, off_w, q_lo = 0, q_hi = 0
    # element steps of x along H and W (a memoryview's strides are in bytes)
    cdef Py_ssize_t step_h = x.strides[2] // sizeof(real), step_w = x.strides[3] // sizeof(real)
    cdef Py_ssize_t read_step = sw * step_w
    cdef real* dst
    cdef const real* plane
    cdef const real* src
    for i in range(m):
        for c in range(C):
            plane = &x[n0 + i, c, 0, 0]
            for a in range(kh):
                for b in range(kw):
                    off_w = b * dw - pw
                    _valid_range(off_w, sw, W, ow, &q_lo, &q_hi)
                    dst = &cols[i, c, a * kw + b, 0]
                    for r in range(oh):
                        ih = r * sh - ph + a * dh
                        if ih < 0 or ih >= H:
                            memset(dst, 0, ow * sizeof(real))
                        else:
                            if q_lo > 0:
                                memset(dst, 0, q_lo * sizeof(real))
                            src = plane + ih * step_h + (q_lo * sw + off_w) * step_w
                            if read_step == 1:
                                memcpy(dst + q_lo, src, (q_hi - q_lo) * sizeof(real))
                            else:
                                for q in range(q_hi - q_lo):
                                    dst[q_lo + q] = src[q * read_step]
                            if q_hi < ow:
                                memset(dst + q_hi, 0, (ow - q_hi) * sizeof(real))
                        dst += ow


cdef void _col2im_add(const real[:, :, :, ::1] cols, real[:, :, :, ::1] out, Py_ssize_t n0, Py_ssize_t m,
                      Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t ph, Py_ssize_t pw,
                      Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t ih_n, Py_ssize_t iw_n) noexcept nogil:
    """The adjoint of _im2col, into the cropped result: column (a, b) of ``cols``
    (m, C, kh*kw, ih_n*iw_n) at input position (r, q) is added to ``out`` (N, C, OH, OW) at
    (r*sh + a*dh - ph, q*sw + b*dw - pw) when that lies inside; offsets in row-major order, so
    each element receives its terms in the original's order."""
    cdef Py_ssize_t C = out.shape[1], OH = out.shape[2], OW = out.shape[3]
    cdef Py_ssize_t i, c, a, b, r, q, o_h, off_w, q_lo = 0, q_hi = 0
    cdef const real* src
    cdef real* dst
    for i in range(m):
        for c in range(C):
            for a in range(kh):
                for b in range(kw):
                    off_w = b * dw - pw
                    _valid_range(off_w, sw, OW, iw_n, &q_lo, &q_hi)
                    src = &cols[i, c, a * kw + b, 0]
                    for r in range(ih_n):
                        o_h = r * sh + a * dh - ph
                        if 0 <= o_h < OH:
                            dst = &out[n0 + i, c, o_h, 0] + off_w
                            if sw == 1:
                                for q in range(q_lo, q_hi):
                                    dst[q] = dst[q] + src[q]
                            else:
                                for q in range(q_lo, q_hi):
                                    dst[q * sw] = dst[q * sw] + src[q]
                        src += iw_n


cdef object _as_4d(object a, int nd):
    # a 1-d layout (N, C, L) is a 2-d one of height 1
    return a[:, :, None, :] if nd == 1 else a


cdef tuple _pair(object v, int nd, long fill):
    return (fill, v[0]) if nd == 1 else (v[0], v[1])


cdef bint _takes(object x, object w):
    if type(x) is not np.ndarray or type(w) is not np.ndarray:
        return False
    if x.ndim not in (3, 4) or w.ndim != x.ndim or w.dtype != x.dtype:
        return False
    if x.dtype != np.float32 and x.dtype != np.float64:
        return False
    return x.size > 0 and w.size > 0


cdef Py_ssize_t _chunk(Py_ssize_t per_sample_bytes, Py_ssize_t n):
    cdef Py_ssize_t m = CHUNK_BYTES // per_sample_bytes if per_sample_bytes > 0 else n
    return max(1, min(m, n))


def conv_forward_np(x, w, stride, padding, dilation, groups):
    """``nn_ops.conv_forward_np``: x (N, C, *S), w (O, C/groups, *k) -> (N, O, *out); None for a
    case it does not take."""
    if not _takes(x, w):
        return None
    cdef int nd = x.ndim - 2
    cdef Py_ssize_t n = x.shape[0], c = x.shape[1]
    ksize = w.shape[2:]
    out_sizes = [(s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(x.shape[2:], ksize, stride, padding, dilation)]
    cdef Py_ssize_t kk = 1, npos = 1
    for k in ksize:
        kk *= k
    for o in out_sizes:
        npos *= o
    cdef Py_ssize_t cg = c // groups, og = w.shape[0] // groups
    if npos <= 0:
        return None
    kh, kw = _pair(ksize, nd, 1)
    sh, sw = _pair(stride, nd, 1)
    ph, pw = _pair(padding, nd, 0)
    dh, dw = _pair(dilation, nd, 1)
    oh, ow = _pair(out_sizes, nd, 1)
    wr = w.reshape(groups, og, cg * kk)
    out = np.empty((n, groups, og, npos), dtype=x.dtype)
    cdef Py_ssize_t m = _chunk(c * kk * npos * x.itemsize, n)
    cols = np.empty((m, c, kk, npos), dtype=x.dtype)
    x4 = _as_4d(x, nd)
    cdef Py_ssize_t n0, mm
    for n0 in range(0, n, m):
        mm = min(m, n - n0)
        if x.dtype == np.float32:
            _im2col[float](x4, cols, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
        else:
            _im2col[double](x4, cols, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
        np.matmul(wr, cols[:mm].reshape(mm, groups, cg * kk, npos), out=out[n0:n0 + mm])
    return out.reshape(n, groups * og, *out_sizes)


def conv_weight_grad(x, gy, wshape, stride, padding, dilation, groups):
    """``nn_ops._conv_weight_grad``: d(loss)/d(weight) of a plain convolution; None for a case it
    does not take."""
    if not _takes(x, gy):
        return None
    cdef int nd = x.ndim - 2
    cdef Py_ssize_t n = x.shape[0], c = x.shape[1]
    ksize = tuple(wshape[2:])
    out_sizes = gy.shape[2:]
    cdef Py_ssize_t kk = 1, npos = 1
    for k in ksize:
        kk *= k
    for o in out_sizes:
        npos *= o
    if kk <= 0:
        return None
    cdef Py_ssize_t cg = c // groups, og = wshape[0] // groups
    kh, kw = _pair(ksize, nd, 1)
    sh, sw = _pair(stride, nd, 1)
    ph, pw = _pair(padding, nd, 0)
    dh, dw = _pair(dilation, nd, 1)
    oh, ow = _pair(out_sizes, nd, 1)
    gyr = gy.reshape(n, groups, og, npos)
    per_sample = np.empty((n, groups, og, cg * kk), dtype=x.dtype)
    cdef Py_ssize_t m = _chunk(c * kk * npos * x.itemsize, n)
    cols = np.empty((m, c, kk, npos), dtype=x.dtype)
    x4 = _as_4d(x, nd)
    cdef Py_ssize_t n0, mm
    for n0 in range(0, n, m):
        mm = min(m, n - n0)
        if x.dtype == np.float32:
            _im2col[float](x4, cols, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
        else:
            _im2col[double](x4, cols, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
        np.matmul(gyr[n0:n0 + mm], cols[:mm].reshape(mm, groups, cg * kk, npos).transpose(0, 1, 3, 2),
                  out=per_sample[n0:n0 + mm])
    return per_sample.sum(axis=0).reshape(wshape)


def conv_transpose_np(x, w, stride, padding, dilation, groups, output_padding):
    """``nn_ops.conv_transpose_np``: x (N, C, *S), w (C, O/groups, *k) -> (N, O, *out); None for
    a case it does not take."""
    if not _takes(x, w):
        return None
    cdef int nd = x.ndim - 2
    cdef Py_ssize_t n = x.shape[0], c = x.shape[1]
    in_sizes = x.shape[2:]
    ksize = w.shape[2:]
    cdef Py_ssize_t cg = c // groups, og = w.shape[1]
    cdef Py_ssize_t kk = 1, npos = 1
    for k in ksize:
        kk *= k
    for s in in_sizes:
        npos *= s
    full = [(s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in zip(in_sizes, stride, dilation, ksize, output_padding)]
    cropped = [f - 2 * p for f, p in zip(full, padding)]
    if min(cropped) <= 0:
        return None
    kh, kw = _pair(ksize, nd, 1)
    sh, sw = _pair(stride, nd, 1)
    ph, pw = _pair(padding, nd, 0)
    dh, dw = _pair(dilation, nd, 1)
    ih_n, iw_n = _pair(in_sizes, nd, 1)
    wt = w.reshape(groups, cg, og * kk).transpose(0, 2, 1)
    xr = x.reshape(n, groups, cg, npos)
    out = np.zeros((n, groups * og, *cropped), dtype=x.dtype)
    cdef Py_ssize_t m = _chunk(groups * og * kk * npos * x.itemsize, n)
    cols = np.empty((m, groups * og, kk, npos), dtype=x.dtype)
    out4 = _as_4d(out, nd)
    cdef Py_ssize_t n0, mm
    for n0 in range(0, n, m):
        mm = min(m, n - n0)
        np.matmul(wt, xr[n0:n0 + mm], out=cols[:mm].reshape(mm, groups, og * kk, npos))
        if x.dtype == np.float32:
            _col2im_add[float](cols, out4, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, ih_n, iw_n)
        else:
            _col2im_add[double](cols, out4, n0, mm, kh, kw, sh, sw, ph, pw, dh, dw, ih_n, iw_n)
    return out

# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled twin of the max pooling kernels of ``minitorch_nn/backends/cpu/pooling.py``.

Function by function (each has the signature of its original and returns the same arrays):

* :func:`max_pool2d_np` -- ``pooling.max_pool2d_np`` (the maxima and where they came from);
* :func:`max_pool2d_values_np` -- ``pooling.max_pool2d_values_np`` (the maxima alone);
* :func:`max_pool2d_scatter_np` -- ``pooling.max_pool2d_scatter_np`` (the backward: each
  output's gradient added to the input element it came from).

Why compiled: the originals make one pass over the whole tensor per kernel offset (a comparison,
a ``copyto``, and for the indices a second ``copyto``), after padding a copy of the input; the
backward is ``np.add.at``, numpy's slowest way to add. Here each output is one pass over its
window, and the backward one loop.

Why bit-equal: there is no arithmetic in the forward, only comparisons, made in the original's
order: the window's first element (or the padding value, when it lies in the padding) is the
start, and a later element replaces it only when strictly larger or NaN -- so the value kept and
its index are the original's (padding never wins, so skipping it changes nothing; an index
starts at the window's first element inside the input, as there). The backward adds in the
original's order (outputs in row-major order, each into a zero-initialised result) in the
gradient's dtype, as ``np.add.at`` does.

What it takes: row-major float32 and float64 inputs with at least one element (``max_pool2d_scatter_np``
also needs int64 indices of the gradient's shape, all inside their plane); anything else returns
``None`` and the original's code runs. It runs only while ``backends.compiled`` is on and
:func:`guards_hold` (pooling.py checks both); source edits to the originals or their helpers turn
it off at import (their fingerprints, ``_twin_manifest.json``).
"""

cimport cython
cimport numpy as cnp

import numpy as np

cnp.import_array()

ctypedef fused real:
    float
    double

# pooling.py's helpers the originals call (see setup() and guards_hold())
_HELPER_NAMES = ("_padded_for_pool", "_lowest", "_max_pool_offsets", "_take_larger", "_first_offset_inside")
cdef list _guards = []   # (namespace, name, the object it held at setup)


def setup(namespace):
    """Remember pooling.py's helpers (called once by pooling.py, at import)."""
    global _guards
    _guards = [(namespace, name, namespace[name]) for name in _HELPER_NAMES]


def guards_hold():
    """True while each helper the originals call is still the function it was set up with
    (identity checks)."""
    cdef tuple guard
    if not _guards:
        return False
    for guard in _guards:
        if (<dict>guard[0]).get(guard[1]) is not guard[2]:
            return False
    return True


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* One output row's run of windows that lie wholly inside the input: windows q = 0..n-1 start
       at first + q*q_step; kernel offset j is off[j] elements from a window's start and pos[j] in
       the flat index. Offsets outer, windows inner, and selects made with bit masks: the
       comparison is a coin toss on real data, and a mispredicted branch costs more than a window. */
    #define MT_POOL_PASS(T, BITS, STEP, WITH_BEST)                                                 \\
        for (q = 0; q < n; q++) {                                                                   \\
            T v = p[q * (STEP)], c = vals[q];                                                       \\
            BITS vb, cb, m;                                                                         \\
            int take = (v > c) | (v != v);                                                          \\
            m = (BITS)0 - (BITS)take;                                                               \\
            memcpy(&vb, &v, sizeof(T)); memcpy(&cb, &c, sizeof(T));                                 \\
            cb = (vb & m) | (cb & ~m);                                                              \\
            memcpy(&vals[q], &cb, sizeof(T));                                                       \\
            if (WITH_BEST) {                                                                        \\
                int64_t mi = -(int64_t)take;                                                        \\
                best[q] = (pj & mi) | (best[q] & ~mi);                                              \\
            }                                                                                       \\
        }
    /* (the same pass written four times -- with and without the indices, for stride 2 and any
       stride -- so that the compiler sees constants and can vectorise the common case) */
    #define MT_POOL_ROW(NAME, T, BITS)                                                              \\
    static void NAME(const T* first, Py_ssize_t n, Py_ssize_t q_step, const Py_ssize_t* off,        \\
                     const Py_ssize_t* pos, Py_ssize_t K, T* vals, int64_t* best) {                 \\
        Py_ssize_t q, j;                                                                            \\
        for (q = 0; q < n; q++) vals[q] = first[q * q_step];                                        \\
        if (best) for (q = 0; q < n; q++) best[q] = 0;                                              \\
        for (j = 1; j < K; j++) {                                                                   \\
            const T* p = first + off[j];                                                            \\
            int64_t pj = pos[j];                                                                    \\
            if (best && q_step == 2) { MT_POOL_PASS(T, BITS, 2, 1) }                                \\
            else if (best) { MT_POOL_PASS(T, BITS, q_step, 1) }                                     \\
            else if (q_step == 2) { MT_POOL_PASS(T, BITS, 2, 0) }                                   \\
            else { MT_POOL_PASS(T, BITS, q_step, 0) }                                               \\
        }                                                                                           \\
    }
    MT_POOL_ROW(mt_pool_row_f, float, uint32_t)
    MT_POOL_ROW(mt_pool_row_d, double, uint64_t)
    """
    void mt_pool_row_f(const float* first, Py_ssize_t n, Py_ssize_t q_step, const Py_ssize_t* off,
                       const Py_ssize_t* pos, Py_ssize_t K, float* vals, cnp.int64_t* best) noexcept nogil
    void mt_pool_row_d(const double* first, Py_ssize_t n, Py_ssize_t q_step, const Py_ssize_t* off,
                       const Py_ssize_t* pos, Py_ssize_t K, double* vals, cnp.int64_t* best) noexcept nogil


cdef inline Py_ssize_t _first_inside(Py_ssize_t start, Py_ssize_t step) noexcept nogil:
    """The first kernel offset a >= 0 with start + a*step >= 0 (start may be negative)."""
    if start >= 0:
        return 0
    return (-start + step - 1) // step


cdef inline Py_ssize_t _end_inside(Py_ssize_t start, Py_ssize_t step, Py_ssize_t k, Py_ssize_t size) noexcept nogil:
    """One past the last kernel offset a < k with start + a*step < size."""
    cdef Py_ssize_t last
    if start > size - 1:
        return 0
    last = (size - 1 - start) // step + 1
    return last if last < k else k


cdef void _pool(const real[:, :, :] x, real[:, :, ::1] vals, cnp.int64_t[:, :, ::1] idx, bint with_index,
                real lowest, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t dh, Py_ssize_t dw,
                Py_ssize_t[:, ::1] rows, Py_ssize_t[:, ::1] cols, Py_ssize_t[::1] offs,
                Py_ssize_t[::1] poss) noexcept nogil:
    """Max pooling of the planes of ``x`` (L, H, W) into ``vals`` (and ``idx``) (L, OH, OW).

    Scratch space: ``rows[r]``/``cols[q]`` get the kernel offsets of output row r / column q that
    lie inside the input, [lo, hi) (computed once: a division per output would cost more than its
    comparisons); ``offs[j]``/``poss[j]`` kernel offset j's distance from its window's first
    element, in elements of ``x`` and in the flat index."""
    cdef Py_ssize_t L = x.shape[0], H = x.shape[1], W = x.shape[2]
    cdef Py_ssize_t OH = vals.shape[1], OW = vals.shape[2]
    cdef Py_ssize_t l, r, q, a, b, ih0, iw0, ih, iw, a_lo, a_hi, b_lo, b_hi, best, n_full
    cdef Py_ssize_t K = kh * kw, full_lo = OW, full_hi = OW
    cdef Py_ssize_t step_h = x.strides[1] // sizeof(real), step_w = x.strides[2] // sizeof(real)
    cdef const real* first
    cdef cnp.int64_t* best_row
    cdef real cur, v
    for a in range(kh):
        for b in range(kw):
            offs[a * kw + b] = a * dh * step_h + b * dw * step_w
            poss[a * kw + b] = a * dh * W + b * dw
    for r in range(OH):
        ih0 = r * sh - ph
        rows[r, 0] = _first_inside(ih0, dh)
        rows[r, 1] = _end_inside(ih0, dh, kh, H)
    for q in range(OW):
        iw0 = q * sw - pw
        cols[q, 0] = _first_inside(iw0, dw)
        cols[q, 1] = _end_inside(iw0, dw, kw, W)
        if cols[q, 0] == 0 and cols[q, 1] == kw:   # (one run: padding only at the ends)
            if full_lo == OW:
                full_lo = q
            full_hi = q + 1
    for l in range(L):
        for r in range(OH):
            ih0 = r * sh - ph
            a_lo = rows[r, 0]
            a_hi = rows[r, 1]
            n_full = full_hi - full_lo if a_lo == 0 and a_hi == kh else 0
            if n_full > 0:
                # the windows that lie wholly inside the input (most of them): see MT_POOL_ROW
                first = &x[l, ih0, full_lo * sw - pw]
                best_row = &idx[l, r, full_lo] if with_index else NULL
                if real is float:
                    mt_pool_row_f(first, n_full, sw * step_w, &offs[0], &poss[0], K, &vals[l, r, full_lo], best_row)
                else:
                    mt_pool_row_d(first, n_full, sw * step_w, &offs[0], &poss[0], K, &vals[l, r, full_lo], best_row)
                if with_index:
                    for q in range(full_lo, full_hi):
                        idx[l, r, q] += ih0 * W + q * sw - pw
            for q in range(OW):
                if n_full > 0 and full_lo <= q < full_hi:
                    continue
                iw0 = q * sw - pw
                b_lo = cols[q, 0]
                b_hi = cols[q, 1]
                # the start: offset (0, 0)'s value (the padding value when it lies in the padding),
                # and the index of the window's first element inside the input
                if a_lo == 0 and b_lo == 0:
                    cur = x[l, ih0, iw0]
                else:
                    cur = lowest
                best = (ih0 + a_lo * dh) * W + iw0 + b_lo * dw
                for a in range(a_lo, a_hi):
                    ih = ih0 + a * dh
                    for b in range(b_lo, b_hi):
                        if a == 0 and b == 0:
                            continue
                        iw = iw0 + b * dw
                        v = x[l, ih, iw]
                        if v > cur or v != v:
                            cur = v
                            best = ih * W + iw
                vals[l, r, q] = cur
                if with_index:
                    idx[l, r, q] = best


cdef bint _takes(object x):
    return (type(x) is np.ndarray and x.ndim >= 2 and x.size > 0
            and (x.dtype == np.float32 or x.dtype == np.float64))


cdef bint _takes_input(object x):
    # row-major only: the original's maxima keep the memory order of its input (``np.array`` of a
    # strided view), which for a row-major input is row-major, as here
    return _takes(x) and x.flags.c_contiguous


@cython.wraparound(True)
cdef object _run(object x, k, s, p, d, out_sizes, bint with_index):
    if not _takes_input(x) or min(out_sizes) <= 0:
        return None
    lead = x.shape[:-2]
    x3 = x.reshape(-1, x.shape[-2], x.shape[-1])
    vals = np.empty((x3.shape[0], out_sizes[0], out_sizes[1]), dtype=x.dtype)
    idx = np.empty(vals.shape if with_index else (1, 1, 1), dtype=np.int64)
    rows = np.empty((out_sizes[0], 2), dtype=np.intp)
    cols = np.empty((out_sizes[1], 2), dtype=np.intp)
    offs = np.empty(k[0] * k[1], dtype=np.intp)
    poss = np.empty(k[0] * k[1], dtype=np.intp)
    if x.dtype == np.float32:
        _pool[float](x3, vals, idx, with_index, -np.inf, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1],
                     rows, cols, offs, poss)
    else:
        _pool[double](x3, vals, idx, with_index, -np.inf, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1],
                      rows, cols, offs, poss)
    shape = (*lead, out_sizes[0], out_sizes[1])
    if with_index:
        return vals.reshape(shape), idx.reshape(shape)
    return vals.reshape(shape)


def max_pool2d_np(x, k, s, p, d, out_sizes):
    """``pooling.max_pool2d_np``: (maxima, flat indices in their plane); None for a case it does
    not take."""
    return _run(x, k, s, p, d, out_sizes, True)


def max_pool2d_values_np(x, k, s, p, d, out_sizes):
    """``pooling.max_pool2d_values_np``: the maxima alone; None for a case it does not take."""
    return _run(x, k, s, p, d, out_sizes, False)


cdef bint _scatter(const real[:, ::1] g, const cnp.int64_t[:, ::1] idx, real[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t L = g.shape[0], P = g.shape[1], HW = out.shape[1]
    cdef Py_ssize_t l, o
    cdef cnp.int64_t j
    for l in range(L):   # (checked first, so that a bad index changes nothing)
        for o in range(P):
            j = idx[l, o]
            if j < 0 or j >= HW:
                return False
    for l in range(L):
        for o in range(P):
            j = idx[l, o]
            out[l, j] = out[l, j] + g[l, o]
    return True


@cython.wraparound(True)
def max_pool2d_scatter_np(g, idx, shape):
    """``pooling.max_pool2d_scatter_np``: the gradient of the input (of ``shape``) from ``g`` and
    the indices; None for a case it does not take."""
    if (not _takes(g) or type(idx) is not np.ndarray or idx.dtype != np.int64 or idx.shape != g.shape
            or len(shape) < 2 or g.shape[:-2] != tuple(shape[:-2])):
        return None
    h, w = shape[-2], shape[-1]
    if h * w <= 0:
        return None
    g2 = np.ascontiguousarray(g).reshape(-1, g.shape[-2] * g.shape[-1])
    idx2 = np.ascontiguousarray(idx).reshape(g2.shape[0], -1)
    out = np.zeros((g2.shape[0], h * w), dtype=g.dtype)
    if g.dtype == np.float32:
        ok = _scatter[float](g2, idx2, out)
    else:
        ok = _scatter[double](g2, idx2, out)
    return out.reshape(tuple(shape)) if ok else None

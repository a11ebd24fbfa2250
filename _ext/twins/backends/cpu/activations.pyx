# cython: boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -ffp-contract=off
"""Compiled twin of ``minitorch_nn/backends/cpu/activations.py``: GELU and its backward.

Function by function:

* ``gelu_values(x, approximate)`` mirrors ``_gelu_values`` (the values of ``aten.gelu``);
* ``gelu_backward_values(grad, x, approximate)`` mirrors ``_gelu_backward_values`` (the values of
  ``aten.gelu_backward``, what ``GeluBackward0`` computes).

Why compiled: the readable functions are numpy expressions, one pass over memory per operation
(5 for GELU, 11 for its backward, each with a temporary the size of the tensor); a transformer's
feed-forward layer spends much of its step there. Here each element is read once and written once.

How it stays bit-equal: each function makes the same IEEE operations in the same order as its
original, every one rounded to the array's dtype (``float`` arithmetic for float32, ``double`` for
float64; ``-ffp-contract=off`` keeps the compiler from fusing a multiply and an add into one
rounding), and calls the same C-library functions the original reaches through
``backends/cpu/libm.py``: ``erff``/``erf``, ``expf``/``exp``, ``tanhf``/``tanh``. The constants are
the original's, rounded to the dtype. ``tests/twins/test_gelu_twin.py`` compares the two bit for bit.

Each function takes float32 or float64 numpy arrays (any layout) or numpy scalars and returns a
fresh row-major array (a numpy scalar for 0-d input), or None for anything else, which the caller
then hands to the readable original. It runs only while the switch ``backends.compiled`` is on and
the originals are unchanged (``activations.py`` binds it with ``compiled.bind``).
"""

cimport numpy as cnp
from libc.math cimport erf, erff, exp, expf, tanh, tanhf

import numpy as np

cnp.import_array()

# The original's constants (PyTorch's, folded in double as C folds them), before rounding to the dtype
cdef double SQRT1_2 = 0.7071067811865476
cdef double PDF_SCALE = 1.1283791670955126 * 0.7071067811865476 * 0.5
cdef double TANH_BETA = 1.4142135623730951 * 1.1283791670955126 * 0.5
cdef double TANH_KAPPA = 0.044715

ctypedef fused real:
    float
    double


cdef inline real _erf(real x) noexcept nogil:
    if real is float:
        return erff(x)
    else:
        return erf(x)


cdef inline real _exp(real x) noexcept nogil:
    if real is float:
        return expf(x)
    else:
        return exp(x)


cdef inline real _tanh(real x) noexcept nogil:
    if real is float:
        return tanhf(x)
    else:
        return tanh(x)


cdef void _gelu(const real* x, real* out, Py_ssize_t n, bint approximate_tanh) noexcept nogil:
    cdef real half = 0.5, one = 1, alpha = <real>SQRT1_2
    cdef real beta = <real>TANH_BETA, kappa = <real>TANH_KAPPA
    cdef real v, inner
    cdef Py_ssize_t i
    if approximate_tanh:
        for i in range(n):
            v = x[i]
            inner = beta * (v + kappa * (v * v * v))
            out[i] = half * v * (one + _tanh(inner))
    else:
        for i in range(n):
            v = x[i]
            out[i] = v * half * (one + _erf(v * alpha))


cdef void _gelu_backward(const real* g, const real* x, real* out, Py_ssize_t n,
                         bint approximate_tanh) noexcept nogil:
    cdef real half = 0.5, one = 1, minus_half = -0.5, alpha = <real>SQRT1_2
    cdef real pdf_scale = <real>PDF_SCALE
    cdef real beta = <real>TANH_BETA, kappa = <real>TANH_KAPPA, three = 3
    cdef real v, cdf, pdf, x_sq, x_cube, inner, t, left, right
    cdef real left_derivative, tanh_derivative, inner_derivative, right_derivative
    cdef Py_ssize_t i
    if approximate_tanh:
        for i in range(n):
            v = x[i]
            x_sq = v * v
            x_cube = x_sq * v
            inner = beta * (v + kappa * x_cube)
            t = _tanh(inner)
            left = half * v
            right = one + t
            left_derivative = half * right
            tanh_derivative = one - t * t
            inner_derivative = beta * (one + three * kappa * x_sq)
            right_derivative = left * tanh_derivative * inner_derivative
            out[i] = g[i] * (left_derivative + right_derivative)
    else:
        for i in range(n):
            v = x[i]
            cdf = half * (one + _erf(v * alpha))
            pdf = pdf_scale * _exp(v * v * minus_half)
            out[i] = g[i] * (cdf + v * pdf)


cdef object _float_array(object x):
    """``x`` as a C-contiguous float32/float64 array, or None."""
    if type(x) is np.float32 or type(x) is np.float64:
        x = np.asarray(x)
    if type(x) is not np.ndarray:
        return None
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        return None
    if not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x):
        x = np.ascontiguousarray(x)
    return x


cdef bint _same_shape(cnp.ndarray a, cnp.ndarray b):
    cdef int d, ndim = cnp.PyArray_NDIM(a)
    if cnp.PyArray_NDIM(b) != ndim:
        return False
    for d in range(ndim):
        if cnp.PyArray_DIMS(a)[d] != cnp.PyArray_DIMS(b)[d]:
            return False
    return True


cdef object _approximate_tanh(object approximate):
    if approximate == "tanh":
        return True
    if approximate == "none":
        return False
    return None


def gelu_values(x, approximate):
    """GELU of every element (``_gelu_values``), or None for what the original should take."""
    cdef object tanh_flag = _approximate_tanh(approximate)
    cdef object arr = _float_array(x)
    if arr is None or tanh_flag is None:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef int typenum = cnp.PyArray_TYPE(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    cdef bint flag = tanh_flag
    if typenum == cnp.NPY_FLOAT32:
        with nogil:
            _gelu(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), n, flag)
    else:
        with nogil:
            _gelu(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out), n, flag)
    return out[()] if cnp.PyArray_NDIM(out) == 0 else out


def gelu_backward_values(grad, x, approximate):
    """``grad`` times GELU's derivative at ``x`` (``_gelu_backward_values``), for two arrays of one
    dtype and shape; None for what the original should take (broadcasting, mixed dtypes...)."""
    cdef object tanh_flag = _approximate_tanh(approximate)
    cdef object xs = _float_array(x)
    cdef object gs = _float_array(grad)
    if xs is None or gs is None or tanh_flag is None:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>xs
    cdef cnp.ndarray g = <cnp.ndarray>gs
    cdef int typenum = cnp.PyArray_TYPE(a)
    if cnp.PyArray_TYPE(g) != typenum or not _same_shape(a, g):
        return None
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    cdef bint flag = tanh_flag
    if typenum == cnp.NPY_FLOAT32:
        with nogil:
            _gelu_backward(<const float*>cnp.PyArray_DATA(g), <const float*>cnp.PyArray_DATA(a),
                           <float*>cnp.PyArray_DATA(out), n, flag)
    else:
        with nogil:
            _gelu_backward(<const double*>cnp.PyArray_DATA(g), <const double*>cnp.PyArray_DATA(a),
                           <double*>cnp.PyArray_DATA(out), n, flag)
    return out[()] if cnp.PyArray_NDIM(out) == 0 else out

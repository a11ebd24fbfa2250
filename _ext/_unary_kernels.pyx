# cython: boundscheck=False, wraparound=False, cdivision=True
"""Compiled float32 loops for ``exp``, ``log``, ``expm1``, ``log2``, ``log10``, ``log1p``,
``sinh``, ``cosh`` and ``tanh``, rounded as PyTorch's cpu kernels round them.

Why: PyTorch's float32 results for these functions are the correctly rounded ones in 92-99.9% of
elements (its vectorised SLEEF routines are accurate to within one ulp and mostly exact; its
scalar loop calls the C library). numpy's own fast float32 routines are less accurate: measured
against torch 2.13 on random inputs, numpy matches torch's bits in only 60% of ``exp`` elements,
68% of ``tanh``, 74-79% of ``sinh``/``cosh``/``log10``, 83% of ``log``. The loops here reach
99% (exp), 99.9% (tanh, sinh, cosh, log10, expm1, log2), 99.3% (log1p) and 91.5% (log; torch's
own log is the one less often exact). The other elements differ by one ulp, as before.

How each is computed, for each float32 element ``x``:

* ``exp``, ``log``: the C library's float functions ``expf``/``logf`` (correctly rounded in
  nearly all cases in glibc, and as fast as numpy's for small tensors);
* ``expm1``, ``log2``, ``log10``, ``log1p``, ``sinh``, ``cosh``: the double-precision C
  function of ``(double)x``, rounded once to float (the double result is far more accurate
  than a float needs, so the rounding is almost always the correct one);
* ``tanh``: ``1 - 2 / (exp(2x) + 1)`` in double, rounded once; for ``|x| < 2**-12``, where
  that subtraction would lose the leading digits, ``x * (1 - x**2 / 3)`` (its error there is below
  ``2**-50`` relative). The C library's double ``tanh`` is as accurate but several times slower.

Everything else is left to numpy, unchanged: float64 (numpy's float64 routines already agree
with torch's), complex and integer inputs, and the functions not listed (for sin, cos, asin
the correctly rounded loop costs 5-25x numpy's on large tensors for a few percent more exact
elements; acos, atan, tan, exp2, sqrt are as close or closer with numpy).

Each function takes a numpy array and returns a fresh array: for float32 a row-major one from
the loop (any input layout), otherwise numpy's result. The cpu kernels' table
(``backends/cpu/pointwise.py::_FLOAT_UNARY``) holds these functions, so the full path and the
compiled twins (``_ext/twins/backends/cpu/pointwise.pyx``) give the same bits.

``libm_erf``, ``libm_exp`` and ``libm_tanh`` (at the end) are the C library's functions for float32
*and* float64, element by element: what PyTorch's scalar loops call, for GELU and its backward
(``backends/cpu/libm.py`` describes them and falls back to Python's ``math`` without this module).

Speed: below numpy's cost on small tensors (no ufunc machinery); on large ones ``exp``/``log``
take about 2x numpy's time and ``tanh`` about 5x (scalar loops against numpy's SIMD).
"""

cimport numpy as cnp
from libc.math cimport cosh, erf, erff, exp, expf, expm1, fabs, log1p, log2, log10, logf, sinh
from libc.math cimport tanh as c_tanh, tanhf
import numpy as np

cnp.import_array()

cdef inline float _exp(float x) noexcept nogil:
    return expf(x)


cdef inline float _log(float x) noexcept nogil:
    return logf(x)


cdef inline float _expm1(float x) noexcept nogil:
    return <float>expm1(<double>x)


cdef inline float _log2(float x) noexcept nogil:
    return <float>log2(<double>x)


cdef inline float _log10(float x) noexcept nogil:
    return <float>log10(<double>x)


cdef inline float _log1p(float x) noexcept nogil:
    return <float>log1p(<double>x)


cdef inline float _sinh(float x) noexcept nogil:
    return <float>sinh(<double>x)


cdef inline float _cosh(float x) noexcept nogil:
    return <float>cosh(<double>x)


cdef double _TANH_SERIES_BELOW = 1.0 / 4096.0   # 2**-12


cdef inline float _tanh(float x) noexcept nogil:
    cdef double d = x
    if fabs(d) < _TANH_SERIES_BELOW:
        return <float>(d * (1.0 - d * d / 3.0))   # (written as a product so that -0.0 stays -0.0)
    # (exp overflows to inf for large x: 2 / inf = 0 gives 1; -inf gives exp = 0, so -1; NaN stays NaN)
    return <float>(1.0 - 2.0 / (exp(2.0 * d) + 1.0))


cdef enum Which:
    EXP, LOG, EXPM1, LOG2, LOG10, LOG1P, SINH, COSH, TANH


cdef inline float _one(Which which, float x) noexcept nogil:
    # (a switch the compiler hoists out of the loop, rather than a call through a pointer per element)
    if which == EXP:
        return _exp(x)
    if which == LOG:
        return _log(x)
    if which == EXPM1:
        return _expm1(x)
    if which == LOG2:
        return _log2(x)
    if which == LOG10:
        return _log10(x)
    if which == LOG1P:
        return _log1p(x)
    if which == SINH:
        return _sinh(x)
    if which == COSH:
        return _cosh(x)
    return _tanh(x)


cdef object _apply(Which which, object x, object fallback):
    """The function ``which`` on every element of a float32 array, into a fresh row-major array;
    ``fallback(x)`` for anything else."""
    if type(x) is np.float32:
        x = np.asarray(x)   # (a numpy scalar, as 0-d arithmetic gives: the same loop, a 0-d result)
    if type(x) is not np.ndarray or cnp.PyArray_TYPE(<cnp.ndarray>x) != cnp.NPY_FLOAT32:
        return fallback(x)
    cdef cnp.ndarray a = <cnp.ndarray>x
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        a = np.ascontiguousarray(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), cnp.NPY_FLOAT32, 0)
    cdef const float* src = <const float*>cnp.PyArray_DATA(a)
    cdef float* dst = <float*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    with nogil:
        for i in range(n):
            dst[i] = _one(which, src[i])
    return out


def exp_(x):
    """``exp(x)``: ``expf`` per float32 element, else ``numpy.exp``."""
    return _apply(EXP, x, np.exp)


def log_(x):
    """``log(x)``: ``logf`` per float32 element, else ``numpy.log``."""
    return _apply(LOG, x, np.log)


def expm1_(x):
    """``expm1(x)``: the double ``expm1`` rounded to float32, else ``numpy.expm1``."""
    return _apply(EXPM1, x, np.expm1)


def log2_(x):
    """``log2(x)``: the double ``log2`` rounded to float32, else ``numpy.log2``."""
    return _apply(LOG2, x, np.log2)


def log10_(x):
    """``log10(x)``: the double ``log10`` rounded to float32, else ``numpy.log10``."""
    return _apply(LOG10, x, np.log10)


def log1p_(x):
    """``log1p(x)``: the double ``log1p`` rounded to float32, else ``numpy.log1p``."""
    return _apply(LOG1P, x, np.log1p)


def sinh_(x):
    """``sinh(x)``: the double ``sinh`` rounded to float32, else ``numpy.sinh``."""
    return _apply(SINH, x, np.sinh)


def cosh_(x):
    """``cosh(x)``: the double ``cosh`` rounded to float32, else ``numpy.cosh``."""
    return _apply(COSH, x, np.cosh)


def tanh_(x):
    """``tanh(x)``: ``1 - 2 / (exp(2x) + 1)`` in double (a series near 0) rounded to float32,
    else ``numpy.tanh``."""
    return _apply(TANH, x, np.tanh)


# name -> function, for the cpu kernels' table
ROUNDED_AS_PYTORCH = {
    "exp": exp_, "log": log_, "expm1": expm1_, "log2": log2_, "log10": log10_, "log1p": log1p_,
    "sinh": sinh_, "cosh": cosh_, "tanh": tanh_,
}


# -- the C library's erf, exp and tanh for both float widths -----------------------------------
# PyTorch's scalar cpu loops (a strided tensor, and the last few elements of a vectorised one) call
# std::erf, std::exp and std::tanh: the C library's erff/expf/tanhf for float32, erf/exp/tanh for
# float64. GELU and its backward use these (backends/cpu/libm.py). numpy has no erf, and its exp
# and tanh are not the C library's on every machine, so the loops below fix those bits.

cdef object _apply_libm(int which, object x):
    """``erf`` (which=0), ``exp`` (1) or ``tanh`` (2) of every element of a float32 or float64 array (or
    numpy scalar), as the C library computes it, into a fresh row-major array of the same dtype;
    None for anything else."""
    if type(x) is np.float32 or type(x) is np.float64:
        x = np.asarray(x)
    if type(x) is not np.ndarray:
        return None
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        a = np.ascontiguousarray(a)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    cdef const float* fsrc
    cdef float* fdst
    cdef const double* dsrc
    cdef double* ddst
    if typenum == cnp.NPY_FLOAT32:
        fsrc = <const float*>cnp.PyArray_DATA(a)
        fdst = <float*>cnp.PyArray_DATA(out)
        with nogil:
            if which == 0:
                for i in range(n):
                    fdst[i] = erff(fsrc[i])
            elif which == 1:
                for i in range(n):
                    fdst[i] = expf(fsrc[i])
            else:
                for i in range(n):
                    fdst[i] = tanhf(fsrc[i])
    else:
        dsrc = <const double*>cnp.PyArray_DATA(a)
        ddst = <double*>cnp.PyArray_DATA(out)
        with nogil:
            if which == 0:
                for i in range(n):
                    ddst[i] = erf(dsrc[i])
            elif which == 1:
                for i in range(n):
                    ddst[i] = exp(dsrc[i])
            else:
                for i in range(n):
                    ddst[i] = c_tanh(dsrc[i])
    return out


def libm_erf(x):
    """``erf(x)`` per element: ``erff`` for float32, ``erf`` for float64 (a fresh array); None for
    other inputs."""
    return _apply_libm(0, x)


def libm_exp(x):
    """``exp(x)`` per element: ``expf`` for float32, ``exp`` for float64 (a fresh array); None for
    other inputs."""
    return _apply_libm(1, x)


def libm_tanh(x):
    """``tanh(x)`` per element: ``tanhf`` for float32, ``tanh`` for float64 (a fresh array); None
    for other inputs."""
    return _apply_libm(2, x)

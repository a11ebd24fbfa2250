# cython: boundscheck=False, wraparound=False, cdivision=True
"""``fused_multiply_add``: the loop that rounds ``x * y + z`` once per element (C's ``fma``/``fmaf``),
for ``minitorch_nn/backends/cpu/_fma.py``.

Not a twin: like ``_unary_kernels``, it is part of what the readable kernels compute, and runs with
the switch ``backends.compiled`` off too, because no numpy expression rounds ``a * b + c`` once.
Read ``_fma.py`` first: it says why PyTorch's ``add(alpha=)``, ``addcmul``, ``addcdiv`` and ``lerp``
round once, and what it does where this module is not built.
"""

cimport numpy as cnp
import numpy as np

cnp.import_array()


cdef extern from *:
    # The loops in C, so that the compiler may use the processor's multiply-add instruction (and
    # vectorize) where it has one: libm's fma()/fmaf() is a function call per element, about
    # fifteen times slower than numpy's unfused ``x + y * a``. ``fma_loops_fast`` is 1 when the
    # processor has FMA instructions (then the "fma"-target loops run), else 0 (libm's functions).
    # Strides are 1 (each operand has n values) or 0 (one value for all).
    """
    #include <math.h>
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define MT_FMA_TARGET __attribute__((target("fma")))
    static int mt_fma_loops_fast(void) { __builtin_cpu_init(); return __builtin_cpu_supports("fma"); }
    #else
    #define MT_FMA_TARGET
    static int mt_fma_loops_fast(void) { return 0; }
    #endif
    #define MT_FMA_LOOPS(NAME, T, FN) \
    static MT_FMA_TARGET void NAME##_fast(Py_ssize_t n, const T* x, Py_ssize_t sx, const T* y, Py_ssize_t sy, \
                                         const T* z, Py_ssize_t sz, T* out) { \
        Py_ssize_t i; \
        if (sx && sy && sz) { for (i = 0; i < n; i++) out[i] = FN(x[i], y[i], z[i]); } \
        else if (sx && !sy && sz) { T b = y[0]; for (i = 0; i < n; i++) out[i] = FN(x[i], b, z[i]); } \
        else { for (i = 0; i < n; i++) out[i] = FN(x[i * sx], y[i * sy], z[i * sz]); } \
    } \
    static void NAME##_libm(Py_ssize_t n, const T* x, Py_ssize_t sx, const T* y, Py_ssize_t sy, \
                            const T* z, Py_ssize_t sz, T* out) { \
        Py_ssize_t i; \
        for (i = 0; i < n; i++) out[i] = FN(x[i * sx], y[i * sy], z[i * sz]); \
    }
    MT_FMA_LOOPS(mt_fma_f32, float, fmaf)
    MT_FMA_LOOPS(mt_fma_f64, double, fma)
    """
    int mt_fma_loops_fast() nogil
    void mt_fma_f32_fast(Py_ssize_t, const float*, Py_ssize_t, const float*, Py_ssize_t, const float*, Py_ssize_t, float*) nogil
    void mt_fma_f32_libm(Py_ssize_t, const float*, Py_ssize_t, const float*, Py_ssize_t, const float*, Py_ssize_t, float*) nogil
    void mt_fma_f64_fast(Py_ssize_t, const double*, Py_ssize_t, const double*, Py_ssize_t, const double*, Py_ssize_t, double*) nogil
    void mt_fma_f64_libm(Py_ssize_t, const double*, Py_ssize_t, const double*, Py_ssize_t, const double*, Py_ssize_t, double*) nogil

cdef bint _fma_fast = mt_fma_loops_fast()


def fused_multiply_add(cnp.ndarray x, cnp.ndarray y, cnp.ndarray z, cnp.ndarray out):
    """``out = x * y + z`` rounded once (C's ``fma``/``fmaf``), element by element.

    What PyTorch's cpu kernels compute for ``add(alpha=)``, ``addcmul``, ``addcdiv`` and ``lerp``:
    its compiler fuses their ``a + b * c`` into one multiply-add instruction. numpy has no fused
    multiply-add, hence this loop (C's ``fma``; used by ``backends/cpu/_fused.py``, which falls back to numpy
    when this module is not built). All four arrays are C-contiguous and of one dtype, float32 or
    float64; ``out`` has ``n`` elements and each operand either ``n`` or one (one value used for
    every element). ``out`` may be one of the operands. Returns ``out``, or ``None`` (nothing
    written) when the arrays do not fit that description."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(out)
    cdef int typenum = cnp.PyArray_TYPE(out)
    cdef Py_ssize_t sx, sy, sz
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        return None
    for a in (x, y, z, out):
        if cnp.PyArray_TYPE(a) != typenum or not cnp.PyArray_IS_C_CONTIGUOUS(a):
            return None
        if cnp.PyArray_SIZE(a) != n and cnp.PyArray_SIZE(a) != 1:
            return None
    if not cnp.PyArray_ISWRITEABLE(out):
        return None
    sx = 1 if cnp.PyArray_SIZE(x) == n else 0
    sy = 1 if cnp.PyArray_SIZE(y) == n else 0
    sz = 1 if cnp.PyArray_SIZE(z) == n else 0
    cdef float* xf = <float*>cnp.PyArray_DATA(x)
    cdef float* yf = <float*>cnp.PyArray_DATA(y)
    cdef float* zf = <float*>cnp.PyArray_DATA(z)
    cdef float* of = <float*>cnp.PyArray_DATA(out)
    cdef double* xd = <double*>cnp.PyArray_DATA(x)
    cdef double* yd = <double*>cnp.PyArray_DATA(y)
    cdef double* zd = <double*>cnp.PyArray_DATA(z)
    cdef double* od = <double*>cnp.PyArray_DATA(out)
    with nogil:
        if typenum == cnp.NPY_FLOAT32:
            if _fma_fast:
                mt_fma_f32_fast(n, xf, sx, yf, sy, zf, sz, of)
            else:
                mt_fma_f32_libm(n, xf, sx, yf, sy, zf, sz, of)
        elif _fma_fast:
            mt_fma_f64_fast(n, xd, sx, yd, sy, zd, sz, od)
        else:
            mt_fma_f64_libm(n, xd, sx, yd, sy, zd, sz, od)
    return out

# cython: boundscheck=False, wraparound=False, cdivision=True
"""Compiled cpu kernels for the commonest backward ops: ``tanh_backward``, ``sigmoid_backward``
and ``threshold_backward`` (relu's backward), and the scatter of ``nll_loss_backward``
(cross-entropy's; see :func:`nll_scatter`).

Mirrors the inner loops of PyTorch's cpu kernels for these ops (``aten/src/ATen/native/cpu/
BinaryOpsKernel.cpp``). The readable versions are the numpy kernels in
``minitorch_nn/backends/cpu/activations.py``; they call these first and fall back to numpy for
everything these decline. Each one here takes only the case every backward pass meets on small
tensors: two row-major cpu tensors of one shape and one dtype (float32, or float64 where the
arithmetic cannot differ from numpy's), the gradient possibly one value expanded to that shape
(what ``sum()``'s backward sends), and computes exactly the values the numpy kernel
computes, element by element, into a fresh row-major result. Anything else returns ``None``.

Why compiled: on a 4x4 tensor the numpy version of ``tanh_backward`` is five ufunc calls and two
temporary arrays (about 7 us); the loop itself takes well under a microsecond. The result is made
by ``_C._wrap_array``, as ``backends/cpu/_numpy.wrap`` makes every cpu result.

Rounding: ``tanh_backward`` in float32 computes ``1 - y*y`` in double (the square is exact there)
and rounds it to float once, then multiplies by the gradient in float, exactly the numpy
kernel's steps. Only float32 is taken for it: in float64 a C compiler allowed to fuse ``1 - y*y``
into one multiply-add would round differently from numpy. ``sigmoid_backward`` is
``(g * (1 - y)) * y`` in the tensor's dtype (no product is added to anything, so nothing can be
fused). ``threshold_backward`` with threshold 0 selects: +0.0 where ``x <= 0``, ``g`` (its bits)
elsewhere (NaN in ``x`` keeps ``g``, as ``x <= 0`` is false for it).
"""

cimport numpy as cnp
import numpy as np

cnp.import_array()

cdef object _Tensor = None       # minitorch_nn.Tensor
cdef object _f32 = None          # minitorch_nn.float32
cdef object _f64 = None
cdef object _cpu = None          # the canonical cpu device
cdef object _wrap_array = None   # _C._wrap_array
cdef dict _row_major = None      # _tensor._STRIDES_CACHE: sizes -> row-major strides


def setup(tensor_cls, float32, float64, cpu, wrap_array, dict row_major):
    """Hand over the objects the kernels need (called once by ``backends/cpu/activations.py``)."""
    global _Tensor, _f32, _f64, _cpu, _wrap_array, _row_major
    _Tensor, _f32, _f64, _cpu = tensor_cls, float32, float64, cpu
    _wrap_array, _row_major = wrap_array, row_major


cdef object _operands(object a, object b):
    """``(impl_a, impl_b, step_a)`` when both are exact ``Tensor`` objects on the cpu, of one
    shape and of dtype float32 or float64, with at least one element, ``b`` row-major and ``a``
    row-major (``step_a`` 1) or one value expanded to that shape (``step_a`` 0: the gradient
    ``sum()``'s backward sends); else None. (The numpy kernels give a row-major result for both.)"""
    cdef object ia, ib, sizes, strides, s
    if _row_major is None:
        return None   # setup() has not run yet
    # exact Tensors only: no __torch_dispatch__ class acts on them (engine.nothing_observes)
    if type(a) is not _Tensor or type(b) is not _Tensor:
        return None
    ia = a._impl
    ib = b._impl
    if ia.dtype is not ib.dtype or (ia.dtype is not _f32 and ia.dtype is not _f64):
        return None
    if ia.device is not _cpu or ib.device is not _cpu:
        return None
    sizes = ia.sizes
    if not sizes or sizes != ib.sizes or 0 in sizes:
        return None
    strides = _row_major.get(sizes)
    if strides is None or ib.strides != strides:
        return None
    if ia.strides == strides:
        return ia, ib, 1
    for s in ia.strides:
        if s != 0:
            return None
    return ia, ib, 0


cdef inline cnp.ndarray _empty_like(cnp.ndarray x):
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(x), 0)


cdef inline object _result(cnp.ndarray out, object ib):
    return _wrap_array(_Tensor, out, ib.dtype, _cpu, ib.strides)


def tanh_backward(grad_output, output):
    """``grad_output * (1 - output**2)`` for float32 operands, else None."""
    pair = _operands(grad_output, output)
    if pair is None or pair[0].dtype is not _f32:
        return None
    ia, ib, gs = pair
    cdef cnp.ndarray g = ia.numpy_view()
    cdef cnp.ndarray y = ib.numpy_view()
    cdef cnp.ndarray out = _empty_like(y)
    cdef const float* pg = <const float*>cnp.PyArray_DATA(g)
    cdef const float* py = <const float*>cnp.PyArray_DATA(y)
    cdef float* po = <float*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(out)
    cdef Py_ssize_t step = gs
    cdef double yy
    cdef float t
    for i in range(n):
        yy = <double>py[i]
        t = <float>(1.0 - yy * yy)
        po[i] = pg[i * step] * t
    return _result(out, ib)


def sigmoid_backward(grad_output, output):
    """``grad_output * (1 - output) * output`` for float32/float64 operands, else None."""
    pair = _operands(grad_output, output)
    if pair is None:
        return None
    ia, ib, gs = pair
    cdef cnp.ndarray g = ia.numpy_view()
    cdef cnp.ndarray y = ib.numpy_view()
    cdef cnp.ndarray out = _empty_like(y)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(out)
    cdef Py_ssize_t step = gs
    cdef const float* gf
    cdef const float* yf
    cdef float* of
    cdef const double* gd
    cdef const double* yd
    cdef double* od
    cdef float tf
    cdef double td
    if ia.dtype is _f32:
        gf = <const float*>cnp.PyArray_DATA(g)
        yf = <const float*>cnp.PyArray_DATA(y)
        of = <float*>cnp.PyArray_DATA(out)
        for i in range(n):
            tf = gf[i * step] * (<float>1.0 - yf[i])
            of[i] = tf * yf[i]
    else:
        gd = <const double*>cnp.PyArray_DATA(g)
        yd = <const double*>cnp.PyArray_DATA(y)
        od = <double*>cnp.PyArray_DATA(out)
        for i in range(n):
            td = gd[i * step] * (1.0 - yd[i])
            od[i] = td * yd[i]
    return _result(out, ib)


def threshold_backward(grad_output, self, threshold):
    """``where(self <= 0, 0, grad_output)`` for threshold 0 and float32/float64 operands, else None."""
    if threshold != 0 or type(threshold) is bool:
        return None
    pair = _operands(grad_output, self)
    if pair is None:
        return None
    ia, ib, gs = pair
    cdef cnp.ndarray g = ia.numpy_view()
    cdef cnp.ndarray x = ib.numpy_view()
    cdef cnp.ndarray out = _empty_like(x)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(out)
    cdef Py_ssize_t step = gs
    # Branch-free, as the numpy kernel: AND the gradient's bits with all ones (kept) or zeros
    # (dropped, giving +0.0). A branch per element is several times slower on relu's random mask.
    cdef const cnp.uint32_t* gf
    cdef const float* xf
    cdef cnp.uint32_t* of
    cdef const cnp.uint64_t* gd
    cdef const double* xd
    cdef cnp.uint64_t* od
    if ia.dtype is _f32:
        gf = <const cnp.uint32_t*>cnp.PyArray_DATA(g)
        xf = <const float*>cnp.PyArray_DATA(x)
        of = <cnp.uint32_t*>cnp.PyArray_DATA(out)
        for i in range(n):
            of[i] = gf[i * step] & (<cnp.uint32_t>0 - <cnp.uint32_t>(not (xf[i] <= 0)))
    else:
        gd = <const cnp.uint64_t*>cnp.PyArray_DATA(g)
        xd = <const double*>cnp.PyArray_DATA(x)
        od = <cnp.uint64_t*>cnp.PyArray_DATA(out)
        for i in range(n):
            od[i] = gd[i * step] & (<cnp.uint64_t>0 - <cnp.uint64_t>(not (xd[i] <= 0)))
    return _result(out, ib)


def nll_scatter(cnp.ndarray target, Py_ssize_t n_classes, object ignore_index, object scale):
    """``nll_loss_backward``'s common case (``backends/cpu/nn_ops.py``): a fresh ``(n, n_classes)``
    array of zeros with ``scale`` (a float32 or float64 numpy scalar, whose dtype the result
    takes) at ``(i, target[i])`` in each row; None when a target is not a class or equals
    ``ignore_index`` (the general kernel then runs), or ``target`` is not a flat int64 array."""
    if (cnp.PyArray_TYPE(target) != cnp.NPY_INT64 or cnp.PyArray_NDIM(target) != 1
            or not cnp.PyArray_IS_C_CONTIGUOUS(target) or type(ignore_index) is not int):
        return None
    cdef int typenum
    if type(scale) is np.float32:
        typenum = cnp.NPY_FLOAT32
    elif type(scale) is np.float64:
        typenum = cnp.NPY_FLOAT64
    else:
        return None
    cdef cnp.npy_intp dims[2]
    dims[0] = cnp.PyArray_DIM(target, 0)
    dims[1] = n_classes
    cdef cnp.ndarray out = cnp.PyArray_ZEROS(2, dims, typenum, 0)
    cdef const cnp.int64_t* t = <const cnp.int64_t*>cnp.PyArray_DATA(target)
    cdef long long ignore = ignore_index if -2**63 <= ignore_index < 2**63 else 0
    cdef bint ignore_fits = -2**63 <= ignore_index < 2**63
    cdef Py_ssize_t i, n = dims[0]
    cdef float sf = 0
    cdef double sd = 0
    cdef float* of = <float*>cnp.PyArray_DATA(out)
    cdef double* od = <double*>cnp.PyArray_DATA(out)
    if typenum == cnp.NPY_FLOAT32:
        sf = scale
    else:
        sd = scale
    for i in range(n):
        if t[i] < 0 or t[i] >= n_classes or (ignore_fits and t[i] == ignore):
            return None
        if typenum == cnp.NPY_FLOAT32:
            of[i * n_classes + t[i]] = sf
        else:
            od[i * n_classes + t[i]] = sd
    return out


# -- fused multiply-add --------------------------------------------------------------------------

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

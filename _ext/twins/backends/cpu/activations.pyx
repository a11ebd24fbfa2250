# cython: boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -ffp-contract=off
"""The compiled twin of ``minitorch_nn/backends/cpu/activations.py``: the activation kernels.

Function by function (each runs only while the switch ``backends.compiled`` is on and what it
mirrors is unchanged):

* ``relu`` (``np.maximum(x, 0)`` in the tensor's dtype): ``x.relu()`` and ``nn.functional.relu(x)``
  do the kernel's work themselves for small plain tensors, behind the op's guard (see
  ``_ext/twins/_gate.pyx``); so do ``nn.functional.silu(x)`` (``silu``: ``x * _sigmoid(x)``, the
  kernel's own ``_sigmoid``) and ``nn.functional.leaky_relu(x[, slope])`` (``leaky_relu``);
* ``leaky_relu_values(x, slope)`` is the one-pass loop of ``_leaky_relu_values``' numpy formula
  (the same IEEE operations, so the same bits), used for contiguous float arrays;
* ``gelu_values(x, approximate)`` mirrors ``_gelu_values`` (the values of ``aten.gelu``) and
  ``gelu_backward_values(grad, x, approximate)`` mirrors ``_gelu_backward_values`` (the values of
  ``aten.gelu_backward``, what ``GeluBackward0`` computes); ``activations.py`` binds them in the
  originals' place with ``compiled.bind``;
* ``tanh_backward``, ``sigmoid_backward`` and ``threshold_backward`` mirror the cpu kernels of
  ``aten.tanh_backward``, ``aten.sigmoid_backward`` and ``aten.threshold_backward`` (the last
  section), called by the backward formulas of ``autograd/derivatives.py`` through their guards.

Why compiled: per-op overhead on small tensors for relu, silu and leaky_relu (see the gate's
docstring); for GELU, memory traffic: the readable functions are numpy expressions, one pass over
memory per operation (5 for GELU, 11 for its backward, each with a temporary the size of the
tensor), and a transformer's feed-forward layer spends much of its step there. Here each element
is read once and written once.

relu on a row-major float32/float64 tensor replaces the kernel's ``np.maximum(x, 0)`` by one loop
(``_relu_loop``), the same bits: numpy's maximum gives ``x`` where ``x > 0``, ``x`` itself (payload,
sign and signalling bit kept) where ``x`` is NaN, and its second operand, +0.0, everywhere else
(``-0.0`` included, as the two zeros compare equal); the loop is ``0 if x <= 0 else x``, which is
that case for case, and compiles to a compare and a mask per vector (about 2x faster than numpy's
call at 256x256 and 512x512). The twin asks once whether the installed numpy's maximum gives the
loop's bits on every special value (``_relu_loop_ok``), and keeps calling numpy if not; the tests
compare the two on every size to 20000.

How it stays bit-equal: relu (other layouts and dtypes), silu and leaky_relu make the same numpy
calls on the same arrays with the same floating-point error state as the kernel, and with grad hand the result to the
compiled recorder with the full path's arguments; anything else (other dtypes, strided inputs,
``inplace=True``, subclasses, modes) takes the full path. The GELU functions make the same IEEE
operations in the same order as their originals, every one rounded to the array's dtype
(``float`` arithmetic for float32, ``double`` for float64; ``-ffp-contract=off`` keeps the compiler
from fusing a multiply and an add into one rounding), and call the same C-library functions the
originals reach through ``backends/cpu/libm.py``: ``erff``/``erf``, ``expf``/``exp``,
``tanhf``/``tanh``, with the originals' constants rounded to the dtype. They take float32 or
float64 numpy arrays (any layout) or numpy scalars and return a fresh row-major array (a numpy
scalar for 0-d input), or None for anything else, which the caller then hands to the readable
original. ``tests/twins/test_fast_path.py``, ``test_fast_path_more.py``, ``test_gelu_twin.py`` and
``test_relu_sum_loops.py`` compare the twins with their originals.
"""

cimport cython
cimport numpy as cnp
from libc.math cimport erf, erff, exp, expf, tanh, tanhf
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.tuple cimport PyTuple_GET_SIZE

import numpy as np

from minitorch_nn._C cimport (TensorBase, TensorImpl, _fresh_impl, _is_contiguous, _mark_view_of,
                              _mtnn_mul_overflow, _wrap_payload)
from minitorch_nn._twins._gate cimport (_Tensor, _cpu, _cpu_payload, _dim_index, _elementwise_input,
                                        _f32, _f64, _fp_ignore, _fp_var, _fresh_tensor, _full,
                                        _grad_enabled, _i64, _nothing_intercepts, _plain, _plain_cpu,
                                        _record_mode, _record_mode3, _recorded, _recorded_with, _records,
                                        _row_major, _scalar_operand, _size_arg, _twin_ok, _typenum,
                                        _unary_like)
from minitorch_nn._twins._gate cimport (_NONDIFFERENTIABLE, _Recipe, _record, _record_general,
                                        _recipe_for, _recipe_of, recorder_ready)  # the recorder slot

cnp.import_array()

ctypedef fused real:
    float
    double


cdef bint _loaded = False
cdef object _op_relu = None
cdef object _op_silu = None
cdef object _op_leaky_relu = None
cdef object _activations = None      # backends.cpu.activations (silu reads its ``_sigmoid``)
cdef object _np_maximum = np.maximum
cdef dict _ZEROS = {}                 # dtype -> 0-d zero of that dtype (relu's np.maximum(x, 0))


cdef bint _load() except -1:
    """Look up, once, the ops and the cpu module these twins read (False while the cpu backend
    is not loaded yet, or the gate not installed: the full path then runs)."""
    global _loaded, _op_relu, _op_silu, _op_leaky_relu, _activations
    import sys
    activations = sys.modules.get("minitorch_nn.backends.cpu.activations")
    if activations is None or _f32 is None:
        return False
    from minitorch_nn._ops import aten
    _op_relu, _op_silu, _op_leaky_relu = aten.relu.default, aten.silu.default, aten.leaky_relu.default
    for d in (_f32, _f64, _i64):
        _ZEROS[d] = np.zeros((), dtype=d.numpy_dtype)
    _activations = activations
    _loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- relu ---------------------------------------------------------------------------------------------

cdef void _relu_loop(const real* x, real* out, Py_ssize_t n) noexcept nogil:
    # np.maximum(x, 0) element by element: x where x > 0 or x is NaN (its own bits, payload and
    # sign kept, as numpy's maximum returns its NaN operand), else +0.0 (for -0.0 too: numpy's
    # maximum of two equal zeros gives its second operand, the +0.0). ``not (v <= 0)`` is exactly
    # "v > 0 or v is NaN", written so the compiler makes it one compare and one mask per vector.
    cdef Py_ssize_t i
    cdef real v
    for i in range(n):
        v = x[i]
        out[i] = 0 if v <= 0 else v


cdef object _relu_values(object x):
    """``np.maximum(x, 0)`` for a row-major float32/float64 array, by the loop above (a fresh
    row-major array of the same shape, the same bits); None for anything else (numpy then runs)."""
    if type(x) is not np.ndarray:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    if (typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64) or not cnp.PyArray_IS_C_CONTIGUOUS(a) \
            or not cnp.PyArray_ISNOTSWAPPED(a):
        return None
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    with nogil:
        if typenum == cnp.NPY_FLOAT32:
            _relu_loop(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), n)
        else:
            _relu_loop(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out), n)
    return out


cdef int _relu_agrees = -1    # whether this numpy's maximum gives the loop's bits (-1: not yet asked)


cdef bint _relu_loop_ok() except -1:
    """Whether ``np.maximum(x, 0)``, as installed, gives what ``_relu_loop`` gives on every special
    value (NaNs with payloads, signed zeros, infinities, subnormals) in both dtypes: asked once
    (another numpy release could pick the other zero, or quiet a NaN; the twin then keeps calling
    numpy)."""
    global _relu_agrees
    if _relu_agrees < 0:
        agrees = True
        for dtype, uint, nans in ((np.float32, np.uint32, [0x7FC00123, 0xFFC00456, 0x7F800001]),
                                  (np.float64, np.uint64, [0x7FF8000000000123, 0xFFF8000000000456,
                                                           0x7FF0000000000001])):
            info = np.finfo(dtype)
            x = np.concatenate([np.array([0.0, -0.0, np.inf, -np.inf, info.smallest_subnormal,
                                          -info.smallest_subnormal, info.max, -info.max, 1.5, -1.5], dtype),
                                np.array(nans, uint).view(dtype)])
            x = np.tile(x, 7)   # (long enough for numpy's vector loop, and its tail)
            mine = _relu_values(x)
            if mine is None or mine.tobytes() != _np_maximum(x, np.zeros((), dtype)).tobytes():
                agrees = False
        _relu_agrees = agrees
    return _relu_agrees


def relu_loop_in_use():
    """Whether ``x.relu()`` takes the loop (this numpy's maximum agrees: ``_relu_loop_ok``)."""
    return bool(_relu_loop_ok())


def relu_values(object x):
    """The relu loop on its own, for the tests: ``np.maximum(x, 0)`` or None (see ``_relu_values``)."""
    return _relu_values(x)


def tensor_relu(self, *args, **kwargs):
    """``self.relu()``: ``np.maximum(x, 0)`` in the tensor's dtype (NaN stays NaN), as the cpu kernel.

    No error state to switch: numpy's maximum loops clear the floating-point flags they raise on
    NaN, so it never warns (the tests compare both paths' warnings on NaN and infinities).
    """
    cdef TensorImpl a
    cdef int record
    cdef _Recipe recipe = None
    if not args and not kwargs:
        a = _plain(self)
        if a is not None and _may_run() and _twin_ok(_op_relu):
            record = _records(a, None)
            if record > 0:
                recipe = _recipe_for(_op_relu)
                if recipe is None:
                    record = -1
            if record >= 0:
                x = a.numpy_view()
                v = _relu_values(x) if _relu_loop_ok() else None
                r = _fresh_tensor(_np_maximum(x, _ZEROS[a.dtype]) if v is None else v, a.dtype)
                if r is not None:
                    return _recorded_with(_op_relu, recipe, (self,), r) if record else r
    return _full("Tensor.relu", (self,), args, kwargs)


def functional_relu(input, *args, **kwargs):
    """``nn.functional.relu(input)`` (``inplace`` False): both it and ``Tensor.relu`` are
    ``aten.relu.default(input)``, so while nothing could tell the two spellings apart (an exact
    ``Tensor``, nothing intercepting) this is ``Tensor.relu``'s compiled path (above, which
    records ``ReluBackward0`` with grad); otherwise F.relu's full path, with the arguments as given."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    cdef bint out_of_place = False
    if nargs == 0:
        out_of_place = not kwargs or (len(kwargs) == 1 and kwargs.get("inplace", True) is False)
    elif nargs == 1 and not kwargs:
        out_of_place = args[0] is False
    if out_of_place and type(input) is _Tensor and _nothing_intercepts():
        return tensor_relu(input)
    return _full("functional.relu", (input,), args, kwargs)


# -- silu and leaky_relu --------------------------------------------------------------------------------

def _silu_fn(x, sigmoid):
    # activations.silu: x * _sigmoid(x)
    return x * sigmoid(x)


def _leaky_relu_fn(x, slope):
    # the twin of activations._leaky_relu_values (its numpy formula): the loop below for contiguous
    # float32/float64 arrays (the same IEEE operations in one pass), the readable function otherwise
    r = leaky_relu_values(x, slope)
    return _activations._leaky_relu_values(x, slope) if r is None else r


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _leaky_relu_f32(const float* x, float* out, Py_ssize_t n, float slope) noexcept nogil:
    cdef Py_ssize_t i
    cdef float v
    for i in range(n):
        v = x[i]
        out[i] = v if v > 0 else v * slope


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _leaky_relu_f64(const double* x, double* out, Py_ssize_t n, double slope) noexcept nogil:
    cdef Py_ssize_t i
    cdef double v
    for i in range(n):
        v = x[i]
        out[i] = v if v > 0 else v * slope


def leaky_relu_values(object x, object slope):
    """``np.where(x > 0, x, x * np.asarray(slope, x.dtype))`` in one pass, for a C-contiguous
    float32/float64 array and a Python int/float slope whose conversion to the dtype is plainly
    exact or rounds as numpy's does (not NaN, not beyond the dtype's range): each element is
    ``x`` where ``x > 0``, else the product ``x * slope`` rounded to the dtype -- the same IEEE
    operations numpy's loops make, so the same bits (NaN stays NaN, with its payload). Returns a
    fresh array, or None for anything else (``activations._leaky_relu_values`` then runs numpy)."""
    if type(x) is not np.ndarray or (type(slope) is not float and type(slope) is not int) or _f32 is None:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    if (typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64) or not cnp.PyArray_IS_C_CONTIGUOUS(a):
        return None
    if slope != slope:
        return None   # (a NaN slope: which NaN a product gives is numpy's business)
    z = _scalar_operand(slope, _f32 if typenum == cnp.NPY_FLOAT32 else _f64)
    if z is None:
        return None   # (an int that does not convert exactly, a float beyond float32's range)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    if typenum == cnp.NPY_FLOAT32:
        _leaky_relu_f32(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), n,
                        (<float*>cnp.PyArray_DATA(<cnp.ndarray>z))[0])
    else:
        _leaky_relu_f64(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out), n,
                        (<double*>cnp.PyArray_DATA(<cnp.ndarray>z))[0])
    return out


cdef inline bint _not_inplace(tuple args, dict kwargs, Py_ssize_t at):
    """``inplace`` is absent or False (positional at index ``at`` of ``args``, or a keyword)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > at + 1:
        return False
    if nargs == at + 1:
        return args[at] is False and "inplace" not in kwargs
    return kwargs.get("inplace", False) is False


def functional_silu(input, *args, **kwargs):
    """``nn.functional.silu(input, inplace=False)``: the fast path, else F.silu's full path."""
    r = None
    cdef TensorImpl a
    if (not kwargs or (len(kwargs) == 1 and "inplace" in kwargs)) and _not_inplace(args, kwargs, 0) \
            and _fp_var is not None:
        a = _elementwise_input(input, False)
        if a is not None and _may_run():
            r = _unary_like(_op_silu, input, (input,), a, _silu_fn, _activations._sigmoid, True)
    return _full("functional.silu", (input,), args, kwargs) if r is None else r


def functional_leaky_relu(input, *args, **kwargs):
    """``nn.functional.leaky_relu(input, negative_slope=0.01, inplace=False)``: the fast path,
    else F.leaky_relu's full path (its call is ``leaky_relu(input, negative_slope)``)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    r = None
    cdef TensorImpl a
    slope = args[0] if nargs else kwargs.get("negative_slope", 0.01)
    known = len(kwargs) - ("inplace" in kwargs) - ("negative_slope" in kwargs and not nargs)
    if known == 0 and not (nargs and "negative_slope" in kwargs) and _not_inplace(args, kwargs, 1) \
            and (type(slope) is float or type(slope) is int) and _fp_var is not None:
        a = _elementwise_input(input, False)
        if a is not None and _scalar_operand(slope, a.dtype) is not None and _may_run():
            r = _unary_like(_op_leaky_relu, input, (input, slope), a, _leaky_relu_fn, slope, True)
    return _full("functional.leaky_relu", (input,), args, kwargs) if r is None else r


# -- GELU and its backward -------------------------------------------------------------------------

# The original's constants (PyTorch's, folded in double as C folds them), before rounding to the dtype
cdef double SQRT1_2 = 0.7071067811865476
cdef double PDF_SCALE = 1.1283791670955126 * 0.7071067811865476 * 0.5
cdef double TANH_BETA = 1.4142135623730951 * 1.1283791670955126 * 0.5
cdef double TANH_KAPPA = 0.044715

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


# Tensor's methods and the nn.functional functions from this file (``_tensor_methods.py`` and
# ``nn/functional.py`` install them)
METHODS = {"relu": tensor_relu}
FUNCTIONS = {}
FUNCTIONAL = {"relu": functional_relu, "silu": functional_silu, "leaky_relu": functional_leaky_relu}


# -- the backward kernels: tanh_backward, sigmoid_backward, threshold_backward -----------------------
#
# Twins of the cpu kernels of ``aten.tanh_backward``, ``aten.sigmoid_backward`` and
# ``aten.threshold_backward`` in ``backends/cpu/activations.py`` (what a backward pass through
# tanh, sigmoid and relu computes). ``autograd/derivatives.py`` calls them (through its formulas'
# guards) before the dispatcher, and they take only the case every backward pass meets on small
# tensors: two row-major cpu tensors of one shape and one dtype (float32, or float64 where the
# arithmetic cannot differ from numpy's), the gradient possibly one value expanded to that shape
# (what ``sum()``'s backward sends), computing exactly the values the numpy kernel computes,
# element by element, into a fresh row-major result. Anything else returns ``None``.
#
# Rounding: ``tanh_backward`` in float32 computes ``1 - y*y`` in double (the square is exact
# there) and rounds it to float once, then multiplies by the gradient in float, the numpy
# kernel's steps; only float32 is taken for it (in float64 a compiler allowed to fuse ``1 - y*y``
# would round differently). ``sigmoid_backward`` is ``(g * (1 - y)) * y`` in the tensor's dtype.
# ``threshold_backward`` with threshold 0 selects: +0.0 where ``x <= 0``, ``g`` (its bits)
# elsewhere (NaN in ``x`` keeps ``g``).

cdef object _backward_operands(object a, object b):
    """``(impl_a, impl_b, step_a)`` when both are exact ``Tensor`` objects on the cpu, of one
    shape and of dtype float32 or float64, with at least one element, ``b`` row-major and ``a``
    row-major (``step_a`` 1) or one value expanded to that shape (``step_a`` 0: the gradient
    ``sum()``'s backward sends); else None. (The numpy kernels give a row-major result for both.)"""
    cdef TensorImpl ia, ib
    cdef object s
    if _Tensor is None:
        return None   # the gate is not installed yet
    # exact Tensors only: no __torch_dispatch__ class acts on them (engine.nothing_observes)
    if type(a) is not _Tensor or type(b) is not _Tensor:
        return None
    ia = (<TensorBase>a)._impl
    ib = (<TensorBase>b)._impl
    if ia.dtype is not ib.dtype or (ia.dtype is not _f32 and ia.dtype is not _f64):
        return None
    if ia.device is not _cpu or ib.device is not _cpu:
        return None
    sizes = ia.sizes
    if not sizes or sizes != ib.sizes or not _row_major(sizes, ib.strides):
        return None
    if _row_major(sizes, ia.strides):
        return ia, ib, 1
    for s in ia.strides:
        if s != 0:
            return None
    return ia, ib, 0


cdef inline cnp.ndarray _empty_like(cnp.ndarray x):
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(x), 0)


def tanh_backward(grad_output, output):
    """``grad_output * (1 - output**2)`` for float32 operands, else None."""
    pair = _backward_operands(grad_output, output)
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
    return _fresh_tensor(out, ib.dtype)


def sigmoid_backward(grad_output, output):
    """``grad_output * (1 - output) * output`` for float32/float64 operands, else None."""
    pair = _backward_operands(grad_output, output)
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
    return _fresh_tensor(out, ib.dtype)


def threshold_backward(grad_output, self, threshold):
    """``where(self <= 0, 0, grad_output)`` for threshold 0 and float32/float64 operands, else None."""
    if threshold != 0 or type(threshold) is bool:
        return None
    pair = _backward_operands(grad_output, self)
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
    return _fresh_tensor(out, ib.dtype)


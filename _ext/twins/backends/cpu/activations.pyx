# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/activations.py``: the activation kernels.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``relu`` (``np.maximum(x, 0)`` in the tensor's dtype): ``x.relu()`` and ``nn.functional.relu(x)``;
* ``silu`` (``x * _sigmoid(x)``, the kernel's own ``_sigmoid``): ``nn.functional.silu(x)``;
* ``leaky_relu`` and its ``_leaky_relu_values``: ``nn.functional.leaky_relu(x[, slope])``;
  ``leaky_relu_values`` below is the one-pass loop of that numpy formula (the same IEEE
  operations, so the same bits), used for contiguous float arrays (the readable function otherwise).

Why compiled: per-op overhead on small tensors (see the gate's docstring). How it stays
bit-equal: the same numpy calls on the same arrays with the same floating-point error state as
the kernel; with grad the result goes to the compiled recorder with the full path's arguments.
Anything else (other dtypes, strided inputs, ``inplace=True``, subclasses, modes) takes the full
path. ``tests/twins/test_fast_path.py`` and ``test_fast_path_more.py`` compare both paths.
"""

cimport cython
cimport numpy as cnp
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
from minitorch_nn._twins.autograd.recording cimport (_NONDIFFERENTIABLE, _Recipe, _record,
                                                     _record_general, _recipe_for, _recipe_of,
                                                     recorder_ready)

cnp.import_array()

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
                r = _fresh_tensor(_np_maximum(a.numpy_view(), _ZEROS[a.dtype]), a.dtype)
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


# Tensor's methods and the nn.functional functions from this file (``_tensor_methods.py`` and
# ``nn/functional.py`` install them)
METHODS = {"relu": tensor_relu}
FUNCTIONS = {}
FUNCTIONAL = {"relu": functional_relu, "silu": functional_silu, "leaky_relu": functional_leaky_relu}

# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/factories.py``: the kernels that make new tensors.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``_to_copy`` (``astype`` with numpy's warnings off): ``x.to(dtype)`` / ``x.to(dtype=dtype)``,
  which ``Module.to(dtype)`` calls once per tensor (``x`` itself when the dtype is already it);
* ``cat`` (``np.concatenate`` of the numpy views when no cast is needed): ``minitorch_nn.cat``;
* ``stack`` (the same, each view given a dim of size 1 at ``dim``): ``minitorch_nn.stack``;
* ``clone`` (a fresh C-order copy): ``x.clone()``, ``minitorch_nn.clone``;
* ``empty``, ``zeros`` and ``ones`` (``np.zeros``/``np.ones`` of the size, wrapped as ``_from_array``
  wraps it): ``minitorch_nn.empty``, which every layer calls for each parameter it makes
  (``nn.Linear`` twice), ``minitorch_nn.zeros``, ``minitorch_nn.ones``, with what the public
  functions (``_functions/factories.py``) resolve first: the default dtype and device;
* ``zero_`` and ``fill_scalar_`` (``write_into`` of 0, or of the number cast as ``real_scalar``
  and ``compute_dtype`` give it): ``x.zero_()``, ``x.fill_(number)``, and so ``nn.init.zeros_``,
  ``ones_`` and ``constant_``, which norm layers call while they are built.

For a list or tuple of plain cpu tensors of one dtype (float32/float64/int64), row-major,
non-empty, whose sizes agree: without grad, the cpu kernel's computation wrapped as a fresh
tensor; with grad (``cat`` and ``stack`` have a ``Tensor[]`` input) that result handed to the
compiled recorder's ``_record_general`` with the arguments the full path gives the op, which
builds ``CatBackward0``/``StackBackward0`` as the full path does. Anything else (``out=``, empty
tensors, mixed dtypes, a bad dim, devices, ``copy=``, subclasses, modes) takes the full path,
which raises PyTorch's errors and shows handlers the call as it was made.
``empty``, ``zeros`` and ``ones`` take only sizes given as exact Python ints (``empty(2, 3)``,
``empty((2, 3))``, ``empty([2, 3])``, a ``Size``), non-negative, and the keywords ``dtype``
(float32/float64/int64), ``device`` (None or the cpu) and ``requires_grad=False``, while no default
device is set (a ``with device(...)`` block or ``set_default_device``); the rest takes the full path.
``zero_`` and ``fill_`` write only into a plain cpu ``Tensor``/``Parameter`` of float32/float64/int64
that is row-major, non-empty and not a view, not an inference tensor, and that autograd would not
record (it does not require grad, or grad mode is off); ``fill_`` only an exact Python number whose
conversion is plainly exact (``_scalar_operand``). They copy the value into the tensor's memory and
bump its version counter by one, as ``write_into`` does.
``tests/twins/test_fast_path.py``, ``test_fast_path_cat.py``, ``test_fast_path_stack.py``,
``test_fast_path_more.py`` and ``test_random_fill_twin.py`` (``empty``) compare both paths.
"""

cimport cython
cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_SIZE
from libc.string cimport memset

import numpy as np

from minitorch_nn._C cimport (TensorBase, TensorImpl, _fresh_impl, _is_contiguous, _mark_view_of,
                              _mtnn_mul_overflow, _wrap_payload)
from minitorch_nn._twins._gate cimport (_Tensor, _dtype_cls, _cpu, _cpu_payload, _dim_index, _elementwise_input,
                                        _f32, _f64, _fp_ignore, _fp_var, _fresh_tensor, _full,
                                        _grad_enabled, _i64, _nothing_intercepts, _plain, _plain_class, _plain_cpu,
                                        _record_mode, _record_mode3, _recorded, _recorded_with, _records,
                                        _row_major, _scalar_operand, _size_arg, _twin_ok, _typenum,
                                        _unary_like)
from minitorch_nn._twins._gate cimport (_NONDIFFERENTIABLE, _Recipe, _record, _record_general,
                                        _recipe_for, _recipe_of, recorder_ready)  # the recorder slot

cnp.import_array()

cdef bint _loaded = False
cdef object _op_to_copy = None
cdef object _op_cat = None
cdef object _op_stack = None
cdef object _op_clone = None
cdef object _np_concatenate = np.concatenate
cdef object _op_empty = None
cdef object _op_zeros = None
cdef object _op_ones = None
cdef object _op_zero_ = None
cdef object _op_fill_ = None          # aten.fill_.Scalar
cdef tuple _write_helpers = ()        # ((name, object), ...): what zero_/fill_ call by name
cdef bint _write_helpers_ok = False   # ... and their fingerprints matched the manifest
cdef dict _kernels_globals = None     # backends.cpu.factories' namespace
cdef dict _dtype_globals = None       # minitorch_nn._dtype's namespace: _default_dtype
cdef dict _device_globals = None      # minitorch_nn._device's namespace: the default device


cdef bint _load() except -1:
    """Look up, once, the ops (False while the cpu backend is not loaded yet: the full path runs)."""
    global _loaded, _op_to_copy, _op_cat, _op_stack, _op_clone, _op_empty, _op_zeros, _op_ones
    global _dtype_globals, _device_globals, _op_zero_, _op_fill_
    import sys
    if sys.modules.get("minitorch_nn.backends.cpu.factories") is None or not remember_originals():
        return False
    from minitorch_nn import _device, _dtype
    from minitorch_nn._ops import aten
    _op_to_copy, _op_cat = aten._to_copy.default, aten.cat.default
    _op_stack, _op_clone = aten.stack.default, aten.clone.default
    _op_empty, _op_zeros, _op_ones = aten.empty.memory_format, aten.zeros.default, aten.ones.default
    _op_zero_, _op_fill_ = aten.zero_.default, aten.fill_.Scalar
    _dtype_globals, _device_globals = vars(_dtype), vars(_device)
    _loaded = True
    return True


def remember_originals(aten=None):
    """Remember, once, the helpers ``zero_`` and ``fill_scalar_`` call by name from other files
    (``write_into``, ``real_scalar``, ``compute_dtype``) and check their fingerprints against the
    build's (``backends.compiled`` calls this with the other guard makers, at the end of
    ``import minitorch_nn``; the kernels' own fingerprints are their guards')."""
    global _write_helpers, _write_helpers_ok, _kernels_globals
    import sys
    if _kernels_globals is not None:
        return True
    kernels = sys.modules.get("minitorch_nn.backends.cpu.factories")
    if kernels is None:
        return False
    from minitorch_nn.backends import compiled
    names = ("write_into", "real_scalar", "compute_dtype")
    _write_helpers = tuple((name, getattr(kernels, name)) for name in names)
    _write_helpers_ok = compiled.check_original("aten.zero_/fill_ (write_into, real_scalar, compute_dtype)",
                                                *[fn for _, fn in _write_helpers])
    _kernels_globals = vars(kernels)
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- to(dtype) ----------------------------------------------------------------------------------------

def tensor_to(self, *args, **kwargs):
    """``self.to(dtype)`` / ``self.to(dtype=dtype)``: ``self`` itself when the dtype is already
    ``dtype``, else the full path's ``_to_copy``: ``astype`` with numpy's warnings off, as a fresh
    row-major tensor. Only for row-major, non-empty float32/float64/int64 operands and targets
    that autograd would not record; anything else (devices, copy=, memory formats) goes the full way.
    """
    cdef TensorImpl a
    cdef Py_ssize_t nargs = len(args)
    dtype = None
    if nargs == 1 and not kwargs:
        dtype = args[0]
    elif nargs == 0 and len(kwargs) == 1:
        dtype = kwargs.get("dtype")
    if dtype is not None and type(dtype) is _dtype_cls:
        a = _plain_cpu(self)
        if a is not None and _may_run() and _twin_ok(_op_to_copy):
            if dtype is a.dtype:
                return self
            if ((dtype is _f32 or dtype is _f64 or dtype is _i64) and
                    (a.dtype is _f32 or a.dtype is _f64 or a.dtype is _i64) and
                    not (a.requires_grad and _grad_enabled()) and _row_major(a.sizes, a.strides) and
                    _fp_var is not None):
                token = PyContextVar_Set(_fp_var, _fp_ignore)
                try:
                    r = a.numpy_view().astype(dtype.numpy_dtype)
                finally:
                    PyContextVar_Reset(_fp_var, token)
                return _wrap_payload(_Tensor, _fresh_impl(r, dtype, _cpu))
    return _full("Tensor.to", (self,), args, kwargs)


# -- cat ----------------------------------------------------------------------------------------------

cdef object _cat_fast(object tensors, object dim):
    """``aten.cat.default(list(tensors)[, dim])`` as the full path runs it; or None."""
    if type(tensors) is not list and type(tensors) is not tuple:
        return None
    cdef Py_ssize_t n = len(tensors), i, k, ndim, d
    if n == 0 or not _may_run():
        return None
    if not _twin_ok(_op_cat):
        return None
    cdef TensorImpl first = _elementwise_input(tensors[0], True), t
    if first is None:
        return None
    ndim = PyTuple_GET_SIZE(first.sizes)
    d = _dim_index(dim, ndim)
    if ndim == 0 or d < 0:
        return None
    cdef bint grad = first.requires_grad
    cdef list arrays = [first.numpy_view()]
    for i in range(1, n):
        t = _elementwise_input(tensors[i], True)
        if t is None or t.dtype is not first.dtype or PyTuple_GET_SIZE(t.sizes) != ndim:
            return None
        for k in range(ndim):
            if k != d and t.sizes[k] != first.sizes[k]:
                return None
        grad = grad or t.requires_grad
        arrays.append(t.numpy_view())
    out = _fresh_tensor(_np_concatenate(arrays, axis=d), first.dtype)
    if not grad or not _grad_enabled():
        return out
    if not recorder_ready():
        return None
    deriv = _op_cat.derivative
    if deriv is None or deriv is _NONDIFFERENTIABLE:
        return None
    cdef _Recipe r = _recipe_of(deriv)
    if not r.compiled or r.simple or r.inplace:
        return None     # (a student's derivative: the full path records what it records)
    args = (list(tensors),) if dim == 0 else (list(tensors), dim)   # (the full path's call)
    recorded = _record_general(_op_cat, r, args, {}, out)
    return out if recorded is NotImplemented else recorded


def function_cat(*args, **kwargs):
    """``minitorch_nn.cat(tensors, dim=0)``: the fast path, else the full path (called as it was)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    r = None
    if nargs == 1 and not kwargs:
        r = _cat_fast(args[0], 0)
    elif nargs == 2 and not kwargs:
        r = _cat_fast(args[0], args[1])
    elif nargs == 1 and len(kwargs) == 1 and "dim" in kwargs:
        r = _cat_fast(args[0], kwargs["dim"])
    return _full("cat", (), args, kwargs) if r is None else r


# -- stack --------------------------------------------------------------------------------------------

cdef object _stack_fast(object tensors, object dim):
    """``aten.stack.default(list(tensors)[, dim])`` as the full path runs it; or None."""
    if type(tensors) is not list and type(tensors) is not tuple:
        return None
    cdef Py_ssize_t n = len(tensors), i, d
    if n == 0 or not _may_run():
        return None
    if not _twin_ok(_op_stack):
        return None
    cdef TensorImpl first = _elementwise_input(tensors[0], True), t
    if first is None:
        return None
    d = _dim_index(dim, PyTuple_GET_SIZE(first.sizes) + 1)   # (a new dim: one more place than dims)
    if d < 0:
        return None
    cdef bint grad = first.requires_grad
    cdef tuple shape = first.sizes[:d] + (1,) + first.sizes[d:]   # each view, with the new dim
    cdef list arrays = [first.numpy_view().reshape(shape)]
    for i in range(1, n):
        t = _elementwise_input(tensors[i], True)
        if t is None or t.dtype is not first.dtype or t.sizes != first.sizes:
            return None
        grad = grad or t.requires_grad
        arrays.append(t.numpy_view().reshape(shape))
    out = _fresh_tensor(_np_concatenate(arrays, axis=d), first.dtype)
    if out is None:
        return None
    if not grad or not _grad_enabled():
        return out
    if not recorder_ready():
        return None
    deriv = _op_stack.derivative
    if deriv is None or deriv is _NONDIFFERENTIABLE:
        return None
    cdef _Recipe r = _recipe_of(deriv)
    if not r.compiled or r.simple or r.inplace:
        return None     # (a student's derivative: the full path records what it records)
    args = (list(tensors),) if dim == 0 else (list(tensors), dim)   # (the full path's call)
    recorded = _record_general(_op_stack, r, args, {}, out)
    return out if recorded is NotImplemented else recorded


def function_stack(*args, **kwargs):
    """``minitorch_nn.stack(tensors, dim=0)``: the fast path, else the full path (called as it was)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    r = None
    if nargs == 1 and not kwargs:
        r = _stack_fast(args[0], 0)
    elif nargs == 2 and not kwargs:
        r = _stack_fast(args[0], args[1])
    elif nargs == 1 and len(kwargs) == 1 and "dim" in kwargs:
        r = _stack_fast(args[0], kwargs["dim"])
    return _full("stack", (), args, kwargs) if r is None else r


# -- clone --------------------------------------------------------------------------------------------

def _clone_fn(x, unused):
    # clone's kernel on a row-major tensor: a fresh C-order copy (wrap_strided(..., copy=True))
    return x.copy()


cdef object _clone_fast(object self):
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None or not _may_run():
        return None
    return _unary_like(_op_clone, self, (self,), a, _clone_fn, None, False)


def tensor_clone(self, *args, **kwargs):
    """``self.clone()``: the fast path, else the full path (``memory_format=``...)."""
    r = None if args or kwargs else _clone_fast(self)
    return _full("Tensor.clone", (self,), args, kwargs) if r is None else r


def function_clone(input, *args, **kwargs):
    """``minitorch_nn.clone(input)``: the fast path, else the full path."""
    r = None if args or kwargs else _clone_fast(input)
    return _full("clone", (input,), args, kwargs) if r is None else r


# -- empty, zeros, ones ---------------------------------------------------------------------------------

cdef bint _cpu_by_default() except -1:
    """``get_default_device()`` is the cpu: no ``with device(...)`` block, no ``set_default_device``."""
    cdef PyObject* stack = PyDict_GetItem(_device_globals, "_DEFAULT_DEVICE_STACK")
    if stack == NULL or type(<object>stack) is not list or len(<list>stack) != 0:
        return False
    cdef PyObject* chosen = PyDict_GetItem(_device_globals, "_default_device")
    return chosen == NULL or <object>chosen is None or <object>chosen is _cpu


cdef enum _Fill:
    _EMPTY, _ZEROS, _ONES


cdef object _sized_fast(_Fill fill, tuple size, dict kwargs):
    """``empty``/``zeros``/``ones(*size, **kwargs)`` as the public function and the cpu kernel make
    it (``empty`` is zero-filled, as its kernel fills it); or None."""
    cdef PyObject* found
    dtype = None
    if kwargs:
        for key, value in kwargs.items():
            if key == "dtype":
                dtype = value
            elif key == "device":
                if value is not None and value is not _cpu:
                    return None
            elif key != "requires_grad" or value is not False:
                return None
    if PyTuple_GET_SIZE(size) == 0 or not _may_run() or not _cpu_by_default():
        return None
    if not _twin_ok(_op_empty if fill == _EMPTY else _op_zeros if fill == _ZEROS else _op_ones):
        return None
    if dtype is None:
        found = PyDict_GetItem(_dtype_globals, "_default_dtype")
        if found == NULL:
            return None
        dtype = <object>found
    if dtype is not _f32 and dtype is not _f64 and dtype is not _i64:
        return None
    cdef list sizes = _size_arg(size)
    if sizes is None or len(sizes) > 32:
        return None
    cdef cnp.npy_intp dims[32]
    cdef Py_ssize_t i, nbytes = 8, n = len(sizes)
    for i in range(n):
        s = sizes[i]
        if s < 0 or s > 1 << 62:
            return None     # (the full path raises PyTorch's error)
        dims[i] = s
        if _mtnn_mul_overflow(nbytes, dims[i], &nbytes):
            return None
    if nbytes > (<Py_ssize_t>1) << 32:
        return None     # (a large allocation: what it costs is not the call, and its errors are numpy's)
    arr = cnp.PyArray_ZEROS(<int>n, dims, _typenum(dtype), 0)
    if fill == _ONES:
        cnp.PyArray_FillWithScalar(arr, 1)
    return _wrap_payload(_Tensor, _fresh_impl(arr, dtype, _cpu))


def function_empty(*size, **kwargs):
    """``minitorch_nn.empty(*size, dtype=None, device=None, requires_grad=False)``: a zero-filled
    float32/float64/int64 cpu tensor, else the full path (called as it was)."""
    r = _sized_fast(_EMPTY, size, kwargs)
    return _full("empty", (), size, kwargs) if r is None else r


def function_zeros(*size, **kwargs):
    """``minitorch_nn.zeros(*size, dtype=None, device=None, requires_grad=False)``: the fast path,
    else the full path (called as it was)."""
    r = _sized_fast(_ZEROS, size, kwargs)
    return _full("zeros", (), size, kwargs) if r is None else r


def function_ones(*size, **kwargs):
    """``minitorch_nn.ones(*size, dtype=None, device=None, requires_grad=False)``: the fast path,
    else the full path (called as it was)."""
    r = _sized_fast(_ONES, size, kwargs)
    return _full("ones", (), size, kwargs) if r is None else r


# -- zero_, fill_ ----------------------------------------------------------------------------------------

cdef TensorImpl _write_target(object self):
    """``self``'s payload when ``zero_``/``fill_``'s twin may write it (see the module docstring)."""
    if not _plain_class(type(self)):
        return None
    cdef TensorImpl impl = (<TensorBase>self)._impl
    if impl is None or impl.storage is None or impl.base is not None or impl.version.inference:
        return None
    if impl.dtype is not _f32 and impl.dtype is not _f64 and impl.dtype is not _i64:
        return None
    if impl.device is not _cpu and impl.device.type != "cpu":
        return None
    if impl.requires_grad and _grad_enabled():
        return None     # (the autograd layer refuses a leaf, or records: the full path)
    if not _row_major(impl.sizes, impl.strides):
        return None
    if not _may_run() or not _write_helpers_ok:
        return None
    cdef tuple entry
    for entry in _write_helpers:
        if PyDict_GetItem(_kernels_globals, entry[0]) != <PyObject*>entry[1]:
            return None
    return impl


cdef object _write_value(object self, TensorImpl impl, object value):
    """``write_into(self, value)`` for a row-major target: ``value`` everywhere, one version bump."""
    target = impl.numpy_view()
    if type(target) is not np.ndarray or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>target):
        return None
    if value is None:
        memset(cnp.PyArray_DATA(<cnp.ndarray>target), 0, cnp.PyArray_NBYTES(<cnp.ndarray>target))
    elif cnp.PyArray_CopyInto(<cnp.ndarray>target, <cnp.ndarray>value) < 0:
        return None
    impl.version.value += 1
    return self


def tensor_zero_(self, *args, **kwargs):
    """``self.zero_()``: the fast path (see the module docstring), else the full path."""
    cdef TensorImpl impl
    r = None
    if not args and not kwargs:
        impl = _write_target(self)
        if impl is not None and _twin_ok(_op_zero_):
            r = _write_value(self, impl, None)
    return _full("Tensor.zero_", (self,), args, kwargs) if r is None else r


def tensor_fill_(self, *args, **kwargs):
    """``self.fill_(number)``: the fast path (see the module docstring), else the full path."""
    cdef TensorImpl impl
    r = None
    if PyTuple_GET_SIZE(args) == 1 and not kwargs:
        impl = _write_target(self)
        if impl is not None and _twin_ok(_op_fill_):
            value = _scalar_operand(args[0], impl.dtype)   # (the number as the kernel casts it)
            if value is not None:
                r = _write_value(self, impl, value)
    return _full("Tensor.fill_", (self,), args, kwargs) if r is None else r


# Tensor's methods and the public functions from this file (``_tensor_methods.py`` installs them)
METHODS = {"to": tensor_to, "clone": tensor_clone, "zero_": tensor_zero_, "fill_": tensor_fill_}
FUNCTIONS = {"cat": function_cat, "stack": function_stack, "clone": function_clone, "empty": function_empty,
             "zeros": function_zeros, "ones": function_ones}

# cython: boundscheck=False, wraparound=False
"""The compiled twin of the commonest backward formulas in ``minitorch_nn/autograd/derivatives.py``.

Read the formula first; each function here computes what it computes, from the same numpy calls on
the same arrays, without the dispatcher and the Python kernel around each op. Function by function:

================================  ===============================================================
``mm_mat1_backward``              ``_mm_mat1_backward``: ``mm(grad, t(mat2))`` (``mm`` and
                                  ``addmm``'s first matrix)
``mm_mat2_backward``              ``_mm_mat2_backward``: ``mm(t(mat1), grad)``, or
                                  ``t(mm(t(grad), mat1))`` for a column-major ``mat2``
``t_backward``                    ``_t_backward``: ``t(grad)`` (``TBackward0``)
``softmax_backward``              ``_softmax_grad`` / ``_log_softmax_grad``: the cpu kernels of
``log_softmax_backward``          ``_softmax_backward_data`` / ``_log_softmax_backward_data``
                                  (``backends/cpu/reduction.py``'s ``_softmax_backward_impl``)
``tanh_backward``,                ``_tanh_grad``, ``_sigmoid_grad``, ``_relu_grad``: the loops of
``sigmoid_backward``,             ``_twins.backends.cpu.activations`` (the compiled cpu kernels of ``tanh_backward``,
``threshold_backward``            ``sigmoid_backward``, ``threshold_backward``), reached with this
                                  module's guard check in C instead of the Python one
================================  ===============================================================

Why compiled: a formula of a backward pass on a small model is two or three ops, each of which
goes through ``OpOverload.__call__``, the dispatch chain and a Python kernel (shape checks,
``as_array``, ``wrap``) around one numpy call. On an MLP 784-16-10 step those layers, not the
products, were 41% of the time. Here each formula is one C function around the same numpy call(s).

When it may run (each function returns ``NotImplemented`` otherwise, and the readable formula runs
on, unchanged): the readable formula hands over on its first line only while the switch
``minitorch_nn.backends.compiled`` is on; then

* its guard holds: a :class:`~minitorch_nn.backends.compiled.Guard` made in derivatives.py for the
  formula, naming the ops whose kernels this file computes without calling them (``aten.mm``,
  ``aten.t``...) and the readable functions it mirrors (the formula itself, ``_tensor._make_view``).
  Its fingerprints are checked once (an edited formula or kernel turns the twin off, and says so);
  afterwards :func:`_guard_holds` compares, by identity, each op's registered cpu kernel, its
  derivative and the kernel's module attribute with those the guard remembered (a kernel a
  student registers, a module attribute they rebind, send that formula the readable way);
* grad mode is off (no ``create_graph``: the readable formula's ops would be recorded, so it runs);
* nothing could observe the ops (``engine.nothing_observes(exact_tensors=True)``, in C: no
  ``TorchFunctionMode``, no dispatch mode, the plain dispatcher, no forward-AD level);
* the operands are exact ``Tensor`` objects on the cpu, of one dtype, float32 or float64, of the
  shapes the kernels accept, not empty (the readable kernels raise PyTorch's errors for the rest).

Bit for bit: each result is the same numpy call on arrays of the same layout (``t`` of a tensor is
the transposed numpy view, as ``_make_view`` caches it), made into a tensor as ``wrap`` makes it
(``_C._wrap_array``, row-major strides), and a view as ``_make_view`` makes it (shared storage and
version counter, ``_C.mark_view``). numpy's floating-point warnings are off around the calls, as
the kernels turn them off. ``tests/twins/test_derivatives_twin.py`` compares gradients, strides,
views and graphs with the readable path.
"""

cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject

import numpy as np

cnp.import_array()

cdef bint _on = False                 # the switch (backends.compiled), kept here by set_enabled
cdef object _Tensor = None            # minitorch_nn.Tensor
cdef object _f32 = None
cdef object _f64 = None
cdef object _cpu = None
cdef object _wrap_array = None        # _C._wrap_array
cdef object _wrap = None              # _C._wrap
cdef object _TensorImpl = None        # _C.TensorImpl
cdef object _mark_view = None         # _C.mark_view
cdef dict _row_major = None           # _tensor._STRIDES_CACHE: sizes -> row-major strides
cdef object _contiguous_strides = None
cdef dict _gm_globals = None          # autograd.grad_mode.__dict__: _enabled
cdef dict _ops_globals = None         # _ops.__dict__: _dispatch_fn
cdef dict _dispatch_globals = None    # _dispatch.__dict__: python_layer, forward_ad_layer
cdef dict _python_dispatch_globals = None   # _dispatch.python_dispatch.__dict__: _modes
cdef object _plain_dispatch = None    # _dispatch.dispatch
cdef object _tf_state = None          # _C_torch_function.state: .modes
cdef object _grad_kernels = None      # minitorch_nn._twins.backends.cpu.activations (its backward kernels)
cdef object _fp_var = None            # numpy's floating-point error-state context variable
cdef object _fp_ignore = None         # ... and its "ignore everything" value

cdef object _np_matmul = np.matmul
cdef object _np_exp = np.exp
cdef object _np_add_reduce = np.add.reduce
cdef object _np_ascontiguousarray = np.ascontiguousarray


def setup(*, tensor_cls, float32, float64, cpu, wrap_array, wrap, tensor_impl_cls, mark_view, row_major,
          contiguous_strides, grad_mode_module, ops_module, dispatch_module, python_dispatch_module, tf_state,
          grad_kernels):
    """Take the objects the formulas need (derivatives.py calls this once, at import)."""
    global _Tensor, _f32, _f64, _cpu, _wrap_array, _wrap, _TensorImpl, _mark_view, _row_major
    global _contiguous_strides, _gm_globals, _ops_globals, _dispatch_globals, _python_dispatch_globals
    global _plain_dispatch, _tf_state, _grad_kernels, _fp_var, _fp_ignore
    _Tensor, _f32, _f64, _cpu = tensor_cls, float32, float64, cpu
    _wrap_array, _wrap, _TensorImpl, _mark_view = wrap_array, wrap, tensor_impl_cls, mark_view
    _row_major, _contiguous_strides = row_major, contiguous_strides
    _gm_globals, _ops_globals = vars(grad_mode_module), vars(ops_module)
    _dispatch_globals, _python_dispatch_globals = vars(dispatch_module), vars(python_dispatch_module)
    _plain_dispatch, _tf_state, _grad_kernels = dispatch_module.dispatch, tf_state, grad_kernels
    try:
        from numpy._core.umath import _extobj_contextvar, _make_extobj
        _fp_var, _fp_ignore = _extobj_contextvar, _make_extobj(all="ignore")
    except ImportError:  # another numpy: every formula takes the readable path
        _fp_var = _fp_ignore = None


def set_enabled(bint on):
    """The switch's listener (``backends.compiled.on_change``): a C copy of ``enabled``."""
    global _on
    _on = on


# -- when a formula may run here (see the module docstring) --------------------------------------

cdef bint _guard_holds(object guard) except -1:
    """``guard.holds()`` (backends/compiled.py's ``Guard``), its identity checks done in C once the
    guard has remembered its originals and passed its fingerprint check."""
    cdef object checks = guard._checks
    cdef tuple check
    cdef object kernels_of, attr
    if checks is None or not guard._ok:
        return guard.holds()   # the first time (remember, check fingerprints), or a twin turned off
    for check in checks:
        # (op, op._kernels, "cpu" or "any", the kernel, the derivative, (module dict, name) or None)
        kernels_of = check[1]
        if (<dict>kernels_of).get(check[2]) is not check[3] or check[0].derivative is not check[4]:
            return False
        if check[2] == "any" and "cpu" in kernels_of:
            return False
        attr = check[5]
        if attr is not None and (<dict>attr[0]).get(attr[1]) is not check[3]:
            return False
    return True


cdef inline bint _unset(dict namespace, str name):
    cdef PyObject* value = PyDict_GetItem(namespace, name)
    return value == NULL or <object>value is None


cdef bint _may_run(object guard) except -1:
    """The switch is on, grad mode is off, nothing observes the ops
    (``engine.nothing_observes(exact_tensors=True)``) and ``guard`` holds."""
    cdef PyObject* value
    if not _on or _gm_globals is None or _fp_var is None:
        return False
    value = PyDict_GetItem(_gm_globals, "_enabled")
    if value == NULL or <object>value:
        return False   # create_graph: the readable formula records its ops
    value = PyDict_GetItem(_ops_globals, "_dispatch_fn")
    if value == NULL or <object>value is not _plain_dispatch:
        return False
    if not _unset(_dispatch_globals, "forward_ad_layer"):
        return False
    if not _unset(_dispatch_globals, "python_layer"):
        value = PyDict_GetItem(_python_dispatch_globals, "_modes")
        if value == NULL or <object>value:
            return False   # a dispatch mode (a __torch_dispatch__ class never sees exact Tensors)
    if _tf_state.modes:
        return False
    return _guard_holds(guard)


cdef object _float_impl(object t, object dtype):
    """``t._impl`` when ``t`` is an exact Tensor on the cpu, not empty, of dtype ``dtype`` (or of
    float32/float64 when ``dtype`` is None); else None."""
    if type(t) is not _Tensor:
        return None
    impl = t._impl
    d = impl.dtype
    if dtype is None:
        if d is not _f32 and d is not _f64:
            return None
    elif d is not dtype:
        return None
    if impl.device is not _cpu or 0 in impl.sizes:
        return None
    return impl


cdef inline object _fresh(object arr, object dtype):
    """``backends/cpu/_numpy.wrap`` of a fresh C-contiguous result of the right dtype."""
    shape = arr.shape
    strides = _row_major.get(shape)
    if strides is None:
        strides = _contiguous_strides(shape)
    return _wrap_array(_Tensor, arr, dtype, _cpu, strides)


cdef object _transposed_view(object base):
    """``_tensor._make_view(base, sizes[::-1], strides[::-1], offset)`` of a 2-d ``base`` (what
    ``aten.t`` gives): the same storage, version counter and base, the numpy view cached as the
    base's, transposed."""
    b = base._impl
    sizes = b.sizes[::-1]
    strides = b.strides[::-1]
    impl = _TensorImpl(b.storage, sizes, strides, b.offset, b.dtype, b.device, b.version)
    _mark_view(impl, b)
    if b.array is not None:
        impl.array = b.array.T
    return _wrap(_Tensor, impl)


cdef object _matmul(object a, object b):
    """``backends/cpu/linalg._matmul``: ``np.matmul`` with numpy's floating-point warnings off."""
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        return _np_matmul(a, b)
    finally:
        PyContextVar_Reset(_fp_var, token)


# -- the formulas ---------------------------------------------------------------------------------

def mm_mat1_backward(grad, mat2, guard):
    """``_mm_mat1_backward``: ``mm(grad, t(mat2))``, or NotImplemented."""
    if not _may_run(guard):
        return NotImplemented
    gi = _float_impl(grad, None)
    if gi is None:
        return NotImplemented
    mi = _float_impl(mat2, gi.dtype)
    if mi is None or len(gi.sizes) != 2 or len(mi.sizes) != 2 or gi.sizes[1] != mi.sizes[1]:
        return NotImplemented
    return _fresh(_matmul(gi.numpy_view(), mi.numpy_view().T), gi.dtype)


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, guard):
    """``_mm_mat2_backward``: ``mm(t(mat1), grad)``, or ``t(mm(t(grad), mat1))`` when ``mat2`` was
    column-major with more than one column; or NotImplemented."""
    if not _may_run(guard):
        return NotImplemented
    gi = _float_impl(grad, None)
    if gi is None:
        return NotImplemented
    mi = _float_impl(mat1, gi.dtype)
    if mi is None or len(gi.sizes) != 2 or len(mi.sizes) != 2 or gi.sizes[0] != mi.sizes[0]:
        return NotImplemented
    if len(mat2_sizes) == 2 and mat2_strides[0] == 1 and mat2_strides[1] == mat2_sizes[0] and mat2_sizes[1] > 1:
        return _transposed_view(_fresh(_matmul(gi.numpy_view().T, mi.numpy_view()), gi.dtype))
    return _fresh(_matmul(mi.numpy_view().T, gi.numpy_view()), gi.dtype)


def t_backward(grad, guard):
    """``_t_backward``: ``t(grad)`` of a 2-d gradient, or NotImplemented."""
    if not _may_run(guard):
        return NotImplemented
    if type(grad) is not _Tensor:
        return NotImplemented
    gi = grad._impl
    if len(gi.sizes) != 2 or gi.device is not _cpu:
        return NotImplemented
    return _transposed_view(grad)


cdef object _softmax_backward(object grad, object dim, object result, bint log, object guard):
    """``reduction._softmax_backward_impl(grad, result, dim, log)`` for float operands of one
    shape and at least one dim, or NotImplemented."""
    cdef Py_ssize_t d, ndim
    if not _may_run(guard) or type(dim) is not int:
        return NotImplemented
    gi = _float_impl(grad, None)
    if gi is None:
        return NotImplemented
    yi = _float_impl(result, gi.dtype)
    if yi is None or gi.sizes != yi.sizes:
        return NotImplemented
    ndim = len(gi.sizes)
    d = dim
    if ndim == 0 or d < -ndim or d >= ndim:
        return NotImplemented
    if d < 0:
        d += ndim
    g = gi.numpy_view()
    y = yi.numpy_view()
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        if log:
            r = g - _np_exp(y) * _np_add_reduce(g, axis=d, keepdims=True)
        else:
            r = y * (g - _np_add_reduce(g * y, axis=d, keepdims=True))
    finally:
        PyContextVar_Reset(_fp_var, token)
    return _fresh(_np_ascontiguousarray(r), gi.dtype)


def softmax_backward(grad, dim, result, guard):
    """``_softmax_grad``: ``_softmax_backward_data(grad, result, dim, result.dtype)``, or NotImplemented."""
    return _softmax_backward(grad, dim, result, False, guard)


def log_softmax_backward(grad, dim, result, guard):
    """``_log_softmax_grad``: ``_log_softmax_backward_data(grad, result, dim, result.dtype)``, or
    NotImplemented."""
    return _softmax_backward(grad, dim, result, True, guard)


def tanh_backward(grad, result, guard):
    """``_tanh_grad``: the activations twin's ``tanh_backward``, or NotImplemented."""
    if not _may_run(guard) or _grad_kernels is None:
        return NotImplemented
    out = _grad_kernels.tanh_backward(grad, result)
    return NotImplemented if out is None else out


def sigmoid_backward(grad, result, guard):
    """``_sigmoid_grad``: the activations twin's ``sigmoid_backward``, or NotImplemented."""
    if not _may_run(guard) or _grad_kernels is None:
        return NotImplemented
    out = _grad_kernels.sigmoid_backward(grad, result)
    return NotImplemented if out is None else out


def threshold_backward(grad, result, guard):
    """``_relu_grad``: the activations twin's ``threshold_backward(grad, result, 0)``, or NotImplemented."""
    if not _may_run(guard) or _grad_kernels is None:
        return NotImplemented
    out = _grad_kernels.threshold_backward(grad, result, 0)
    return NotImplemented if out is None else out


cdef object _np_concatenate = np.concatenate


def split_backward(grads, dim, guard):
    """``_split_backward``: ``cat(grads, dim)`` of the gradients of a split's pieces (a list of
    exact float Tensors of one dtype and one number of dims, at least one), or NotImplemented."""
    cdef Py_ssize_t d, ndim, i, k
    if not _may_run(guard) or type(grads) is not list or not grads or type(dim) is not int:
        return NotImplemented
    first = _float_impl(grads[0], None)
    if first is None:
        return NotImplemented
    dtype = first.dtype
    ndim = len(first.sizes)
    d = dim
    if ndim == 0 or d < -ndim or d >= ndim:
        return NotImplemented
    if d < 0:
        d += ndim
    parts = []
    for g in grads:
        gi = _float_impl(g, dtype)
        if gi is None or len(gi.sizes) != ndim:
            return NotImplemented
        for k in range(ndim):   # (the readable kernel raises PyTorch's error for a mismatch)
            if k != d and gi.sizes[k] != first.sizes[k]:
                return NotImplemented
        parts.append(gi.numpy_view())
    return _fresh(_np_concatenate(parts, axis=d), dtype)


def may_run(guard):
    """Whether a formula twin guarded by ``guard`` may run now (the checks of the module docstring);
    for the twins of the other derivative files (``derivatives_nn.pyx``)."""
    return _may_run(guard)


def fresh(arr, dtype):
    """``backends/cpu/_numpy.wrap`` of a fresh C-contiguous numpy result of ``dtype``'s numpy dtype."""
    return _fresh(arr, dtype)

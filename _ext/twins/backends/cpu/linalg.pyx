# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/linalg.py``: the matrix-product kernels.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``mm``, ``mv`` (``np.matmul`` with warnings off) and ``dot`` (``np.dot``): ``x.matmul(y)``,
  ``x.mm(y)``, ``x @ y`` and ``minitorch_nn.matmul``/``mm`` for two float matrices of one dtype
  (any strides), a matrix and a vector, two vectors; and a row-major batch (3 or more dims) times
  a matrix or a vector, folded into one ``mm``/``mv`` through views as ``_functions/linalg.py``'s
  ``matmul`` folds it (``_should_fold``);
* ``bmm``: ``minitorch_nn.bmm(a, b)``, ``a.bmm(b)``;
* ``addmm`` with ``alpha == beta == 1`` and ``mm``, after ``aten.t.default(weight)``:
  ``nn.functional.linear(x, w[, b])`` for a matrix ``x``, recorded in the full path's order;
* ``addmm`` with ``alpha == beta == 1``: ``minitorch_nn.addmm(input, mat1, mat2)`` for float
  matrices (any strides) and an ``input`` that broadcasts into the product (the LSTM step's
  ``addmm(x_part, h, W_hh^T)``).

Why compiled: per-op overhead on small matrices (see the gate's docstring). How it stays
bit-equal: the same numpy call on the same arrays with the same floating-point error state; the
views it makes on the way are the views twin's (``_view_of``, ``_view_geometry``); with grad each
op goes to the compiled recorder in the full path's order. Vector @ matrix, batch @ batch,
``out=``, other dtypes, subclasses and modes take the full path. ``tests/twins/test_fast_path_ops.py``
and ``test_fast_path_more.py`` compare both paths.
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
from minitorch_nn._twins._gate cimport (_NONDIFFERENTIABLE, _Recipe, _record, _record_general,
                                        _recipe_for, _recipe_of, recorder_ready)  # the recorder slot

cnp.import_array()
from minitorch_nn._twins.backends.views cimport _view_geometry, _view_of

cdef bint _loaded = False
cdef object _op_mm = None
cdef object _op_mv = None
cdef object _op_dot = None
cdef object _op_bmm = None
cdef object _op_addmm = None
cdef object _op_t = None
cdef object _op_view = None
cdef object _op_unsafe_view = None
cdef object _np_matmul = np.matmul
cdef object _np_dot = np.dot


cdef bint _load() except -1:
    """Look up, once, the ops (False while the cpu backend is not loaded yet: the full path runs)."""
    global _loaded, _op_mm, _op_mv, _op_dot, _op_bmm, _op_addmm, _op_t, _op_view, _op_unsafe_view
    import sys
    if sys.modules.get("minitorch_nn.backends.cpu.linalg") is None:
        return False
    from minitorch_nn._ops import aten
    _op_mm, _op_mv, _op_dot = aten.mm.default, aten.mv.default, aten.dot.default
    _op_bmm, _op_addmm, _op_t = aten.bmm.default, aten.addmm.default, aten.t.default
    _op_view, _op_unsafe_view = aten.view.default, aten._unsafe_view.default
    _loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- matrix product -----------------------------------------------------------------------------------

cdef inline TensorImpl _linalg_operand(object t):
    """The payload of a plain cpu float32/float64 vector or matrix with no empty dim (any strides)."""
    cdef TensorImpl impl = _cpu_payload(t)
    if impl is None:
        return None
    dtype = impl.dtype
    if dtype is not _f32 and dtype is not _f64:
        return None
    sizes = impl.sizes
    cdef Py_ssize_t n = PyTuple_GET_SIZE(sizes)
    if n == 2:
        if <Py_ssize_t>sizes[0] == 0 or <Py_ssize_t>sizes[1] == 0:
            return None
    elif n != 1 or <Py_ssize_t>sizes[0] == 0:
        return None
    return impl


cdef object _mm(object self, object other, bint matrices_only=False):
    """``self @ other`` as ``matmul`` decomposes it and the cpu kernels compute it, recorded when
    needed; or None. Two matrices: ``aten.mm`` (``linalg.mm``: ``np.matmul`` with warnings off);
    unless ``matrices_only`` (``mm()``), a matrix and a vector: ``aten.mv`` (``np.matmul``, warnings
    off), two vectors: ``aten.dot`` (``np.dot``, whose kernel leaves numpy's warnings as they are).
    The results are fresh and row-major (``_fresh_tensor`` would copy numpy's otherwise)."""
    cdef TensorImpl a = _linalg_operand(self)
    if a is None:
        return None if matrices_only else _matmul_folded(self, other)
    if _fp_var is None:
        return None
    cdef TensorImpl b = _linalg_operand(other)
    if b is None or b.dtype is not a.dtype:
        return None
    cdef Py_ssize_t na = PyTuple_GET_SIZE(a.sizes), nb = PyTuple_GET_SIZE(b.sizes)
    if a.sizes[na - 1] != b.sizes[0] or (matrices_only and (na != 2 or nb != 2)):
        return None
    if (na == 1 and nb == 2) or not _may_run():   # (vector @ matrix: unsqueeze, mm, squeeze)
        return None
    op = (_op_mm if nb == 2 else _op_mv) if na == 2 else _op_dot
    cdef int record = _record_mode(op, a, b)
    if record < 0:
        return None
    if op is _op_dot:
        try:
            r = _np_dot(a.numpy_view(), b.numpy_view())
        except Exception:
            return None
    else:
        token = PyContextVar_Set(_fp_var, _fp_ignore)
        try:
            r = _np_matmul(a.numpy_view(), b.numpy_view())
        except Exception:
            return None
        finally:
            PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(op, (self, other), out) if record else out


cdef object _matmul_folded(object self, object other):
    """``self @ other`` for a row-major float batch ``self`` (3 or more dims) and a matrix or a
    vector ``other``, as ``linalg.matmul`` folds it (``_should_fold``: a row-major batch folds):
    ``self.reshape(rows, k)`` -- the view ``aten.view.default(self, [rows, k])`` -- then one
    ``aten.mm``/``aten.mv`` (``np.matmul``, warnings off), then
    ``aten._unsafe_view.default(product, batch + [m])``, sharing the product's storage but no view
    of it (``_base`` None, as ``views._unsafe_view`` leaves it); with grad the three
    are recorded in that order, as the full path records them. None when the full path must run."""
    cdef TensorImpl a = _elementwise_input(self, False)   # (row-major, non-empty float32/float64)
    if a is None or _fp_var is None:
        return None
    cdef Py_ssize_t na = PyTuple_GET_SIZE(a.sizes), i, rows = 1
    if na < 3:
        return None
    cdef TensorImpl b = _linalg_operand(other)
    if b is None or b.dtype is not a.dtype or a.sizes[na - 1] != b.sizes[0] or not _may_run():
        return None
    if not _twin_ok(_op_view) or not _twin_ok(_op_unsafe_view):
        return None
    cdef Py_ssize_t nb = PyTuple_GET_SIZE(b.sizes)
    op = _op_mm if nb == 2 else _op_mv
    cdef int record = _record_mode(op, a, b)
    if record < 0 or (record and (_record_mode(_op_view, a, b) < 0 or _record_mode(_op_unsafe_view, a, b) < 0)):
        return None
    cdef list batch = list(a.sizes[:na - 1])
    for i in range(na - 1):
        rows *= <Py_ssize_t>batch[i]
    cdef list fold_size = [rows, a.sizes[na - 1]]
    geometry = _view_geometry(a, fold_size)
    if geometry is None:
        return None
    folded = _view_of(a, geometry[0], geometry[1], a.offset)
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_matmul((<TensorBase>folded)._impl.numpy_view(), b.numpy_view())
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    product = _fresh_tensor(r, a.dtype)
    if product is None:
        return None
    cdef list out_size = batch + [b.sizes[1]] if nb == 2 else batch
    cdef TensorImpl p = (<TensorBase>product)._impl
    geometry = _view_geometry(p, out_size)
    if geometry is None:
        return None
    out = _view_of(p, geometry[0], geometry[1], p.offset)
    (<TensorBase>out)._impl.base = None   # (_unsafe_view's result is no view for autograd)
    if record:   # (in the full path's order: each node's edges need the one before)
        folded = _recorded(_op_view, (self, fold_size), folded)
        product = _recorded(op, (folded, other), product)
        out = _recorded(_op_unsafe_view, (product, out_size), out)
    return out


def tensor_matmul(self, other, *args, **kwargs):
    """``self.matmul(other)``: the fast path for matrices and vectors, else the full path."""
    if not args and not kwargs:
        r = _mm(self, other)
        if r is not None:
            return r
    return _full("Tensor.matmul", (self, other), args, kwargs)


def tensor_mm(self, mat2, *args, **kwargs):
    """``self.mm(mat2)``: the fast path, else the full path."""
    if not args and not kwargs:
        r = _mm(self, mat2, True)
        if r is not None:
            return r
    return _full("Tensor.mm", (self, mat2), args, kwargs)


def tensor_matmul_op(self, other):
    """``self @ other``: the fast path for matrices and vectors, else the full path."""
    r = _mm(self, other)
    return _full("Tensor.__matmul__", (self, other), (), {}) if r is None else r


def function_matmul(input, other, *args, **kwargs):
    r = None if args or kwargs else _mm(input, other)
    return _full("matmul", (input, other), args, kwargs) if r is None else r


def function_mm(input, mat2, *args, **kwargs):
    r = None if args or kwargs else _mm(input, mat2, True)
    return _full("mm", (input, mat2), args, kwargs) if r is None else r


# -- bmm ------------------------------------------------------------------------------------------------

cdef object _bmm_fast(object self, object mat2):
    """``linalg.bmm`` for two non-empty float batches of matrices of one dtype (any strides):
    ``np.matmul`` with warnings off, a fresh row-major result."""
    cdef TensorImpl a = _cpu_payload(self), b = _cpu_payload(mat2)
    if a is None or b is None or _fp_var is None:
        return None
    dtype = a.dtype
    if (dtype is not _f32 and dtype is not _f64) or b.dtype is not dtype:
        return None
    if PyTuple_GET_SIZE(a.sizes) != 3 or PyTuple_GET_SIZE(b.sizes) != 3 or 0 in a.sizes or 0 in b.sizes:
        return None
    if a.sizes[0] != b.sizes[0] or a.sizes[2] != b.sizes[1] or not _may_run():
        return None
    cdef int record = _record_mode(_op_bmm, a, b)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_matmul(a.numpy_view(), b.numpy_view())
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    return _recorded(_op_bmm, (self, mat2), out) if record else out


def function_bmm(input, mat2, *args, **kwargs):
    """``minitorch_nn.bmm(input, mat2)``: the fast path, else the full path (``out=``...)."""
    r = None if args or kwargs else _bmm_fast(input, mat2)
    return _full("bmm", (input, mat2), args, kwargs) if r is None else r


def tensor_bmm(self, mat2, *args, **kwargs):
    """``self.bmm(mat2)``: the fast path, else the full path."""
    r = None if args or kwargs else _bmm_fast(self, mat2)
    return _full("Tensor.bmm", (self, mat2), args, kwargs) if r is None else r


# -- F.linear -----------------------------------------------------------------------------------------

cdef inline TensorImpl _matrix(object t, object dtype):
    """The payload of a plain cpu float matrix (of ``dtype`` when given) with no empty dim."""
    cdef TensorImpl impl = _linalg_operand(t)
    if impl is None or PyTuple_GET_SIZE(impl.sizes) != 2:
        return None
    if dtype is not None and impl.dtype is not dtype:
        return None
    return impl


cdef object _linear_fast(object input, object weight, object bias):
    """``functional.linear`` for a matrix ``input``: ``aten.t.default(weight)`` (a view), then
    ``linalg.mm`` (``np.matmul``, warnings off) or, with a bias, ``linalg.addmm``'s
    ``alpha == beta == 1`` case (the same product, then the bias added into it in place),
    recorded in the full path's order; None for the rest."""
    cdef TensorImpl x = _matrix(input, None)
    if x is None or _fp_var is None:
        return None
    dtype = x.dtype
    cdef TensorImpl w = _matrix(weight, dtype)
    if w is None or x.sizes[1] != w.sizes[1]:
        return None
    cdef TensorImpl b = None
    cdef Py_ssize_t nb
    if bias is not None:
        b = _cpu_payload(bias)
        if b is None or b.dtype is not dtype:
            return None
        nb = PyTuple_GET_SIZE(b.sizes)   # (it must broadcast into the product without growing it)
        if nb == 0 or nb > 2 or 0 in b.sizes:
            return None
        if b.sizes[nb - 1] != 1 and b.sizes[nb - 1] != w.sizes[0]:
            return None
        if nb == 2 and b.sizes[0] != 1 and b.sizes[0] != x.sizes[0]:
            return None
    if not _may_run() or not _twin_ok(_op_t):
        return None
    op = _op_mm if b is None else _op_addmm
    cdef int record_t = _record_mode(_op_t, w, None)
    cdef int record = _record_mode3(op, x, w, b)
    if record_t < 0 or record < 0:
        return None
    wt = _view_of(w, (w.sizes[1], w.sizes[0]), (w.strides[1], w.strides[0]), w.offset)
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_matmul(x.numpy_view(), (<TensorBase>wt)._impl.numpy_view())
        if b is not None:
            r += b.numpy_view()   # (addmm: ``prod += bias`` into the fresh product)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    if record_t:
        wt = _recorded(_op_t, (weight,), wt)
    if record:
        return _recorded(op, (input, wt), out) if b is None else _recorded(op, (bias, input, wt), out)
    return out


def functional_linear(input, weight, *args, **kwargs):
    """``nn.functional.linear(input, weight, bias=None)``: the fast path, else F.linear's full path."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    bias = None
    r = None
    if nargs <= 1 and (not kwargs or (nargs == 0 and len(kwargs) == 1 and "bias" in kwargs)):
        bias = args[0] if nargs else kwargs.get("bias")
        r = _linear_fast(input, weight, bias)
    return _full("functional.linear", (input, weight), args, kwargs) if r is None else r


# -- addmm -------------------------------------------------------------------------------------------

cdef object _addmm_fast(object input, object mat1, object mat2):
    """``minitorch_nn.addmm(input, mat1, mat2)`` (``beta == alpha == 1``): ``linalg.addmm``'s case
    for float matrices of one dtype (any strides) and an ``input`` that broadcasts into the product
    without growing it -- the product (``linalg.mm``: ``np.matmul``, warnings off), then ``input``
    added into it in place; recorded as ``aten.addmm.default(input, mat1, mat2)``; None for the rest."""
    cdef TensorImpl x = _matrix(mat1, None)
    if x is None or _fp_var is None:
        return None
    dtype = x.dtype
    cdef TensorImpl w = _matrix(mat2, dtype)
    if w is None or x.sizes[1] != w.sizes[0]:
        return None
    cdef TensorImpl b = _cpu_payload(input)
    if b is None or b.dtype is not dtype:
        return None
    cdef Py_ssize_t nb = PyTuple_GET_SIZE(b.sizes)   # (it must broadcast into the product without growing it)
    if nb == 0 or nb > 2 or 0 in b.sizes:
        return None
    if b.sizes[nb - 1] != 1 and b.sizes[nb - 1] != w.sizes[1]:
        return None
    if nb == 2 and b.sizes[0] != 1 and b.sizes[0] != x.sizes[0]:
        return None
    if not _may_run():
        return None
    cdef int record = _record_mode3(_op_addmm, b, x, w)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_matmul(x.numpy_view(), w.numpy_view())
        r += b.numpy_view()
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    return _recorded(_op_addmm, (input, mat1, mat2), out) if record else out


def function_addmm(input, mat1, mat2, *args, **kwargs):
    """``minitorch_nn.addmm(input, mat1, mat2)``: the fast path, else the full path (any keyword,
    ``beta``/``alpha``/``out`` included, takes the full path)."""
    r = None if args or kwargs else _addmm_fast(input, mat1, mat2)
    return _full("addmm", (input, mat1, mat2), args, kwargs) if r is None else r


# Tensor's methods, the public functions and the nn.functional functions from this file
# (``_tensor_methods.py`` and ``nn/functional.py`` install them)
METHODS = {"matmul": tensor_matmul, "mm": tensor_mm, "bmm": tensor_bmm}
FUNCTIONS = {"matmul": function_matmul, "mm": function_mm, "bmm": function_bmm, "addmm": function_addmm}
FUNCTIONAL = {"linear": functional_linear}

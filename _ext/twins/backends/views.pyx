# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/views.py``: the view kernels.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):
``t``, ``transpose``, ``unsqueeze``, ``squeeze``/``squeeze_dim``, ``permute``, ``expand``,
``view`` (with ``compute_view_strides``, ported below), ``detach``, ``split`` (as ``x.chunk``)
and ``unbind``; for the methods ``x.t()``..., ``x.view(*shape)``, ``x.reshape(*shape)`` and
``x.flatten(...)`` when they are views, and the public functions ``minitorch_nn.t``,
``transpose``, ``unsqueeze``, ``squeeze``, ``permute``, ``reshape``, ``flatten``, ``chunk``, ``unbind``.

A view is metadata only: the payload ``backends/views.py`` builds through ``_tensor._make_view``
-- the input's storage, dtype, device and version counter, new sizes/strides/offset, ``_base``
the input's base or the input -- built here in C (``_view_of``), for any layout and dtype on the
cpu. With grad, ``record_computed`` adds the node (``TBackward0``, ``ViewBackward0``...) and the
view bookkeeping (``view_version``, ``creation_meta``: ``_C._mark_view_of``) as the full path's
autograd layer does. ``detach`` builds ``views.detach``'s payload (same storage and counter, no
grad_fn, no base).

Why compiled: per-op overhead (``state_dict()`` calls ``detach`` once per tensor; a model's
forward pass is full of views). How it stays equal: the same geometry rule as the kernel, and
the same payload fields. The marked solution blocks below are the course's views tasks: in a
student copy they are replaced by ``return None``, so the twin declines and the student's
``transpose``/``compute_view_strides`` runs. ``tests/twins/test_fast_path_ops.py`` and
``test_fast_path_more.py`` compare both paths. ``minitorch_nn/_twins/backends/views.pxd``
declares ``_view_of``/``_view_geometry``/``_view`` for the other twins (matmul, F.linear, indexing).
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

from minitorch_nn._C import Size

cnp.import_array()

cdef bint _loaded = False
cdef object _op_t = None
cdef object _op_transpose = None
cdef object _op_unsqueeze = None
cdef object _op_squeeze = None
cdef object _op_squeeze_dim = None
cdef object _op_view = None
cdef object _op_permute = None
cdef object _op_expand = None
cdef object _op_detach = None
cdef object _op_split = None      # aten.split.Tensor
cdef object _op_unbind = None     # aten.unbind.int


cdef bint _load() except -1:
    """Look up, once, the ops (False while the view kernels are not loaded yet, during
    ``import minitorch_nn``: the full path then runs)."""
    global _loaded, _op_t, _op_transpose, _op_unsqueeze, _op_squeeze, _op_squeeze_dim, _op_view
    global _op_permute, _op_expand, _op_detach, _op_split, _op_unbind
    import sys
    if sys.modules.get("minitorch_nn.backends.views") is None:
        return False
    from minitorch_nn._ops import aten
    _op_t, _op_transpose = aten.t.default, aten.transpose.int
    _op_unsqueeze, _op_squeeze, _op_squeeze_dim = aten.unsqueeze.default, aten.squeeze.default, aten.squeeze.dim
    _op_view, _op_permute, _op_expand = aten.view.default, aten.permute.default, aten.expand.default
    _op_detach, _op_split, _op_unbind = aten.detach.default, aten.split.Tensor, aten.unbind.int
    _loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- views --------------------------------------------------------------------------------------------

cdef object _view_of(TensorImpl b, tuple sizes, tuple strides, Py_ssize_t offset):
    """``_tensor._make_view``'s payload: ``b``'s storage, dtype, device and version counter through
    new sizes/strides/offset, remembering the base (``b``'s own base when ``b`` is a view)."""
    cdef TensorImpl impl = TensorImpl.__new__(TensorImpl)
    impl.storage = b.storage
    impl.sizes = sizes
    impl.strides = strides
    impl.offset = offset
    impl.dtype = b.dtype
    impl.device = b.device
    impl.version = b.version
    _mark_view_of(impl, b)   # base, view_version, creation_meta
    return _wrap_payload(_Tensor, impl)


cdef object _finish_view(object op, tuple args, TensorImpl a, tuple sizes, tuple strides):
    """The view of ``a`` with these sizes/strides, recorded when needed; None to decline."""
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    out = _view_of(a, sizes, strides, a.offset)
    return _recorded(op, args, out) if record else out


cdef object _t_fast(object self, tuple args):
    """``views.t`` (a transpose of a matrix, an alias below 2 dims) as ``aten.t.default(self)``; or None."""
    if args:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run() or not _twin_ok(_op_t):
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes)
    if n == 2:
        # a 2-d ``t`` is ``transpose(0, 1)``: the course's views-transpose task
        # BEGIN SOLUTION views-transpose
        return _finish_view(_op_t, (self,), a, (a.sizes[1], a.sizes[0]), (a.strides[1], a.strides[0]))
        # STARTER
        # return None   # in a student copy this twin declines: the student's transpose runs
        # END SOLUTION
    if n < 2:
        return _finish_view(_op_t, (self,), a, a.sizes, a.strides)
    return None


cdef object _transpose_fast(object self, tuple args):
    """``views.transpose`` as ``aten.transpose.int(self, dim0, dim1)`` for ``args == (dim0, dim1)``; or None."""
    if PyTuple_GET_SIZE(args) != 2:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run() or not _twin_ok(_op_transpose):
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes)
    # The geometry: ``transpose`` of backends/views.py, the course's views-transpose task.
    # BEGIN SOLUTION views-transpose
    cdef Py_ssize_t d0 = _dim_index(args[0], n), d1 = _dim_index(args[1], n)
    if d0 < 0 or d1 < 0:
        return None
    cdef list sizes = list(a.sizes), strides = list(a.strides)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _finish_view(_op_transpose, (self, args[0], args[1]), a, tuple(sizes), tuple(strides))
    # STARTER
    # return None   # in a student copy this twin declines: the student's transpose runs
    # END SOLUTION


cdef object _unsqueeze_fast(object self, tuple args):
    """``views.unsqueeze`` as ``aten.unsqueeze.default(self, dim)`` for ``args == (dim,)``; or None."""
    if PyTuple_GET_SIZE(args) != 1:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run():
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes)
    cdef Py_ssize_t d = _dim_index(args[0], n + 1)
    if d < 0:
        return None
    cdef list sizes = list(a.sizes), strides = list(a.strides)
    new_stride = 1 if d >= n else sizes[d] * strides[d]
    sizes.insert(d, 1)
    strides.insert(d, new_stride)
    return _finish_view(_op_unsqueeze, (self, args[0]), a, tuple(sizes), tuple(strides))


cdef object _squeeze_fast(object self, tuple args):
    """``views.squeeze`` (``args == ()``) or ``views.squeeze_dim`` (``args == (dim,)``, an int) as
    ``aten.squeeze.default``/``aten.squeeze.dim``; or None."""
    if PyTuple_GET_SIZE(args) > 1:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run():
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), i, d = -1
    if args:
        d = _dim_index(args[0], n if n > 0 else 1)   # (wrap_dim: a 0-d tensor takes 0 and -1)
        if d < 0:
            return None
    cdef list sizes = [], strides = []
    for i in range(n):
        if a.sizes[i] == 1 and (not args or i == d):
            continue
        sizes.append(a.sizes[i])
        strides.append(a.strides[i])
    if args:
        return _finish_view(_op_squeeze_dim, (self, args[0]), a, tuple(sizes), tuple(strides))
    return _finish_view(_op_squeeze, (self,), a, tuple(sizes), tuple(strides))


def tensor_t(self, *args, **kwargs):
    """``self.t()``: the fast path, else the full path."""
    r = None if kwargs else _t_fast(self, args)
    return _full("Tensor.t", (self,), args, kwargs) if r is None else r


def tensor_transpose(self, *args, **kwargs):
    """``self.transpose(dim0, dim1)``: the fast path, else the full path."""
    r = None if kwargs else _transpose_fast(self, args)
    return _full("Tensor.transpose", (self,), args, kwargs) if r is None else r


def tensor_unsqueeze(self, *args, **kwargs):
    """``self.unsqueeze(dim)``: the fast path, else the full path."""
    r = None if kwargs else _unsqueeze_fast(self, args)
    return _full("Tensor.unsqueeze", (self,), args, kwargs) if r is None else r


def tensor_squeeze(self, *args, **kwargs):
    """``self.squeeze()`` / ``self.squeeze(dim)``: the fast path, else the full path."""
    r = None if kwargs else _squeeze_fast(self, args)
    return _full("Tensor.squeeze", (self,), args, kwargs) if r is None else r


cdef object _permute_fast(object self, list dims):
    """``views.permute`` as ``aten.permute.default(self, dims)`` for a list of exact ints (as given:
    the kernel wraps them); or None (a wrong count, a bad or repeated dim: the full path raises)."""
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run():
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), i, d
    if len(dims) != n:
        return None
    cdef list sizes = [], strides = [], taken = [False] * n
    for i in range(n):
        d = _dim_index(dims[i], n)
        if d < 0 or taken[d]:
            return None
        taken[d] = True
        sizes.append(a.sizes[d])
        strides.append(a.strides[d])
    return _finish_view(_op_permute, (self, dims), a, tuple(sizes), tuple(strides))


cdef object _expand_fast(object self, list size):
    """``views.expand`` as ``aten.expand.default(self, size)`` for a list of exact ints: from the
    last dim, a size of -1 or the current one keeps the dim, a dim of size 1 is broadcast (stride
    0), new leading dims have stride 0; or None where the kernel raises (or a size below -1)."""
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run():
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), m = len(size), lead = m - n, i, j, target, cur
    if m < n:
        return None
    cdef list sizes = [0] * m, strides = [0] * m
    for i in range(m - 1, -1, -1):
        try:
            target = size[i]
        except OverflowError:
            return None
        if target < -1:
            return None
        j = i - lead
        if j < 0:
            if target < 0:
                return None
            sizes[i] = size[i]
            continue
        cur = a.sizes[j]
        if target == -1 or target == cur:
            sizes[i], strides[i] = a.sizes[j], a.strides[j]
        elif cur == 1:
            sizes[i] = size[i]
        else:
            return None
    return _finish_view(_op_expand, (self, size), a, tuple(sizes), tuple(strides))


# (keywords and no argument at all take the full path, which parses them as PyTorch does)

def tensor_permute(self, *dims, **kwargs):
    """``self.permute(*dims)``: the fast path, else the full path."""
    cdef list d = None if kwargs or not dims else _size_arg(dims)
    r = None if d is None else _permute_fast(self, d)
    return _full("Tensor.permute", (self,), dims, kwargs) if r is None else r


def tensor_expand(self, *sizes, **kwargs):
    """``self.expand(*sizes)``: the fast path, else the full path."""
    cdef list s = None if kwargs or not sizes else _size_arg(sizes)
    r = None if s is None else _expand_fast(self, s)
    return _full("Tensor.expand", (self,), sizes, kwargs) if r is None else r


cdef tuple _view_geometry(TensorImpl a, list size):
    """(sizes, strides) of ``views.view(a, size)``: ``infer_size`` then ``compute_view_strides``
    (PyTorch's ``computeStride``, chunk by chunk); None when the full path must decide (an error,
    or an empty tensor, whose rules differ)."""
    cdef tuple old_sizes = a.sizes, old_strides = a.strides
    cdef Py_ssize_t numel = 1, known = 1, infer_at = -1, i, s, n_old = PyTuple_GET_SIZE(old_sizes)
    cdef Py_ssize_t n_new = len(size)
    for s in old_sizes:
        numel *= s
    if numel == 0:
        return None
    cdef list new_sizes = []
    for i in range(n_new):
        try:
            s = size[i]
        except OverflowError:
            return None
        if s == -1:
            if infer_at >= 0:
                return None
            infer_at = i
        elif s < 0:
            return None
        else:
            known *= s
        new_sizes.append(size[i])
    if infer_at >= 0:
        if known == 0 or numel % known != 0:
            return None
        new_sizes[infer_at] = numel // known
    elif known != numel:
        return None
    # The strides: ``compute_view_strides`` of backends/views.py, the course's views-strides task.
    # BEGIN SOLUTION views-strides
    cdef list new_strides = [0] * n_new
    if n_old == 0:   # a 0-d tensor views as any shape of ones
        return tuple(new_sizes), tuple([1] * n_new)
    cdef Py_ssize_t view_d = n_new - 1, tensor_d, tensor_numel = 1, view_numel = 1
    cdef Py_ssize_t chunk_base_stride = old_strides[n_old - 1]
    for tensor_d in range(n_old - 1, -1, -1):
        tensor_numel *= <Py_ssize_t>old_sizes[tensor_d]
        # a chunk ends where the next-outer dim is not laid out right after this one
        if tensor_d == 0 or (<Py_ssize_t>old_sizes[tensor_d - 1] != 1 and
                             <Py_ssize_t>old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or <Py_ssize_t>new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= <Py_ssize_t>new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_sizes), tuple(new_strides)
    # STARTER
    # return None   # in a student copy this twin declines: the student's compute_view_strides runs
    # END SOLUTION


cdef object _view(object self, tuple shape):
    """``aten.view.default(self, list(normalize_size(shape)))`` when it is a plain view; or None."""
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _may_run() or not _twin_ok(_op_view):
        return None
    cdef list size = _size_arg(shape)
    if size is None:
        return None
    geometry = _view_geometry(a, size)
    if geometry is None:
        return None
    return _finish_view(_op_view, (self, size), a, geometry[0], geometry[1])


def tensor_view(self, *shape, **kwargs):
    """``self.view(*shape)``: the same view as ``views.view``, else the full path (dtype views, errors)."""
    r = None if kwargs or not shape else _view(self, shape)
    return _full("Tensor.view", (self,), shape, kwargs) if r is None else r


def tensor_reshape(self, *shape, **kwargs):
    """``self.reshape(*shape)``: when the new shape is a view of ``self``, the full path's
    ``aten.view.default(self, shape)``; otherwise (a copy, or ``_reshape_alias`` for a
    non-contiguous ``self``) the full path."""
    r = None if kwargs or not shape else _contiguous_view(self, shape)
    return _full("Tensor.reshape", (self,), shape, kwargs) if r is None else r


cdef object _contiguous_view(object self, tuple shape):
    """``_view`` for ``reshape``, which is ``view`` only when ``self`` is contiguous; or None."""
    if not isinstance(self, TensorBase):
        return None
    cdef TensorImpl a = (<TensorBase>self)._impl
    if a is None or not _is_contiguous(a.sizes, a.strides):
        return None
    return _view(self, shape)


# -- detach ---------------------------------------------------------------------------------------------

def tensor_detach(self, *args, **kwargs):
    """``self.detach()``: a new tensor on the same storage, sizes, strides and offset, sharing the
    version counter, with no grad_fn, not requiring grad and not a view (``_base`` is None) --
    the payload the full path's ``backends/views.py:detach`` builds."""
    cdef TensorImpl a, impl
    if not args and not kwargs:
        a = _plain_cpu(self)
        if a is not None and not a.version.inference and _may_run() and _twin_ok(_op_detach):
            impl = TensorImpl.__new__(TensorImpl)
            impl.storage = a.storage
            impl.sizes = a.sizes
            impl.strides = a.strides
            impl.offset = a.offset
            impl.dtype = a.dtype
            impl.device = a.device
            impl.version = a.version
            return _wrap_payload(_Tensor, impl)
    return _full("Tensor.detach", (self,), args, kwargs)


# -- flatten (``shape.flatten``: a view when the input is contiguous) ------------------------------------

cdef object _flatten_fast(object self, object start, object end):
    """``shape.flatten``'s contiguous cases: ``aten.view.default(self, sizes)`` (``[1]`` for a 0-d
    tensor), or ``self`` when ``start == end``; None for the rest (a copy, a bad dim)."""
    if type(start) is not int or type(end) is not int:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or not _is_contiguous(a.sizes, a.strides):
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), s, e, i, k = 1
    if n == 0:
        return _view(self, ([1],))
    s = _dim_index(start, n)
    e = _dim_index(end, n)
    if s < 0 or e < 0 or s > e:
        return None
    if s == e:
        return self if _may_run() else None
    cdef list sizes = []
    for i in range(s):
        sizes.append(a.sizes[i])
    for i in range(s, e + 1):
        k *= <Py_ssize_t>a.sizes[i]
    sizes.append(k)
    for i in range(e + 1, n):
        sizes.append(a.sizes[i])
    return _view(self, (sizes,))   # (declines too when a student's view kernel is installed)


cdef object _flatten_args(object self, tuple args, dict kwargs):
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    start, end = 0, -1
    if nargs > 2:
        return None
    if nargs >= 1:
        start = args[0]
    if nargs == 2:
        end = args[1]
    if kwargs:
        for key, value in kwargs.items():
            if key == "start_dim" and nargs == 0:
                start = value
            elif key == "end_dim" and nargs <= 1:
                end = value
            else:
                return None
    return _flatten_fast(self, start, end)


def tensor_flatten(self, *args, **kwargs):
    """``self.flatten(start_dim=0, end_dim=-1)``: the fast path, else the full path."""
    r = _flatten_args(self, args, kwargs)
    return _full("Tensor.flatten", (self,), args, kwargs) if r is None else r


def function_flatten(input, *args, **kwargs):
    """``minitorch_nn.flatten(input, start_dim=0, end_dim=-1)``: the fast path, else the full path."""
    r = _flatten_args(input, args, kwargs)
    return _full("flatten", (input,), args, kwargs) if r is None else r


# -- chunk and unbind: several views at once ---------------------------------------------------------

cdef object _split_views(object self, TensorImpl a, object op, tuple args, list views):
    """``views`` (the kernel's outputs, made here) recorded as one multi-output ``op(*args)`` when
    needed, as a tuple; None to decline."""
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    if record:
        r = _record(op, _recipe_of(op.derivative), args, None, views, False)
        if r is not NotImplemented:
            views = r
    return tuple(views)


cdef object _chunk_fast(object self, object chunks, object dim):
    """``shape.chunk`` as ``aten.split.Tensor(self, ceil(n / chunks), dim)``: ``views.split``'s
    slices along ``dim`` (the last one shorter); None for an empty dim, a bad dim or count."""
    if type(chunks) is not int or chunks <= 0:
        return None
    cdef TensorImpl a = _cpu_payload(self)
    if a is None:
        return None
    cdef Py_ssize_t ndim = PyTuple_GET_SIZE(a.sizes), d = _dim_index(dim, ndim) if ndim else -1, n, size, start
    if d < 0:
        return None
    n = a.sizes[d]
    if n == 0 or not _may_run():
        return None
    size = (n + <Py_ssize_t>chunks - 1) // <Py_ssize_t>chunks
    cdef list sizes = list(a.sizes), views = []
    cdef tuple strides = a.strides
    cdef Py_ssize_t step = a.strides[d]
    for start in range(0, n, size):
        sizes[d] = min(size, n - start)
        views.append(_view_of(a, tuple(sizes), strides, a.offset + start * step))
    return _split_views(self, a, _op_split, (self, size, dim), views)


cdef object _unbind_fast(object self, object dim, bint dim_given):
    """``shape.unbind`` as ``aten.unbind.int(self[, dim])``: ``views.unbind``'s ``select`` of every
    index along ``dim``; None for a bad dim or a 0-d tensor."""
    cdef TensorImpl a = _cpu_payload(self)
    if a is None:
        return None
    cdef Py_ssize_t ndim = PyTuple_GET_SIZE(a.sizes), d = _dim_index(dim, ndim) if ndim else -1, i, n
    if d < 0 or not _may_run():
        return None
    n = a.sizes[d]
    cdef list sizes = list(a.sizes), strides = list(a.strides), views = []
    cdef Py_ssize_t step = a.strides[d]
    del sizes[d], strides[d]
    cdef tuple vs = tuple(sizes), vt = tuple(strides)
    for i in range(n):
        views.append(_view_of(a, vs, vt, a.offset + i * step))
    return _split_views(self, a, _op_unbind, (self, dim) if dim_given else (self,), views)


cdef object _chunk_args(object self, tuple args, dict kwargs):
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs == 1 and not kwargs:
        return _chunk_fast(self, args[0], 0)
    if nargs == 2 and not kwargs:
        return _chunk_fast(self, args[0], args[1])
    if nargs == 1 and len(kwargs) == 1 and "dim" in kwargs:
        return _chunk_fast(self, args[0], kwargs["dim"])
    return None


cdef object _unbind_args(object self, tuple args, dict kwargs):
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    dim = args[0] if nargs == 1 and not kwargs else kwargs.get("dim") if nargs == 0 and len(kwargs) == 1 else 0
    if nargs > 1 or (kwargs and (nargs or len(kwargs) != 1 or "dim" not in kwargs)) or type(dim) is not int:
        return None
    return _unbind_fast(self, dim, dim != 0)   # (the full path leaves a dim of 0 out of the call)


def tensor_chunk(self, *args, **kwargs):
    """``self.chunk(chunks, dim=0)``: the fast path, else the full path."""
    r = _chunk_args(self, args, kwargs)
    return _full("Tensor.chunk", (self,), args, kwargs) if r is None else r


def function_chunk(input, *args, **kwargs):
    """``minitorch_nn.chunk(input, chunks, dim=0)``: the fast path, else the full path."""
    r = _chunk_args(input, args, kwargs)
    return _full("chunk", (input,), args, kwargs) if r is None else r


def tensor_unbind(self, *args, **kwargs):
    """``self.unbind(dim=0)``: the fast path, else the full path."""
    r = _unbind_args(self, args, kwargs)
    return _full("Tensor.unbind", (self,), args, kwargs) if r is None else r


def function_unbind(input, *args, **kwargs):
    """``minitorch_nn.unbind(input, dim=0)``: the fast path, else the full path."""
    r = _unbind_args(input, args, kwargs)
    return _full("unbind", (input,), args, kwargs) if r is None else r


# -- the public-function forms -------------------------------------------------------------------------

def function_t(input, *args, **kwargs):
    r = None if kwargs else _t_fast(input, args)
    return _full("t", (input,), args, kwargs) if r is None else r


def function_transpose(input, *args, **kwargs):
    r = None if kwargs else _transpose_fast(input, args)
    return _full("transpose", (input,), args, kwargs) if r is None else r


def function_unsqueeze(input, *args, **kwargs):
    r = None if kwargs else _unsqueeze_fast(input, args)
    return _full("unsqueeze", (input,), args, kwargs) if r is None else r


def function_squeeze(input, *args, **kwargs):
    r = None if kwargs else _squeeze_fast(input, args)
    return _full("squeeze", (input,), args, kwargs) if r is None else r


# ``permute(input, dims)``, ``reshape(input, shape)``: the list of ints is one argument here (no
# ``torch.reshape(x, 2, 8)``); any other form takes the full path, which parses it as PyTorch does.

def function_permute(*args, **kwargs):
    r = None
    if PyTuple_GET_SIZE(args) == 2 and not kwargs and type(args[1]) in (tuple, list, Size):
        d = _size_arg((args[1],))
        r = None if d is None else _permute_fast(args[0], d)
    return _full("permute", (), args, kwargs) if r is None else r


def function_reshape(*args, **kwargs):
    r = None
    if PyTuple_GET_SIZE(args) == 2 and not kwargs and type(args[1]) in (tuple, list, Size):
        r = _contiguous_view(args[0], (args[1],))
    return _full("reshape", (), args, kwargs) if r is None else r


# Tensor's methods (``_tensor_methods.py`` installs them; ``view``, ``reshape``, ``permute`` and
# ``expand``, whose readable methods are written there, it binds by name) and the public functions.
METHODS = {"t": tensor_t, "transpose": tensor_transpose, "unsqueeze": tensor_unsqueeze, "squeeze": tensor_squeeze,
           "detach": tensor_detach, "flatten": tensor_flatten, "chunk": tensor_chunk, "unbind": tensor_unbind}
FUNCTIONS = {"t": function_t, "transpose": function_transpose, "unsqueeze": function_unsqueeze,
             "squeeze": function_squeeze, "permute": function_permute, "reshape": function_reshape,
             "flatten": function_flatten, "chunk": function_chunk, "unbind": function_unbind}

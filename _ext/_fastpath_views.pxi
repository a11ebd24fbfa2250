# The compiled fast paths of the common views (per-op overhead, with and without grad):
# ``x.t()``, ``x.transpose(d0, d1)``, ``x.unsqueeze(d)``, ``x.squeeze()``, ``x.squeeze(d)``,
# ``x.permute(*dims)``, ``x.expand(*sizes)``, ``x.view(*shape)`` and ``x.reshape(*shape)`` when it
# is a view (and ``minitorch_nn.permute``, in _fastpath_functions.pxi). Included into _C.pyx right after
# _fastpath_ops.pxi, whose rules (see its header), checks and recorder hook these share.
#
# A view is metadata only: the payload ``backends/views.py`` builds through ``_tensor._make_view``
# -- the input's storage, dtype, device and version counter, new sizes/strides/offset, ``_base``
# the input's base or the input -- built here in C, for any layout and dtype on the cpu. The
# geometry is the kernels' own rule (``compute_view_strides`` for view/reshape, ported below). With
# grad, ``record_computed`` adds the node (``TBackward0``, ``ViewBackward0``...) and the view
# bookkeeping (``view_version``, ``creation_meta``: ``_mark_view_of``) as the full path's autograd
# layer does. Each view runs only while its guard holds (``_twin_ok``, see
# _fastpath_ops.pxi and _fastpath.pxi).

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
    return _wrap(_Tensor, impl)


cdef object _finish_view(object op, tuple args, TensorImpl a, tuple sizes, tuple strides):
    """The view of ``a`` with these sizes/strides, recorded when needed; None to decline."""
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    out = _view_of(a, sizes, strides, a.offset)
    return _recorded(op, args, out) if record else out


cdef inline Py_ssize_t _dim_index(object dim, Py_ssize_t n):
    """``dim`` (an exact int) wrapped into ``range(n)``, or -1 when it is not valid here."""
    if type(dim) is not int:
        return -1
    cdef Py_ssize_t d
    try:
        d = dim
    except OverflowError:
        return -1
    if d < -n or d >= n:
        return -1
    return d + n if d < 0 else d


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
    return _slow_t(self, *args, **kwargs) if r is None else r


def tensor_transpose(self, *args, **kwargs):
    """``self.transpose(dim0, dim1)``: the fast path, else the full path."""
    r = None if kwargs else _transpose_fast(self, args)
    return _slow_transpose(self, *args, **kwargs) if r is None else r


def tensor_unsqueeze(self, *args, **kwargs):
    """``self.unsqueeze(dim)``: the fast path, else the full path."""
    r = None if kwargs else _unsqueeze_fast(self, args)
    return _slow_unsqueeze(self, *args, **kwargs) if r is None else r


def tensor_squeeze(self, *args, **kwargs):
    """``self.squeeze()`` / ``self.squeeze(dim)``: the fast path, else the full path."""
    r = None if kwargs else _squeeze_fast(self, args)
    return _slow_squeeze(self, *args, **kwargs) if r is None else r


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
    return _slow_permute(self, *dims, **kwargs) if r is None else r


def tensor_expand(self, *sizes, **kwargs):
    """``self.expand(*sizes)``: the fast path, else the full path."""
    cdef list s = None if kwargs or not sizes else _size_arg(sizes)
    r = None if s is None else _expand_fast(self, s)
    return _slow_expand(self, *sizes, **kwargs) if r is None else r


cdef list _size_arg(tuple shape):
    """``list(normalize_size(shape))`` when every size is an exact int, else None (the full path
    then converts or refuses the others)."""
    if PyTuple_GET_SIZE(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    cdef list out = []
    for s in shape:
        if type(s) is not int:
            return None
        out.append(s)
    return out


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
    return _slow_view(self, *shape, **kwargs) if r is None else r


def tensor_reshape(self, *shape, **kwargs):
    """``self.reshape(*shape)``: when the new shape is a view of ``self``, the full path's
    ``aten.view.default(self, shape)``; otherwise (a copy, or ``_reshape_alias`` for a
    non-contiguous ``self``) the full path."""
    r = None if kwargs or not shape else _contiguous_view(self, shape)
    return _slow_reshape(self, *shape, **kwargs) if r is None else r


cdef object _contiguous_view(object self, tuple shape):
    """``_view`` for ``reshape``, which is ``view`` only when ``self`` is contiguous; or None."""
    if not isinstance(self, TensorBase):
        return None
    cdef TensorImpl a = (<TensorBase>self)._impl
    if a is None or not _is_contiguous(a.sizes, a.strides):
        return None
    return _view(self, shape)


# the views join the Tensor methods of _fastpath_ops.pxi
FAST_OP_METHODS.update({
    "t": tensor_t, "transpose": tensor_transpose, "unsqueeze": tensor_unsqueeze, "squeeze": tensor_squeeze,
})

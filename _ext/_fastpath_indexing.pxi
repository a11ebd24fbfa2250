# The compiled fast path of basic indexing (per-op overhead): ``x[i]``, ``x[a:b]``,
# ``x[a:b:k]`` and tuples of ints and slices (``x[i, a:b]``). Included into _C.pyx after
# _fastpath_views.pxi, whose view builder (``_view_of``) and rules this shares.
#
# The full path (``_functions/indexing.py``'s ``getitem``) turns each int into
# ``aten.select.int(t, dim, i)`` and each slice into ``aten.slice.Tensor(t, dim, start, stop, step)``
# (a ``:`` with no step is skipped), one after the other; here the same geometry as
# ``backends/views.py``'s ``select``/``slice_`` is computed in C and, with grad, each step is
# recorded as the full path records it (``SelectBackward0``, ``SliceBackward0``, chained). Anything
# else -- an index out of range, a bad step, ``None``/``...``/bools/tensors, a 0-d tensor, an index
# that is all ``:`` (an ``alias``), a subclass, a mode -- is left to the full path, which raises
# PyTorch's errors and shows handlers every call. select/slice are not course exercises.

cdef object _op_select = None
cdef object _op_slice = None
cdef object _slow_getitem = None
cdef Py_ssize_t _SLICE_END_NONE = 9223372036854775807   # the full path's stop for ``a:``


cdef bint _load_indexing() except -1:
    """Look up, once, select/slice and the full-path ``Tensor.__getitem__`` (made after this
    module's methods are installed, hence looked up late)."""
    global _op_select, _op_slice, _slow_getitem
    import sys
    methods = sys.modules.get("minitorch_nn._tensor_methods")
    if methods is None:
        return False
    slow = methods._FULL_PATH.get("__getitem__")
    if slow is None:
        return False
    from minitorch_nn._ops import aten
    _op_select, _op_slice = aten.select.int, aten.slice.Tensor
    _slow_getitem = slow
    return True


cdef inline bint _exact_ssize(object v, Py_ssize_t* out) except -1:
    """``v`` is an exact int that fits a Py_ssize_t (stored in ``out``)."""
    if type(v) is not int:
        return False
    try:
        out[0] = v
    except OverflowError:
        return False
    return True


cdef list _index_steps(TensorImpl a, tuple index):
    """The full path's steps for ``index`` (ints and slices only): a list of
    (op, dim, extra args, sizes, strides, offset) -- the view each step makes; None to decline."""
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), dim = 0, v, start, stop, step, size, stride, length
    cdef Py_ssize_t offset = a.offset
    if PyTuple_GET_SIZE(index) > n:
        return None     # "too many indices": the full path says so
    cdef list sizes = list(a.sizes), strides = list(a.strides), steps = []
    for i in index:
        if type(i) is int:
            if not _exact_ssize(i, &v):
                return None
            size = sizes[dim]
            if v < -size or v >= size:
                return None     # out of range: the full path raises
            if v < 0:
                v += size
            offset += v * <Py_ssize_t>strides[dim]
            del sizes[dim], strides[dim]
            steps.append((_op_select, (dim, i), tuple(sizes), tuple(strides), offset))
        elif type(i) is slice:
            s = <slice>i
            if s.step is None and s.start is None and s.stop is None:
                dim += 1        # ``:`` alone: no op
                continue
            if s.step is None:
                step = 1
            elif not _exact_ssize(s.step, &step) or step <= 0:
                return None     # zero or negative steps: the full path's errors
            if s.start is None:
                start = 0
            elif not _exact_ssize(s.start, &start):
                return None
            if s.stop is None:
                stop = _SLICE_END_NONE
            elif not _exact_ssize(s.stop, &stop):
                return None
            args = (dim, start, stop, step)
            # views.slice_: wrap negatives once, clamp into [0, n], an empty range stays at start
            size = sizes[dim]
            if start < 0:
                start += size
            if stop < 0:
                stop += size
            start = min(max(start, 0), size)
            stop = min(max(stop, start), size)
            length = (stop - start + step - 1) // step
            stride = strides[dim]
            offset += start * stride
            sizes[dim] = length
            strides[dim] = stride * step
            steps.append((_op_slice, args, tuple(sizes), tuple(strides), offset))
            dim += 1
        else:
            return None
    return steps if steps else None


cdef object _getitem_fast(object self, object index):
    """``self[index]`` as the full path computes it, for ints/slices; or None."""
    cdef TensorImpl a = _cpu_payload(self)
    if a is None or PyTuple_GET_SIZE(a.sizes) == 0 or not _may_run():
        return None
    if _op_select is None and not _load_indexing():
        return None
    cdef type kind = type(index)
    cdef tuple idx
    if kind is int or kind is slice:
        idx = (index,)
    elif kind is tuple:
        idx = <tuple>index
    else:
        return None
    steps = _index_steps(a, idx)
    if steps is None:
        return None
    for step in steps:
        if not _twin_ok(step[0]):
            return None
    cdef int record = _records(a, None)
    if record < 0:
        return None
    if record == 0:     # no graph: only the last view is seen (its base is the input's base)
        last = steps[-1]
        return _view_of(a, last[2], last[3], last[4])
    for step in steps:
        d = (<object>step[0]).derivative
        if d is None or getattr(d, "simple", False) is not True:
            return None
    cdef TensorImpl cur = a
    t = self
    for step in steps:
        op = step[0]
        out = _view_of(cur, step[2], step[3], step[4])
        t = _recorded(op, (t,) + step[1], out)
        cur = (<TensorBase>t)._impl
    return t


def tensor_getitem(self, index):
    """``self[index]``: the fast path, else the full path."""
    r = _getitem_fast(self, index)
    if r is not None:
        return r
    if _slow_getitem is None:
        _load_indexing()
    return _slow_getitem(self, index)


FAST_OP_METHODS["__getitem__"] = tensor_getitem

# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/_functions/indexing.py``'s ``getitem``: basic indexing.

``x[i]``, ``x[a:b]``, ``x[a:b:k]`` and tuples of ints and slices (``x[i, a:b]``). The readable
``getitem`` turns each int into ``aten.select.int(t, dim, i)`` and each slice into
``aten.slice.Tensor(t, dim, start, stop, step)`` (a ``:`` with no step is skipped), one after the
other; here the same geometry as ``backends/views.py``'s ``select``/``slice_`` is computed in C,
each view built by the views twin's ``_view_of``, and, with grad, each step is recorded as the
full path records it (``SelectBackward0``, ``SliceBackward0``, chained). It runs only while the
guards of ``select`` and ``slice`` hold (see ``_ext/twins/_gate.pyx``) and ``Tensor.__getitem__``
is this twin (``backends.compiled.bind``). Anything else -- an index out of range, a bad step,
``None``/``...``/bools/tensors, a 0-d tensor, an index that is all ``:`` (an ``alias``), a subclass,
a mode -- is left to the full path, which raises PyTorch's errors and shows handlers every call.
``tests/twins/test_fast_path_indexing.py`` compares both paths.
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
from minitorch_nn._twins.backends.views cimport _view_of

cdef object _op_select = None
cdef object _op_slice = None
cdef Py_ssize_t _SLICE_END_NONE = 9223372036854775807   # the full path's stop for ``a:``


cdef bint _load_indexing() except -1:
    """Look up, once, select/slice (False while the view kernels are not loaded yet)."""
    global _op_select, _op_slice
    import sys
    if sys.modules.get("minitorch_nn.backends.views") is None:
        return False
    from minitorch_nn._ops import aten
    _op_select, _op_slice = aten.select.int, aten.slice.Tensor
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _op_select is not None or _load_indexing()


cdef inline bint _exact_ssize(object v, Py_ssize_t* out) except -1:
    """``v`` is an exact int that fits a Py_ssize_t (stored in ``out``)."""
    if type(v) is not int:
        return False
    try:
        out[0] = v
    except OverflowError:
        return False
    return True


cdef inline bint _mul_fits(Py_ssize_t a, Py_ssize_t b):
    cdef Py_ssize_t r
    return not _mtnn_mul_overflow(a, b, &r)


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
            # (stop - start + step - 1) // step, written so that it cannot overflow for huge steps
            length = 0 if stop <= start else (stop - start - 1) // step + 1
            stride = strides[dim]
            offset += start * stride
            sizes[dim] = length
            if length > 1:
                strides[dim] = stride * step   # in range: the view stays inside the storage
            elif not _mul_fits(stride, step):
                return None     # one element: the full path keeps the exact (Python int) stride
            else:
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
    return _full("Tensor.__getitem__", (self, index), (), {}) if r is None else r


# Tensor's method from this file (``_tensor_methods.py`` installs it)
METHODS = {"__getitem__": tensor_getitem}
FUNCTIONS = {}

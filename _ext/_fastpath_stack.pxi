# The compiled fast path of ``minitorch_nn.stack(tensors, dim)`` (per-op overhead), the twin
# of ``_fastpath_cat.pxi``. Included into _C.pyx after it; joins the same install mechanism.
#
# For a list or tuple of plain cpu tensors of one dtype (float32/float64/int64), row-major, all of
# one shape (0-d included), and a dim in ``[-ndim - 1, ndim]``: without grad, the cpu kernel's
# result (``np.stack`` of the numpy views, as ``backends/cpu/factories.stack`` does when no cast is
# needed), computed the way ``np.stack`` computes it but without its Python-level checks: each view
# given a dim of size 1 at ``dim`` (a reshape, no copy) and ``np.concatenate`` along it; wrapped as
# a fresh tensor. With grad, that result handed to the compiled
# recorder's ``_record_general`` (``stack`` has a ``Tensor[]`` input) with the arguments the full
# path gives the op, which builds the ``StackBackward0`` node, edges and saved values as the full
# path does. Anything else (``out=``, shapes or dtypes that differ, a bad dim, subclasses, modes)
# takes the full path, which raises PyTorch's errors and shows handlers the call as it was made.

cdef object _op_stack = None


cdef object _stack_fast(object tensors, object dim):
    """``aten.stack.default(list(tensors)[, dim])`` as the full path runs it; or None."""
    global _op_stack
    if type(tensors) is not list and type(tensors) is not tuple:
        return None
    cdef Py_ssize_t n = len(tensors), i, d
    if n == 0 or not _may_run():
        return None
    if _op_stack is None:
        from minitorch_nn._ops import aten
        _op_stack = aten.stack.default
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
    return _fn_slow["stack"](*args, **kwargs) if r is None else r


FAST_OP_FUNCTIONS["stack"] = function_stack

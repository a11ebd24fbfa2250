# The compiled fast path of ``minitorch_nn.cat(tensors, dim)`` (per-op overhead).
# Included into _C.pyx after _fastpath_functions.pxi, whose install mechanism it joins.
#
# For a list or tuple of plain cpu tensors of one dtype (float32/float64/int64), row-major,
# non-empty, of one rank, whose sizes agree outside ``dim``: without grad, the cpu kernel's
# computation (``np.concatenate`` of the numpy views, as ``backends/cpu/factories.cat`` does when
# no cast is needed) wrapped as a fresh tensor; with grad, that result handed to the compiled
# recorder's ``_record_general`` (``cat`` has a ``Tensor[]`` input) with the arguments the full path
# gives the op, which builds the ``CatBackward0`` node, edges and saved values as the full path does. Anything else (``out=``, empty tensors, mixed dtypes, a bad dim, subclasses, modes)
# takes the full path, which raises PyTorch's errors and shows handlers the call as it was made.

cdef object _op_cat = None
cdef object _np_concatenate = np.concatenate


cdef object _cat_fast(object tensors, object dim):
    """``aten.cat.default(list(tensors)[, dim])`` as the full path runs it; or None."""
    global _op_cat
    if type(tensors) is not list and type(tensors) is not tuple:
        return None
    cdef Py_ssize_t n = len(tensors), i, k, ndim, d
    if n == 0 or not _may_run():
        return None
    if _op_cat is None:
        from minitorch_nn._ops import aten
        _op_cat = aten.cat.default
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
    return _fn_slow["cat"](*args, **kwargs) if r is None else r


FAST_OP_FUNCTIONS["cat"] = function_cat

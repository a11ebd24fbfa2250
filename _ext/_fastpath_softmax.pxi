# Compiled fast paths for softmax and log_softmax (per-op overhead, with and without
# grad): ``minitorch_nn.softmax(x, dim)`` and ``log_softmax``, the methods ``x.softmax(dim)`` and
# ``x.log_softmax(dim)``, and ``nn.functional.softmax(x, dim)`` / ``log_softmax`` (hence
# ``nn.Softmax``/``nn.LogSoftmax``). Included into _C.pyx after _fastpath_functions.pxi, whose
# helpers it uses.
#
# Every spelling above is ``aten._softmax.default(x, dim, False)`` (or ``_log_softmax``) on the
# full path. While nothing could observe the op (``_may_run()``: an exact ``Tensor`` or
# ``Parameter`` on the cpu, no mode, no dispatch trace...) and the call is the plain form -- a
# float32/float64 non-empty input of any layout, an int ``dim`` in range, no ``dtype`` -- this
# computes the result with the cpu kernel's own compiled loop (``_activation_kernels.softmax``,
# the function ``backends/cpu/reduction.py`` calls, so the bits are the same) and, with grad,
# hands it to ``record_computed`` with the full path's arguments ``(x, dim, False)``, which builds
# ``SoftmaxBackward0``/``LogSoftmaxBackward0`` as the full path's autograd layer does. Any other
# form (``dtype=``, a bad dim, another dtype or device, a subclass, a mode) takes the full path,
# which also raises PyTorch's errors. ``tests/test_fast_path_softmax.py`` compares both paths.

cdef object _op_softmax = None        # aten._softmax.default
cdef object _op_log_softmax = None    # aten._log_softmax.default
cdef object _softmax_loop = None      # _activation_kernels.softmax, as the cpu kernel calls it


cdef bint _load_softmax() except -1:
    """Look up, once, the two ops and the cpu kernel's compiled loop (False while the cpu backend
    is not loaded, or was built without the loop: the full path then runs)."""
    global _op_softmax, _op_log_softmax, _softmax_loop
    import sys
    reduction = sys.modules.get("minitorch_nn.backends.cpu.reduction")
    if reduction is None or reduction._compiled_softmax is None:
        return False
    from minitorch_nn._ops import aten
    _op_softmax, _op_log_softmax = aten._softmax.default, aten._log_softmax.default
    _softmax_loop = reduction._compiled_softmax
    return True


cdef object _softmax_fast(object input, object dim, bint take_log):
    """``aten._softmax.default(input, dim, False)`` (``_log_softmax`` when ``take_log``) computed
    and recorded as the full path would, or None when the full path must run."""
    if type(dim) is not int:
        return None
    cdef TensorImpl a = _cpu_payload(input)
    if a is None:
        return None
    dtype = a.dtype
    if dtype is not _f32 and dtype is not _f64:
        return None
    cdef tuple sizes = a.sizes
    cdef Py_ssize_t ndim = len(sizes)
    cdef Py_ssize_t d = dim
    cdef Py_ssize_t rank = ndim if ndim else 1   # a 0-d tensor takes dim 0 or -1
    if not -rank <= d < rank or 0 in sizes:
        return None
    if d < 0:
        d += rank
    if not _may_run():
        return None
    if _softmax_loop is None and not _load_softmax():
        return None
    op = _op_log_softmax if take_log else _op_softmax
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    r = _softmax_loop(a.numpy_view(), d, take_log)
    if r is None:
        return None
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    return _recorded(op, (input, dim, False), out) if record else out


cdef inline object _dim_only(tuple args, dict kwargs, object allowed):
    """The ``dim`` of a call written ``(dim)`` or ``(dim=...)`` (also allowing the keywords in
    ``allowed``, which do not change the result, and ``dtype=None``); None for any other form."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > 1:
        return None
    if kwargs:
        for key, value in kwargs.items():
            if key == "dtype":
                if value is not None:
                    return None
            elif key != "dim" and key not in allowed:
                return None
        if "dim" in kwargs:
            return None if nargs else kwargs["dim"]
    return args[0] if nargs else None


def function_softmax(input, *args, **kwargs):
    """``minitorch_nn.softmax(input, dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ("_stacklevel",))
    r = None if dim is None else _softmax_fast(input, dim, False)
    return _full("softmax", (input,), args, kwargs) if r is None else r


def function_log_softmax(input, *args, **kwargs):
    """``minitorch_nn.log_softmax(input, dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ("_stacklevel",))
    r = None if dim is None else _softmax_fast(input, dim, True)
    return _full("log_softmax", (input,), args, kwargs) if r is None else r


def tensor_softmax(self, *args, **kwargs):
    """``self.softmax(dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ())
    r = None if dim is None else _softmax_fast(self, dim, False)
    return _full("Tensor.softmax", (self,), args, kwargs) if r is None else r


def tensor_log_softmax(self, *args, **kwargs):
    """``self.log_softmax(dim)``: the fast path, else the full path."""
    dim = _dim_only(args, kwargs, ())
    r = None if dim is None else _softmax_fast(self, dim, True)
    return _full("Tensor.log_softmax", (self,), args, kwargs) if r is None else r


def functional_softmax(input, *args, **kwargs):
    """``nn.functional.softmax(input, dim)`` (``_stacklevel`` as given, ``dtype`` None): the fast
    path, else F.softmax's full path (which also warns when ``dim`` is left out)."""
    dim = _dim_only(args, kwargs, ("_stacklevel",)) if PyTuple_GET_SIZE(args) <= 1 else None
    r = None if dim is None else _softmax_fast(input, dim, False)
    return _full("functional.softmax", (input,), args, kwargs) if r is None else r


def functional_log_softmax(input, *args, **kwargs):
    """``nn.functional.log_softmax(input, dim)``: as ``functional_softmax``."""
    dim = _dim_only(args, kwargs, ("_stacklevel",)) if PyTuple_GET_SIZE(args) <= 1 else None
    r = None if dim is None else _softmax_fast(input, dim, True)
    return _full("functional.log_softmax", (input,), args, kwargs) if r is None else r


FAST_OP_FUNCTIONS.update({"softmax": function_softmax, "log_softmax": function_log_softmax})
# the methods (see _tensor_methods.py); their full paths arrive through install_fast_functions
# under "Tensor.softmax" and "Tensor.log_softmax"
FAST_SOFTMAX_METHODS = {"softmax": tensor_softmax, "log_softmax": tensor_log_softmax}

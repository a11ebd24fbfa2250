# Compiled fast paths for the next tier of everyday ops (per-op overhead, with and
# without grad). Included into _C.pyx after the other _fastpath*.pxi files, whose checks and
# helpers it uses (``_may_run``, ``_record_mode``, ``_recorded``, ``_fresh_tensor``, ``_view``...).
#
# What it covers, in the forms a small model writes them
# ------------------------------------------------------
# * ``x.flatten()``, ``x.flatten(s[, e])``, ``minitorch_nn.flatten``: the full path's
#   ``aten.view.default(x, sizes)`` for a contiguous ``x`` (``x`` itself when ``s == e``);
# * ``x.sum(dim[, keepdim])`` (``dim`` an int or a list/tuple of ints): ``aten.sum.dim_IntList``
#   (``x.sum()`` stays with ``_fastpath.pxi``'s ``tensor_sum``, which this method calls for it);
# * ``nn.functional.linear(x, w[, b])`` for a matrix ``x``: ``aten.t.default(w)`` then
#   ``aten.mm.default(x, w.t())`` or ``aten.addmm.default(b, x, w.t())``, recorded in that order;
# * ``x.clone()``, ``x.clamp(min, max)`` with Python numbers, ``x.cumsum(dim)``,
#   ``x.masked_fill(mask, number)``, ``minitorch_nn.bmm(a, b)``, ``minitorch_nn.where(c, a, b)``
#   with tensors, ``nn.functional.silu(x)`` and ``nn.functional.leaky_relu(x[, slope])``
#   (and the function forms ``minitorch_nn.clone``/``clamp``/``cumsum``);
# * ``nn.functional.mse_loss(x, y)`` (``reduction`` "mean" or "sum") for two tensors of one shape;
# * ``x.chunk(n[, dim])`` and ``x.unbind([dim])``: several views, recorded as one multi-output
#   ``aten.split.Tensor``/``aten.unbind.int`` node;
# * the comparisons ``x.gt(y)``, ``lt``, ``ge``, ``le``, ``eq``, ``ne`` (and so ``x > y`` & co.)
#   with a number or a tensor of the same dtype and shape: a bool result, nothing recorded.
# * ``x.var()``, ``x.std(dim[, keepdim=])`` and ``minitorch_nn.var``/``std``, with the default
#   correction: the kernel's own ``reduction._var_steps``.
#
# The rules are those of _fastpath_ops.pxi (see its header): while nothing could observe the op
# (``_may_run()``: exact ``Tensor``/``Parameter`` operands on the cpu, no mode, no dispatch trace,
# no forward AD) and the call is the plain form, this does in C what the cpu kernel does -- the
# same numpy calls on the same arrays, in the same order and with the same floating-point error
# state, so the bits are identical -- and, with grad, hands the result to the compiled recorder
# with the op's arguments exactly as the full path passes them. Every check that could send the
# op down the full path is made before anything is computed or recorded (a node recorded and
# then abandoned would still take a sequence number). Any other form (keywords it does not know,
# ``out=``, other dtypes or layouts, bad dims, mismatched shapes...) takes the full path, which
# also raises PyTorch's errors. ``tests/test_fast_path_more.py`` compares both paths.

cdef bint _more_loaded = False
cdef object _op_sum_dim = None       # aten.sum.dim_IntList
cdef object _op_clone = None
cdef object _op_clamp = None
cdef object _op_silu = None
cdef object _op_leaky_relu = None
cdef object _op_cumsum = None
cdef object _op_bmm = None
cdef object _op_addmm = None
cdef object _op_where = None         # aten.where.self
cdef object _op_masked_fill = None   # aten.masked_fill.Scalar
cdef object _bool = None             # minitorch_nn.bool
cdef object _activations = None      # backends.cpu.activations (silu reads its ``_sigmoid``)
cdef object _np_where = np.where
cdef object _np_asarray = np.asarray


cdef bint _load_more() except -1:
    """Look up, once, the ops and the cpu modules these paths read (False while the cpu backend
    is not loaded yet: the full path then runs)."""
    global _more_loaded, _op_sum_dim, _op_clone, _op_clamp, _op_silu, _op_leaky_relu, _op_cumsum
    global _op_bmm, _op_addmm, _op_where, _op_masked_fill, _bool, _activations
    import sys
    activations = sys.modules.get("minitorch_nn.backends.cpu.activations")
    if activations is None:
        return False
    from minitorch_nn._ops import aten
    from minitorch_nn import _dtype
    _op_sum_dim, _op_clone, _op_clamp = aten.sum.dim_IntList, aten.clone.default, aten.clamp.default
    _op_silu, _op_leaky_relu, _op_cumsum = aten.silu.default, aten.leaky_relu.default, aten.cumsum.default
    _op_bmm, _op_addmm = aten.bmm.default, aten.addmm.default
    _op_where, _op_masked_fill = aten.where.self, aten.masked_fill.Scalar
    _bool, _activations = _dtype.bool, activations
    _more_loaded = True
    return True


cdef inline bint _more_may_run() except -1:
    """``_may_run()``, and the ops of this file looked up."""
    if not _may_run():
        return False
    return _more_loaded or _load_more()


cdef int _record_mode3(object op, TensorImpl a, TensorImpl b, TensorImpl c) except -2:
    """``_record_mode`` for an op with three tensor inputs (``c`` may be None)."""
    if c is None or not c.requires_grad:
        return _record_mode(op, a, b)
    if not _grad_enabled():
        return 0
    if not recorder_ready():
        return -1
    d = op.derivative
    if d is None or getattr(d, "simple", False) is not True:
        return -1
    return 1


cdef inline bint _same_sizes(TensorImpl a, TensorImpl b):
    return a.sizes == b.sizes


# -- flatten ---------------------------------------------------------------------------------------

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


# -- sum over dims ---------------------------------------------------------------------------------

cdef object _sum_dims_fast(object self, object dim, bint keepdim):
    """``reduction.sum_dim(self, dims, keepdim)`` for ``dim`` an int or a list/tuple of ints
    (wrapped as ``_axes`` wraps them; a repeated dim declines): ``np.add.reduce`` over those axes
    in the tensor's dtype, warnings as numpy gives them (the kernel leaves them on)."""
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), d, i
    if n == 0:
        return None
    cdef list dims
    cdef list axes = []
    if type(dim) is int:
        dims = [dim]
    elif type(dim) is list or type(dim) is tuple:
        dims = list(dim)
        if not dims:
            return None
    else:
        return None
    for v in dims:
        d = _dim_index(v, n)
        if d < 0 or d in axes:
            return None
        axes.append(d)
    if not _more_may_run():
        return None
    cdef int record = _record_mode(_op_sum_dim, a, None)
    if record < 0:
        return None
    try:
        r = _np_add_reduce(a.numpy_view(), tuple(axes), None, None, keepdim)
    except Exception:
        return None   # (a warning turned into an error: the full path raises it again)
    out = _fresh_tensor(r, a.dtype)
    if out is None or not record:
        return out
    return _recorded(_op_sum_dim, (self, dims, True) if keepdim else (self, dims), out)


def tensor_sum_dims(self, *args, **kwargs):
    """``self.sum(dim[, keepdim])`` (also ``dim=``, ``keepdim=``): the fast path; ``self.sum()``
    and every other form: ``_fastpath.pxi``'s ``tensor_sum`` (its own fast path, else the full path)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    dim = None
    keepdim = False
    r = None
    if nargs == 1 and not kwargs:
        dim = args[0]
    elif nargs == 2 and not kwargs:
        dim, keepdim = args[0], args[1]
    elif nargs <= 1 and kwargs and len(kwargs) <= 2:
        dim = args[0] if nargs else kwargs.get("dim")
        keepdim = kwargs.get("keepdim", False)
        if len(kwargs) != (0 if nargs else 1) + ("keepdim" in kwargs):
            dim = None   # (another keyword, or dim given twice)
    if dim is not None and type(keepdim) is bool:
        r = _sum_dims_fast(self, dim, keepdim)
    return tensor_sum(self, *args, **kwargs) if r is None else r


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
    if not _more_may_run() or not _twin_ok(_op_t):
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


# -- elementwise ops with a number or two ---------------------------------------------------------

cdef object _unary_like(object op, object self, tuple args, TensorImpl a, object fn, object arg, bint fp_off):
    """``fn(x, arg)`` on ``self``'s array (warnings off when ``fp_off``, as the kernel has them) as a
    fresh tensor of ``self``'s dtype, recorded as ``op(*args)`` when needed; None to decline.
    (Callers check ``_more_may_run()`` first: it looks the ops up.)"""
    cdef int record = _record_mode(op, a, None)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore) if fp_off else None
    try:
        r = fn(a.numpy_view(), arg)
    except Exception:
        return None
    finally:
        if fp_off:
            PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(op, args, out) if record else out


def _clone_fn(x, unused):
    # clone's kernel on a row-major tensor: a fresh C-order copy (wrap_strided(..., copy=True))
    return x.copy()


def _clamp_fn(x, bounds):
    # pointwise._clamp: np.maximum with the lower bound, then np.minimum with the upper one
    low, high = bounds
    if low is not None:
        x = _np_maximum(x, low)
    if high is not None:
        x = np.minimum(x, high)
    return x


def _silu_fn(x, sigmoid):
    # activations.silu: x * _sigmoid(x)
    return x * sigmoid(x)


def _leaky_relu_fn(x, slope):
    # the twin of activations._leaky_relu_values (its numpy formula): the loop below for contiguous
    # float32/float64 arrays (the same IEEE operations in one pass), the readable function otherwise
    r = leaky_relu_values(x, slope)
    return _activations._leaky_relu_values(x, slope) if r is None else r


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _leaky_relu_f32(const float* x, float* out, Py_ssize_t n, float slope) noexcept nogil:
    cdef Py_ssize_t i
    cdef float v
    for i in range(n):
        v = x[i]
        out[i] = v if v > 0 else v * slope


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _leaky_relu_f64(const double* x, double* out, Py_ssize_t n, double slope) noexcept nogil:
    cdef Py_ssize_t i
    cdef double v
    for i in range(n):
        v = x[i]
        out[i] = v if v > 0 else v * slope


def leaky_relu_values(object x, object slope):
    """``np.where(x > 0, x, x * np.asarray(slope, x.dtype))`` in one pass, for a C-contiguous
    float32/float64 array and a Python int/float slope whose conversion to the dtype is plainly
    exact or rounds as numpy's does (not NaN, not beyond the dtype's range): each element is
    ``x`` where ``x > 0``, else the product ``x * slope`` rounded to the dtype -- the same IEEE
    operations numpy's loops make, so the same bits (NaN stays NaN, with its payload). Returns a
    fresh array, or None for anything else (``activations._leaky_relu_values`` then runs numpy)."""
    if type(x) is not np.ndarray or (type(slope) is not float and type(slope) is not int) or _f32 is None:
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    if (typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64) or not cnp.PyArray_IS_C_CONTIGUOUS(a):
        return None
    if slope != slope:
        return None   # (a NaN slope: which NaN a product gives is numpy's business)
    z = _scalar_operand(slope, _f32 if typenum == cnp.NPY_FLOAT32 else _f64)
    if z is None:
        return None   # (an int that does not convert exactly, a float beyond float32's range)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    if typenum == cnp.NPY_FLOAT32:
        _leaky_relu_f32(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), n,
                        (<float*>cnp.PyArray_DATA(<cnp.ndarray>z))[0])
    else:
        _leaky_relu_f64(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out), n,
                        (<double*>cnp.PyArray_DATA(<cnp.ndarray>z))[0])
    return out


def _cumsum_fn(x, axis):
    # reduction._scan(np.cumsum, ...): np.cumsum(x, axis=d) is x.cumsum(axis=d) (its result
    # already has x's shape for a tensor with dims)
    return x.cumsum(axis)


cdef object _clone_fast(object self):
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None or not _more_may_run():
        return None
    return _unary_like(_op_clone, self, (self,), a, _clone_fn, None, False)


cdef object _bound(object v, object dtype):
    """A clamp bound as ``as_array(v, dtype)`` gives it (None stays None); ``False`` to decline."""
    if v is None:
        return None
    r = _scalar_operand(v, dtype)   # (exact ints/floats whose conversion is plainly exact)
    return False if r is None else r


cdef object _clamp_fast(object self, object low, object high):
    """``pointwise.clamp`` with Python-number bounds of the tensor's kind (a float bound for an
    int64 tensor promotes: the full path); the full path's call is ``clamp(self, min)`` when
    ``max`` is None, else ``clamp(self, min, max)``."""
    if low is None and high is None:
        return None
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None:
        return None
    lo = _bound(low, a.dtype)
    hi = _bound(high, a.dtype)
    if lo is False or hi is False or not _more_may_run():
        return None
    args = (self, low) if high is None else (self, low, high)
    return _unary_like(_op_clamp, self, args, a, _clamp_fn, (lo, hi), False)


cdef object _clamp_args(object self, tuple args, dict kwargs):
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > 2:
        return None
    low = args[0] if nargs >= 1 else None
    high = args[1] if nargs == 2 else None
    if kwargs:
        for key, value in kwargs.items():
            if key == "min" and nargs == 0:
                low = value
            elif key == "max" and nargs <= 1:
                high = value
            else:
                return None
    return _clamp_fast(self, low, high)


cdef object _cumsum_fast(object self, object dim):
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes)
    cdef Py_ssize_t d = _dim_index(dim, n) if n else -1
    if d < 0 or not _more_may_run():
        return None
    return _unary_like(_op_cumsum, self, (self, dim), a, _cumsum_fn, d, False)


cdef object _cumsum_args(object self, tuple args, dict kwargs):
    if PyTuple_GET_SIZE(args) == 1 and not kwargs:
        return _cumsum_fast(self, args[0])
    if not args and kwargs and len(kwargs) == 1 and "dim" in kwargs:
        return _cumsum_fast(self, kwargs["dim"])
    return None


def tensor_clone(self, *args, **kwargs):
    """``self.clone()``: the fast path, else the full path (``memory_format=``...)."""
    r = None if args or kwargs else _clone_fast(self)
    return _full("Tensor.clone", (self,), args, kwargs) if r is None else r


def function_clone(input, *args, **kwargs):
    """``minitorch_nn.clone(input)``: the fast path, else the full path."""
    r = None if args or kwargs else _clone_fast(input)
    return _full("clone", (input,), args, kwargs) if r is None else r


def tensor_clamp(self, *args, **kwargs):
    """``self.clamp(min, max)`` with numbers: the fast path, else the full path."""
    r = _clamp_args(self, args, kwargs)
    return _full("Tensor.clamp", (self,), args, kwargs) if r is None else r


def function_clamp(input, *args, **kwargs):
    """``minitorch_nn.clamp(input, min, max)`` with numbers: the fast path, else the full path."""
    r = _clamp_args(input, args, kwargs)
    return _full("clamp", (input,), args, kwargs) if r is None else r


def tensor_cumsum(self, *args, **kwargs):
    """``self.cumsum(dim)``: the fast path, else the full path (``dtype=``...)."""
    r = _cumsum_args(self, args, kwargs)
    return _full("Tensor.cumsum", (self,), args, kwargs) if r is None else r


def function_cumsum(input, *args, **kwargs):
    """``minitorch_nn.cumsum(input, dim)``: the fast path, else the full path."""
    r = _cumsum_args(input, args, kwargs)
    return _full("cumsum", (input,), args, kwargs) if r is None else r


cdef inline bint _not_inplace(tuple args, dict kwargs, Py_ssize_t at):
    """``inplace`` is absent or False (positional at index ``at`` of ``args``, or a keyword)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > at + 1:
        return False
    if nargs == at + 1:
        return args[at] is False and "inplace" not in kwargs
    return kwargs.get("inplace", False) is False


def functional_silu(input, *args, **kwargs):
    """``nn.functional.silu(input, inplace=False)``: the fast path, else F.silu's full path."""
    r = None
    cdef TensorImpl a
    if (not kwargs or (len(kwargs) == 1 and "inplace" in kwargs)) and _not_inplace(args, kwargs, 0) \
            and _fp_var is not None:
        a = _elementwise_input(input, False)
        if a is not None and _more_may_run():
            r = _unary_like(_op_silu, input, (input,), a, _silu_fn, _activations._sigmoid, True)
    return _full("functional.silu", (input,), args, kwargs) if r is None else r


def functional_leaky_relu(input, *args, **kwargs):
    """``nn.functional.leaky_relu(input, negative_slope=0.01, inplace=False)``: the fast path,
    else F.leaky_relu's full path (its call is ``leaky_relu(input, negative_slope)``)."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    r = None
    cdef TensorImpl a
    slope = args[0] if nargs else kwargs.get("negative_slope", 0.01)
    known = len(kwargs) - ("inplace" in kwargs) - ("negative_slope" in kwargs and not nargs)
    if known == 0 and not (nargs and "negative_slope" in kwargs) and _not_inplace(args, kwargs, 1) \
            and (type(slope) is float or type(slope) is int) and _fp_var is not None:
        a = _elementwise_input(input, False)
        if a is not None and _scalar_operand(slope, a.dtype) is not None and _more_may_run():
            r = _unary_like(_op_leaky_relu, input, (input, slope), a, _leaky_relu_fn, slope, True)
    return _full("functional.leaky_relu", (input,), args, kwargs) if r is None else r


# -- bmm, where, masked_fill ---------------------------------------------------------------------------

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
    if a.sizes[0] != b.sizes[0] or a.sizes[2] != b.sizes[1] or not _more_may_run():
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


cdef inline TensorImpl _bool_mask(object t, TensorImpl like):
    """The payload of a plain cpu row-major bool tensor of ``like``'s sizes."""
    cdef TensorImpl m = _cpu_payload(t)
    if m is None or m.dtype is not _bool or m.sizes != like.sizes or not _row_major(m.sizes, m.strides):
        return None
    return m


cdef object _where_fast(object condition, object input, object other):
    """``pointwise.where`` for a bool condition and two tensors of one dtype, all row-major and of
    one shape: ``np.where(condition.astype(bool), input, other)``, a row-major result."""
    cdef TensorImpl a = _elementwise_input(input, True), b = _elementwise_input(other, True)
    if a is None or b is None or b.dtype is not a.dtype or b.sizes != a.sizes or not _more_may_run():
        return None
    cdef TensorImpl c = _bool_mask(condition, a)
    if c is None:
        return None
    cdef int record = _record_mode3(_op_where, a, b, None)
    if record < 0:
        return None
    try:
        r = _np_where(c.numpy_view().astype(bool), a.numpy_view(), b.numpy_view())
    except Exception:
        return None
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(_op_where, (condition, input, other), out) if record else out


def function_where(condition, *args, **kwargs):
    """``minitorch_nn.where(condition, input, other)`` with tensors: the fast path, else the full path."""
    r = None
    if PyTuple_GET_SIZE(args) == 2 and not kwargs:
        r = _where_fast(condition, args[0], args[1])
    return _full("where", (condition,), args, kwargs) if r is None else r


cdef object _masked_fill_fast(object self, object mask, object value):
    """``pointwise.masked_fill`` with a Python number, for a row-major tensor and a bool mask of
    its shape: ``np.where(mask, np.asarray(value).astype(dtype), self)``."""
    if type(value) is not float and type(value) is not int:
        return None
    cdef TensorImpl a = _elementwise_input(self, True)
    if a is None or (type(value) is float and a.dtype is _i64) or _scalar_operand(value, a.dtype) is None:
        return None
    cdef TensorImpl m = _bool_mask(mask, a)
    if m is None or not _more_may_run():
        return None
    cdef int record = _record_mode(_op_masked_fill, a, None)
    if record < 0:
        return None
    try:
        r = _np_where(m.numpy_view(), _np_asarray(value).astype(a.dtype.numpy_dtype), a.numpy_view())
    except Exception:
        return None
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(_op_masked_fill, (self, mask, value), out) if record else out


def tensor_masked_fill(self, mask, value, *args, **kwargs):
    """``self.masked_fill(mask, value)`` with a number: the fast path, else the full path."""
    r = None if args or kwargs else _masked_fill_fast(self, mask, value)
    return _full("Tensor.masked_fill", (self, mask, value), args, kwargs) if r is None else r


# -- F.mse_loss ---------------------------------------------------------------------------------------

cdef object _op_mse_loss = None


cdef object _mse_loss_fast(object input, object target, object reduction):
    """``functional.mse_loss`` for two float tensors of one dtype and shape, row-major, reduced by
    ``"mean"`` or ``"sum"``: no size warning, ``broadcast_tensors`` hands both back as they are,
    and ``nn_ops.mse_loss`` computes ``(a - b) ** 2`` then ``.mean()``/``.sum()`` (numpy's warnings
    as the kernel leaves them); recorded as ``aten.mse_loss.default(input, target, enum)``."""
    global _op_mse_loss
    cdef int enum
    if type(reduction) is not str:
        return None
    if reduction == "mean":
        enum = 1
    elif reduction == "sum":
        enum = 2
    else:
        return None
    cdef TensorImpl a = _elementwise_input(input, False), b = _elementwise_input(target, False)
    if a is None or b is None or b.dtype is not a.dtype or b.sizes != a.sizes or not _more_may_run():
        return None
    if _op_mse_loss is None:
        from minitorch_nn._ops import aten
        _op_mse_loss = aten.mse_loss.default
    cdef int record = _record_mode(_op_mse_loss, a, b)
    if record < 0:
        return None
    try:
        loss = (a.numpy_view() - b.numpy_view()) ** 2
        r = loss.mean() if enum == 1 else loss.sum()
    except Exception:
        return None   # (a warning turned into an error: the full path raises it again)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(_op_mse_loss, (input, target, enum), out) if record else out


def functional_mse_loss(input, target, *args, **kwargs):
    """``nn.functional.mse_loss(input, target, reduction=...)``: the fast path, else the full path."""
    r = None
    if not args and (not kwargs or (len(kwargs) == 1 and "reduction" in kwargs)):
        r = _mse_loss_fast(input, target, kwargs.get("reduction", "mean") if kwargs else "mean")
    return _full("functional.mse_loss", (input, target), args, kwargs) if r is None else r


# -- chunk and unbind: several views at once ---------------------------------------------------------

cdef object _op_split = None      # aten.split.Tensor
cdef object _op_unbind = None     # aten.unbind.int


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


cdef bint _load_split() except -1:
    global _op_split, _op_unbind
    from minitorch_nn._ops import aten
    _op_split, _op_unbind = aten.split.Tensor, aten.unbind.int
    return True


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
    if n == 0 or not _more_may_run() or (_op_split is None and not _load_split()):
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
    if d < 0 or not _more_may_run() or (_op_unbind is None and not _load_split()):
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


# -- comparisons --------------------------------------------------------------------------------------

cdef dict _compare_ops = {}   # name -> (numpy function, aten.<name>.Scalar, aten.<name>.Tensor)


cdef object _compare_fast(str name, object self, object other):
    """``pointwise``'s comparison kernel (``binary(np.greater, self, other, "bool")``...) for a
    row-major tensor and a Python number its dtype takes as it is, or a row-major tensor of the same
    dtype and shape: the numpy function with warnings off, a fresh row-major bool tensor. Nothing
    is recorded with grad either (the ops have no formula and a bool result); None to decline."""
    cdef TensorImpl a = _elementwise_input(self, True), b = None
    if a is None or PyTuple_GET_SIZE(a.sizes) == 0 or _fp_var is None:
        return None
    if isinstance(other, TensorBase):
        b = _elementwise_input(other, True)
        if b is None or b.dtype is not a.dtype or b.sizes != a.sizes:
            return None
        y = b.numpy_view()
    else:
        y = _scalar_operand(other, a.dtype)   # (a float for an int64 tensor promotes: declines)
        if y is None:
            return None
    if not _more_may_run():
        return None
    entry = _compare_ops.get(name)
    if entry is None:
        from minitorch_nn._ops import aten
        packet = getattr(aten, name)
        entry = _compare_ops[name] = (getattr(np, {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                                                   "gt": "greater", "ge": "greater_equal"}[name]),
                                      packet.Scalar, packet.Tensor)
    op = entry[2] if b is not None else entry[1]
    if not _twin_ok(op):
        return None
    if op.derivative is not None and _grad_enabled() and (a.requires_grad or (b is not None and b.requires_grad)):
        return None   # (a formula added since: the full path records what it records)
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = entry[0](a.numpy_view(), y)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    if type(r) is not np.ndarray:
        return None
    return _wrap(_Tensor, _fresh_impl(r, _bool, _cpu))


cdef inline object _compare(str name, object self, object other, tuple args, dict kwargs):
    r = None if args or kwargs else _compare_fast(name, self, other)
    return _full("Tensor." + name, (self, other), args, kwargs) if r is None else r


def tensor_gt(self, other, *args, **kwargs):
    """``self.gt(other)`` (and ``self > other``): the fast path, else the full path."""
    return _compare("gt", self, other, args, kwargs)


def tensor_lt(self, other, *args, **kwargs):
    """``self.lt(other)`` (and ``self < other``): the fast path, else the full path."""
    return _compare("lt", self, other, args, kwargs)


def tensor_ge(self, other, *args, **kwargs):
    """``self.ge(other)`` (and ``self >= other``): the fast path, else the full path."""
    return _compare("ge", self, other, args, kwargs)


def tensor_le(self, other, *args, **kwargs):
    """``self.le(other)`` (and ``self <= other``): the fast path, else the full path."""
    return _compare("le", self, other, args, kwargs)


def tensor_eq(self, other, *args, **kwargs):
    """``self.eq(other)`` (and ``self == other``): the fast path, else the full path."""
    return _compare("eq", self, other, args, kwargs)


def tensor_ne(self, other, *args, **kwargs):
    """``self.ne(other)`` (and ``self != other``): the fast path, else the full path."""
    return _compare("ne", self, other, args, kwargs)


# -- var and std ---------------------------------------------------------------------------------------

cdef object _op_var = None         # aten.var.correction
cdef object _op_std = None         # aten.std.correction
cdef object _var_steps = None      # reduction._var_steps, the kernel's own arithmetic
cdef dict _CORRECTION_1 = {"correction": 1}


cdef object _var_std_fast(object input, object dim, bint keepdim, bint take_sqrt):
    """``reductions.var``/``std`` without ``unbiased``/``correction``: ``aten.var.correction(input)``
    for ``dim`` None, else ``aten.var.correction(input, dims, correction=1[, keepdim=True])``
    (PyTorch's ``(dim, unbiased=True)`` signature); computed as ``reduction._var`` does it for a
    float tensor whose count exceeds the correction (``_var_steps`` with warnings off, then
    ``np.sqrt`` for std), recorded with those arguments; None to decline."""
    global _op_var, _op_std, _var_steps
    cdef TensorImpl a = _elementwise_input(input, False)
    if a is None or _fp_var is None:
        return None
    cdef Py_ssize_t n = PyTuple_GET_SIZE(a.sizes), i, d, count = 1
    cdef list dims = None, axes = []
    if dim is None:
        if keepdim:
            return None
        for i in range(n):
            count *= <Py_ssize_t>a.sizes[i]
    else:
        if n == 0:
            return None
        if type(dim) is int:
            dims = [dim]
        elif type(dim) is list or type(dim) is tuple:
            dims = list(dim)
            if not dims:
                return None
        else:
            return None
        for v in dims:
            d = _dim_index(v, n)
            if d < 0 or d in axes:
                return None
            axes.append(d)
            count *= <Py_ssize_t>a.sizes[d]
    ddof = 1
    if count - 1 <= 0 or not _more_may_run():
        return None   # (no degrees of freedom: the kernel's warning)
    if _var_steps is None:
        import sys
        reduction = sys.modules.get("minitorch_nn.backends.cpu.reduction")
        if reduction is None or not hasattr(reduction, "_var_steps"):
            return None
        from minitorch_nn._ops import aten
        _op_var, _op_std, _var_steps = aten.var.correction, aten.std.correction, reduction._var_steps
    op = _op_std if take_sqrt else _op_var
    cdef int record = _record_mode(op, a, None)
    cdef _Recipe recipe = None
    if record > 0:
        recipe = _recipe_for(op)
        if recipe is None:
            return None
    elif record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _var_steps(a.numpy_view(), None if dims is None else tuple(axes), count, ddof, keepdim)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    if take_sqrt:
        try:
            r = np.sqrt(r)
        except Exception:
            return None
    out = _fresh_tensor(r, a.dtype)
    if out is None or not record:
        return out
    if dims is None:
        args, kwargs = (input,), None
    else:
        args = (input, dims)
        kwargs = {"correction": 1, "keepdim": True} if keepdim else _CORRECTION_1
    r = _record(op, recipe, args, kwargs, out, False)
    return out if r is NotImplemented else r


cdef object _var_std_args(object input, tuple args, dict kwargs, bint take_sqrt):
    """The forms ``()``, ``(dim)``, ``(dim=...)``, each with ``keepdim=`` as a keyword."""
    cdef Py_ssize_t nargs = PyTuple_GET_SIZE(args)
    if nargs > 1:
        return None
    dim = args[0] if nargs else None
    keepdim = False
    if kwargs:
        for key, value in kwargs.items():
            if key == "dim" and nargs == 0:
                dim = value
            elif key == "keepdim":
                keepdim = value
            else:
                return None
        if type(keepdim) is not bool:
            return None
    if dim is not None and type(dim) is not int and type(dim) is not list and type(dim) is not tuple:
        return None   # (a bool is unbiased=, among others: the full path parses it)
    return _var_std_fast(input, dim, keepdim, take_sqrt)


def tensor_var(self, *args, **kwargs):
    """``self.var([dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(self, args, kwargs, False)
    return _full("Tensor.var", (self,), args, kwargs) if r is None else r


def tensor_std(self, *args, **kwargs):
    """``self.std([dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(self, args, kwargs, True)
    return _full("Tensor.std", (self,), args, kwargs) if r is None else r


def function_var(input, *args, **kwargs):
    """``minitorch_nn.var(input[, dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(input, args, kwargs, False)
    return _full("var", (input,), args, kwargs) if r is None else r


def function_std(input, *args, **kwargs):
    """``minitorch_nn.std(input[, dim][, keepdim=])``: the fast path, else the full path."""
    r = _var_std_args(input, args, kwargs, True)
    return _full("std", (input,), args, kwargs) if r is None else r


# Tensor's methods from this file (``_tensor_methods.py`` installs them; their full paths arrive
# through install_fast_functions under "Tensor.<name>"), the public functions (added to
# FAST_OP_FUNCTIONS, installed with the others) and the nn.functional ones (``nn/functional.py``).
FAST_MORE_METHODS = {
    "flatten": tensor_flatten, "sum": tensor_sum_dims, "clone": tensor_clone, "clamp": tensor_clamp,
    "cumsum": tensor_cumsum, "bmm": tensor_bmm, "masked_fill": tensor_masked_fill, "chunk": tensor_chunk,
    "unbind": tensor_unbind, "gt": tensor_gt, "lt": tensor_lt, "ge": tensor_ge, "le": tensor_le, "eq": tensor_eq,
    "ne": tensor_ne, "var": tensor_var, "std": tensor_std,
}
FAST_OP_FUNCTIONS.update({
    "flatten": function_flatten, "clone": function_clone, "clamp": function_clamp, "cumsum": function_cumsum,
    "bmm": function_bmm, "where": function_where, "chunk": function_chunk, "unbind": function_unbind,
    "var": function_var, "std": function_std,
})

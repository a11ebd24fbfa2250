# Compiled fast paths for more ops (per-op overhead, with and without grad). Included
# into _C.pyx after _fastpath.pxi (``+ - * relu sum detach to``), whose checks and helpers it reuses.
#
# What it covers
# --------------
# * unary float math: ``exp expm1 log log2 log10 log1p sqrt rsqrt sin cos tan sinh cosh tanh
#   sigmoid reciprocal`` (float32/float64), ``neg abs`` (also int64), as methods, and ``-x``,
#   ``abs(x)``;
# * ``x.div(y)`` and ``x / y`` with a tensor of the same float dtype or a Python number, and
#   ``number / x`` (``reciprocal`` then ``mul``, as ``Tensor.__rtruediv__``);
# * ``x.pow(n)``, ``x ** n`` and ``x.square()`` with a Python number ``n`` (not 0 or 1);
# * ``x.matmul(y)``, ``x.mm(y)`` and ``x @ y`` for two float matrices of one dtype (any strides), and
#   ``matmul``/``@`` of a matrix and a vector (``mv``), of two vectors (``dot``), and of a row-major
#   batch (3 or more dims) and a matrix or a vector (folded into one ``mm``/``mv`` through views);
# * the views ``x.t()``, ``x.transpose(d0, d1)``, ``x.unsqueeze(d)``, ``x.squeeze()``,
#   ``x.squeeze(d)``, ``x.permute(*dims)``, ``x.expand(*sizes)``, ``x.view(*shape)`` and
#   ``x.reshape(*shape)`` (when it is a view), in
#   ``_fastpath_views.pxi`` (included right after this file, with which it shares what is below).
#
# Each is the Tensor method itself (see ``_tensor_methods.py``): when nothing could observe the op
# (the ``_nothing_intercepts()`` conditions of _fastpath.pxi; exact ``Tensor`` or ``Parameter``
# operands on the cpu) it does in C exactly what the cpu kernel would do -- the same numpy function
# on the same arrays with the same floating-point error state, or for a view the same payload as
# ``backends/views.py`` builds through ``_tensor._make_view`` (shared storage and version counter,
# ``_base``, sizes/strides/offset) -- and otherwise it calls the full-path method, which raises
# PyTorch's errors (a shape mismatch, a bad dim: we decline rather than raise).
#
# With grad: when grad mode is on and an input requires grad, the value is computed the same way
# and then handed to ``record_computed`` (_autograd_fast.pxi), which builds the graph node, saves
# tensors and wires the output (for a view also ``view_version``) as the full path's autograd
# layer does, with the op's arguments exactly as the full path passes them (``x.view(2, -1)``
# records ``aten.view.default(x, [2, -1])``). ``_records()`` says when the compiled recorder may
# stand in (no ``saved_tensors_hooks``: their pack hooks would run before the kernel).
#
# Guards: each op's twin runs only while its guard holds (``_twin_ok``, _fastpath.pxi): the op's
# registered kernel, derivative and module attribute are the ones the twin mirrors, and the kernel
# (with the helpers it calls) has the fingerprint the build recorded. So in a course copy, where a
# student writes the kernel of ``transpose`` or ``view`` (``compute_view_strides``), the student's
# code runs. ``_record_mode`` checks the guard; a fast path that computes an op without calling
# ``_record_mode`` for it calls ``_twin_ok`` itself.
#
# Only the inputs whose result is simple take this path: row-major, non-empty float32/float64
# (int64 for neg/abs) operands for elementwise ops (their result is then row-major, as the
# kernels' layout rule gives); any layout for the views and for matmul (a fresh row-major
# product). Everything else -- other dtypes, strided elementwise inputs, vector @ matrix, batch @ batch,
# ``out=``, keyword arguments -- takes the full path unchanged. ``tests/test_fast_path_ops.py``
# compares both paths on random operands.

from cpython.tuple cimport PyTuple_GET_SIZE

# What install_fast_ops hands us (full-path functions), and what _load_fast_ops looks up on first
# use (the ops and the kernels' numpy functions: the backends load after the method table).
cdef bint _ops_loaded = False
cdef object _slow_div = None
cdef object _slow_truediv = None
cdef object _slow_matmul = None
cdef object _slow_mm = None
cdef object _slow_matmul_op = None
cdef object _slow_pow = None
cdef object _slow_square = None
cdef object _slow_pow_op = None
cdef object _slow_rtruediv = None
cdef object _slow_t = None
cdef object _slow_transpose = None
cdef object _slow_unsqueeze = None
cdef object _slow_squeeze = None
cdef object _slow_view = None
cdef object _slow_reshape = None
cdef object _slow_permute = None
cdef object _slow_expand = None
cdef object _op_div = None
cdef object _op_pow = None
cdef object _op_mul_tensor = None
cdef object _op_mm = None
cdef object _op_mv = None
cdef object _op_dot = None
cdef object _op_t = None
cdef object _op_transpose = None
cdef object _op_unsqueeze = None
cdef object _op_squeeze = None
cdef object _op_squeeze_dim = None
cdef object _op_view = None
cdef object _op_unsafe_view = None
cdef object _op_permute = None
cdef object _op_expand = None
cdef object _op_detach = None
cdef object _op_to_copy = None
cdef object _np_true_divide = np.true_divide
cdef object _np_power = np.power
cdef object _np_matmul = np.matmul
cdef object _np_dot = np.dot


cdef class _Unary:
    """One unary op: its OpOverload, the numpy function its cpu kernel applies, its full path."""
    cdef str name
    cdef bint ints      # int64 inputs too (result int64): neg, abs; the others give floats
    cdef object op
    cdef object fn
    cdef object slow


# the float ops take their function from the cpu kernels' table (pointwise._FLOAT_UNARY)
_FLOAT_UNARY_NAMES = ("exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
                      "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal")
cdef dict _unary = {}   # name -> _Unary


cdef _Unary _make_unary(str name, bint ints):
    cdef _Unary u = _Unary.__new__(_Unary)
    u.name, u.ints = name, ints
    _unary[name] = u
    return u


for _n in _FLOAT_UNARY_NAMES:
    _make_unary(_n, False)
del _n
_make_unary("neg", True)
_make_unary("abs", True)
cdef _Unary _u_exp = _unary["exp"]
cdef _Unary _u_expm1 = _unary["expm1"]
cdef _Unary _u_log = _unary["log"]
cdef _Unary _u_log2 = _unary["log2"]
cdef _Unary _u_log10 = _unary["log10"]
cdef _Unary _u_log1p = _unary["log1p"]
cdef _Unary _u_sqrt = _unary["sqrt"]
cdef _Unary _u_rsqrt = _unary["rsqrt"]
cdef _Unary _u_sin = _unary["sin"]
cdef _Unary _u_cos = _unary["cos"]
cdef _Unary _u_tan = _unary["tan"]
cdef _Unary _u_sinh = _unary["sinh"]
cdef _Unary _u_cosh = _unary["cosh"]
cdef _Unary _u_tanh = _unary["tanh"]
cdef _Unary _u_sigmoid = _unary["sigmoid"]
cdef _Unary _u_reciprocal = _unary["reciprocal"]
cdef _Unary _u_neg = _unary["neg"]
cdef _Unary _u_abs = _unary["abs"]


def install_fast_ops(*, slow, slow_view, slow_reshape, slow_truediv, slow_matmul_op, slow_pow_op=None,
                     slow_rtruediv=None):
    """Give these fast paths the full-path functions they defer to (called once by
    ``_tensor_methods`` after ``install_fast_path``). ``slow`` maps a method name (``"exp"``,
    ``"div"``, ``"t"``...) to the full-path method that hands the compiled one to handlers."""
    global _slow_div, _slow_truediv, _slow_matmul, _slow_mm, _slow_matmul_op, _slow_t, _slow_transpose
    global _slow_unsqueeze, _slow_squeeze, _slow_view, _slow_reshape, _slow_pow, _slow_square, _slow_pow_op
    global _slow_rtruediv, _slow_permute, _slow_expand
    cdef _Unary u
    for name, u in _unary.items():
        u.slow = slow[name]
    _slow_div, _slow_matmul, _slow_mm = slow["div"], slow["matmul"], slow["mm"]
    _slow_t, _slow_transpose = slow["t"], slow["transpose"]
    _slow_unsqueeze, _slow_squeeze = slow["unsqueeze"], slow["squeeze"]
    _slow_view, _slow_reshape = slow_view, slow_reshape
    _slow_truediv, _slow_matmul_op = slow_truediv, slow_matmul_op
    _slow_pow, _slow_square, _slow_pow_op = slow.get("pow"), slow.get("square"), slow_pow_op
    _slow_rtruediv = slow_rtruediv
    _slow_permute, _slow_expand = slow.get("permute"), slow.get("expand")


cdef bint _load_fast_ops() except -1:
    """Look up, once, the ops and the numpy functions of their cpu kernels. False while the cpu
    backend is not loaded yet (during ``import minitorch_nn``): the full path then runs."""
    global _ops_loaded, _op_div, _op_pow, _op_mul_tensor, _op_mm, _op_mv, _op_dot, _op_t, _op_transpose
    global _op_unsqueeze, _op_squeeze, _op_permute, _op_expand
    global _op_squeeze_dim, _op_view, _op_unsafe_view, _op_detach, _op_to_copy
    import sys
    pointwise = sys.modules.get("minitorch_nn.backends.cpu.pointwise")
    views = sys.modules.get("minitorch_nn.backends.views")
    if pointwise is None or views is None or _slow_view is None:
        return False
    from minitorch_nn._ops import aten
    cdef _Unary u
    for name, u in _unary.items():
        u.op = getattr(aten, name).default
        if not u.ints:
            u.fn = pointwise._FLOAT_UNARY[name]
    _u_neg.fn = np.negative               # pointwise.neg: unary(np.negative, self)
    _u_abs.fn = pointwise._SAME_UNARY["abs"][0]
    _op_div, _op_mm, _op_mv, _op_dot = aten.div.Tensor, aten.mm.default, aten.mv.default, aten.dot.default
    _op_pow, _op_mul_tensor = aten.pow.Tensor_Scalar, aten.mul.Tensor
    _op_t, _op_transpose = aten.t.default, aten.transpose.int
    _op_unsqueeze, _op_squeeze, _op_squeeze_dim = aten.unsqueeze.default, aten.squeeze.default, aten.squeeze.dim
    _op_view, _op_unsafe_view = aten.view.default, aten._unsafe_view.default
    _op_permute, _op_expand = aten.permute.default, aten.expand.default
    _op_detach, _op_to_copy = aten.detach.default, aten._to_copy.default
    _ops_loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _ops_loaded or _load_fast_ops()


cdef inline int _record_mode(object op, TensorImpl a, TensorImpl b) except -2:
    """``_records(a, b)`` (1 record, 0 nothing to record, -1 step aside), stepping aside also when
    ``op``'s derivative is not one the compiled recorder handles (removed or replaced by a student,
    say: the full path then records what it records), and when ``op``'s guard does not hold."""
    if not _twin_ok(op):
        return -1
    cdef int record = _records(a, b)
    if record == 1:
        d = op.derivative
        if d is None or getattr(d, "simple", False) is not True:
            return -1
    return record


# -- which operands ---------------------------------------------------------------------------------

cdef inline TensorImpl _cpu_payload(object t):
    """``t``'s payload when ``t`` is a plain ``Tensor``/``Parameter`` (see ``_plain_class``) on the cpu."""
    if type(t) is not _Tensor and not _plain_class(type(t)):
        return None
    cdef TensorImpl impl = (<TensorBase>t)._impl
    if impl is None or impl.storage is None:
        return None
    device = impl.device
    if device is not _cpu and device.type != "cpu":
        return None
    return impl


cdef inline TensorImpl _elementwise_input(object t, bint ints):
    """The payload of an operand whose elementwise result is simply row-major: plain, cpu,
    float32/float64 (or int64 when ``ints``), row-major and non-empty. It may require grad."""
    cdef TensorImpl impl = _cpu_payload(t)
    if impl is None:
        return None
    dtype = impl.dtype
    if dtype is not _f32 and dtype is not _f64 and not (ints and dtype is _i64):
        return None
    if not _row_major(impl.sizes, impl.strides):
        return None
    return impl


# -- unary math ---------------------------------------------------------------------------------------

cdef object _unary_fast(_Unary u, object self):
    """``u``'s op on ``self`` as the cpu kernel computes it (``pointwise.unary``: the numpy
    function with floating-point warnings off), recorded when needed; or None."""
    if _fp_var is None:
        return None
    cdef TensorImpl a = _elementwise_input(self, u.ints)
    if a is None or not _may_run():
        return None
    cdef int record = _record_mode(u.op, a, None)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = u.fn(a.numpy_view())
    except Exception:
        return None   # (cannot happen with warnings off; the full path would raise it)
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(u.op, (self,), out) if record else out


cdef object _unary_op(_Unary u, object self, tuple args, dict kwargs):
    """The method ``self.<u>()``: the fast path, else the full path."""
    r = None if args or kwargs else _unary_fast(u, self)
    return u.slow(self, *args, **kwargs) if r is None else r


def tensor_exp(self, *args, **kwargs):
    """``self.exp()``: the fast path, else the full path."""
    return _unary_op(_u_exp, self, args, kwargs)


def tensor_expm1(self, *args, **kwargs):
    """``self.expm1()``: the fast path, else the full path."""
    return _unary_op(_u_expm1, self, args, kwargs)


def tensor_log(self, *args, **kwargs):
    """``self.log()``: the fast path, else the full path."""
    return _unary_op(_u_log, self, args, kwargs)


def tensor_log2(self, *args, **kwargs):
    """``self.log2()``: the fast path, else the full path."""
    return _unary_op(_u_log2, self, args, kwargs)


def tensor_log10(self, *args, **kwargs):
    """``self.log10()``: the fast path, else the full path."""
    return _unary_op(_u_log10, self, args, kwargs)


def tensor_log1p(self, *args, **kwargs):
    """``self.log1p()``: the fast path, else the full path."""
    return _unary_op(_u_log1p, self, args, kwargs)


def tensor_sqrt(self, *args, **kwargs):
    """``self.sqrt()``: the fast path, else the full path."""
    return _unary_op(_u_sqrt, self, args, kwargs)


def tensor_rsqrt(self, *args, **kwargs):
    """``self.rsqrt()``: the fast path, else the full path."""
    return _unary_op(_u_rsqrt, self, args, kwargs)


def tensor_sin(self, *args, **kwargs):
    """``self.sin()``: the fast path, else the full path."""
    return _unary_op(_u_sin, self, args, kwargs)


def tensor_cos(self, *args, **kwargs):
    """``self.cos()``: the fast path, else the full path."""
    return _unary_op(_u_cos, self, args, kwargs)


def tensor_tan(self, *args, **kwargs):
    """``self.tan()``: the fast path, else the full path."""
    return _unary_op(_u_tan, self, args, kwargs)


def tensor_sinh(self, *args, **kwargs):
    """``self.sinh()``: the fast path, else the full path."""
    return _unary_op(_u_sinh, self, args, kwargs)


def tensor_cosh(self, *args, **kwargs):
    """``self.cosh()``: the fast path, else the full path."""
    return _unary_op(_u_cosh, self, args, kwargs)


def tensor_tanh(self, *args, **kwargs):
    """``self.tanh()``: the fast path, else the full path."""
    return _unary_op(_u_tanh, self, args, kwargs)


def tensor_sigmoid(self, *args, **kwargs):
    """``self.sigmoid()``: the fast path (the kernel's own ``pointwise._sigmoid``), else the full path."""
    return _unary_op(_u_sigmoid, self, args, kwargs)


def tensor_reciprocal(self, *args, **kwargs):
    """``self.reciprocal()``: the fast path, else the full path."""
    return _unary_op(_u_reciprocal, self, args, kwargs)


def tensor_neg(self, *args, **kwargs):
    """``self.neg()`` and ``-self``: the fast path, else the full path."""
    return _unary_op(_u_neg, self, args, kwargs)


def tensor_abs(self, *args, **kwargs):
    """``self.abs()`` and ``abs(self)``: the fast path, else the full path."""
    return _unary_op(_u_abs, self, args, kwargs)


# -- division -----------------------------------------------------------------------------------------

cdef object _div(object self, object other):
    """``self / other`` as ``pointwise.div`` computes it (``np.true_divide`` with warnings off) for
    a float tensor and a tensor of its dtype or a Python number, recorded when needed; or None."""
    cdef TensorImpl a = _elementwise_input(self, False)
    if a is None or _fp_var is None or not _may_run():
        return None
    dtype = a.dtype
    cdef TensorImpl b = None
    if type(other) is _Tensor or isinstance(other, TensorBase):
        b = _elementwise_input(other, False)
        if b is None or b.dtype is not dtype:
            return None
        y = b.numpy_view()
    else:
        y = _scalar_operand(other, dtype)   # (exact int/float only: bools and numpy scalars decline)
        if y is None:
            return None
    cdef int record = _record_mode(_op_div, a, b)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_true_divide(a.numpy_view(), y)
    except Exception:
        return None   # a broadcasting error: the full path raises PyTorch's
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, dtype)
    if out is None:
        return None
    return _recorded(_op_div, (self, other), out) if record else out


def tensor_div(self, other, *args, **kwargs):
    """``self.div(other)``: the fast path, else the full path (``rounding_mode=``, ``out=``...)."""
    if not args and not kwargs:
        r = _div(self, other)
        if r is not None:
            return r
    return _slow_div(self, other, *args, **kwargs)


def tensor_truediv(self, other):
    """``self / other``: the fast path, else the full path."""
    r = _div(self, other)
    return _slow_truediv(self, other) if r is None else r


cdef object _rdiv(object self, object other):
    """``other / self`` for a Python number ``other``: what ``Tensor.__rtruediv__`` does,
    ``aten.mul.Tensor(aten.reciprocal.default(self), other)``, as two recorded ops when needed --
    ``np.reciprocal`` (the kernel's), then ``np.multiply`` (``_fastpath.pxi``'s ``_np_multiply``) by
    the number as a 0-d array of the dtype (``pointwise.mul``), warnings off; or None."""
    cdef TensorImpl a = _elementwise_input(self, False)
    if a is None or _fp_var is None or not _may_run():
        return None
    dtype = a.dtype
    y = _scalar_operand(other, dtype)
    if y is None:
        return None
    cdef int record = _record_mode(_u_reciprocal.op, a, None)
    if record < 0 or _record_mode(_op_mul_tensor, a, None) < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        inverse = _fresh_tensor(_u_reciprocal.fn(a.numpy_view()), dtype)
        if inverse is None:
            return None
        out = _fresh_tensor(_np_multiply((<TensorBase>inverse)._impl.numpy_view(), y), dtype)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    if out is None:
        return None
    if record:
        _recorded(_u_reciprocal.op, (self,), inverse)
        return _recorded(_op_mul_tensor, (inverse, other), out)
    return out


def tensor_rtruediv(self, other):
    """``other / self``: the fast path for a Python number ``other``, else the full path."""
    r = _rdiv(self, other)
    return _slow_rtruediv(self, other) if r is None else r


# -- power with a number ------------------------------------------------------------------------------

cdef object _pow_scalar(object self, object exponent):
    """``self ** exponent`` for a float tensor and a Python number other than 0 and 1 (which the
    kernel answers with ``ones_like``/a copy), as ``pointwise._pow`` computes it: ``np.power`` of
    the tensor and the number as a 0-d array of its dtype, warnings off; recorded as
    ``aten.pow.Tensor_Scalar(self, exponent)`` when needed; or None."""
    if (type(exponent) is not int and type(exponent) is not float) or exponent == 0 or exponent == 1:
        return None
    cdef TensorImpl a = _elementwise_input(self, False)
    if a is None or _fp_var is None or not _may_run():
        return None
    y = _scalar_operand(exponent, a.dtype)
    if y is None:
        return None
    cdef int record = _record_mode(_op_pow, a, None)
    if record < 0:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = _np_power(a.numpy_view(), y)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(_op_pow, (self, exponent), out) if record else out


def tensor_pow(self, exponent, *args, **kwargs):
    """``self.pow(exponent)``: the fast path for a Python number, else the full path."""
    r = None if args or kwargs else _pow_scalar(self, exponent)
    return _slow_pow(self, exponent, *args, **kwargs) if r is None else r


def tensor_square(self, *args, **kwargs):
    """``self.square()`` (``aten.pow.Tensor_Scalar(self, 2)``): the fast path, else the full path."""
    r = None if args or kwargs else _pow_scalar(self, 2)
    return _slow_square(self, *args, **kwargs) if r is None else r


def tensor_pow_op(self, other):
    """``self ** other``: the fast path for a Python number, else the full path."""
    r = _pow_scalar(self, other)
    return _slow_pow_op(self, other) if r is None else r


# -- matrix product ---------------------------------------------------------------------------------

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
    return _slow_matmul(self, other, *args, **kwargs)


def tensor_mm(self, mat2, *args, **kwargs):
    """``self.mm(mat2)``: the fast path, else the full path."""
    if not args and not kwargs:
        r = _mm(self, mat2, True)
        if r is not None:
            return r
    return _slow_mm(self, mat2, *args, **kwargs)


def tensor_matmul_op(self, other):
    """``self @ other``: the fast path for matrices and vectors, else the full path."""
    r = _mm(self, other)
    return _slow_matmul_op(self, other) if r is None else r


# Tensor's methods from this file, by name (``_tensor_methods.py`` installs them like _FAST_METHODS)
FAST_OP_METHODS = {
    "exp": tensor_exp, "expm1": tensor_expm1, "log": tensor_log, "log2": tensor_log2, "log10": tensor_log10,
    "log1p": tensor_log1p, "sqrt": tensor_sqrt, "rsqrt": tensor_rsqrt, "sin": tensor_sin, "cos": tensor_cos,
    "tan": tensor_tan, "sinh": tensor_sinh, "cosh": tensor_cosh, "tanh": tensor_tanh, "sigmoid": tensor_sigmoid,
    "reciprocal": tensor_reciprocal, "neg": tensor_neg, "abs": tensor_abs, "div": tensor_div, "pow": tensor_pow,
    "square": tensor_square, "matmul": tensor_matmul, "mm": tensor_mm,
}   # (and the views, added by _fastpath_views.pxi)

# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/backends/cpu/pointwise.py``: the elementwise kernels.

Mirrors, kernel by kernel (each runs only while that kernel's guard holds, see ``_ext/twins/_gate.pyx``):

* ``add``, ``sub``, ``mul`` (``binary`` with ``np.add``/``np.subtract``/``np.multiply``): ``a + b``,
  ``a - b``, ``a * b`` (and ``2 + a``, ``2 * a``), ``a.add(b)``..., ``minitorch_nn.add(a, b)``...;
* the unary float math of ``_FLOAT_UNARY`` (``exp expm1 log log2 log10 log1p sqrt rsqrt sin cos tan
  sinh cosh tanh sigmoid reciprocal``, float32/float64) and ``neg``, ``abs`` (also int64), as
  methods, public functions, ``-x`` and ``abs(x)``;
* ``div`` (``x / y``, ``x.div(y)``, and ``number / x`` as ``Tensor.__rtruediv__`` computes it:
  ``reciprocal`` then ``mul``), ``pow`` with a Python number (``x ** n``, ``x.pow(n)``,
  ``x.square()``), ``clamp`` with number bounds (``_clamp``), ``where`` and ``masked_fill``, and
  the comparisons ``gt lt ge le eq ne`` (``x > y`` & co.).

Why compiled: per-op overhead on small tensors (see the gate's docstring). How it stays
bit-equal: it calls the same numpy function on the same arrays with the same floating-point
error state as the kernel, and wraps the result as the kernel's ``wrap`` does; with grad it
hands the result to the compiled recorder with the op's arguments exactly as the full path
passes them. Only the simple inputs take this path: row-major, non-empty float32/float64 (int64
where the kernel keeps it) operands and Python numbers whose conversion is plainly exact; and, for
``add``/``sub``/``mul`` of two tensors of one shape and for the unary math, two strided layouts
whose result layout needs no rule (the gate's ``_nested_strides``: row-major order with gaps, as
an LSTM's ``chunk``-ed gates, giving a row-major result; ``_dense_permuted`` with the same strides
on every operand, as transposed weight gradients summed in the backward pass, giving a result
with those strides, laid out as the kernels' ``wrap_strided`` lays it out). Everything else --
other dtypes, other strides, broadcasting of strided operands, ``out=``, keywords, subclasses,
modes -- takes the full path, which also raises PyTorch's errors. ``tests/twins/test_fast_path.py``,
``test_fast_path_ops.py``, ``test_fast_path_binary_functions.py``, ``test_fast_path_more.py`` and
``test_fast_path_strided.py`` compare both paths.
"""

cimport cython
cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.tuple cimport PyTuple_GET_SIZE

import numpy as np

from minitorch_nn._C cimport (TensorBase, TensorImpl, _fresh_impl, _is_contiguous, _mark_view_of,
                              _mtnn_mul_overflow, _wrap_payload)
from minitorch_nn._twins._gate cimport (_Tensor, _cpu, _cpu_payload, _dense_permuted, _dim_index,
                                        _elementwise_input, _f32, _f64, _fp_ignore, _fp_var,
                                        _fresh_strided_tensor, _fresh_tensor, _full, _nested_strides,
                                        _grad_enabled, _i64, _nothing_intercepts, _plain, _plain_cpu,
                                        _record_mode, _record_mode3, _recorded, _recorded_with, _records,
                                        _row_major, _scalar_operand, _size_arg, _twin_ok, _typenum,
                                        _unary_like)
from minitorch_nn._twins._gate cimport (_NONDIFFERENTIABLE, _Recipe, _record, _record_general,
                                        _recipe_for, _recipe_of, recorder_ready)  # the recorder slot

cnp.import_array()

# The ops and the kernels' numpy functions, looked up on first use (``_load``: the backends load
# after the method table).
cdef bint _loaded = False
cdef object _op_add = None
cdef object _op_sub = None
cdef object _op_mul = None
cdef object _op_div = None
cdef object _op_pow = None
cdef object _op_clamp = None
cdef object _op_where = None         # aten.where.self
cdef object _op_masked_fill = None   # aten.masked_fill.Scalar
cdef object _bool = None             # minitorch_nn.bool
cdef object _np_add = np.add
cdef object _np_subtract = np.subtract
cdef object _np_multiply = np.multiply
cdef object _np_maximum = np.maximum
cdef object _np_true_divide = np.true_divide
cdef object _np_power = np.power
cdef object _np_where = np.where
cdef object _np_asarray = np.asarray


cdef class _Unary:
    """One unary op: its OpOverload, the numpy function its cpu kernel applies, its full path."""
    cdef str name
    cdef bint ints      # int64 inputs too (result int64): neg, abs; the others give floats
    cdef object op
    cdef object fn
    cdef str method      # "Tensor.<name>": the method's full path (``_full``)


# the float ops take their function from the cpu kernels' table (pointwise._FLOAT_UNARY)
_FLOAT_UNARY_NAMES = ("exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
                      "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal")
cdef dict _unary = {}   # name -> _Unary


cdef _Unary _make_unary(str name, bint ints):
    cdef _Unary u = _Unary.__new__(_Unary)
    u.name, u.ints, u.method = name, ints, "Tensor." + name
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


cdef bint _load() except -1:
    """Look up, once, the ops and the numpy functions of their cpu kernels. False while the cpu
    backend is not loaded yet (during ``import minitorch_nn``): the full path then runs."""
    global _loaded, _op_add, _op_sub, _op_mul, _op_div, _op_pow, _op_clamp, _op_where, _op_masked_fill, _bool
    import sys
    pointwise = sys.modules.get("minitorch_nn.backends.cpu.pointwise")
    if pointwise is None:
        return False
    from minitorch_nn._ops import aten
    from minitorch_nn import _dtype
    cdef _Unary u
    for name, u in _unary.items():
        u.op = getattr(aten, name).default
        if not u.ints:
            u.fn = pointwise._FLOAT_UNARY[name]
    _u_neg.fn = np.negative               # pointwise.neg: unary(np.negative, self)
    _u_abs.fn = pointwise._SAME_UNARY["abs"][0]
    _op_add, _op_sub, _op_mul = aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor
    _op_div, _op_pow = aten.div.Tensor, aten.pow.Tensor_Scalar
    _op_clamp, _op_where, _op_masked_fill = aten.clamp.default, aten.where.self, aten.masked_fill.Scalar
    _bool = _dtype.bool
    _loaded = True
    return True


cdef inline bint _may_run() except -1:
    """Nothing could observe the op (``_nothing_intercepts``) and the ops are looked up."""
    if not _nothing_intercepts():
        return False
    return _loaded or _load()


# -- add, sub, mul ------------------------------------------------------------------------------------

cdef inline TensorImpl _any_layout(object t):
    """``_plain`` without its row-major condition: a plain cpu float32/float64/int64 tensor."""
    cdef TensorImpl impl = _cpu_payload(t)
    if impl is None:
        return None
    dtype = impl.dtype
    if dtype is not _f32 and dtype is not _f64 and dtype is not _i64:
        return None
    return impl


cdef inline int _layout(TensorImpl t) except -2:
    """0: row-major (non-empty); 1: ``_nested_strides`` (row-major order with gaps: an elementwise
    result is row-major); 2: ``_dense_permuted`` (the result keeps these strides); -1: another
    layout, whose result's strides the full path works out."""
    if _row_major(t.sizes, t.strides):
        return 0
    if _nested_strides(t.sizes, t.strides):
        return 1
    if _dense_permuted(t.sizes, t.strides):
        return 2
    return -1


cdef inline bint _same_order(TensorImpl a, int layout_a, TensorImpl b) except -1:
    """Whether operands ``a`` (of layout ``layout_a``, not both row-major) and ``b`` give a result
    whose strides ``_binary`` knows: one shape, and both in row-major order (with gaps allowed:
    a row-major result) or both with the same permuted dense strides (a result with them)."""
    if b.sizes != a.sizes:
        return False
    if layout_a == 2:
        return b.strides == a.strides
    return _nested_strides(b.sizes, b.strides) and _nested_strides(a.sizes, a.strides)


cdef object _binary(object ufunc, int which, object self, object other):
    """``ufunc(self, other)`` as a fresh tensor (recorded when an input requires grad), or None
    when the full path must run. ``which`` names the op for the recorder: 0 add, 1 sub, 2 mul.

    Row-major operands give a row-major result. Two operands of one shape that are not both
    row-major are taken when the result's layout is plain (``_same_order``): both in row-major
    order with gaps (``chunk`` views: a row-major result) or both permuted alike (transposed
    gradients meeting in the backward pass: a result with their strides, as ``wrap_strided``
    makes it)."""
    cdef TensorImpl a = _any_layout(self)
    if a is None or not _nothing_intercepts() or not (_loaded or _load()):
        return None
    dtype = a.dtype
    cdef int layout = _layout(a)
    cdef TensorImpl b = None
    if isinstance(other, TensorBase):
        b = _any_layout(other)
        if b is None or b.dtype is not dtype:
            return None
        if layout == 0 and _row_major(b.sizes, b.strides):
            pass
        elif layout < 0 or not _same_order(a, layout, b):
            return None
        y = b.numpy_view()
    else:
        if layout != 0:
            return None
        y = _scalar_operand(other, dtype)
        if y is None:
            return None
    op = _op_add if which == 0 else _op_sub if which == 1 else _op_mul
    if not _twin_ok(op):
        return None
    cdef int record = _records(a, b)
    cdef _Recipe recipe = None
    if record > 0:
        if dtype is _i64:
            return None
        recipe = _recipe_for(op)
    if record < 0 or (record and recipe is None):
        return None
    x = a.numpy_view()
    if dtype is _i64:  # integer add/sub/mul set no floating-point flags: no error state to switch
        try:
            r = ufunc(x, y)
        except Exception:
            return None  # the full path raises PyTorch's error
        # (int64 tensors never require grad)
        return _fresh_strided_tensor(r, dtype, a.sizes, a.strides) if layout == 2 else _fresh_tensor(r, dtype)
    if _fp_var is None:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = ufunc(x, y)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_strided_tensor(r, dtype, a.sizes, a.strides) if layout == 2 else _fresh_tensor(r, dtype)
    if record and out is not None:
        return _recorded_with(op, recipe, (self, other), out)
    return out


# The functions installed on Tensor (see _tensor_methods.py). ``2 + a`` and ``2 * a`` compute
# ``ufunc(a, 2)``: the full path turns them into ``add(a, 2)`` too, and the same argument order
# keeps even NaN payloads identical.

def tensor_add(self, other):
    """``self + other`` (and ``other + self``): the fast path, else the full path."""
    r = _binary(_np_add, 0, self, other)
    return _full("Tensor.__add__", (self, other), (), {}) if r is None else r


def tensor_sub(self, other):
    """``self - other``: the fast path, else the full path."""
    r = _binary(_np_subtract, 1, self, other)
    return _full("Tensor.__sub__", (self, other), (), {}) if r is None else r


def tensor_mul(self, other):
    """``self * other`` (and ``other * self``): the fast path, else the full path."""
    r = _binary(_np_multiply, 2, self, other)
    return _full("Tensor.__mul__", (self, other), (), {}) if r is None else r


# ``minitorch_nn.add(a, b)``, ``sub``, ``mul`` and the methods ``a.add(b)``, ``a.sub(b)``,
# ``a.mul(b)``: the same op as ``a + b``, ``a - b``, ``a * b`` (``aten.add.Tensor``...), so while
# nothing could tell the spellings apart they take the operators' compiled path (above).
# Any keyword (``alpha=``, ``out=``) or a number first takes the full path.

def function_add(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_add, 0, input, other)
    return _full("add", (input, other), args, kwargs) if r is None else r


def function_sub(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_subtract, 1, input, other)
    return _full("sub", (input, other), args, kwargs) if r is None else r


def function_mul(input, other, *args, **kwargs):
    r = None if args or kwargs else _binary(_np_multiply, 2, input, other)
    return _full("mul", (input, other), args, kwargs) if r is None else r


def tensor_add_method(self, other, *args, **kwargs):
    """``self.add(other)``: the fast path of ``self + other``, else the full path."""
    r = None if args or kwargs else _binary(_np_add, 0, self, other)
    return _full("Tensor.add", (self, other), args, kwargs) if r is None else r


def tensor_sub_method(self, other, *args, **kwargs):
    """``self.sub(other)``: the fast path of ``self - other``, else the full path."""
    r = None if args or kwargs else _binary(_np_subtract, 1, self, other)
    return _full("Tensor.sub", (self, other), args, kwargs) if r is None else r


def tensor_mul_method(self, other, *args, **kwargs):
    """``self.mul(other)``: the fast path of ``self * other``, else the full path."""
    r = None if args or kwargs else _binary(_np_multiply, 2, self, other)
    return _full("Tensor.mul", (self, other), args, kwargs) if r is None else r


# -- unary math -------------------------------------------------------------------------------------

cdef object _unary_fast(_Unary u, object self):
    """``u``'s op on ``self`` as the cpu kernel computes it (``pointwise.unary``: the numpy
    function with floating-point warnings off), recorded when needed; or None."""
    if _fp_var is None:
        return None
    cdef TensorImpl a = _any_layout(self)
    if a is None or (a.dtype is _i64 and not u.ints):
        return None
    cdef int layout = _layout(a)   # (a strided input: see _binary)
    if layout < 0 or not _may_run():
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
    out = _fresh_strided_tensor(r, a.dtype, a.sizes, a.strides) if layout == 2 else _fresh_tensor(r, a.dtype)
    if out is None:
        return None
    return _recorded(u.op, (self,), out) if record else out


cdef object _unary_op(_Unary u, object self, tuple args, dict kwargs):
    """The method ``self.<u>()``: the fast path, else the full path."""
    r = None if args or kwargs else _unary_fast(u, self)
    return _full(u.method, (self,), args, kwargs) if r is None else r


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


cdef inline object _unary_function(_Unary u, object input, tuple args, dict kwargs):
    r = None if args or kwargs else _unary_fast(u, input)
    return _full(u.name, (input,), args, kwargs) if r is None else r


def function_exp(input, *args, **kwargs):
    return _unary_function(_u_exp, input, args, kwargs)


def function_expm1(input, *args, **kwargs):
    return _unary_function(_u_expm1, input, args, kwargs)


def function_log(input, *args, **kwargs):
    return _unary_function(_u_log, input, args, kwargs)


def function_log2(input, *args, **kwargs):
    return _unary_function(_u_log2, input, args, kwargs)


def function_log10(input, *args, **kwargs):
    return _unary_function(_u_log10, input, args, kwargs)


def function_log1p(input, *args, **kwargs):
    return _unary_function(_u_log1p, input, args, kwargs)


def function_sqrt(input, *args, **kwargs):
    return _unary_function(_u_sqrt, input, args, kwargs)


def function_rsqrt(input, *args, **kwargs):
    return _unary_function(_u_rsqrt, input, args, kwargs)


def function_sin(input, *args, **kwargs):
    return _unary_function(_u_sin, input, args, kwargs)


def function_cos(input, *args, **kwargs):
    return _unary_function(_u_cos, input, args, kwargs)


def function_tan(input, *args, **kwargs):
    return _unary_function(_u_tan, input, args, kwargs)


def function_sinh(input, *args, **kwargs):
    return _unary_function(_u_sinh, input, args, kwargs)


def function_cosh(input, *args, **kwargs):
    return _unary_function(_u_cosh, input, args, kwargs)


def function_tanh(input, *args, **kwargs):
    return _unary_function(_u_tanh, input, args, kwargs)


def function_sigmoid(input, *args, **kwargs):
    return _unary_function(_u_sigmoid, input, args, kwargs)


def function_reciprocal(input, *args, **kwargs):
    return _unary_function(_u_reciprocal, input, args, kwargs)


def function_neg(input, *args, **kwargs):
    return _unary_function(_u_neg, input, args, kwargs)


def function_abs(input, *args, **kwargs):
    return _unary_function(_u_abs, input, args, kwargs)


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
    return _full("Tensor.div", (self, other), args, kwargs)


def tensor_truediv(self, other):
    """``self / other``: the fast path, else the full path."""
    r = _div(self, other)
    return _full("Tensor.__truediv__", (self, other), (), {}) if r is None else r


cdef object _rdiv(object self, object other):
    """``other / self`` for a Python number ``other``: what ``Tensor.__rtruediv__`` does,
    ``aten.mul.Tensor(aten.reciprocal.default(self), other)``, as two recorded ops when needed --
    ``np.reciprocal`` (the kernel's), then ``np.multiply`` (``_np_multiply``) by
    the number as a 0-d array of the dtype (``pointwise.mul``), warnings off; or None."""
    cdef TensorImpl a = _elementwise_input(self, False)
    if a is None or _fp_var is None or not _may_run():
        return None
    dtype = a.dtype
    y = _scalar_operand(other, dtype)
    if y is None:
        return None
    cdef int record = _record_mode(_u_reciprocal.op, a, None)
    if record < 0 or _record_mode(_op_mul, a, None) < 0:
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
        return _recorded(_op_mul, (inverse, other), out)
    return out


def tensor_rtruediv(self, other):
    """``other / self``: the fast path for a Python number ``other``, else the full path."""
    r = _rdiv(self, other)
    return _full("Tensor.__rtruediv__", (self, other), (), {}) if r is None else r


def function_div(input, other, *args, **kwargs):
    r = None if args or kwargs else _div(input, other)
    return _full("div", (input, other), args, kwargs) if r is None else r


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
    return _full("Tensor.pow", (self, exponent), args, kwargs) if r is None else r


def tensor_square(self, *args, **kwargs):
    """``self.square()`` (``aten.pow.Tensor_Scalar(self, 2)``): the fast path, else the full path."""
    r = None if args or kwargs else _pow_scalar(self, 2)
    return _full("Tensor.square", (self,), args, kwargs) if r is None else r


def tensor_pow_op(self, other):
    """``self ** other``: the fast path for a Python number, else the full path."""
    r = _pow_scalar(self, other)
    return _full("Tensor.__pow__", (self, other), (), {}) if r is None else r


def function_pow(input, exponent, *args, **kwargs):
    r = None if args or kwargs else _pow_scalar(input, exponent)
    return _full("pow", (input, exponent), args, kwargs) if r is None else r


def function_square(input, *args, **kwargs):
    r = None if args or kwargs else _pow_scalar(input, 2)
    return _full("square", (input,), args, kwargs) if r is None else r


# -- clamp with numbers (``_clamp``) -------------------------------------------------------------------

def _clamp_fn(x, bounds):
    # pointwise._clamp: np.maximum with the lower bound, then np.minimum with the upper one
    low, high = bounds
    if low is not None:
        x = _np_maximum(x, low)
    if high is not None:
        x = np.minimum(x, high)
    return x


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
    if lo is False or hi is False or not _may_run():
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


def tensor_clamp(self, *args, **kwargs):
    """``self.clamp(min, max)`` with numbers: the fast path, else the full path."""
    r = _clamp_args(self, args, kwargs)
    return _full("Tensor.clamp", (self,), args, kwargs) if r is None else r


def function_clamp(input, *args, **kwargs):
    """``minitorch_nn.clamp(input, min, max)`` with numbers: the fast path, else the full path."""
    r = _clamp_args(input, args, kwargs)
    return _full("clamp", (input,), args, kwargs) if r is None else r


# -- where, masked_fill --------------------------------------------------------------------------------

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
    if a is None or b is None or b.dtype is not a.dtype or b.sizes != a.sizes or not _may_run():
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
    if m is None or not _may_run():
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
    if not _may_run():
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
    return _wrap_payload(_Tensor, _fresh_impl(r, _bool, _cpu))


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


# Tensor's methods from this file (``_tensor_methods.py`` installs them; their full paths arrive
# through the gate's ``install_fast_functions`` under "Tensor.<name>"; the operators
# ``tensor_add``... are bound by name there), and the public functions.
METHODS = {
    "exp": tensor_exp, "expm1": tensor_expm1, "log": tensor_log, "log2": tensor_log2, "log10": tensor_log10,
    "log1p": tensor_log1p, "sqrt": tensor_sqrt, "rsqrt": tensor_rsqrt, "sin": tensor_sin, "cos": tensor_cos,
    "tan": tensor_tan, "sinh": tensor_sinh, "cosh": tensor_cosh, "tanh": tensor_tanh, "sigmoid": tensor_sigmoid,
    "reciprocal": tensor_reciprocal, "neg": tensor_neg, "abs": tensor_abs, "div": tensor_div, "pow": tensor_pow,
    "square": tensor_square, "add": tensor_add_method, "sub": tensor_sub_method, "mul": tensor_mul_method,
    "clamp": tensor_clamp, "masked_fill": tensor_masked_fill,
    "gt": tensor_gt, "lt": tensor_lt, "ge": tensor_ge, "le": tensor_le, "eq": tensor_eq, "ne": tensor_ne,
}
FUNCTIONS = {
    "exp": function_exp, "expm1": function_expm1, "log": function_log, "log2": function_log2,
    "log10": function_log10, "log1p": function_log1p, "sqrt": function_sqrt, "rsqrt": function_rsqrt,
    "sin": function_sin, "cos": function_cos, "tan": function_tan, "sinh": function_sinh, "cosh": function_cosh,
    "tanh": function_tanh, "sigmoid": function_sigmoid, "reciprocal": function_reciprocal, "neg": function_neg,
    "abs": function_abs, "div": function_div, "pow": function_pow, "square": function_square,
    "add": function_add, "sub": function_sub, "mul": function_mul, "clamp": function_clamp, "where": function_where,
}

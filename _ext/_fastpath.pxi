# The plain-tensor fast path for tiny ops: the compiled twins of the cpu kernels of ``+ - *``,
# ``relu``, ``sum`` (backends/cpu/pointwise.py, activations.py, reduction.py) and of ``detach`` and
# ``to(dtype)`` (backends/views.py, the ``_to_copy`` kernel). Included into _C.pyx.
#
# Why it exists
# -------------
# ``a + b`` on two 4-element tensors costs PyTorch about 1.5 us, all of it C++. The full path here
# is five Python layers (operator method, public function with its ``__torch_function__`` check,
# OpOverload, the dispatch chain, the cpu kernel) around one numpy ufunc call; on a small model
# those layers, not the arithmetic, are what a user waits for. So the most common ops --
# ``a + b``, ``a - b``, ``a * b`` (and ``2 + a``, ``2 * a``), ``a.relu()``, ``a.sum()``, and the
# two that ``state_dict()`` and ``Module.to(dtype)`` call once per tensor, ``a.detach()`` and
# ``a.to(dtype)`` (their own rules are at the end of this file) -- first try this file, which does
# in C exactly what the full path would end up doing: read the operands' numpy views, call the same
# numpy function, wrap the array as a fresh tensor.
#
# When it may run (everything else takes the full path, unchanged)
# ----------------------------------------------------------------
# The switch ``minitorch_nn.backends.compiled`` is on, the op's guard holds (its registered cpu
# kernel, its derivative and the kernel's module attribute are the ones this file mirrors, and the
# kernel's code has the fingerprint in ``_twin_manifest.json``: ``_Guard`` below), and nothing
# that could observe or change the op is in play:
#
# * the tensors are exactly ``Tensor`` or ``nn.Parameter`` (no other subclass: no
#   ``__torch_function__``/``__torch_dispatch__`` of their own; Parameter's is the disabled one,
#   so the full path treats it as a plain tensor and returns plain Tensors), on the cpu,
#   float32/float64/int64, row-major and not empty. When an input
#   requires grad and grad mode is on, the result is then recorded by the compiled recorder
#   (``_autograd_fast.pxi``: the same node, edges and saved tensors as ``autograd/recording.py``
#   makes), provided ``recorder_ready()``: no ``saved_tensors_hooks`` (their pack hooks run before
#   the kernel in the full path) and the autograd layer is the recording one. Under ``no_grad``
#   nothing is recorded, as in the full path;
# * the other operand is a tensor of the *same* dtype, or a Python ``int``/``float`` (exact types,
#   so ``bool`` and numpy scalars go the full way) whose conversion to the tensor's dtype is exact
#   or cannot differ from the full path's (no float operand for an int64 tensor: PyTorch gives the
#   default float dtype there, which the full path works out);
# * no ``TorchFunctionMode`` and no ``TorchDispatchMode`` is active (classes with their own
#   ``__torch_dispatch__`` may exist: they only see their own instances), no forward-AD dual level
#   is open (``_dispatch.forward_ad_layer is None``) and the dispatcher is the plain one
#   (``dispatch_trace()`` and the export tracer swap it out);
# * numpy did not raise (a broadcasting error, say): then the full path runs and raises
#   PyTorch's error, so errors are identical too.
#
# The result must be exactly what the full path gives: the same numpy call on the same arrays
# (so the same values, bit for bit), the same dtype, row-major strides (row-major inputs give a
# row-major result in PyTorch and in the kernels), a fresh version counter, and the graph the
# full path records. ``tests/test_fast_path.py`` checks this against the full path on random
# operands, ``tests/test_fast_record.py`` the graphs (nodes, edges, saved tensors, use counts).
# Floating-point warnings: the cpu kernels silence numpy's (PyTorch never warns) for elementwise
# ops but not for ``sum``; we do the same, by switching numpy's error-state context variable
# directly (``np.errstate`` would cost more than the op).
#
# A new layer that can observe plain-tensor ops must make one of the conditions above false while
# it is active (as forward AD does with ``_dispatch.forward_ad_layer``), or the fast path skips it.

from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from libc.float cimport FLT_MAX
from libc.math cimport fabs, isfinite
from cpython.dict cimport PyDict_GetItem
from cpython.long cimport PyLong_AsLongLongAndOverflow

# What the package hands us once at import (see install_fast_path); None until then.
cdef object _Tensor = None            # the class minitorch_nn.Tensor
cdef object _tf_state = None          # _C_torch_function.state: .quiet, .modes
cdef dict _dispatch_globals = None    # minitorch_nn._dispatch.__dict__: python_layer, forward_ad_layer
cdef dict _ops_globals = None         # minitorch_nn._ops.__dict__: _dispatch_fn
cdef dict _python_dispatch_globals = None  # minitorch_nn._dispatch.python_dispatch.__dict__: _modes
cdef object _python_layer = None      # python_dispatch.python_layer
cdef object _plain_dispatch = None    # _dispatch.dispatch, the dispatcher with nothing swapped in
cdef object _f32 = None
cdef object _f64 = None
cdef object _i64 = None
cdef object _cpu = None               # the canonical cpu device
cdef object _fp_var = None            # numpy's floating-point error-state context variable
cdef object _fp_ignore = None         # ... and its "ignore everything" value
cdef object _slow_add = None          # the full-path versions, called when the fast path declines
cdef object _slow_sub = None
cdef object _slow_mul = None
cdef object _slow_relu = None
cdef object _slow_sum = None
cdef object _slow_detach = None
cdef object _slow_to = None
cdef dict _grad_mode_globals = None   # autograd.grad_mode.__dict__: _enabled
cdef object _dtype_cls = None         # the class minitorch_nn.dtype
cdef object _param_cls = None         # nn.Parameter, looked up once nn is imported (see _plain_class)

# The numpy functions the cpu kernels call for these ops.
cdef object _np_add = np.add
cdef object _np_subtract = np.subtract
cdef object _np_multiply = np.multiply
cdef object _np_maximum = np.maximum
cdef object _np_add_reduce = np.add.reduce
cdef dict _ZEROS = {}                 # dtype -> 0-d zero of that dtype (relu's np.maximum(x, 0))


def install_fast_path(*, tensor_cls, tf_state, dispatch_module, python_dispatch_module, ops_module,
                      grad_mode_module, dtype_cls, float32, float64, int64, cpu, slow_add, slow_sub, slow_mul,
                      slow_relu, slow_sum, slow_detach, slow_to):
    """Give the fast path the objects it checks against and the full-path functions it defers to.

    Called once by ``minitorch_nn._tensor_methods`` when it builds Tensor's methods.
    """
    global _Tensor, _tf_state, _dispatch_globals, _ops_globals, _python_dispatch_globals, _python_layer
    global _plain_dispatch, _f32, _f64, _i64, _cpu
    global _fp_var, _fp_ignore, _slow_add, _slow_sub, _slow_mul, _slow_relu, _slow_sum
    global _slow_detach, _slow_to, _grad_mode_globals, _dtype_cls
    _grad_mode_globals, _dtype_cls = vars(grad_mode_module), dtype_cls
    _slow_detach, _slow_to = slow_detach, slow_to
    _Tensor, _tf_state = tensor_cls, tf_state
    _dispatch_globals, _ops_globals = vars(dispatch_module), vars(ops_module)
    _python_dispatch_globals, _python_layer = vars(python_dispatch_module), python_dispatch_module.python_layer
    _plain_dispatch = dispatch_module.dispatch
    _f32, _f64, _i64, _cpu = float32, float64, int64, cpu
    _slow_add, _slow_sub, _slow_mul, _slow_relu, _slow_sum = slow_add, slow_sub, slow_mul, slow_relu, slow_sum
    for d in (float32, float64, int64):
        _ZEROS[d] = np.zeros((), dtype=d.numpy_dtype)
    try:
        from numpy._core.umath import _extobj_contextvar, _make_extobj
        _fp_var, _fp_ignore = _extobj_contextvar, _make_extobj(all="ignore")
    except ImportError:  # another numpy: float ops then always take the full path
        _fp_var = _fp_ignore = None


cdef inline bint _unset(dict namespace, str name):
    # a module global that is None or absent (read from the module's dict: cheaper than getattr)
    cdef PyObject* value = PyDict_GetItem(namespace, name)
    return value == NULL or <object>value is None


cdef inline bint _nothing_intercepts() except -1:
    """The switch is on (``backends.compiled.enabled``), the autograd layer is the recorder's twin
    (``autograd_layer_is_twin``), and nothing could observe the op: no
    TorchFunctionMode or TorchDispatchMode, no forward-AD dual level, the plain dispatcher.
    Every fast path in this module asks this first (directly or through ``_may_run``)."""
    if not autograd_layer_is_twin():   # the switch is off, or an autograd layer of one's own must see every op
        return False
    state = _tf_state
    if not state.quiet and state.modes:
        return False
    cdef PyObject* dispatch_fn = PyDict_GetItem(_ops_globals, "_dispatch_fn")
    if dispatch_fn == NULL or <object>dispatch_fn is not _plain_dispatch:
        return False
    if not _unset(_dispatch_globals, "forward_ad_layer"):
        return False
    cdef PyObject* layer = PyDict_GetItem(_dispatch_globals, "python_layer")
    if layer == NULL or <object>layer is None:
        return True
    # The python layer stays installed once any class with __torch_dispatch__ exists. It acts on
    # instances of those classes (never an exact Tensor) and on dispatch modes: only a mode counts.
    cdef PyObject* modes = PyDict_GetItem(_python_dispatch_globals, "_modes")
    return <object>layer is _python_layer and modes != NULL and not <object>modes


# -- guards: a twin runs only while what it mirrors is unchanged ---------------------------------
#
# Each op a fast path computes without calling it has a ``_Guard``, made the first time the op is
# used and kept in the op's ``__dict__`` (``aten.add.Tensor._twin_guard``: a reader can look at it).
# It remembers the objects the twin was built to mirror -- the op's registered cpu kernel, its
# derivative, and the module attribute the kernel is reachable by (``backends.cpu.pointwise.add``) --
# and, when made, checks the kernel's fingerprint against the build's (``backends.compiled
# .check_original``: a kernel edited in the source turns its twin off). At each call ``_twin_ok``
# compares those objects by identity with what is there now: a student who registers a kernel of
# their own (``aten.add.Tensor.impl("cpu")(mine)``), replaces the derivative, or assigns
# ``pointwise.add = mine`` gets the readable path for that op, and only that op.

cdef extern from "Python.h":
    PyObject** _PyObject_GetDictPtr(PyObject* obj)

# A dict's version tag (PEP 509, CPython 3.11): it changes whenever the dict is modified. A guard
# that held when the three dicts it reads had these tags still holds while they have them, so the
# identity checks run again only after one of the dicts changed. (No tags on later Pythons: there
# the checks run every time.)
cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030C0000
    #define MT_DICT_TAG(d) (((PyDictObject *)(d))->ma_version_tag)
    #define MT_HAVE_DICT_TAGS 1
    #else
    #define MT_DICT_TAG(d) ((unsigned long long)0)
    #define MT_HAVE_DICT_TAGS 0
    #endif
    """
    unsigned long long MT_DICT_TAG(object d)
    bint MT_HAVE_DICT_TAGS


cdef class _Guard:
    """What one op's twin mirrors (see above). ``off``: its original failed the fingerprint check."""
    cdef readonly object op
    cdef readonly dict kernels        # op._kernels
    cdef readonly str key             # "cpu", or "any" for kernels registered for every device
    cdef bint for_any                 # key == "any": a cpu kernel registered later takes precedence
    cdef readonly object kernel       # the registered kernel the twin mirrors
    cdef readonly dict op_dict        # op.__dict__ (for op.derivative)
    cdef readonly object derivative
    cdef readonly dict module_dict    # the kernel's module namespace, when the kernel is reachable by name
    cdef readonly str attr
    cdef readonly bint off
    cdef bint tagged                  # the tags below are those of a moment when the guard held
    cdef unsigned long long kernels_tag, op_tag, module_tag

    def holds(self):
        """Whether the twin may run now (the switch aside)."""
        return _guard_holds(self)

    def __repr__(self):
        return (f"_Guard({self.op}: kernel={getattr(self.kernel, '__qualname__', self.kernel)}, "
                f"holds={_guard_holds(self)}, off={self.off})")


cdef object _compiled_module = None   # minitorch_nn.backends.compiled


cdef _Guard _make_guard(object op, dict op_dict):
    global _compiled_module
    import sys
    cdef _Guard g = _Guard.__new__(_Guard)
    g.op, g.op_dict = op, op_dict
    g.kernels = op._kernels
    g.key = "cpu" if "cpu" in g.kernels else "any"
    g.for_any = g.key == "any"
    g.kernel = g.kernels.get(g.key)
    g.derivative = op_dict.get("derivative")
    module = sys.modules.get(getattr(g.kernel, "__module__", None) or "")
    name = getattr(g.kernel, "__name__", None)
    if module is not None and type(name) is str and getattr(module, name, None) is g.kernel:
        g.module_dict, g.attr = vars(module), name
    if _compiled_module is None:
        _compiled_module = sys.modules["minitorch_nn.backends.compiled"]
    g.off = g.kernel is None or not _compiled_module.check_original(f"{op} (cpu kernel)", g.kernel)
    op_dict["_twin_guard"] = g
    return g


cdef inline bint _guard_holds(_Guard g) except -1:
    if g.off:
        return False
    if (MT_HAVE_DICT_TAGS and g.tagged and MT_DICT_TAG(g.kernels) == g.kernels_tag
            and MT_DICT_TAG(g.op_dict) == g.op_tag
            and (g.module_dict is None or MT_DICT_TAG(g.module_dict) == g.module_tag)):
        return True
    if not _guard_identities_hold(g):
        return False
    if MT_HAVE_DICT_TAGS:
        g.kernels_tag, g.op_tag = MT_DICT_TAG(g.kernels), MT_DICT_TAG(g.op_dict)
        g.module_tag = 0 if g.module_dict is None else MT_DICT_TAG(g.module_dict)
        g.tagged = True
    return True


cdef bint _guard_identities_hold(_Guard g) except -1:
    cdef PyObject* k = PyDict_GetItem(g.kernels, g.key)
    if k == NULL or <object>k is not g.kernel:
        return False
    if g.for_any and PyDict_GetItem(g.kernels, "cpu") != NULL:
        return False
    k = PyDict_GetItem(g.op_dict, "derivative")
    if (k == NULL and g.derivative is not None) or (k != NULL and <object>k is not g.derivative):
        return False
    if g.module_dict is not None:
        k = PyDict_GetItem(g.module_dict, g.attr)
        if k == NULL or <object>k is not g.kernel:
            return False
    return True


cdef inline bint _twin_ok(object op) except -1:
    """Whether ``op``'s twin may run: its guard holds (made on first use)."""
    cdef PyObject** dict_ptr = _PyObject_GetDictPtr(<PyObject*>op)
    if dict_ptr == NULL or dict_ptr[0] == NULL:
        return False
    cdef PyObject* g = PyDict_GetItem(<object>dict_ptr[0], "_twin_guard")
    if g == NULL:
        return _guard_holds(_make_guard(op, <dict>dict_ptr[0]))
    return _guard_holds(<_Guard>g)


# Every op a twin in this module computes without calling its kernel. Their guards are made at the
# end of ``import minitorch_nn`` (``_make_twin_guards``), while every kernel is the package's own;
# an op missing here still gets its guard, at its first use.
_TWIN_OPS = (
    "add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "relu.default", "sum.default", "sum.dim_IntList",
    "exp.default", "expm1.default", "log.default", "log2.default", "log10.default", "log1p.default",
    "sqrt.default", "rsqrt.default", "sin.default", "cos.default", "tan.default", "sinh.default", "cosh.default",
    "tanh.default", "sigmoid.default", "reciprocal.default", "neg.default", "abs.default", "pow.Tensor_Scalar",
    "mm.default", "mv.default", "dot.default", "addmm.default", "bmm.default", "t.default", "transpose.int",
    "unsqueeze.default", "squeeze.default", "squeeze.dim", "view.default", "_unsafe_view.default",
    "permute.default", "expand.default", "select.int", "slice.Tensor", "detach.default", "_to_copy.default",
    "_softmax.default", "_log_softmax.default", "cat.default", "stack.default", "clone.default",
    "clamp.default", "cumsum.default", "masked_fill.Scalar", "where.self", "mse_loss.default",
    "silu.default", "leaky_relu.default", "split.Tensor", "unbind.int", "var.correction", "std.correction",
    "gt.Scalar", "lt.Scalar", "ge.Scalar", "le.Scalar", "eq.Scalar", "ne.Scalar",
    "gt.Tensor", "lt.Tensor", "ge.Tensor", "le.Tensor", "eq.Tensor", "ne.Tensor",
)


def _make_twin_guards(aten):
    """Make the guard of every op in ``_TWIN_OPS`` now (called once, by ``backends.compiled``)."""
    for name in _TWIN_OPS:
        packet, overload = name.split(".")
        _twin_ok(getattr(getattr(aten, packet), overload))


def _twin_guard(op):
    """``op``'s guard (made now if the op has not been used yet): for tests and for readers."""
    _twin_ok(op)
    return vars(op).get("_twin_guard")


cdef inline bint _grad_enabled() except -1:
    """``autograd.grad_mode._enabled``: off inside ``no_grad``, where autograd records nothing."""
    cdef PyObject* value = PyDict_GetItem(_grad_mode_globals, "_enabled")
    if value == NULL or <object>value is True:
        return True
    return bool(<object>value)


cdef inline TensorImpl _plain(object t):
    """``t``'s payload when ``t`` is a cpu ``Tensor`` or ``Parameter`` (see ``_plain_class``) of a
    fast dtype, row-major. It may require grad: the caller then records the op (see ``_records``)."""
    if type(t) is not _Tensor and not _plain_class(type(t)):
        return None
    cdef TensorImpl impl = (<TensorBase>t)._impl
    if impl is None:
        return None
    dtype = impl.dtype
    if dtype is not _f32 and dtype is not _f64 and dtype is not _i64:
        return None
    device = impl.device
    if device is not _cpu and device.type != "cpu":
        return None
    if not _row_major(impl.sizes, impl.strides):
        return None
    return impl


cdef inline int _records(TensorImpl a, TensorImpl b) except -2:
    """Whether autograd records an op on ``a`` (and ``b``, or None): 1 when it does and the
    compiled recorder can stand in for it, 0 when nothing is recorded (no input requires grad,
    or ``no_grad``), -1 when the fast path must step aside (``recorder_ready()`` is false)."""
    if not (a.requires_grad or (b is not None and b.requires_grad)) or not _grad_enabled():
        return 0
    return 1 if recorder_ready() else -1


cdef inline object _recorded(object op, tuple args, object out):
    """``out`` wired into the graph as the full path's autograd layer would have done."""
    r = record_computed(op, args, out)
    return out if r is NotImplemented else r


cdef inline object _recorded_with(object op, _Recipe recipe, tuple args, object out):
    """``_recorded``, with ``op``'s recipe (``_recipe_for(op)``) already in hand."""
    r = _record(op, recipe, args, None, out, False)
    return out if r is NotImplemented else r


cdef inline bint _row_major(tuple sizes, tuple strides) except -1:
    """Non-empty, with exactly the strides ``_tensor.contiguous_strides`` gives.

    Stricter than ``is_contiguous()``, which lets dims of size 1 have any stride: PyTorch's
    elementwise results follow such strides in some cases (``0-d + x.t()`` for ``x`` of shape
    (1, 2) keeps x's (1, 2)), and empty results have quirks of their own. The kernels know those
    rules; for row-major non-empty operands the result is simply row-major.
    """
    cdef Py_ssize_t i, size, expected = 1
    for i in range(len(sizes) - 1, -1, -1):
        size = sizes[i]
        if size == 0 or strides[i] != expected:
            return False
        expected *= size
    return True


cdef inline int _typenum(object dtype):
    return cnp.NPY_FLOAT32 if dtype is _f32 else cnp.NPY_FLOAT64 if dtype is _f64 else cnp.NPY_INT64


cdef object _scalar_operand(object other, object dtype):
    """Python number ``other`` as the 0-d array of ``dtype`` that the full path makes of it
    (``np.asarray(other, dtype)``), or None when its conversion is not plainly exact.

    Only exact types count (``bool`` and numpy scalars go the full way). Ints must fit the dtype
    exactly; a float for an int64 tensor gives the default float dtype in PyTorch, which the full
    path works out; a finite float beyond float32's range warns in the full path's cast.
    """
    cdef double v
    cdef long long i = 0
    cdef int overflow = 0
    if type(other) is float:
        if dtype is _i64:
            return None
        v = other
        if dtype is _f32 and isfinite(v) and fabs(v) > FLT_MAX:
            return None
    elif type(other) is int:
        i = PyLong_AsLongLongAndOverflow(other, &overflow)
        if overflow:
            return None
        if dtype is _f32 and not -(1 << 24) <= i <= (1 << 24):
            return None
        if dtype is _f64 and not -(1 << 53) <= i <= (1 << 53):
            return None
        v = <double>i
    else:
        return None
    cdef cnp.ndarray z = cnp.PyArray_EMPTY(0, NULL, _typenum(dtype), 0)
    if dtype is _f32:
        (<float*>cnp.PyArray_DATA(z))[0] = <float>v  # (C's cast: the same rounding as numpy's)
    elif dtype is _f64:
        (<double*>cnp.PyArray_DATA(z))[0] = v
    else:
        (<long long*>cnp.PyArray_DATA(z))[0] = i
    return z


cdef object _fresh_tensor(object r, object dtype):
    """Wrap numpy result ``r`` (an array or a numpy scalar) as the cpu kernels' ``wrap`` does."""
    cdef int typenum = _typenum(dtype)
    cdef cnp.ndarray arr
    if type(r) is np.ndarray:
        arr = <cnp.ndarray>r
        if cnp.PyArray_TYPE(arr) != typenum:
            return None  # (cannot happen for these ops and dtypes; the full path would cast)
    else:
        # 0-d operands give a numpy scalar; the kernels' np.asarray makes it a 0-d array
        if type(r) is not (np.float32 if dtype is _f32 else np.float64 if dtype is _f64 else np.int64):
            return None
        arr = cnp.PyArray_EMPTY(0, NULL, typenum, 0)
        cnp.PyArray_ScalarAsCtype(r, cnp.PyArray_DATA(arr))
    return _wrap(_Tensor, _fresh_impl(arr, dtype, _cpu))


cdef object _binary(object ufunc, int which, object self, object other):
    """``ufunc(self, other)`` as a fresh tensor (recorded when an input requires grad), or None
    when the full path must run. ``which`` names the op for the recorder: 0 add, 1 sub, 2 mul."""
    cdef TensorImpl a = _plain(self)
    if a is None or not _nothing_intercepts():
        return None
    dtype = a.dtype
    cdef TensorImpl b = None
    if isinstance(other, TensorBase):
        b = _plain(other)
        if b is None or b.dtype is not dtype:
            return None
        y = b.numpy_view()
    else:
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
        return _fresh_tensor(r, dtype)  # (int64 tensors never require grad)
    if _fp_var is None:
        return None
    token = PyContextVar_Set(_fp_var, _fp_ignore)
    try:
        r = ufunc(x, y)
    except Exception:
        return None
    finally:
        PyContextVar_Reset(_fp_var, token)
    out = _fresh_tensor(r, dtype)
    if record and out is not None:
        return _recorded_with(op, recipe, (self, other), out)
    return out


# -- the functions installed on Tensor (see _tensor_methods.py) ----------------------------------
# ``2 + a`` and ``2 * a`` compute ``ufunc(a, 2)``: the full path turns them into ``add(a, 2)``
# too, and the same argument order keeps even NaN payloads identical.

def tensor_add(self, other):
    """``self + other`` (and ``other + self``): the fast path, else the full path."""
    r = _binary(_np_add, 0, self, other)
    return _slow_add(self, other) if r is None else r


def tensor_sub(self, other):
    """``self - other``: the fast path, else the full path."""
    r = _binary(_np_subtract, 1, self, other)
    return _slow_sub(self, other) if r is None else r


def tensor_mul(self, other):
    """``self * other`` (and ``other * self``): the fast path, else the full path."""
    r = _binary(_np_multiply, 2, self, other)
    return _slow_mul(self, other) if r is None else r


def tensor_relu(self, *args, **kwargs):
    """``self.relu()``: ``np.maximum(x, 0)`` in the tensor's dtype (NaN stays NaN), as the cpu kernel.

    No error state to switch: numpy's maximum loops clear the floating-point flags they raise on
    NaN, so it never warns (the tests compare both paths' warnings on NaN and infinities).
    """
    cdef TensorImpl a
    cdef int record
    cdef _Recipe recipe = None
    if not args and not kwargs:
        a = _plain(self)
        if a is not None and _nothing_intercepts() and _twin_ok(_op_relu):
            record = _records(a, None)
            if record > 0:
                recipe = _recipe_for(_op_relu)
                if recipe is None:
                    record = -1
            if record >= 0:
                r = _fresh_tensor(_np_maximum(a.numpy_view(), _ZEROS[a.dtype]), a.dtype)
                if r is not None:
                    return _recorded_with(_op_relu, recipe, (self,), r) if record else r
    return _slow_relu(self, *args, **kwargs)


def tensor_sum(self, *args, **kwargs):
    """``self.sum()``: ``np.add.reduce`` over all elements in the tensor's dtype, as the cpu kernel.

    The kernel leaves numpy's warnings on for sums, so this does too. The 0-d result array is
    passed as ``out``, which saves turning numpy's scalar result into an array afterwards.
    """
    cdef TensorImpl a
    cdef int record
    cdef _Recipe recipe = None
    if not args and not kwargs:
        a = _plain(self)
        if a is not None and _nothing_intercepts() and _twin_ok(_op_sum):
            record = _records(a, None)
            if record > 0:
                recipe = _recipe_for(_op_sum)
                if recipe is None:
                    record = -1
            out = cnp.PyArray_EMPTY(0, NULL, _typenum(a.dtype), 0) if record >= 0 else None
            try:
                if out is not None:
                    _np_add_reduce(a.numpy_view(), None, None, out)
            except Exception:
                out = None  # (a warning turned into an error): the full path raises it again
            if out is not None:
                r = _wrap(_Tensor, _fresh_impl(out, a.dtype, _cpu))
                return _recorded_with(_op_sum, recipe, (self,), r) if record else r
    return _slow_sum(self, *args, **kwargs)


# -- detach() and to(dtype): the per-parameter work of state_dict() and Module.to() -----------------

cdef inline bint _plain_class(object cls) except -1:
    """``Tensor`` itself or exactly ``nn.Parameter``, whose ``__torch_function__`` is the disabled
    one: the full path treats a Parameter like a plain tensor and returns plain Tensors."""
    global _param_cls
    if cls is _Tensor:
        return True
    if _param_cls is None:
        import sys
        mod = sys.modules.get("minitorch_nn.nn.parameter")
        if mod is None:
            return False
        _param_cls = mod.Parameter
    return cls is _param_cls


cdef inline TensorImpl _plain_cpu(object t):
    """``t``'s payload when ``t`` is a plain (see ``_plain_class``) cpu tensor, any dtype or layout."""
    if not _plain_class(type(t)):
        return None
    cdef TensorImpl impl = (<TensorBase>t)._impl
    if impl is None or impl.storage is None:
        return None
    device = impl.device
    if device is not _cpu and device.type != "cpu":
        return None
    return impl


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
            return _wrap(_Tensor, impl)
    return _slow_detach(self, *args, **kwargs)


def tensor_to(self, *args, **kwargs):
    """``self.to(dtype)`` / ``self.to(dtype=dtype)``: ``self`` itself when the dtype is already
    ``dtype``, else the full path's ``_to_copy``: ``astype`` with numpy's warnings off, as a fresh
    row-major tensor. Only for row-major, non-empty float32/float64/int64 operands and targets
    that autograd would not record; anything else (devices, copy=, memory formats) goes the full way.
    """
    cdef TensorImpl a
    cdef Py_ssize_t nargs = len(args)
    dtype = None
    if nargs == 1 and not kwargs:
        dtype = args[0]
    elif nargs == 0 and len(kwargs) == 1:
        dtype = kwargs.get("dtype")
    if dtype is not None and type(dtype) is _dtype_cls:
        a = _plain_cpu(self)
        if a is not None and _may_run() and _twin_ok(_op_to_copy):
            if dtype is a.dtype:
                return self
            if ((dtype is _f32 or dtype is _f64 or dtype is _i64) and
                    (a.dtype is _f32 or a.dtype is _f64 or a.dtype is _i64) and
                    not (a.requires_grad and _grad_enabled()) and _row_major(a.sizes, a.strides) and
                    _fp_var is not None):
                token = PyContextVar_Set(_fp_var, _fp_ignore)
                try:
                    r = a.numpy_view().astype(dtype.numpy_dtype)
                finally:
                    PyContextVar_Reset(_fp_var, token)
                return _wrap(_Tensor, _fresh_impl(r, dtype, _cpu))
    return _slow_to(self, *args, **kwargs)

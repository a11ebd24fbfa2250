# cython: language_level=3, binding=True, embedsignature=True
"""The twins' shared gate: what the full dispatcher would check before an op, answered in C.

Not a twin itself (it mirrors no single readable file): every kernel twin under
``_ext/twins/backends/`` (and the indexing twin) asks the questions here before it may stand in for
the full path, and builds its result with the helpers here. ``minitorch_nn/_twins/_gate.pxd``
declares them; the small ones are ``inline`` there, so each twin compiles them into its own code.

Why the twins exist
-------------------
``a + b`` on two 4-element tensors costs PyTorch about 1.5 us, all of it C++. The full path here
is five Python layers (operator method, public function with its ``__torch_function__`` check,
OpOverload, the dispatch chain, the cpu kernel) around one numpy ufunc call; on a small model
those layers, not the arithmetic, are what a user waits for. So the most common ops first try
their twin, which does in C exactly what the full path would end up doing: read the operands'
numpy views, call the same numpy function, wrap the array as a fresh tensor.

When a twin may run (everything else takes the full path, unchanged)
--------------------------------------------------------------------
The switch ``minitorch_nn.backends.compiled`` is on, the op's guard holds (its registered cpu
kernel, its derivative and the kernel's module attribute are the ones the twin mirrors, and the
kernel's code has the fingerprint in ``_twin_manifest.json``: ``_Guard`` below), and nothing
that could observe or change the op is in play:

* the tensors are exactly ``Tensor`` or ``nn.Parameter`` (no other subclass: no
  ``__torch_function__``/``__torch_dispatch__`` of their own; Parameter's is the disabled one,
  so the full path treats it as a plain tensor and returns plain Tensors), on the cpu, of the
  dtypes and layouts each twin names. When an input requires grad and grad mode is on, the result
  is then recorded by the compiled recorder (``_ext/twins/autograd/recording.pyx``: the same node,
  edges and saved tensors as ``autograd/recording.py`` makes), called through the recorder slot
  that twin fills when it is installed (``_gate.pxd``), provided ``recorder_ready()``: no
  ``saved_tensors_hooks`` (their pack hooks run before the kernel in the full path) and the
  autograd layer is the recording one. Under ``no_grad`` nothing is recorded, as in the full path;
* a Python ``int``/``float`` operand is of exact type (``bool`` and numpy scalars go the full way)
  and its conversion to the tensor's dtype is exact or cannot differ from the full path's
  (``_scalar_operand``);
* no ``TorchFunctionMode`` and no ``TorchDispatchMode`` is active (classes with their own
  ``__torch_dispatch__`` may exist: they only see their own instances), no forward-AD dual level
  is open (``_dispatch.forward_ad_layer is None``) and the dispatcher is the plain one
  (``dispatch_trace()`` and the export tracer swap it out): ``_nothing_intercepts``;
* numpy did not raise (a broadcasting error, say): then the full path runs and raises
  PyTorch's error, so errors are identical too.

The result must be exactly what the full path gives: the same numpy call on the same arrays
(so the same values, bit for bit), the same dtype, row-major strides (row-major inputs give a
row-major result in PyTorch and in the kernels; the two strided layouts of ``_gate.pxd``'s
``_nested_strides`` and ``_dense_permuted`` give results whose strides are known too), a fresh
version counter, and the graph the full path records. ``tests/twins/`` checks this against the full path on random operands, with
the switch on and off. Floating-point warnings: the cpu kernels silence numpy's (PyTorch never
warns) for most elementwise ops; the twins do the same, by switching numpy's error-state context
variable (``_fp_var``) directly (``np.errstate`` would cost more than the op).

A new layer that can observe plain-tensor ops must make one of the conditions above false while
it is active (as forward AD does with ``_dispatch.forward_ad_layer``), or the twins skip it.
"""

cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.tuple cimport PyTuple_GET_SIZE
from libc.float cimport FLT_MAX
from libc.math cimport fabs, isfinite

import numpy as np

from minitorch_nn._C cimport _fresh_impl, _wrap_payload

cnp.import_array()

# (the module-level objects below are declared, and documented, in _gate.pxd)
_fn_slow = {}
_ndarray_type = np.ndarray
_np_float32_type = np.float32
_np_float64_type = np.float64
_np_int64_type = np.int64
cdef object _param_cls = None         # nn.Parameter, looked up once nn is imported (see _plain_class)


def install_fast_path(*, tensor_cls, tf_state, dispatch_module, python_dispatch_module, ops_module,
                      grad_mode_module, dtype_cls, float32, float64, int64, cpu):
    """Give the gate the objects it checks against. Called once by ``minitorch_nn._tensor_methods``
    when it builds Tensor's methods; until then every twin takes the full path."""
    global _Tensor, _tf_state, _dispatch_globals, _ops_globals, _python_dispatch_globals, _python_layer
    global _plain_dispatch, _f32, _f64, _i64, _cpu, _fp_var, _fp_ignore, _grad_mode_globals, _dtype_cls
    _grad_mode_globals, _dtype_cls = vars(grad_mode_module), dtype_cls
    _tf_state = tf_state
    _dispatch_globals, _ops_globals = vars(dispatch_module), vars(ops_module)
    _python_dispatch_globals, _python_layer = vars(python_dispatch_module), python_dispatch_module.python_layer
    _plain_dispatch = dispatch_module.dispatch
    _f32, _f64, _i64, _cpu = float32, float64, int64, cpu
    try:
        from numpy._core.umath import _extobj_contextvar, _make_extobj
        _fp_var, _fp_ignore = _extobj_contextvar, _make_extobj(all="ignore")
    except ImportError:  # another numpy: float ops then always take the full path
        _fp_var = _fp_ignore = None
    _Tensor = tensor_cls   # (last: a twin's first check, ``type(t) is _Tensor``, now passes)


def install_fast_functions(slow):
    """Give the compiled functions their full paths: ``slow`` maps a name (``"exp"``,
    ``"Tensor.clone"``, ``"functional.relu"``...) to its public wrapper."""
    _fn_slow.update(slow)


def recorder_slot():
    """What the recorder slot (declared in ``_gate.pxd``) holds now, for a reader and the tests:
    whether each function pointer is filled, the recorder twin's ``autograd_layer`` it was filled
    with (None while empty), and whether ``recording.autograd_layer`` is still the function that
    twin was installed with. ``install_recorder`` in ``_ext/twins/autograd/recording.pyx`` fills it
    when ``autograd/recording.py`` is imported."""
    return {
        "ready": _recorder.ready != NULL,
        "recipe_for": _recorder.recipe_for != NULL,
        "recipe_of": _recorder.recipe_of != NULL,
        "record": _recorder.record != NULL,
        "record_general": _recorder.record_general != NULL,
        "record_computed": _recorder.record_computed != NULL,
        "layer": _recording_layer,
        "layer_unchanged": _layer_unchanged,
    }


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

cdef class _Guard:
    """What one op's twin mirrors (see above; its fields are declared in _gate.pxd). ``off``: its
    original failed the fingerprint check."""

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


# Every op a twin computes without calling its kernel. Their guards are made at the
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
    "uniform_.default", "normal_.default", "empty.memory_format", "zeros.default", "ones.default",
    "rand.default", "rand.generator", "randn.default", "randn.generator", "zero_.default", "fill_.Scalar",
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


cdef bint _plain_class(object cls) except -1:
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


cdef object _unary_like(object op, object self, tuple args, TensorImpl a, object fn, object arg, bint fp_off):
    """``fn(x, arg)`` on ``self``'s array (warnings off when ``fp_off``, as the kernel has them) as a
    fresh tensor of ``self``'s dtype, recorded as ``op(*args)`` when needed; None to decline.
    (Callers check their module's ``_may_run()`` first: it looks the ops up.)"""
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

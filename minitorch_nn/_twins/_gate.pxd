# cython: language_level=3
"""The C-level face of the twins' shared gate (``_ext/twins/_gate.pyx``).

Every kernel twin cimports from here the questions it asks before it may stand in for the full
path (``_nothing_intercepts``, ``_twin_ok``, ``_records``...) and the helpers that build its
result the way the cpu kernels do (``_fresh_tensor``, ``_scalar_operand``). The small ones are
``inline`` here, so each twin module compiles them into its own code, as they were when all the
twins lived in one module.

It also holds the recorder slot (below): what a kernel twin hands the compiled recorder, and
where the recorder twin (``_ext/twins/autograd/recording.pyx``, the autograd layer) puts its
functions when it is installed. The kernels sit below autograd, so they do not import the
recorder; the recorder fills the slot, as ``autograd/__init__.py`` fills the dispatcher's
``autograd_layer``.
"""

cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from minitorch_nn._C cimport TensorBase, TensorImpl, VersionCounter, _fresh_impl, _wrap_payload, compiled_enabled

# What the package hands the gate once at import (``install_fast_path``); None until then.
cdef object _Tensor                  # the class minitorch_nn.Tensor
cdef object _tf_state                # _C_torch_function.state: .quiet, .modes
cdef dict _dispatch_globals          # minitorch_nn._dispatch.__dict__: python_layer, forward_ad_layer
cdef dict _ops_globals               # minitorch_nn._ops.__dict__: _dispatch_fn
cdef dict _python_dispatch_globals   # minitorch_nn._dispatch.python_dispatch.__dict__: _modes
cdef object _python_layer            # python_dispatch.python_layer
cdef object _plain_dispatch          # _dispatch.dispatch, the dispatcher with nothing swapped in
cdef object _f32
cdef object _f64
cdef object _i64
cdef object _cpu                     # the canonical cpu device
cdef object _fp_var                  # numpy's floating-point error-state context variable
cdef object _fp_ignore               # ... and its "ignore everything" value
cdef dict _grad_mode_globals         # autograd.grad_mode.__dict__: _enabled
cdef object _dtype_cls               # the class minitorch_nn.dtype
cdef dict _fn_slow                   # name -> a compiled function's full path (install_fast_functions)
cdef object _ndarray_type             # np.ndarray, and the numpy scalar types of the fast dtypes
cdef object _np_float32_type
cdef object _np_float64_type
cdef object _np_int64_type


# -- the recorder slot -----------------------------------------------------------------------------
#
# The readable dispatcher has an ``autograd_layer`` slot that autograd fills; the registry never
# imports autograd. The kernel twins reach the compiled recorder the same way: through this table
# of C function pointers, empty (NULL) until ``install_recorder`` in the recorder twin
# (``_ext/twins/autograd/recording.pyx``, documented there) fills it, with the variables
# ``autograd_layer_is_twin`` reads. While it is empty, ``autograd_layer_is_twin()`` is false, so
# every twin declines and the full path runs (and ``recorder_ready()`` is false: a twin never
# records, or skips recording, on its own). A call through a pointer costs what the cross-module
# cdef call it replaces cost: Cython calls another module's cdef functions through pointers too.


cdef class _Recipe:
    """What the recorder reads of one ``recording.Derivative``, read once into C fields. Made by
    the recorder (``_recipe_of``); a kernel twin only holds one between the check before its kernel
    runs (``_recipe_for``) and the record after it (``_record``)."""

    cdef object d
    cdef tuple positions       # d.input_positions: (position, name) per differentiable input
    cdef Py_ssize_t n_inputs
    cdef object node_cls
    cdef bint multi_output
    cdef bint compiled         # d.node_cls has OpNode's C layout (a student's own class may not)
    cdef bint simple           # d.simple: recorded by _record
    cdef bint inplace          # d.op.is_inplace: recorded by _record_general, which rebases history
    cdef tuple slots           # d.input_slots: (name, position, is a Tensor[]) per differentiable input
    cdef object tensor_args
    cdef object no_history     # d.non_differentiable_outputs (outputs never given a history), or None
    # The plans by which inputs need a gradient, as a bit mask (bit j: input j); None until the
    # first op that needs it, then taken from d.plan() (so both recorders share the same plans).
    cdef list plans


ctypedef struct _RecorderSlot:
    # recording.pyx's functions of the same names (each documented there)
    bint (*ready)() except -1                      # recorder_ready
    _Recipe (*recipe_for)(object op)               # _recipe_for
    _Recipe (*recipe_of)(object d)                 # _recipe_of
    object (*record)(object op, _Recipe r, tuple args, object kwargs, object out, bint run)  # _record
    object (*record_general)(object op, _Recipe r, tuple args, object kwargs, object computed)
    object (*record_computed)(object op, tuple args, object out)


cdef _RecorderSlot _recorder          # all NULL until the recorder twin is installed
cdef object _recording_layer          # the recorder twin's autograd_layer, once installed (else None)
cdef dict _ag_dispatch_globals        # minitorch_nn._dispatch.__dict__ (autograd_layer), given with it
cdef bint _layer_unchanged            # recording.autograd_layer is the function installed (kept current
                                      # by the recorder twin's recorder_recheck)
cdef object _NONDIFFERENTIABLE        # recording.NONDIFFERENTIABLE, given with it


cdef inline bint autograd_layer_is_twin() except -1:
    """True while the dispatcher's autograd layer is the recorder twin and recording.autograd_layer
    is the function it was installed with: then an op on tensors that need no gradient has nothing
    to record, and a fast path may skip the layer as that twin would (a replaced
    ``recording.autograd_layer`` must see every op, as it does with the switch off). False while
    the slot is empty."""
    if not compiled_enabled or _recording_layer is None:
        return False
    cdef PyObject* layer = PyDict_GetItem(_ag_dispatch_globals, "autograd_layer")
    return layer != NULL and <object>layer is _recording_layer and _layer_unchanged


# The recorder's functions, called through the slot under their names in recording.pyx. Callers
# follow the order recording.pyx documents: ``recorder_ready()`` (and ``_recipe_for``) before the
# kernel runs, the others only after ``recorder_ready()`` was true, so the slot is filled then.

cdef inline bint recorder_ready() except -1:
    return _recorder.ready != NULL and _recorder.ready()


cdef inline _Recipe _recipe_for(object op):
    return None if _recorder.recipe_for == NULL else _recorder.recipe_for(op)


cdef inline _Recipe _recipe_of(object d):
    return _recorder.recipe_of(d)


cdef inline object _record(object op, _Recipe r, tuple args, object kwargs, object out, bint run):
    return _recorder.record(op, r, args, kwargs, out, run)


cdef inline object _record_general(object op, _Recipe r, tuple args, object kwargs, object computed):
    return _recorder.record_general(op, r, args, kwargs, computed)


cdef inline object record_computed(object op, tuple args, object out):
    return _recorder.record_computed(op, args, out)


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


cdef _Guard _make_guard(object op, dict op_dict)
cdef bint _guard_identities_hold(_Guard g) except -1
cdef bint _plain_class(object cls) except -1
cdef object _scalar_operand(object other, object dtype)
cdef int _record_mode3(object op, TensorImpl a, TensorImpl b, TensorImpl c) except -2
cdef list _size_arg(tuple shape)
cdef object _unary_like(object op, object self, tuple args, TensorImpl a, object fn, object arg, bint fp_off)


cdef inline bint _unset(dict namespace, str name):
    # a module global that is None or absent (read from the module's dict: cheaper than getattr)
    cdef PyObject* value = PyDict_GetItem(namespace, name)
    return value == NULL or <object>value is None


cdef inline bint _nothing_intercepts() except -1:
    """The switch is on (``backends.compiled.enabled``), the autograd layer is the recorder's twin
    (``autograd_layer_is_twin``), and nothing could observe the op: no
    TorchFunctionMode or TorchDispatchMode, no forward-AD dual level, the plain dispatcher.
    Every twin asks this first (directly or through its module's ``_may_run``)."""
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


cdef inline bint _twin_ok(object op) except -1:
    """Whether ``op``'s twin may run: its guard holds (made on first use)."""
    cdef PyObject** dict_ptr = _PyObject_GetDictPtr(<PyObject*>op)
    if dict_ptr == NULL or dict_ptr[0] == NULL:
        return False
    cdef PyObject* g = PyDict_GetItem(<object>dict_ptr[0], "_twin_guard")
    if g == NULL:
        return _guard_holds(_make_guard(op, <dict>dict_ptr[0]))
    return _guard_holds(<_Guard>g)


cdef inline bint _grad_enabled() except -1:
    """``autograd.grad_mode._enabled``: off inside ``no_grad``, where autograd records nothing."""
    cdef PyObject* value = PyDict_GetItem(_grad_mode_globals, "_enabled")
    if value == NULL or <object>value is True:
        return True
    return bool(<object>value)


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


cdef inline int _records(TensorImpl a, TensorImpl b) except -2:
    """Whether autograd records an op on ``a`` (and ``b``, or None): 1 when it does and the
    compiled recorder can stand in for it, 0 when nothing is recorded (no input requires grad,
    or ``no_grad``), -1 when the twin must step aside (``recorder_ready()`` is false)."""
    if not (a.requires_grad or (b is not None and b.requires_grad)) or not _grad_enabled():
        return 0
    return 1 if recorder_ready() else -1


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


cdef inline object _recorded(object op, tuple args, object out):
    """``out`` wired into the graph as the full path's autograd layer would have done."""
    r = record_computed(op, args, out)
    return out if r is NotImplemented else r


cdef inline object _recorded_with(object op, _Recipe recipe, tuple args, object out):
    """``_recorded``, with ``op``'s recipe (``_recipe_for(op)``) already in hand."""
    r = _record(op, recipe, args, None, out, False)
    return out if r is NotImplemented else r


cdef inline int _typenum(object dtype):
    return cnp.NPY_FLOAT32 if dtype is _f32 else cnp.NPY_FLOAT64 if dtype is _f64 else cnp.NPY_INT64


cdef inline Py_ssize_t _dim_index(object dim, Py_ssize_t n):
    """``dim`` (an exact int) wrapped into ``range(n)``, or -1 when it is not valid here."""
    if type(dim) is not int:
        return -1
    cdef Py_ssize_t d
    try:
        d = dim
    except OverflowError:
        return -1
    if d < -n or d >= n:
        return -1
    return d + n if d < 0 else d


cdef inline object _full(str name, tuple head, tuple args, dict kwargs):
    """The full path of the compiled function ``name`` (given by ``install_fast_functions``)."""
    return _fn_slow[name](*head, *args, **kwargs)


cdef inline object _fresh_tensor(object r, object dtype):
    """Wrap numpy result ``r`` (an array or a numpy scalar) as the cpu kernels' ``wrap`` does."""
    cdef int typenum = _typenum(dtype)
    cdef cnp.ndarray arr
    if type(r) is _ndarray_type:
        arr = <cnp.ndarray>r
        if cnp.PyArray_TYPE(arr) != typenum:
            return None  # (cannot happen for these ops and dtypes; the full path would cast)
    else:
        # 0-d operands give a numpy scalar; the kernels' np.asarray makes it a 0-d array
        if type(r) is not (_np_float32_type if dtype is _f32 else _np_float64_type if dtype is _f64
                           else _np_int64_type):
            return None
        arr = cnp.PyArray_EMPTY(0, NULL, typenum, 0)
        cnp.PyArray_ScalarAsCtype(r, cnp.PyArray_DATA(arr))
    return _wrap_payload(_Tensor, _fresh_impl(arr, dtype, _cpu))


# -- strided operands ------------------------------------------------------------------------------
# Elementwise ops over operands that are not row-major keep a memory order of their own
# (``backends/layout.py``'s ``elementwise_strides``, PyTorch's TensorIterator rule). Two simple
# kinds of layout give a result whose strides are known without that rule, and the twins take
# them; everything else still takes the full path.

cdef inline bint _nested_strides(tuple sizes, tuple strides) except -1:
    """Every dim has size 2 or more and each stride is at least the span of the dims after it:
    row-major order with gaps allowed, the elements not overlapping (a ``chunk``/``narrow`` of a
    row-major tensor along a later dim, say). TensorIterator keeps such dims in their order, so
    an elementwise result over operands of this layout (and one shape) is row-major."""
    cdef Py_ssize_t i, n = len(sizes), size, stride, span = 1
    if n == 0:
        return False
    for i in range(n - 1, -1, -1):
        size = sizes[i]
        stride = strides[i]
        if size < 2 or stride < span:
            return False
        span = stride * size
    return True


cdef inline bint _dense_permuted(tuple sizes, tuple strides) except -1:
    """Every dim has size 2 or more and the strides are those of a row-major tensor with its dims
    permuted (``x.t()``, ``x.permute(...)``): dense, no gaps, no overlap. An elementwise result
    over operands of one shape that all have these same strides gets them too (TensorIterator:
    same shape, same non-overlapping dense strides)."""
    cdef Py_ssize_t n = len(sizes), i, k, expected = 1, found
    if n == 0 or n > 16:
        return False
    for i in range(n):
        if <Py_ssize_t>sizes[i] < 2:
            return False
    for k in range(n):   # the dim with stride ``expected`` comes next, innermost first
        found = -1
        for i in range(n):
            if <Py_ssize_t>strides[i] == expected:
                found = i
                break
        if found < 0:
            return False
        expected *= <Py_ssize_t>sizes[found]
    return True


cdef inline object _fresh_strided_tensor(object r, object dtype, tuple sizes, tuple strides):
    """Wrap numpy's result ``r`` as a fresh tensor with ``strides`` (a ``_dense_permuted``
    layout), as the cpu kernels' ``wrap_strided`` does when numpy already laid the values out that
    way in memory of their own: the storage is that block of memory, flat. None when ``r`` is laid
    out otherwise (then the full path copies it into that layout)."""
    if type(r) is not _ndarray_type:
        return None
    cdef cnp.ndarray arr = <cnp.ndarray>r
    cdef int typenum = _typenum(dtype)
    cdef int nd = cnp.PyArray_NDIM(arr), i
    if (cnp.PyArray_TYPE(arr) != typenum or nd != len(strides)
            or not cnp.PyArray_CHKFLAGS(arr, cnp.NPY_ARRAY_OWNDATA)):
        return None
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(arr)
    cdef cnp.npy_intp* byte_strides = cnp.PyArray_STRIDES(arr)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(arr)
    for i in range(nd):
        if byte_strides[i] != <Py_ssize_t>strides[i] * itemsize or dims[i] != <Py_ssize_t>sizes[i]:
            return None
    # the flat storage over the same memory: ravel in memory order is a view of a dense array
    cdef cnp.ndarray flat = cnp.PyArray_Ravel(arr, cnp.NPY_KEEPORDER)
    if cnp.PyArray_DATA(flat) != cnp.PyArray_DATA(arr) or cnp.PyArray_BASE(flat) == NULL:
        return None
    cdef TensorImpl impl = TensorImpl.__new__(TensorImpl)
    impl.storage = flat
    impl.sizes = sizes
    impl.strides = strides
    impl.dtype = dtype
    impl.device = _cpu
    impl.version = VersionCounter.__new__(VersionCounter)  # value 0
    impl.array = arr
    return _wrap_payload(_Tensor, impl)

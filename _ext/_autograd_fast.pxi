# The compiled recorder (issue 3: per-op overhead with requires_grad=True). Included into _C.pyx.
#
# What it is
# ----------
# The C twin of ``autograd/recording.py:_record_simple``, the recorder every op whose
# differentiable inputs are single tensors goes through (``d.simple``). The readable Python
# version stays the reference, step for step: this file makes the same node, with the same edges
# and saved values, wires the outputs the same way; only the speed differs. Change both together;
# ``tests/test_fast_record.py`` builds graphs both ways and compares everything observable.
#
# Why it is fast
# --------------
# The data every recorded op writes has a C layout: the classes below are the bases of the
# readable Python classes (``graph.Node``, ``recording.OpNode``, ``graph.AccumulateGrad``,
# ``graph.SavedTensor``, ``graph.SavedScalar``), which keep all their methods in Python. Their
# fields are ``cdef public``, so Python reads and writes them as before (``node.next_functions``,
# ``saved.version``...), and nodes still have no ``__dict__`` (``grad_fn.foo = 1`` is an
# AttributeError). Here the recorder makes those objects with ``__new__`` and fills the C fields
# directly, instead of running four or five Python ``__init__``s per op.
#
# Entry points
# ------------
# * ``record_simple(op, d, args, kwargs)``: ``_record_simple`` itself (steps 1-4, the kernel run
#   through the dispatch chain below autograd); the autograd layer calls it for every simple op.
# * ``record_computed(op, args, out)`` (cdef, for the compiled fast paths in ``_fastpath.pxi`` and
#   ``_fastpath_ops.pxi``): steps 1, 2 and 4 around a result the fast path already computed below
#   autograd. Callers call it only when grad mode is on, an input requires grad, nothing
#   intercepts (``_nothing_intercepts()``) and ``recorder_ready()`` (checked before the kernel
#   runs), and only for ops whose ``op.derivative.simple`` is true.
# * ``next_sequence_nr()``: the process-wide node counter (``graph._next_sequence_nr``); the one
#   counter both recorders and every Python ``Node.__init__`` take numbers from.

from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.weakref cimport PyWeakref_GetObject, PyWeakref_NewRef


# -- the C layout of the graph's objects --------------------------------------------------------


cdef class NodeBase:
    """The fields of ``autograd/graph.py:Node`` (documented there), laid out in C."""

    cdef public object next_functions
    cdef public object _input_metadata
    cdef public object _seq_nr
    cdef public object _pre_hooks
    cdef public object _post_hooks
    cdef public object _tensor_pre_hooks
    cdef public object _retains_grad
    cdef public object _metadata
    cdef object __weakref__


cdef class OpNodeBase(NodeBase):
    """The fields of ``autograd/recording.py:OpNode``."""

    cdef public object _derivative
    cdef public object _saved
    cdef public object _needs
    cdef public object _output_meta


cdef class AccumulateGradBase(NodeBase):
    """The field of ``autograd/graph.py:AccumulateGrad``: the leaf's payload."""

    cdef public object _impl


cdef class SavedTensorBase:
    """The fields of ``autograd/graph.py:SavedTensor``."""

    cdef public object impl
    cdef public object version
    cdef public object is_output
    cdef public object output_nr
    cdef public object released
    cdef public object packed
    cdef public object unpack_hook


cdef class SavedScalarBase(SavedTensorBase):
    """The field of ``autograd/graph.py:SavedScalar``: the Python number."""

    cdef public object value


# -- the sequence counter -------------------------------------------------------------------------

cdef unsigned long long _seq_counter = 0


def next_sequence_nr():
    """The next node's sequence number: 0, 1, 2... for the whole process (``graph._next_sequence_nr``)."""
    global _seq_counter
    _seq_counter += 1
    return _seq_counter - 1


# -- what the recorder needs from the package (imported after this module) ----------------------

cdef object _recording_layer = None      # recording.autograd_layer, the layer these stand for
cdef dict _ag_dispatch_globals = None    # minitorch_nn._dispatch.__dict__: autograd_layer, python_layer, backend
cdef dict _ag_grad_mode_globals = None   # autograd.grad_mode.__dict__: _enabled
cdef list _saved_hooks_stack = None      # graph._saved_tensors_hooks_stack
cdef object _SavedTensor = None          # the Python classes made here with __new__
cdef object _SavedScalar = None
cdef object _AccumulateGrad = None
cdef object _MAX_SEQUENCE_NR = None
cdef object _current_grad_fn = None      # graph.current_grad_fn (a view whose base changed in place)
cdef object _py_grad_accumulator = None  # graph.grad_accumulator (a leaf whose autograd_meta is odd)
cdef object _py_saved_value = None       # recording._saved_value (lists of tensors)
cdef object _py_metadata = None          # recording._metadata (metadata other than payload fields)
cdef dict _differentiable_dtypes = {}    # dtype -> is_floating_point or is_complex
# the ops of _fastpath.pxi's methods, as the full path calls them
cdef object _op_add = None
cdef object _op_sub = None
cdef object _op_mul = None
cdef object _op_relu = None
cdef object _op_sum = None


cdef int _load_recorder() except -1:
    global _recording_layer, _ag_dispatch_globals, _ag_grad_mode_globals, _saved_hooks_stack
    global _SavedTensor, _SavedScalar, _AccumulateGrad, _MAX_SEQUENCE_NR, _current_grad_fn
    global _py_grad_accumulator, _py_saved_value, _py_metadata
    global _op_add, _op_sub, _op_mul, _op_relu, _op_sum
    from minitorch_nn import _dispatch
    from minitorch_nn._ops import aten
    from minitorch_nn.autograd import grad_mode, graph, recording
    _op_add, _op_sub, _op_mul = aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor
    _op_relu, _op_sum = aten.relu.default, aten.sum.default
    _ag_dispatch_globals, _ag_grad_mode_globals = vars(_dispatch), vars(grad_mode)
    _saved_hooks_stack = graph._saved_tensors_hooks_stack
    _SavedTensor, _SavedScalar, _AccumulateGrad = graph.SavedTensor, graph.SavedScalar, graph.AccumulateGrad
    _MAX_SEQUENCE_NR, _current_grad_fn, _py_grad_accumulator = (
        graph.MAX_SEQUENCE_NR, graph.current_grad_fn, graph.grad_accumulator)
    _py_saved_value, _py_metadata = recording._saved_value, recording._metadata
    _recording_layer = recording.autograd_layer
    return 0


cdef bint recorder_ready() except -1:
    """True when ``record_computed`` after the kernel is indistinguishable from the full path:
    the autograd layer is the recording one, and no ``saved_tensors_hooks`` are active (their
    pack hooks run *before* the kernel in the full path). A fast path checks this, after
    ``_nothing_intercepts()``, before it runs a kernel whose result it will record."""
    if _recording_layer is None:
        _load_recorder()
    if _saved_hooks_stack:
        return False
    cdef PyObject* layer = PyDict_GetItem(_ag_dispatch_globals, "autograd_layer")
    return layer != NULL and <object>layer is _recording_layer


# -- the pieces: graph.py's constructors, in C ----------------------------------------------------


cdef inline tuple _meta_of(TensorImpl impl):
    # what a node keeps per input: (sizes, dtype, device)
    return (impl.sizes, impl.dtype, impl.device)


cdef object _accumulate_grad(TensorImpl impl):
    """``graph.grad_accumulator(impl)``: the leaf's cached AccumulateGrad, else a new one."""
    cdef PyObject* ref
    cdef PyObject* node
    meta = impl.autograd_meta
    if meta is None:
        meta = impl.autograd_meta = {}
    elif type(meta) is not dict:
        return _py_grad_accumulator(impl)
    else:
        ref = PyDict_GetItem(<dict>meta, "grad_accumulator")
        if ref != NULL and <object>ref is not None:
            node = PyWeakref_GetObject(<object>ref)
            if <object>node is not None:
                return <object>node
    # AccumulateGrad.__init__, in C
    cdef AccumulateGradBase acc = AccumulateGradBase.__new__(_AccumulateGrad)
    acc._seq_nr = _MAX_SEQUENCE_NR
    acc.next_functions = ()
    acc._input_metadata = (_meta_of(impl),)
    acc._impl = impl
    (<dict>meta)["grad_accumulator"] = PyWeakref_NewRef(acc, None)
    return acc


cdef TensorImpl _alias_impl(TensorImpl impl):
    """``graph._alias(impl)``: the same data and version counter, no autograd state."""
    cdef TensorImpl a = TensorImpl.__new__(TensorImpl)
    a.storage = impl.storage
    a.sizes = impl.sizes
    a.strides = impl.strides
    a.offset = impl.offset
    a.dtype = impl.dtype
    a.device = impl.device
    a.version = impl.version
    return a


cdef object _saved_tensor(object tensor, bint is_output):
    """``SavedTensor(tensor, is_output)``, in C when no saved-tensor hooks are active."""
    if _saved_hooks_stack or not isinstance(tensor, TensorBase):
        return _SavedTensor(tensor, is_output)   # the pack hook runs (or the same error is raised)
    cdef TensorImpl impl = (<TensorBase>tensor)._impl
    cdef SavedTensorBase s = SavedTensorBase.__new__(_SavedTensor)
    s.version = impl.version.value
    s.is_output = is_output
    s.output_nr = impl.output_nr
    s.released = False
    s.unpack_hook = None
    s.impl = _alias_impl(impl) if is_output else impl
    return s


cdef object _saved_value(object d, object name, object v):
    """``recording._saved_value``: a number in a Tensor slot becomes a SavedScalar."""
    if type(v) is list or type(v) is tuple:
        return _py_saved_value(d, name, v)
    cdef SavedScalarBase s
    if isinstance(v, (int, float)) and name in d.tensor_args:
        s = SavedScalarBase.__new__(_SavedScalar)
        s.value = v
        s.released = False
        s.unpack_hook = None
        return s
    return v


cdef inline bint _differentiable(object dtype) except -1:
    cdef PyObject* known = PyDict_GetItem(_differentiable_dtypes, dtype)
    if known != NULL:
        return <object>known is True
    flag = bool(dtype.is_floating_point or dtype.is_complex)
    _differentiable_dtypes[dtype] = flag
    return flag


cdef int _wire_output(object op, object node, tuple args, object o, Py_ssize_t i) except -1:
    """``recording._wire_output``: make ``o`` (output ``i``) point at ``node``."""
    if not isinstance(o, TensorBase):
        return 0
    cdef TensorImpl impl = (<TensorBase>o)._impl
    if not _differentiable(impl.dtype):
        return 0
    for a in args:
        if o is a:  # an op must hand back a new tensor, or the input's history breaks
            raise RuntimeError(f"{op}: autograd expected a new tensor, not an input")
    impl.grad_fn = node
    impl.requires_grad = True
    impl.output_nr = i
    cdef TensorImpl base = impl.base
    if base is not None and base.grad_fn is not None:
        # remember which history of the base this view was made from
        impl.autograd_meta = {"view_base_fn": base.grad_fn}
    return 0


# -- the recorder: recording._start_simple and _finish_simple, in C ------------------------------

cdef tuple _NO_EDGE = (None, 0)   # the edge of an input that needs no gradient


cdef object _start_simple(object d, tuple args, object kwargs):
    """Steps 1 and 2: ``(node, plan)``, or NotImplemented when no differentiable input requires grad."""
    cdef Py_ssize_t n = len(args), k, j = 0
    cdef tuple positions = d.input_positions
    k = len(positions)
    cdef list edges = [None] * k
    cdef list metas = [None] * k
    cdef list needed = [False] * k
    cdef bint any_needed = False
    cdef TensorImpl impl
    cdef Py_ssize_t pos
    # 1. One edge per differentiable input.
    for j in range(k):
        pos = positions[j][0]
        v = args[pos] if pos < n else d.arg(positions[j][1], args, kwargs)
        if isinstance(v, TensorBase):
            impl = (<TensorBase>v)._impl
            fn = impl.grad_fn
            if fn is not None:
                if impl.base is not None and impl.autograd_meta:
                    fn = _current_grad_fn(impl)   # a view whose base changed in place since
                edges[j] = (fn, impl.output_nr)
                needed[j] = any_needed = True
            elif impl.requires_grad:
                edges[j] = (_accumulate_grad(impl), 0)
                needed[j] = any_needed = True
            else:
                edges[j] = _NO_EDGE
            metas[j] = _meta_of(impl)
        else:
            edges[j] = _NO_EDGE
    if not any_needed:
        return NotImplemented
    key = tuple(needed)
    cdef PyObject* found = PyDict_GetItem(d._plans, key)
    plan = <object>found if found != NULL else d.plan(key)
    cdef OpNodeBase node = OpNodeBase.__new__(d.node_cls)
    global _seq_counter
    node._seq_nr = _seq_counter
    _seq_counter += 1
    node.next_functions = tuple(edges)
    node._input_metadata = tuple(metas)
    node._derivative = d
    node._needs = plan.needs
    node._output_meta = ()
    cdef dict saved = {}
    node._saved = saved

    # 2. Save what the formulas of the inputs that need a gradient read.
    for name, pos_, may_hold_tensors in plan.args:
        pos = pos_
        v = args[pos] if pos < n else d.arg(name, args, kwargs)
        if isinstance(v, TensorBase):
            saved[name] = _saved_tensor(v, False)
        elif may_hold_tensors:
            saved[name] = _saved_value(d, name, v)
        else:
            saved[name] = v   # an int, a list of ints, a dtype...
    for name, pos_, owner, attr in plan.metadata:
        pos = pos_
        v = args[pos] if pos < n else d.arg(owner, args, kwargs)
        if isinstance(v, TensorBase):
            impl = (<TensorBase>v)._impl
            if attr == "sizes":
                saved[name] = impl.sizes
                continue
            if attr == "strides":
                saved[name] = impl.strides
                continue
            if attr == "offset":
                saved[name] = impl.offset
                continue
            if attr == "dtype":
                saved[name] = impl.dtype
                continue
            if attr == "device":
                saved[name] = impl.device
                continue
        saved[name] = _py_metadata(v, attr)
    return (node, plan)



cdef object _finish_simple(object op, object d, OpNodeBase node, object plan, tuple args, object out):
    """Step 4: wire the outputs to ``node``, save the outputs the formulas read; returns ``out``."""
    cdef Py_ssize_t i
    if d.multi_output:
        outs = out if type(out) is tuple or type(out) is list else (out,)
        for i in range(len(outs)):
            _wire_output(op, node, args, outs[i], i)
        node._output_meta = tuple([
            _meta_of((<TensorBase>o)._impl) if isinstance(o, TensorBase) else None for o in outs])
    else:
        outs = (out,)
        _wire_output(op, node, args, out, 0)
    cdef tuple results = plan.results
    if results:
        saved = node._saved
        for name, idx in results:
            saved[name] = _saved_tensor(outs[idx], True)
    return out


# -- entry points ------------------------------------------------------------------------------------


def record_simple(op, d, args, kwargs):
    """``recording._record_simple(op, d, args, kwargs)``, in C (the same four steps)."""
    if _recording_layer is None:
        _load_recorder()
    if type(args) is not tuple:
        args = tuple(args)
    started = _start_simple(d, <tuple>args, kwargs)
    if started is NotImplemented:
        return NotImplemented   # nothing differentiable requires grad (maybe an index does)
    node, plan = <tuple>started

    # 3. Run the op below autograd (python dispatch, then the kernel), with grad mode off.
    cdef dict dispatch = _ag_dispatch_globals
    _ag_grad_mode_globals["_enabled"] = False
    try:
        python_layer = dispatch["python_layer"]
        out = NotImplemented if python_layer is None else python_layer(op, args, kwargs)
        if out is NotImplemented:
            out = dispatch["backend"](op, args, kwargs)
    finally:
        _ag_grad_mode_globals["_enabled"] = True
    return _finish_simple(op, d, node, plan, <tuple>args, out)


cdef object record_computed(object op, tuple args, object out):
    """Record ``op(*args)`` -> ``out`` (see the top of this file); returns ``out``, or
    NotImplemented when no differentiable input requires grad (the caller then returns ``out``
    as it is)."""
    if _recording_layer is None:
        _load_recorder()
    d = op.derivative
    started = _start_simple(d, args, None)
    if started is NotImplemented:
        return NotImplemented
    node, plan = <tuple>started
    return _finish_simple(op, d, node, plan, args, out)


def _record_computed(op, args, out):
    """``record_computed`` callable from Python (tests compare its graphs with the full path's)."""
    return record_computed(op, tuple(args), out)

# cython: language_level=3, binding=True, embedsignature=True
"""The compiled twin of ``minitorch_nn/autograd/recording.py`` (the autograd layer), and of the
constructors of ``autograd/graph.py`` it calls per op.

Built into ``minitorch_nn._twins.autograd.recording``. The kernel twins sit below autograd and do
not import it: ``install_recorder`` puts the functions they call (``recorder_ready``,
``_recipe_for``, ``_record``, ``record_computed``...) into the recorder slot of the twins' gate
(``minitorch_nn/_twins/_gate.pxd``), as ``autograd/__init__.py`` puts the autograd layer into the
dispatcher's ``autograd_layer`` slot. Until then the slot is empty and every kernel twin takes the
full path.

What it is
----------
The C twin of ``recording.autograd_layer`` and of the recorders it calls: ``_record_simple``
(with ``_start_simple`` and ``_finish_simple``: every op whose differentiable inputs are single
tensors) and ``_record`` (``Tensor[]`` inputs such as ``cat``, and in-place ops). The readable
Python version is the reference, step for step: this file makes the same node, with the same
edges and saved values, wires the outputs the same way; only the speed differs. Change both
together; ``tests/test_fast_record.py`` builds graphs both ways and compares everything
observable.

When it runs
------------
``recording.installed_layer`` (what autograd/__init__.py puts in the dispatcher) is
``autograd_layer`` below. It hands the op to ``recording.autograd_layer`` -- whatever that name
holds now -- while the switch ``minitorch_nn.backends.compiled`` is off (the C flag
``compiled_enabled``), and while a function of recording.py that it mirrors has been replaced:
before it records an op it compares, by identity, the functions of recording.py the path it takes
mirrors with those it was installed with (``_SIMPLE_ORIGINALS``, ``_GENERAL_ORIGINALS``). The
other functions of recording.py it calls (``_check_inplace``, ``_record_other``...) it looks up
in recording.py's namespace at the call, so a replacement runs either way. (The comparisons are
made when recording.py's module reports an assignment to one of its attributes, and kept in two
C flags: see recorder_recheck.) An edit to
recording.py's source is caught at import (``backends.compiled.check_original``, against the
fingerprints in ``minitorch_nn/_twin_manifest.json``): recording.py then
installs its own layer.

Why it is fast
--------------
The data every recorded op writes has a C layout: the classes below are the bases of the
readable Python classes (``graph.Node``, ``recording.OpNode``, ``graph.AccumulateGrad``,
``graph.SavedTensor``, ``graph.SavedScalar``), which keep all their methods in Python. Their
fields are ``cdef public``, so Python reads and writes them as before (``node.next_functions``,
``saved.version``...), and nodes still have no ``__dict__`` (``grad_fn.foo = 1`` is an
AttributeError). Here the recorder makes those objects with ``__new__`` and fills the C fields
directly, instead of running four or five Python ``__init__``s per op. The input metadata a node
keeps (``_input_metadata``: (sizes, dtype, device) per input) is equal to the readable
recorder's but shared between nodes (``_meta_of``, ``_shared_metas_tuple``): a recurrent model
records thousands of nodes over a handful of shapes per step, and every tuple kept alive is work
for Python's cyclic collector (its full passes were a tenth of an LSTM training step).

Entry points
------------
* ``autograd_layer(op, args, kwargs)``: twin of ``recording.autograd_layer``; it records every
  simple op itself (steps 1-4, the kernel run through the dispatch chain below autograd), and
  the others that have a formula (``_record_general``, calling back into Python for the
  in-place checks and history rebasing), and hands the rest (no formula, nondifferentiable) to
  ``recording._record_other``.
* ``record_computed(op, args, out)`` (cdef, called by the kernel twins under
  ``_ext/twins/backends/`` through the gate's recorder slot): twin of ``recording._record_computed``, steps 1, 2 and 4 around a
  result the fast path already computed below autograd. Callers call it only when grad mode is
  on, an input requires grad, nothing intercepts (``_nothing_intercepts()``),
  ``recorder_ready()`` (which includes the switch and the guards) and ``_recipe_for(op)`` is not
  None (both checked before the kernel runs: ``op.derivative`` is a simple one).
* ``next_sequence_nr()``: the process-wide node counter (``graph._next_sequence_nr``); the one
  counter both recorders and every Python ``Node.__init__`` take numbers from.
"""

cimport cython
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

from minitorch_nn._C cimport (TensorBase, TensorImpl, VersionCounter, _inference_mode_on,
                              compiled_enabled)
from minitorch_nn._twins cimport _gate
from minitorch_nn._twins._gate cimport _Recipe

from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.object cimport PyObject, PyTypeObject
from cpython.weakref cimport PyWeakref_CheckRef, PyWeakref_GetObject, PyWeakref_NewRef


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


cdef tuple _NO_ARGS = ()


cdef inline object _new(object cls):
    """``Base.__new__(cls)``: a fresh object of the Python class ``cls`` (whose C layout is one of
    the bases above, all fields None), from the type's allocator directly: no ``__init__``, and
    none of the Python-level ``__new__`` lookup and argument checks, which cost more than the rest."""
    return (<PyTypeObject*>cls).tp_new(<type>cls, <PyObject*>_NO_ARGS, NULL)


# -- the sequence counter -------------------------------------------------------------------------

cdef unsigned long long _seq_counter = 0


def next_sequence_nr():
    """The next node's sequence number: 0, 1, 2... for the whole process (``graph._next_sequence_nr``)."""
    global _seq_counter
    _seq_counter += 1
    return _seq_counter - 1


# -- what the recorder needs from the package (given by install_recorder) -------------------------

cdef object _recording_layer = None      # autograd_layer below, once installed
cdef dict _ag_dispatch_globals = None    # minitorch_nn._dispatch.__dict__: autograd_layer, python_layer, backend
cdef dict _ag_grad_mode_globals = None   # autograd.grad_mode.__dict__: _enabled
cdef list _saved_hooks_stack = None      # graph._saved_tensors_hooks_stack
cdef object _SavedTensor = None          # the Python classes made here with __new__
cdef object _SavedScalar = None
cdef object _AccumulateGrad = None
cdef object _MAX_SEQUENCE_NR = None
cdef object _NONDIFFERENTIABLE = None    # recording.NONDIFFERENTIABLE
# recording.py's namespace: the functions the recorder calls are looked up there at the call
cdef dict _recording_globals = None
# The functions of recording.py each path of the twin mirrors, and the objects they were at
# install: the twin records an op only while each name still holds its object (_unchanged).
cdef tuple _SIMPLE_NAMES = ("autograd_layer", "_record_simple", "_start_simple", "_finish_simple",
                            "_record_computed", "_wire_output")
cdef tuple _GENERAL_NAMES = ("autograd_layer", "_record_other", "_record", "_edge", "_wire_output", "_run_below")
cdef tuple _SIMPLE_ORIGINALS = None
cdef tuple _GENERAL_ORIGINALS = None
cdef object _reference_layer = None      # recording.autograd_layer, as installed
cdef dict _differentiable_dtypes = {}    # dtype -> is_floating_point or is_complex
cdef object _f32 = None                 # minitorch_nn.float32 and float64 (always differentiable)
cdef object _f64 = None
cdef object _clone = None               # aten.clone.default (an in-place op saves a copy of self)


def install_recorder(*, recording, graph, grad_mode, dispatch, aten):
    """Give the compiled recorder the Python objects it works with, and fill the gate's recorder
    slot (``_gate._recorder`` and the variables ``autograd_layer_is_twin`` reads) with it; called
    once at the end of ``autograd/recording.py``. Until then the slot is empty: the kernel twins
    take the full path (``recorder_ready()`` and ``autograd_layer_is_twin()`` are false)."""
    global _recording_layer, _ag_dispatch_globals, _ag_grad_mode_globals, _saved_hooks_stack
    global _SavedTensor, _SavedScalar, _AccumulateGrad, _MAX_SEQUENCE_NR, _NONDIFFERENTIABLE, _clone
    global _recording_globals, _SIMPLE_ORIGINALS, _GENERAL_ORIGINALS, _reference_layer
    global _f32, _f64
    from minitorch_nn import _dtype
    _f32, _f64 = _dtype.float32, _dtype.float64
    _ag_dispatch_globals, _ag_grad_mode_globals = vars(dispatch), vars(grad_mode)
    _saved_hooks_stack = graph._saved_tensors_hooks_stack
    _SavedTensor, _SavedScalar, _AccumulateGrad = graph.SavedTensor, graph.SavedScalar, graph.AccumulateGrad
    _MAX_SEQUENCE_NR = graph.MAX_SEQUENCE_NR
    _NONDIFFERENTIABLE = recording.NONDIFFERENTIABLE
    _clone = aten.clone.default
    _recording_globals = vars(recording)
    _SIMPLE_ORIGINALS = tuple([_recording_globals[name] for name in _SIMPLE_NAMES])
    _GENERAL_ORIGINALS = tuple([_recording_globals[name] for name in _GENERAL_NAMES])
    _reference_layer = recording.autograd_layer
    _recording_layer = autograd_layer
    # The slot the kernel twins call the recorder through (the gate is below autograd: it cannot
    # import this module, so this module hands it these functions).
    _gate._recorder.ready = recorder_ready
    _gate._recorder.recipe_for = _recipe_for
    _gate._recorder.recipe_of = _recipe_of
    _gate._recorder.record = _record
    _gate._recorder.record_general = _record_general
    _gate._recorder.record_computed = record_computed
    _gate._NONDIFFERENTIABLE = _NONDIFFERENTIABLE
    _gate._ag_dispatch_globals = _ag_dispatch_globals
    recorder_recheck()
    _gate._recording_layer = autograd_layer   # (last: autograd_layer_is_twin() can now be true)


cdef inline object _readable(str name):
    """recording.py's ``name`` as it is now (the readable function, or what replaced it)."""
    return _recording_globals[name]


cdef bint _unchanged(tuple names, tuple originals):
    """True while each of recording.py's ``names`` still holds its object from install time."""
    cdef Py_ssize_t i
    for i in range(len(names)):
        if PyDict_GetItem(_recording_globals, names[i]) != <PyObject*>originals[i]:
            return False
    return True


# The result of the identity checks, kept current by recorder_recheck(): recording.py's module
# object calls it whenever one of its attributes is assigned or deleted, so the checks cost the
# recorder one C flag read per op instead of a dictionary lookup per name.
cdef bint _simple_unchanged = False
cdef bint _general_unchanged = False
# (and the gate's _layer_unchanged: recording.autograd_layer alone, read by autograd_layer_is_twin)


def recorder_recheck():
    """Compare recording.py's functions with those the twin was installed with, by identity (called
    by recording.py's module when one of its attributes changes, and at install)."""
    global _simple_unchanged, _general_unchanged
    if _recording_globals is None:
        return
    _gate._layer_unchanged = PyDict_GetItem(_recording_globals, "autograd_layer") == <PyObject*>_reference_layer
    _simple_unchanged = _unchanged(_SIMPLE_NAMES, _SIMPLE_ORIGINALS)
    _general_unchanged = _unchanged(_GENERAL_NAMES, _GENERAL_ORIGINALS)


def recorder_guards_hold():
    """True while the switch is on and every function of recording.py this twin mirrors is the
    object it was installed with (what the twin checks before it records an op)."""
    recorder_recheck()
    return _recording_layer is not None and compiled_enabled and _simple_unchanged and _general_unchanged


cdef bint recorder_ready() except -1:
    """True when ``record_computed`` after the kernel is indistinguishable from the full path:
    the switch is on, the autograd layer is this twin and recording.py's functions it mirrors are
    unchanged, and no ``saved_tensors_hooks`` are active (their
    pack hooks run *before* the kernel in the full path). A fast path checks this, after
    ``_nothing_intercepts()``, before it runs a kernel whose result it will record."""
    if _recording_layer is None or _saved_hooks_stack or not compiled_enabled:
        return False
    cdef PyObject* layer = PyDict_GetItem(_ag_dispatch_globals, "autograd_layer")
    # (cat and stack fast paths record as _record does)
    return layer != NULL and <object>layer is _recording_layer and _simple_unchanged and _general_unchanged


# (``autograd_layer_is_twin()``, which every kernel twin asks first, is inline in the gate's
# _gate.pxd: it reads the variables install_recorder and recorder_recheck give the gate)


cdef _Recipe _recipe_for(object op):
    """The recipe of ``op``'s derivative when ``record_computed`` can record ``op`` (a simple
    derivative), else None: a student may have removed or replaced it, and the full path then
    records whatever it records. A fast path checks this, with ``recorder_ready()``, before it
    runs the kernel."""
    d = op.derivative
    if d is None or d is _NONDIFFERENTIABLE:
        return None
    cdef _Recipe r = _recipe_of(d)
    return r if r.simple and r.compiled else None


# -- the pieces: graph.py's constructors, in C ----------------------------------------------------


cdef dict _shared_metas = {}   # sizes -> the (sizes, dtype, device) tuple that _meta_of shares


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef inline tuple _meta_of(TensorImpl impl):
    # What a node keeps per input: (sizes, dtype, device). One tuple per shape (for the dtype and
    # device first seen with it) is shared by every node, equal to the fresh tuple the readable
    # recorder makes: a recurrent model's graph has thousands of nodes over a few shapes, and
    # each new tuple is one more object for Python's cyclic collector, whose full passes cost
    # such a model a tenth of its time.
    cdef PyObject* hit = PyDict_GetItem(_shared_metas, impl.sizes)
    if hit != NULL:
        meta = <tuple>hit
        if meta[1] is impl.dtype and meta[2] is impl.device:
            return meta
    meta = (impl.sizes, impl.dtype, impl.device)
    if hit == NULL:
        if len(_shared_metas) >= 4096:
            _shared_metas.clear()
        _shared_metas[impl.sizes] = meta
    return meta


cdef dict _shared_meta_tuples = {}   # the metas' addresses -> a node's shared _input_metadata


cdef tuple _shared_metas_tuple(tuple metas, Py_ssize_t k):
    """``metas`` (a node's ``_input_metadata``, one entry per input), or an equal tuple of the
    same entries that an earlier node keeps: the entries are mostly ``_meta_of``'s shared tuples,
    so one op on tensors of one shape gives the same tuple each time (why share: ``_meta_of``).
    Looked up by the entries' addresses, compared by identity (a cached tuple keeps its entries
    alive, so their addresses cannot be reused meanwhile); no hashing of dtypes or devices."""
    if k == 0 or k > 3:
        return metas
    cdef Py_ssize_t j
    cdef size_t key = 0
    for j in range(k):
        key = key * <size_t>1000003 ^ <size_t><PyObject*>metas[j]
    cdef PyObject* hit = PyDict_GetItem(_shared_meta_tuples, key)
    cdef tuple shared
    if hit != NULL:
        shared = <tuple>hit
        if len(shared) != k:
            return metas
        for j in range(k):
            if <PyObject*>shared[j] != <PyObject*>metas[j]:
                return metas
        return shared
    if len(_shared_meta_tuples) >= 4096:
        _shared_meta_tuples.clear()
    _shared_meta_tuples[key] = metas
    return metas


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef object _accumulate_grad(TensorImpl impl, tuple meta_of_impl):
    """``graph.grad_accumulator(impl)``: the leaf's cached AccumulateGrad, else a new one
    (``meta_of_impl``: ``_meta_of(impl)``, which the caller needs too)."""
    cdef PyObject* ref
    cdef PyObject* node
    meta = impl.autograd_meta
    if meta is None:
        meta = impl.autograd_meta = {}
    elif type(meta) is not dict:
        return _readable("grad_accumulator")(impl)
    else:
        ref = PyDict_GetItem(<dict>meta, "grad_accumulator")
        if ref != NULL and <object>ref is not None:
            if not PyWeakref_CheckRef(<object>ref):
                return _readable("grad_accumulator")(impl)   # not the weak reference graph.py stores
            node = PyWeakref_GetObject(<object>ref)
            if <object>node is not None:
                return <object>node
    # AccumulateGrad.__init__, in C
    cdef AccumulateGradBase acc = <AccumulateGradBase>_new(_AccumulateGrad)
    acc._seq_nr = _MAX_SEQUENCE_NR
    acc.next_functions = ()
    acc._input_metadata = (meta_of_impl,)
    acc._impl = impl
    (<dict>meta)["grad_accumulator"] = PyWeakref_NewRef(acc, None)
    return acc


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
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


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef object _saved_tensor(object tensor, bint is_output):
    """``SavedTensor(tensor, is_output)``, in C when no saved-tensor hooks are active."""
    if _saved_hooks_stack or not isinstance(tensor, TensorBase):
        return _SavedTensor(tensor, is_output)   # the pack hook runs (or the same error is raised)
    if is_output and PyDict_GetItem(_ag_dispatch_globals, "python_layer") != <PyObject*>None:
        return _SavedTensor(tensor, is_output)   # a mode or subclass may see the output's aten.detach
    cdef TensorImpl impl = (<TensorBase>tensor)._impl
    if impl.version.inference or type(impl.version) is not VersionCounter:
        return _SavedTensor(tensor, is_output)   # raises PyTorch's "cannot be saved" error
    cdef SavedTensorBase s = <SavedTensorBase>_new(_SavedTensor)
    s.version = impl.version.value
    s.is_output = is_output
    s.output_nr = impl.output_nr
    s.released = False
    s.unpack_hook = None
    s.impl = _alias_impl(impl) if is_output else impl
    return s


cdef object _saved_value(_Recipe r, object name, object v):
    """``recording._saved_value``: a number in a Tensor slot becomes a SavedScalar."""
    if type(v) is list or type(v) is tuple:
        return _readable("_saved_value")(r.d, name, v)
    cdef SavedScalarBase s
    if isinstance(v, (int, float)) and name in r.tensor_args:
        s = <SavedScalarBase>_new(_SavedScalar)
        s.value = v
        s.released = False
        s.unpack_hook = None
        return s
    return v


cdef inline bint _differentiable(object dtype) except -1:
    if dtype is _f32 or dtype is _f64:
        return True
    cdef PyObject* known = PyDict_GetItem(_differentiable_dtypes, dtype)
    if known != NULL:
        return <object>known is True
    flag = bool(dtype.is_floating_point or dtype.is_complex)
    _differentiable_dtypes[dtype] = flag
    return flag


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
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
    if impl.base is not None:
        # a view: its grad_fn is up to date at this version of the shared counter, and it was made
        # with grad mode on (the kernel ran with it off only because autograd runs kernels so)
        impl.view_version = impl.version.value
        impl.creation_meta = 0
    return 0


# -- the recorder: recording._start_simple and _finish_simple, in C ------------------------------

cdef tuple _NO_EDGE = (None, 0)   # the edge of an input that needs no gradient


cdef class _CompiledPlan:
    """A ``recording._SavePlan``'s fields, read once into C."""

    cdef object plan   # the _SavePlan itself (in d._plans, shared with the Python recorder)
    cdef tuple args
    cdef tuple metadata
    cdef tuple metadata_fields   # per metadata entry: which payload field it is (_FIELDS), or -1
    cdef tuple results
    cdef object needs


# ``_Recipe`` (what the recorder reads of one ``recording.Derivative``) is declared in the gate's
# _gate.pxd: the kernel twins hold one between their check and their record.


cdef dict _recipes = {}   # Derivative -> _Recipe
# the metadata names (``self_sizes``...) that are payload fields, read in C
cdef tuple _FIELDS = ("sizes", "strides", "offset", "dtype", "device")
cdef Py_ssize_t _MAX_MASKED_INPUTS = 8   # ops with more differentiable inputs than this are rare: no list of 2**k


cdef tuple _tuples(object rows):
    # rows as a tuple of tuples: the loops below index them without checking their type
    return tuple([tuple(row) for row in rows])


cdef _Recipe _recipe_of(object d):
    """``d``'s recipe, made at its first recorded op. (So a Derivative is read once: replace
    ``op.derivative``, as ``derivatives.py`` does, rather than change a Derivative in use.)"""
    cdef PyObject* found = PyDict_GetItem(_recipes, d)
    if found != NULL:
        return <_Recipe>found
    cdef _Recipe r = _Recipe.__new__(_Recipe)
    r.d = d
    r.positions = _tuples(d.input_positions)
    r.n_inputs = len(r.positions)
    r.node_cls = d.node_cls
    r.compiled = isinstance(r.node_cls, type) and issubclass(r.node_cls, OpNodeBase)
    r.no_history = getattr(d, "non_differentiable_outputs", None) or None
    r.multi_output = d.multi_output
    r.simple = d.simple
    r.slots = _tuples(d.input_slots)
    r.inplace = d.op.is_inplace
    r.tensor_args = d.tensor_args
    r.plans = [None] * (1 << r.n_inputs) if r.n_inputs <= _MAX_MASKED_INPUTS else None
    _recipes[d] = r
    return r


cdef _CompiledPlan _plan_of(_Recipe r, list needed, Py_ssize_t mask):
    """``d.plan(tuple(needed))``, cached by ``mask`` in C."""
    cdef _CompiledPlan cp
    if r.plans is not None:
        cp = r.plans[mask]
        if cp is not None:
            return cp
    plan = r.d.plan(tuple(needed))
    cp = _CompiledPlan.__new__(_CompiledPlan)
    cp.plan, cp.args, cp.metadata, cp.results = plan, _tuples(plan.args), _tuples(plan.metadata), _tuples(plan.results)
    cp.needs = plan.needs
    cp.metadata_fields = tuple([_FIELDS.index(entry[3]) if entry[3] in _FIELDS else -1 for entry in cp.metadata])
    if r.plans is not None:
        r.plans[mask] = cp
    return cp


cdef inline void _put(tuple t, Py_ssize_t i, object v):
    # fill slot i of a fresh tuple (PyTuple_SET_ITEM steals the reference we add)
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, i, v)


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef object _record(object op, _Recipe r, tuple args, object kwargs, object out, bint run):
    """Steps 1-4 of ``recording._record_simple`` (step 3, the kernel, only when ``run``; else
    ``out`` is the result already computed): returns the result, or NotImplemented when no
    differentiable input requires grad."""
    if _inference_mode_on:
        return NotImplemented   # (fast paths call this directly) inference_mode records nothing
    d = r.d
    cdef Py_ssize_t n = len(args), k = r.n_inputs, j, pos, mask = 0
    cdef tuple edges = PyTuple_New(k)
    cdef tuple metas = PyTuple_New(k)
    cdef list needed = None
    cdef TensorImpl impl
    cdef tuple entry, meta
    # 1. One edge per differentiable input.
    for j in range(k):
        entry = <tuple>r.positions[j]
        pos = entry[0]
        v = args[pos] if pos < n else d.arg(entry[1], args, kwargs)
        if isinstance(v, TensorBase):
            impl = (<TensorBase>v)._impl
            fn = impl.grad_fn
            meta = _meta_of(impl)
            if fn is not None:
                if impl.base is not None and impl.view_version != impl.version.value:
                    fn = _readable("current_grad_fn")(impl)   # a view whose base changed in place since
                _put(edges, j, (fn, impl.output_nr))
                mask |= 1 << j
            elif impl.requires_grad:
                if impl.version.inference and _readable("_only_inference_tensors")(op, args, kwargs):
                    return NotImplemented   # inference tensors alone: nothing recorded (recording.py)
                _put(edges, j, (_accumulate_grad(impl, meta), 0))
                mask |= 1 << j
            else:
                _put(edges, j, _NO_EDGE)
            _put(metas, j, meta)
        else:
            _put(edges, j, _NO_EDGE)
            _put(metas, j, None)
    if mask == 0:
        return NotImplemented
    if r.plans is None or r.plans[mask] is None:
        needed = [bool(mask & (1 << j)) for j in range(k)]
    cdef _CompiledPlan plan = _plan_of(r, needed, mask)
    cdef OpNodeBase node = <OpNodeBase>_new(r.node_cls)
    global _seq_counter
    node._seq_nr = _seq_counter
    _seq_counter += 1
    node.next_functions = edges
    node._input_metadata = _shared_metas_tuple(metas, k)
    node._derivative = d
    node._needs = plan.needs
    node._output_meta = ()
    cdef dict saved = {}
    node._saved = saved

    # 2. Save what the formulas of the inputs that need a gradient read.
    _save_inputs(r, plan, args, kwargs, saved)
    # 3. Run the op below autograd (python dispatch, then the kernel), with grad mode off.
    if run:
        out = _run_below(op, args, kwargs)
    # 4. Wire the outputs to the node, save the outputs the formulas read.
    return _finish(op, r, node, plan, args, out)


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef int _save_inputs(_Recipe r, _CompiledPlan plan, tuple args, object kwargs, dict saved) except -1:
    """Step 2: save the arguments and the metadata the formulas of the needed inputs read (for an
    in-place op, a copy of ``self``, whose value is about to be overwritten)."""
    d = r.d
    cdef Py_ssize_t n = len(args), j, pos, field
    cdef tuple entry
    cdef TensorImpl impl
    for entry in plan.args:
        name = entry[0]
        pos = entry[1]
        if pos < n:
            v = args[pos]
        elif entry[3] and not (kwargs and name in kwargs):
            continue   # only grad_fn._saved_<name> reads it, and it is the default (recording._SavePlan)
        else:
            v = d.arg(name, args, kwargs)
        if isinstance(v, TensorBase):
            if r.inplace and name == "self":
                v = _clone(v)   # recorded like any op, so that a double backward goes through it
            saved[name] = _saved_tensor(v, False)
        elif entry[2]:   # may hold tensors
            saved[name] = _saved_value(r, name, v)
        else:
            saved[name] = v   # an int, a list of ints, a dtype...
    for j in range(len(plan.metadata)):
        entry = <tuple>plan.metadata[j]
        field = plan.metadata_fields[j]
        name = entry[0]
        pos = entry[1]
        v = args[pos] if pos < n else d.arg(entry[2], args, kwargs)
        if field >= 0 and isinstance(v, TensorBase):
            saved[name] = _field((<TensorBase>v)._impl, field)
        elif field >= 0 and type(v) is list and _all_tensors(<list>v):
            saved[name] = [_field((<TensorBase>t)._impl, field) for t in <list>v]   # tensors_sizes...
        else:
            saved[name] = _readable("_metadata")(v, entry[3])
    return 0


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef inline object _field(TensorImpl impl, Py_ssize_t field):
    # the payload field numbered as in _FIELDS
    return (impl.sizes if field == 0 else impl.strides if field == 1 else impl.offset if field == 2
            else impl.dtype if field == 3 else impl.device)


cdef inline bint _all_tensors(list items):
    for t in items:
        if not isinstance(t, TensorBase):
            return False
    return True


cdef object _run_below(object op, tuple args, object kwargs):
    """Step 3: ``recording._run_below``: python dispatch, then the kernel, with grad mode off."""
    cdef dict dispatch = _ag_dispatch_globals
    _ag_grad_mode_globals["_enabled"] = False
    try:
        python_layer = dispatch["python_layer"]
        out = NotImplemented if python_layer is None else python_layer(op, args, kwargs)
        if out is NotImplemented:
            out = dispatch["backend"](op, args, kwargs)
    finally:
        _ag_grad_mode_globals["_enabled"] = True
    return out


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef object _finish(object op, _Recipe r, OpNodeBase node, _CompiledPlan plan, tuple args, object out):
    """Step 4: wire the outputs to ``node``, save the outputs the formulas read; returns ``out``."""
    cdef Py_ssize_t j
    if r.multi_output:
        outs = out if type(out) is tuple or type(out) is list else (out,)
        for j in range(len(outs)):
            if r.no_history is None or j not in r.no_history:
                _wire_output(op, node, args, outs[j], j)
        node._output_meta = tuple([
            _meta_of((<TensorBase>o)._impl) if isinstance(o, TensorBase) else None for o in outs])
    else:
        outs = None
        _wire_output(op, node, args, out, 0)
    cdef dict saved = node._saved
    for entry in plan.results:
        j = entry[1]
        saved[entry[0]] = _saved_tensor(out if outs is None else outs[j],
                                        r.no_history is None or j not in r.no_history)
    return out


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef object _record_general(object op, _Recipe r, tuple args, object kwargs, object computed):
    """``recording._record``: ops with ``Tensor[]`` inputs (``cat``, ``stack``...) and in-place
    ops, in the same order: the node first, then one edge per element of a list (``node._needs``
    says which elements need a gradient), saved values, the kernel, then the outputs wired to the
    node or, in place, ``self``'s history rebased (``recording._rebase_history``, views and all).
    Returns NotImplemented when no differentiable input requires grad (never in place).
    ``computed``: the kernel's result, already computed by a fast path (``cat``), or None to run it."""
    if _inference_mode_on:
        return NotImplemented   # (the cat fast path calls this directly) inference_mode records nothing
    d = r.d
    # OpNode.__init__(d), in C (the node is made first, as in _record: it takes its number first)
    cdef OpNodeBase node = <OpNodeBase>_new(r.node_cls)
    global _seq_counter
    node._seq_nr = _seq_counter
    _seq_counter += 1
    node.next_functions = ()
    node._input_metadata = ()
    node._derivative = d
    cdef dict saved = {}
    node._saved = saved
    cdef dict needs = {}
    node._needs = needs
    node._output_meta = ()
    # 1. One edge per differentiable input (one per element of a Tensor[] input).
    cdef list edges = [], metas = [], flags, needed = None
    cdef Py_ssize_t n = len(args), j, pos, mask = 0
    cdef tuple slot, meta
    cdef TensorImpl impl
    for j in range(r.n_inputs):
        slot = <tuple>r.slots[j]
        name = slot[0]
        pos = slot[1]
        v = args[pos] if pos < n else d.arg(name, args, kwargs)
        flags = []
        for item in (v if slot[2] else (v,)):
            edge = None
            if isinstance(item, TensorBase):
                impl = (<TensorBase>item)._impl
                fn = impl.grad_fn
                meta = _meta_of(impl)
                if fn is not None:
                    if impl.base is not None and impl.view_version != impl.version.value:
                        fn = _readable("current_grad_fn")(impl)   # a view whose base changed in place since
                    edge = (fn, impl.output_nr)
                elif impl.requires_grad:
                    if impl.version.inference and _readable("_only_inference_tensors")(op, args, kwargs):
                        return NotImplemented   # inference tensors alone: nothing recorded
                    edge = (_accumulate_grad(impl, meta), 0)
                metas.append(meta)
            else:
                metas.append(None)
            if edge is None:
                edges.append(_NO_EDGE)
                flags.append(False)
            else:
                edges.append(edge)
                flags.append(True)
                mask |= 1 << j
        needs[name] = flags
    if r.inplace:
        _readable("_check_inplace")(args[0])
    elif mask == 0:
        return NotImplemented   # only non-differentiable arguments (an index, a mask) need grad
    node.next_functions = tuple(edges)
    node._input_metadata = tuple(metas)
    if r.plans is None or r.plans[mask] is None:
        needed = [bool(mask & (1 << j)) for j in range(r.n_inputs)]
    cdef _CompiledPlan plan = _plan_of(r, needed, mask)
    # 2. and 3. as for the simple ops
    _save_inputs(r, plan, args, kwargs, saved)
    out = _run_below(op, args, kwargs) if computed is None else computed
    if not r.inplace:
        return _finish(op, r, node, plan, args, out)
    # 4. In place: self's history goes through the node now.
    _readable("_rebase_history")(args[0], node)
    outs = out if type(out) is tuple or type(out) is list else (out,)
    if r.multi_output:
        node._output_meta = tuple([
            _meta_of((<TensorBase>o)._impl) if isinstance(o, TensorBase) else None for o in outs])
    for entry in plan.results:
        j = entry[1]
        saved[entry[0]] = _saved_tensor(outs[j], r.no_history is None or j not in r.no_history)
    return out


# -- entry points ------------------------------------------------------------------------------------


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
cdef bint _holds_grad(object items) except -1:
    # a list/tuple argument holding a tensor that requires grad
    for b in items:
        if isinstance(b, TensorBase) and (<TensorBase>b)._impl.requires_grad:
            return True
    return False


@cython.nonecheck(True)   # a handle without a payload raises AttributeError, as in Python
def autograd_layer(op, args, kwargs):
    """``recording.autograd_layer`` (its readable reference), in C: installed as
    ``_dispatch.autograd_layer``. Ops with a formula are recorded here (``_record`` for the simple
    ones, ``_record_general`` for ``Tensor[]`` inputs and in-place ops); the rest (no formula,
    nondifferentiable) by ``recording._record_other``. While the switch is off, or a function of
    recording.py it mirrors has been replaced, ``recording.autograd_layer`` does all of it."""
    if not compiled_enabled or not _simple_unchanged:   # (the first of _SIMPLE_NAMES is autograd_layer)
        return _readable("autograd_layer")(op, args, kwargs)
    cdef PyObject* enabled = PyDict_GetItem(_ag_grad_mode_globals, "_enabled")
    if enabled != NULL and not <object>enabled:
        return NotImplemented  # the fast path
    # Plain tensors leave here, before any per-op work: one loop over the positional arguments.
    cdef bint found = False
    for a in args:
        if isinstance(a, TensorBase):
            if (<TensorBase>a)._impl.requires_grad:
                found = True
                break
        elif type(a) is list or type(a) is tuple:
            if _holds_grad(a):
                found = True
                break
    if not found:
        if not (kwargs and _holds_grad(kwargs.values())):
            if op.is_inplace and args and isinstance(args[0], TensorBase) and \
                    (<TensorBase>args[0])._impl.base is not None:
                _readable("_check_inplace")(args[0])   # a view made under no_grad of a tensor that requires grad
            return NotImplemented
    if _inference_mode_on:
        return NotImplemented   # enable_grad() inside inference_mode: still nothing is recorded
    d = op.derivative
    cdef _Recipe r
    if d is not None and d is not _NONDIFFERENTIABLE:
        r = _recipe_of(d)
        if not r.compiled:
            return _readable("autograd_layer")(op, args, kwargs)   # the readable layer makes its nodes
        if r.simple:
            return _record(op, r, args if type(args) is tuple else tuple(args), kwargs, None, True)
        if not _general_unchanged:
            return _readable("autograd_layer")(op, args, kwargs)
        return _record_general(op, r, args if type(args) is tuple else tuple(args), kwargs, None)
    return _readable("_record_other")(op, d, args, kwargs)   # no formula, or nondifferentiable


def record_simple(op, d, args, kwargs):
    """``recording._record_simple(op, d, args, kwargs)``, in C (the same four steps)."""
    cdef _Recipe r = _recipe_of(d)
    if not r.compiled or not compiled_enabled or not _simple_unchanged:
        return _readable("_record_simple")(op, d, args, kwargs)
    return _record(op, r, args if type(args) is tuple else tuple(args), kwargs, None, True)


cdef object record_computed(object op, tuple args, object out):
    """Record ``op(*args)`` -> ``out`` (see the top of this file); returns ``out``, or
    NotImplemented when no differentiable input requires grad (the caller then returns ``out``
    as it is). Only after ``recorder_ready()``."""
    cdef _Recipe r = _recipe_of(op.derivative)
    if not r.compiled:
        return _readable("_record_computed")(op, args, out)   # the readable recorder makes the node
    return _record(op, r, args, None, out, False)


def _record_computed(op, args, out):
    """``record_computed`` callable from Python (tests compare its graphs with the full path's)."""
    return record_computed(op, tuple(args), out)

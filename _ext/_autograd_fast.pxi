# The compiled recorder (issue 3: per-op overhead with requires_grad=True). Included into _C.pyx.
#
# ``record_computed(op, args, out)`` records ``op(*args)`` whose result ``out`` a compiled fast
# path has already computed below autograd: steps 1, 2 and 4 of the readable recorder
# ``autograd/recording.py:_record_simple`` (edges, node, saved tensors; wiring the output). The
# graph it builds must be exactly the full path's; ``tests/test_fast_record.py`` compares them.
#
# Callers (the fast paths in _fastpath.pxi and _fastpath_ops.pxi) call it only when grad mode is
# on, an input requires grad, nothing intercepts (``_nothing_intercepts()``) and
# ``recorder_ready()`` (checked before the kernel runs), and only for ops whose
# ``op.derivative.simple`` is true.

from cpython.dict cimport PyDict_GetItem

cdef object _py_record_computed = None   # recording._record_computed, looked up on first use
cdef object _recording_layer = None      # recording.autograd_layer, the layer record_computed stands for
cdef dict _ag_dispatch_globals = None    # minitorch_nn._dispatch.__dict__: autograd_layer
cdef list _saved_hooks_stack = None      # graph._saved_tensors_hooks_stack
# the ops of _fastpath.pxi's methods, as the full path calls them
cdef object _op_add = None
cdef object _op_sub = None
cdef object _op_mul = None
cdef object _op_relu = None
cdef object _op_sum = None


cdef int _load_recorder() except -1:
    """Look up, once, what the recorder needs from the package (imported after this module)."""
    global _py_record_computed, _recording_layer, _ag_dispatch_globals, _saved_hooks_stack
    global _op_add, _op_sub, _op_mul, _op_relu, _op_sum
    from minitorch_nn import _dispatch
    from minitorch_nn._ops import aten
    from minitorch_nn.autograd import graph, recording
    _op_add, _op_sub, _op_mul = aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor
    _op_relu, _op_sum = aten.relu.default, aten.sum.default
    _ag_dispatch_globals = vars(_dispatch)
    _saved_hooks_stack = graph._saved_tensors_hooks_stack
    _recording_layer = recording.autograd_layer
    _py_record_computed = recording._record_computed
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


cdef object record_computed(object op, tuple args, object out):
    """Record ``op(*args)`` -> ``out`` (see above); returns ``out``, or NotImplemented when no
    differentiable input requires grad (the caller then returns ``out`` as it is)."""
    if _py_record_computed is None:
        _load_recorder()
    return _py_record_computed(op, args, out)


def _record_computed(op, args, out):
    """``record_computed`` callable from Python (tests compare its graphs with the full path's)."""
    return record_computed(op, tuple(args), out)

# cython: language_level=3
"""The C-level face of the recorder twin (``_ext/twins/autograd/recording.pyx``), for the other
twins: a kernel twin that computed an op's result itself hands it to the recorder here, after
checking ``recorder_ready()`` and ``_recipe_for(op)`` before it ran the kernel."""

from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from minitorch_nn._C cimport compiled_enabled


cdef class _Recipe:
    """What the recorder reads of one ``recording.Derivative``, read once into C fields."""

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


cdef object _recording_layer        # autograd_layer of the twin, once installed
cdef dict _ag_dispatch_globals      # minitorch_nn._dispatch.__dict__: autograd_layer, python_layer, backend
cdef object _NONDIFFERENTIABLE      # recording.NONDIFFERENTIABLE
cdef bint _layer_unchanged          # recording.autograd_layer is the function installed


cdef bint recorder_ready() except -1
cdef _Recipe _recipe_of(object d)
cdef _Recipe _recipe_for(object op)
cdef object record_computed(object op, tuple args, object out)
cdef object _record(object op, _Recipe r, tuple args, object kwargs, object out, bint run)
cdef object _record_general(object op, _Recipe r, tuple args, object kwargs, object computed=*)


cdef inline bint autograd_layer_is_twin() except -1:
    """True while the dispatcher's autograd layer is this twin and recording.autograd_layer is the
    function it was installed with: then an op on tensors that need no gradient has nothing to
    record, and a fast path may skip the layer as this twin would (a replaced
    ``recording.autograd_layer`` must see every op, as it does with the switch off)."""
    if not compiled_enabled or _recording_layer is None:
        return False
    cdef PyObject* layer = PyDict_GetItem(_ag_dispatch_globals, "autograd_layer")
    return layer != NULL and <object>layer is _recording_layer and _layer_unchanged

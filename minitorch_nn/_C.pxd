# cython: language_level=3
"""The C-level face of the tensor object (``_ext/_C.pyx``), for the compiled twins.

A twin module writes ``from minitorch_nn._C cimport TensorImpl, TensorBase, _wrap`` and then
reads and writes a payload's fields in C, exactly as code inside ``_C.pyx`` does. The fields are
declared here (and documented here); ``_C.pyx`` holds the methods. Module-level ``cdef``
variables declared here (``compiled_enabled``...) are shared: a twin reads the live value.
"""

from cpython.object cimport PyObject
cimport numpy as cnp

# Overflow-checked size arithmetic (the compiler's builtins), for every module that cimports this.
cdef extern from *:
    """
    static inline int _mtnn_mul_overflow(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *r) {
        return __builtin_mul_overflow(a, b, r);
    }
    static inline int _mtnn_add_overflow(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *r) {
        return __builtin_add_overflow(a, b, r);
    }
    """
    bint _mtnn_mul_overflow(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* r) nogil
    bint _mtnn_add_overflow(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* r) nogil


# The C-level copy of ``minitorch_nn.backends.compiled.enabled`` (the one switch for the compiled
# twins), kept current by that module through ``on_change``. Every twin reads it first.
cdef bint compiled_enabled
# mirrors grad_mode._inference; read by VersionCounter() and by the recorder
cdef bint _inference_mode_on
# autograd.grad_mode.__dict__ (its ``_enabled``), given by grad_mode at import; None until then
cdef dict _grad_mode_globals


cdef class VersionCounter:
    cdef public Py_ssize_t value
    # True for the counter of a tensor made under ``inference_mode`` (an "inference tensor"). It
    # lives here because views share the counter, and PyTorch's rule is that views of inference
    # tensors are inference tensors while views of normal tensors stay normal, even when made
    # under inference_mode. Set once, when the counter is created.
    cdef public bint inference


cdef class TensorImpl:
    cdef public object storage
    cdef public tuple sizes
    cdef public tuple strides
    cdef public Py_ssize_t offset
    cdef public object dtype
    cdef public object device
    cdef public VersionCounter version
    # autograd metadata
    cdef public bint requires_grad
    cdef public object grad
    cdef public object grad_fn
    cdef public Py_ssize_t output_nr
    cdef public object autograd_meta   # dict for the rarer fields (hooks, retains_grad, ...)
    cdef public object base            # the TensorImpl this one is a view of, or None
    # for a view (PyTorch's ``DifferentiableViewMeta``): the value of the shared version counter
    # when its grad_fn was last made (``attr_version``: once the counter moves on, the grad_fn is
    # stale, see ``autograd/graph.py:current_grad_fn``), and the mode it was made in
    # (``creation_meta``: VIEW_MADE_WITH_GRAD, VIEW_MADE_IN_NO_GRAD or VIEW_MADE_IN_INFERENCE)
    cdef public Py_ssize_t view_version
    cdef public int creation_meta
    # cache: the numpy view of (storage, sizes, strides, offset); rebuilt when metadata changes
    cdef public object array
    # borrowed pointer to the Python handle that currently owns this payload (no reference held,
    # like PyTorch's "pyobj slot"); used to hand back the same Python object from ``._base``
    cdef PyObject* owner

    cpdef object numpy_view(self)


cdef class TensorBase:
    cdef TensorImpl _impl
    cdef object __weakref__


cpdef Py_ssize_t checked_numel(object sizes) except -1
cpdef check_geometry(object sizes, object strides, object offset, Py_ssize_t itemsize,
                     object storage_nbytes=*, bint allow_negative_strides=*)
cdef bint _is_contiguous(tuple sizes, tuple strides)
cpdef object _wrap(type cls, TensorImpl impl)
cdef TensorImpl _fresh_impl(cnp.ndarray arr, object dtype, object device)
cdef void _mark_view_of(TensorImpl impl, TensorImpl b)

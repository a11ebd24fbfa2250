# cython: language_level=3
"""The C-level face of the tensor object (``_ext/_C.pyx``), for the compiled twins.

A twin module writes ``from minitorch_nn._C cimport TensorImpl, TensorBase, _wrap`` and then
reads and writes a payload's fields in C, exactly as code inside ``_C.pyx`` does. The fields are
declared here (and documented here); ``_C.pyx`` holds the methods. Module-level ``cdef``
variables declared here (``compiled_enabled``...) are shared: a twin reads the live value.
"""

cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

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
cdef void _mark_view_of(TensorImpl impl, TensorImpl b)


cdef inline object _wrap_payload(type cls, TensorImpl impl):
    """Make a new Python handle of class ``cls`` around ``impl`` (no ``__init__`` runs): ``_wrap``."""
    cdef TensorBase t = TensorBase.__new__(cls)
    t._impl = impl
    if impl.owner == NULL:
        impl.owner = <PyObject*>t
    return t


cdef inline TensorImpl _fresh_impl(cnp.ndarray arr, object dtype, object device):
    """The payload of a fresh tensor on ``arr``: row-major (copied to C order if it is not),
    version 0, its numpy view cached. The C twin of ``_wrap_array``, for the fast path."""
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr):
        arr = cnp.PyArray_NewCopy(arr, cnp.NPY_CORDER)
    cdef int nd = cnp.PyArray_NDIM(arr)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(arr)
    cdef tuple sizes = PyTuple_New(nd)
    cdef tuple strides = PyTuple_New(nd)
    cdef Py_ssize_t i, acc = 1
    cdef object item  # (a Python int: PyTuple_SET_ITEM steals the reference we add)
    for i in range(nd - 1, -1, -1):  # row-major strides, as _tensor.contiguous_strides
        item = dims[i]
        Py_INCREF(item)
        PyTuple_SET_ITEM(sizes, i, item)
        item = acc
        Py_INCREF(item)
        PyTuple_SET_ITEM(strides, i, item)
        acc *= dims[i] if dims[i] > 1 else 1
    cdef TensorImpl impl = TensorImpl.__new__(TensorImpl)
    # the flat storage: arr itself when it is already flat (a fresh result nobody else holds),
    # else arr.reshape(-1), a flat view
    impl.storage = arr if nd == 1 else cnp.PyArray_Ravel(arr, cnp.NPY_CORDER)
    impl.sizes = sizes
    impl.strides = strides
    impl.dtype = dtype
    impl.device = device
    impl.version = VersionCounter.__new__(VersionCounter)  # value 0
    impl.array = arr
    return impl

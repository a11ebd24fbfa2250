# cython: language_level=3, binding=True, embedsignature=True
"""The tensor object: a thin Python handle (``TensorBase``) around one C-level payload slot.

Mirrors PyTorch's split between the Python ``torch.Tensor`` object and the C++ ``TensorImpl``
it points at. Everything PyTorch keeps in the TensorImpl lives here in :class:`TensorImpl`:

* ``storage``  -- a flat 1-D numpy array on cpu, a numba device array on cuda, ``None`` on meta;
* ``sizes``, ``strides``, ``offset`` -- how this tensor reads that flat storage (in elements);
* ``dtype``, ``device`` -- Python objects from ``minitorch_nn/_dtype.py`` and ``_device.py``;
* ``version`` -- a :class:`VersionCounter` shared by a tensor and all its views;
* the autograd metadata: ``requires_grad``, ``grad``, ``grad_fn``, ``output_nr`` and friends.

The handle (``TensorBase``) has exactly one C slot, ``_impl``. ``Tensor``, ``Parameter`` and
user subclasses add ``__dict__``/``__slots__`` on top. ``utils.swap_tensors`` exchanges the
``_impl`` slots of two handles (with ``__class__``, ``__dict__`` and ``__slots__``), which is why
a module conversion can give a parameter new data while keeping its Python identity.

Where we differ from PyTorch: the payload is a Cython object with Python-visible fields rather
than a C++ struct, so a student can inspect it (``t._impl``) from a Python prompt. The logic a
student should change (ops, autograd, modules) lives in Python; this file only holds the data and
the few accessors that every op touches, plus (included from ``_fastpath.pxi``, at the end) the
compiled fast path for ``a + b``, ``a - b``, ``a * b``, ``a.relu()``, ``a.sum()``, ``a.detach()``
and ``a.to(dtype)`` on plain tensors, which needs the payload's C fields, and (from
``_fastpath_ops.pxi``) the one for unary math, division, matmul and the common views.
"""

cimport cython

cdef extern from "Python.h":
    Py_ssize_t Py_REFCNT(object o)


cdef inline Py_ssize_t _refcount(object o):
    return Py_REFCNT(o)
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

import numpy as np
cimport numpy as cnp

cnp.import_array()


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(int(s)) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        """Number of elements a tensor of this shape holds."""
        cdef Py_ssize_t n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))


# The C-level copy of ``minitorch_nn.backends.compiled.enabled`` (the one switch for the compiled
# twins), kept current by that module through ``on_change``. Every twin in this module reads it
# first and, when it is off, takes the readable path.
cdef bint compiled_enabled = True


def _set_compiled_enabled(bint on):
    """Called by ``backends.compiled`` whenever the switch moves."""
    global compiled_enabled
    compiled_enabled = on


cdef bint _inference_mode_on = False   # mirrors grad_mode._inference; read by VersionCounter()


def _set_inference_mode(bint on):
    """Called by ``autograd.grad_mode.inference_mode`` on entry and exit."""
    global _inference_mode_on
    _inference_mode_on = on


cdef class VersionCounter:
    """Counts in-place writes to a storage; shared by a tensor and every view of it.

    Autograd saves ``value`` with each saved tensor and compares it at backward time, which is how
    PyTorch detects "modified by an inplace operation".
    """

    cdef public Py_ssize_t value
    # True for the counter of a tensor made under ``inference_mode`` (an "inference tensor"). It
    # lives here because views share the counter, and PyTorch's rule is that views of inference
    # tensors are inference tensors while views of normal tensors stay normal, even when made
    # under inference_mode. Set once, when the counter is created.
    cdef public bint inference

    def __cinit__(self):
        self.inference = _inference_mode_on

    def __init__(self, Py_ssize_t value=0):
        self.value = value

    def __repr__(self):
        return f"VersionCounter({self.value})"


cdef class TensorImpl:
    """The payload of a tensor (PyTorch's ``c10::TensorImpl`` plus its ``AutogradMeta``)."""

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

    def __cinit__(self):
        self.owner = NULL
        self.version = None
        self.offset = 0
        self.output_nr = 0

    def __init__(self, storage, tuple sizes, tuple strides, Py_ssize_t offset, dtype, device,
                 VersionCounter version=None):
        self.storage = storage
        self.sizes = sizes
        self.strides = strides
        self.offset = offset
        self.dtype = dtype
        self.device = device
        self.version = VersionCounter() if version is None else version

    def __repr__(self):
        return (f"TensorImpl(sizes={self.sizes}, strides={self.strides}, offset={self.offset}, "
                f"dtype={self.dtype!r}, device={self.device!r}, version={self.version.value}, "
                f"requires_grad={bool(self.requires_grad)})")

    cpdef object numpy_view(self):
        """The numpy ndarray that reads this payload's storage (cpu only), cached."""
        cdef Py_ssize_t itemsize
        cdef list byte_strides
        if self.array is None:
            itemsize = self.dtype.itemsize
            byte_strides = [s * itemsize for s in self.strides]
            if 0 in self.sizes:
                # no elements to share; numpy would reject strides that reach past an empty buffer
                self.array = np.empty(self.sizes, dtype=self.dtype.numpy_dtype)
                return self.array
            self.array = np.ndarray(
                self.sizes,
                dtype=self.dtype.numpy_dtype,
                buffer=self.storage,
                offset=self.offset * itemsize,
                strides=tuple(byte_strides),
            )
        return self.array

    def set_metadata(self, tuple sizes, tuple strides, Py_ssize_t offset):
        """Re-point this payload at another window of its storage (``as_strided_``, ``set_``)."""
        self.sizes = sizes
        self.strides = strides
        self.offset = offset
        self.array = None


@cython.boundscheck(False)
cdef bint _is_contiguous(tuple sizes, tuple strides):
    # PyTorch's rule: dims of size 1 may have any stride; an empty tensor is contiguous.
    cdef Py_ssize_t expected = 1
    cdef Py_ssize_t i, size
    for size in sizes:
        if size == 0:
            return True
    for i in range(len(sizes) - 1, -1, -1):
        size = sizes[i]
        if size != 1:
            if strides[i] != expected:
                return False
            expected *= size
    return True


def is_contiguous_strides(tuple sizes, tuple strides):
    """True when ``strides`` are the row-major strides of ``sizes`` (PyTorch's definition)."""
    return _is_contiguous(sizes, strides)


cdef class TensorBase:
    """The Python handle of a tensor. Its only C field is ``_impl``, the payload.

    Mirrors ``torch._C.TensorBase``. The accessors below are in Cython because every op calls
    them; the methods a student reads are on ``minitorch_nn.Tensor`` in ``_tensor.py``.
    """

    cdef TensorImpl _impl
    cdef object __weakref__

    def __dealloc__(self):
        if self._impl is not None and self._impl.owner == <PyObject*>self:
            self._impl.owner = NULL

    # -- the payload slot ------------------------------------------------------------------
    @property
    def _impl(self):
        """The payload (:class:`TensorImpl`). ``swap_tensors`` exchanges this slot."""
        return self._impl

    # -- metadata ----------------------------------------------------------------------------
    @property
    def shape(self):
        """The tensor's sizes as a ``torch.Size``."""
        return Size(self._impl.sizes)

    def size(self, dim=None):
        """``size()`` returns the shape; ``size(d)`` the length of dimension ``d``."""
        if dim is None:
            return Size(self._impl.sizes)
        return self._impl.sizes[_wrap_dim(dim, len(self._impl.sizes))]

    def stride(self, dim=None):
        """Elements to skip in storage to move one step along each dimension."""
        if dim is None:
            return self._impl.strides
        return self._impl.strides[_wrap_dim(dim, len(self._impl.strides))]

    def storage_offset(self):
        """Index of this tensor's first element in its storage."""
        return self._impl.offset

    def dim(self):
        """Number of dimensions."""
        return len(self._impl.sizes)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._impl.sizes)

    def numel(self):
        """Number of elements."""
        cdef Py_ssize_t n = 1
        for s in self._impl.sizes:
            n *= <Py_ssize_t>s
        return n

    nelement = numel

    def element_size(self):
        """Bytes per element."""
        return self._impl.dtype.itemsize

    @property
    def itemsize(self):
        return self._impl.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self._impl.dtype.itemsize

    @property
    def dtype(self):
        return self._impl.dtype

    @property
    def device(self):
        return self._impl.device

    @property
    def is_meta(self):
        return self._impl.device.type == "meta"

    @property
    def is_cpu(self):
        return self._impl.device.type == "cpu"

    @property
    def is_cuda(self):
        return self._impl.device.type == "cuda"

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def is_nested(self):
        return False

    @property
    def layout(self):
        from minitorch_nn._dtype import strided
        return strided

    def is_floating_point(self):
        return self._impl.dtype.is_floating_point

    def is_complex(self):
        return False

    def is_contiguous(self, memory_format=None):
        """True when the elements are laid out row-major with no gaps (PyTorch's rule)."""
        return _is_contiguous(self._impl.sizes, self._impl.strides)

    def data_ptr(self):
        """Address of the first element (0 for meta tensors and for empty storages)."""
        cdef TensorImpl impl = self._impl
        if impl.storage is None:
            return 0
        if isinstance(impl.storage, np.ndarray):
            if (<cnp.ndarray>impl.storage).size == 0:
                return 0
            return <size_t>cnp.PyArray_DATA(<cnp.ndarray>impl.storage) + impl.offset * impl.dtype.itemsize
        return impl.storage.__cuda_array_interface__["data"][0] + impl.offset * impl.dtype.itemsize

    @property
    def _version(self):
        """How many in-place writes the storage has seen (shared with views)."""
        cdef VersionCounter v = self._impl.version
        if v.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return v.value

    def _bump_version(self):
        self._impl.version.value += 1

    @property
    def _array(self):
        """The data as a numpy ndarray view (cpu tensors only; shares memory)."""
        return self._impl.numpy_view()

    @property
    def _storage(self):
        """The flat storage object (shared by all views of it); ``None`` on meta."""
        return self._impl.storage

    # -- autograd metadata ---------------------------------------------------------------------
    @property
    def grad_fn(self):
        """The graph node that produced this tensor, or ``None`` for leaves."""
        return self._impl.grad_fn

    @property
    def is_leaf(self):
        """Tensors that no recorded op produced (``grad_fn is None``) are leaves."""
        return self._impl.grad_fn is None

    @property
    def output_nr(self):
        return self._impl.output_nr

    @property
    def _base(self):
        """The tensor this one is a view of (the same Python object when it is still alive)."""
        cdef TensorImpl base = self._impl.base
        if base is None:
            return None
        if base.owner != NULL:
            return <object>base.owner
        from minitorch_nn._tensor import Tensor
        return _wrap(Tensor, base)

    def _is_view(self):
        return self._impl.base is not None

    def _use_count(self):
        """Number of references to the payload, counted like PyTorch's ``TensorImpl`` use count.

        The handle itself counts once; autograd nodes and views that hold the payload count
        too. (Python names bound to the handle do not: they are references to the handle.)
        """
        return _refcount(self._impl) - 1  # minus the temporary reference of the call itself


cdef inline Py_ssize_t _wrap_dim(object dim, Py_ssize_t ndim) except? -1:
    cdef Py_ssize_t d = dim
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    if d < -n or d >= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


cpdef object _wrap(type cls, TensorImpl impl):
    """Make a new Python handle of class ``cls`` around ``impl`` (no ``__init__`` runs)."""
    cdef TensorBase t = TensorBase.__new__(cls)
    t._impl = impl
    if impl.owner == NULL:
        impl.owner = <PyObject*>t
    return t


cdef TensorImpl _fresh_impl(cnp.ndarray arr, object dtype, object device):
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


cpdef object _wrap_array(type cls, object arr, object dtype, object device, tuple strides):
    """A fresh tensor of class ``cls`` on C-contiguous numpy array ``arr`` (``_tensor._from_array``).

    The same payload ``TensorImpl(arr.reshape(-1), arr.shape, strides, 0, dtype, device)`` with
    its numpy view cached, built here in C: every op result goes through this, so the Python
    constructor call it saves is felt on small tensors.
    """
    cdef TensorImpl impl = TensorImpl.__new__(TensorImpl)
    impl.storage = arr.reshape(-1)
    impl.sizes = arr.shape
    impl.strides = strides
    impl.dtype = dtype
    impl.device = device
    impl.version = VersionCounter.__new__(VersionCounter)  # value 0
    impl.array = arr
    return _wrap(cls, impl)


def _swap_payload(TensorBase t1, TensorBase t2):
    """Exchange the payload slots of two handles (the C half of ``utils.swap_tensors``)."""
    cdef TensorImpl a = t1._impl
    cdef TensorImpl b = t2._impl
    t1._impl = b
    t2._impl = a
    if b is not None:
        b.owner = <PyObject*>t1
    if a is not None:
        a.owner = <PyObject*>t2


def _set_impl(TensorBase t, TensorImpl impl):
    """Point ``t`` at another payload (``Tensor.data = ...``, ``set_``)."""
    t._impl = impl
    impl.owner = <PyObject*>t


include "_autograd_fast.pxi"
include "_fastpath.pxi"
include "_fastpath_ops.pxi"
include "_fastpath_views.pxi"
include "_fastpath_indexing.pxi"
include "_fastpath_functions.pxi"
include "_fastpath_cat.pxi"
include "_fastpath_stack.pxi"
include "_fastpath_softmax.pxi"
include "_fastpath_more.pxi"

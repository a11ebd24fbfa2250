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
the few accessors that every op touches. The fields are declared in ``minitorch_nn/_C.pxd``, which
is also how the compiled twins (``_ext/twins/``, their own modules) reach them in C.
"""

cimport cython

cdef extern from "Python.h":
    Py_ssize_t Py_REFCNT(object o)


cdef inline Py_ssize_t _refcount(object o):
    return Py_REFCNT(o)
from cpython.dict cimport PyDict_GetItem
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
        """Number of elements a tensor of this shape holds: the exact product (PyTorch's wraps
        around at 2**63; no tensor can have such a shape, since the factories refuse it)."""
        n = 1
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
# twins), kept current by that module through ``on_change`` (declared in _C.pxd: every twin module
# reads it first and, when it is off, takes the readable path).
compiled_enabled = True


def _set_compiled_enabled(bint on):
    """Called by ``backends.compiled`` whenever the switch moves."""
    global compiled_enabled
    compiled_enabled = on


# -- geometry: the one check every path that builds sizes/strides/offset goes through ---------------
#
# PyTorch refuses, before a tensor can exist, any geometry that reaches outside its storage or whose
# size arithmetic overflows int64 (``computeStorageNbytes``, ``checkInBoundsForStorage``). Here the
# same rule lives in ``check_geometry``; ``as_strided(_)``, ``set_``, ``resize_``, the checkpoint
# loaders, DLPack and the meta factories call it, and ``TensorImpl.numpy_view`` calls it again before
# numpy reads a byte, so a geometry that slipped past a caller (a fast path, a hand-made payload)
# raises instead of reading wild memory. All arithmetic is checked: numpy's own extent check
# overflows for byte strides near -2**63.

# (``_mtnn_mul_overflow``/``_mtnn_add_overflow``: the compiler's checked arithmetic, from _C.pxd)


def _int_list(seq):
    return "[" + ", ".join(str(int(s)) for s in seq) + "]"


cdef inline bint _as_ssize(object v, Py_ssize_t* out):
    """``v`` as a Py_ssize_t; False when it is not an int that fits."""
    try:
        out[0] = v
    except (OverflowError, TypeError):
        return False
    return True


cpdef Py_ssize_t checked_numel(object sizes) except -1:
    """The product of ``sizes``, refusing negative sizes and int64 overflow as PyTorch does."""
    cdef Py_ssize_t n = 1, s
    for v in sizes:
        if not _as_ssize(v, &s) or s < 0:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)}")
        if _mtnn_mul_overflow(n, s, &n):
            n = 0   # keep going: a later 0 makes the product 0 in exact arithmetic too
            for v in sizes:
                if v == 0:
                    return 0
            raise RuntimeError("numel: integer multiplication overflow")
    return n


cpdef check_geometry(object sizes, object strides, object offset, Py_ssize_t itemsize,
                     object storage_nbytes=None, bint allow_negative_strides=False):
    """Refuse a geometry PyTorch refuses, with PyTorch's messages (all ``RuntimeError``).

    ``sizes``/``strides``/``offset`` are in elements; ``storage_nbytes`` is the size of the storage
    in bytes (``None`` for meta tensors: then only the arithmetic is checked). The lowest and the
    highest element the geometry can reach must both lie inside the storage, computed without
    overflow. ``allow_negative_strides`` is for internal layouts numpy made (never user input).
    """
    cdef Py_ssize_t n = len(sizes), i, size, stride, off, lo = 0, hi = 0, step, nbytes, numel = 1
    cdef bint empty = False
    if len(strides) != n:
        raise RuntimeError("mismatch in length of strides and shape")
    for i in range(n):
        if not _as_ssize(sizes[i], &size) or size < 0:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                               f"strides={_int_list(strides)}")
        if size == 0:
            empty = True
    for i in range(n):
        if not _as_ssize(strides[i], &stride):
            if sizes[i] == 1:
                continue        # a stride of a size-1 dimension is never used
            raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                               f"strides={_int_list(strides)}")
        if stride < 0 and not allow_negative_strides:
            raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: "
                               + _int_list(strides))
    if not _as_ssize(offset, &off) or off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if empty:
        return
    for i in range(n):
        size = sizes[i]
        if size == 1:
            continue
        stride = strides[i]
        if _mtnn_mul_overflow(size - 1, stride, &step):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                               f"strides={_int_list(strides)}")
        if step >= 0:
            if _mtnn_add_overflow(hi, step, &hi):
                raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                                   f"strides={_int_list(strides)}")
        elif _mtnn_add_overflow(lo, step, &lo):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                               f"strides={_int_list(strides)}")
    # bytes needed: itemsize * (offset + hi + 1), the way PyTorch counts them
    if (_mtnn_add_overflow(off, hi, &nbytes) or _mtnn_add_overflow(nbytes, 1, &nbytes)
            or _mtnn_mul_overflow(nbytes, itemsize, &nbytes)):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_int_list(sizes)} and "
                           f"strides={_int_list(strides)}")
    for i in range(n):   # (stride-0 dimensions can make the count overflow when the bytes do not)
        if _mtnn_mul_overflow(numel, <Py_ssize_t>sizes[i], &numel):
            raise RuntimeError("numel: integer multiplication overflow")
    if storage_nbytes is None:
        return
    if nbytes > storage_nbytes or off + lo < 0:
        raise RuntimeError(
            f"setStorage: sizes {_int_list(sizes)}, strides {_int_list(strides)}, storage offset {off}, "
            f"and itemsize {itemsize} requiring a storage size of {nbytes} are out of bounds for storage "
            f"of size {storage_nbytes}")


_inference_mode_on = False   # mirrors grad_mode._inference; read by VersionCounter()


def _set_inference_mode(bint on):
    """Called by ``autograd.grad_mode.inference_mode`` on entry and exit."""
    global _inference_mode_on
    _inference_mode_on = on


cdef class VersionCounter:
    """Counts in-place writes to a storage; shared by a tensor and every view of it.

    Autograd saves ``value`` with each saved tensor and compares it at backward time, which is how
    PyTorch detects "modified by an inplace operation".
    """

    # (fields: ``value``, ``inference``; declared in _C.pxd)

    def __cinit__(self):
        self.inference = _inference_mode_on

    def __init__(self, Py_ssize_t value=0):
        self.value = value

    def __repr__(self):
        return f"VersionCounter({self.value})"


cdef class TensorImpl:
    """The payload of a tensor (PyTorch's ``c10::TensorImpl`` plus its ``AutogradMeta``)."""

    # The fields (storage, sizes, strides, offset, dtype, device, version, the autograd metadata,
    # the view bookkeeping, the cached numpy view, the owner pointer) are declared in _C.pxd.

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
        cdef Py_ssize_t itemsize, i
        cdef list byte_strides
        if self.array is None:
            itemsize = self.dtype.itemsize
            # the last line of defence: nothing outside the storage is ever handed to numpy
            check_geometry(self.sizes, self.strides, self.offset, itemsize,
                           self.storage.nbytes, True)
            byte_strides = [s * itemsize for s in self.strides]
            for i in range(len(byte_strides)):
                if not -2**62 < byte_strides[i] < 2**62:
                    byte_strides[i] = 0     # a size-1 dimension (check_geometry allowed it): unused
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

    def set_metadata(self, tuple sizes, tuple strides, object offset):
        """Re-point this payload at another window of its storage (``as_strided_``, ``set_``).

        The geometry is checked against the storage first (``check_geometry``); on a refusal
        nothing changes."""
        check_geometry(sizes, strides, offset, self.dtype.itemsize,
                       None if self.storage is None else self.storage.nbytes)
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


@cython.no_gc_clear
cdef class TensorBase:
    """The Python handle of a tensor. Its only C field is ``_impl``, the payload.

    Mirrors ``torch._C.TensorBase``. The accessors below are in Cython because every op calls
    them; the methods a student reads are on ``minitorch_nn.Tensor`` in ``_tensor.py``.

    The payload keeps a borrowed pointer back to its handle (``TensorImpl.owner``), which only
    ``__dealloc__`` resets. So the cyclic garbage collector must never empty ``_impl`` before
    ``__dealloc__`` runs (``no_gc_clear``): a handle caught in a reference cycle is freed by
    clearing its ``__dict__`` (which is what holds such cycles), and its payload, which a view or a
    saved tensor may keep alive, then forgets the handle instead of pointing at freed memory.
    """

    # (its field ``_impl`` is declared in _C.pxd)

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
        return checked_numel(self._impl.sizes)

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
    return _wrap_payload(cls, impl)


# (``_wrap_payload`` and ``_fresh_impl``, which every op result of the compiled twins goes through,
# are ``inline`` in _C.pxd: each twin module compiles them into its own code.)


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
    cdef TensorImpl old = t._impl
    if old is not None and old.owner == <PyObject*>t:
        old.owner = NULL     # the old payload may outlive ``t`` (a view's base): forget ``t``
    t._impl = impl
    impl.owner = <PyObject*>t


# -- views: the bookkeeping PyTorch keeps in a view's DifferentiableViewMeta ---------------------

# ``TensorImpl.creation_meta``: the mode a view was made in (PyTorch's ``CreationMeta``; an output of
# a function returning several views is told apart by its node, see ``autograd/inplace.py``)
VIEW_MADE_WITH_GRAD = 0
VIEW_MADE_IN_NO_GRAD = 1
VIEW_MADE_IN_INFERENCE = 2

_grad_mode_globals = None


def _set_grad_mode_namespace(dict namespace):
    """Called once by ``autograd.grad_mode``: its ``__dict__``, whose ``_enabled`` a view reads."""
    global _grad_mode_globals
    _grad_mode_globals = namespace


cdef void _mark_view_of(TensorImpl impl, TensorImpl b):
    """Make ``impl`` a view of ``b``: its base is ``b``'s base (or ``b``); it remembers the version
    of the shared counter now (``view_version``) and the mode it is made in (``creation_meta``;
    a view made with grad mode on of a view made without it inherits the latter's, as in PyTorch)."""
    cdef VersionCounter untracked
    if b.version.inference:
        return   # an inference tensor keeps no view bookkeeping: PyTorch's _is_view() is False, _base None
    if type(b.version) is not VersionCounter:
        # b is .data / detach() of an inference tensor (grad_mode.DetachedInferenceCounter): its views
        # are inference tensors without a counter, as in PyTorch (written in place only in the mode)
        untracked = VersionCounter()
        untracked.inference = True
        impl.version = untracked
        return
    cdef TensorImpl base = b.base if b.base is not None else b
    cdef PyObject* enabled
    cdef int meta = 0
    impl.base = base
    impl.view_version = b.version.value
    if _inference_mode_on:
        meta = 2
    elif _grad_mode_globals is not None:
        enabled = PyDict_GetItem(_grad_mode_globals, "_enabled")
        if enabled != NULL and not <object>enabled:
            meta = 1
    if meta == 0 and b.base is not None:
        meta = b.creation_meta
    impl.creation_meta = meta


def mark_view(TensorImpl impl, TensorImpl b):
    """``impl`` (a fresh payload on ``b``'s storage and version counter) becomes a view of ``b``
    (``_tensor._make_view`` and ``as_subclass`` call this; the compiled views do it in C)."""
    _mark_view_of(impl, b)

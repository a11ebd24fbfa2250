"""``minitorch_nn.Tensor``: the Python methods of a tensor (mirrors ``torch/_tensor.py``).

The class extends the Cython handle ``_C.TensorBase``, whose single C slot holds the payload
(storage, sizes, strides, dtype, device, version, autograd metadata; see ``_ext/_C.pyx``). This
file only adds behaviour: Python protocols, conversion to Python and numpy, autograd-facing
properties and dtype shorthands.

The operators and the methods that forward to the public functions in ``_functions/``
(``x.sum()``, ``x + y``) are attached by ``_tensor_methods.py``, which the package ``__init__``
imports right after this module. This module does not import it: the class sits below the
functions and the dispatch chain in the layering, and the method table sits above them.

How a method call travels: ``a.add(b)`` -> ``Tensor.add`` -> ``_functions.pointwise.add`` (where
``__torch_function__`` is honoured) -> ``ops.aten.add.Tensor`` -> the dispatch chain
(``_dispatch/``) -> the cpu kernel in ``backends/cpu/``. (``a + b``, ``a * b``, ``a.relu()`` and
``a.sum()`` on plain cpu tensors first try their compiled twins in ``_ext/twins/``,
which gives the same result without the layers in between.)

The bottom of the file has the three ways a tensor object comes to exist: from a numpy array
(:func:`_from_array`), as metadata only (:func:`_new_meta`), or as a view of another tensor
(:func:`_make_view`).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _C
from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, TensorImpl
from minitorch_nn._device import CPU, META


def _has_python_dispatch(t) -> bool:
    """Whether ``t``'s class handles ``__torch_dispatch__`` (PyTorch: the Python dispatch key):
    it has one other than Tensor's own, the disabled one that ``_tensor_subclass`` installs."""
    handler = getattr(type(t), "__torch_dispatch__", None)
    return handler is not None and handler is not getattr(Tensor, "__torch_dispatch__", None)


def _refuse_python_dispatch(t, method):
    """``tolist()``/``numpy()`` read memory directly, which a ``__torch_dispatch__`` subclass may
    not have (a wrapper made by ``_make_wrapper_subclass`` has no storage): refused, as in PyTorch."""
    if _has_python_dispatch(t):
        if method == "tolist":
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(t).__name__}")
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")


class Tensor(TensorBase):
    """A multi-dimensional array with autograd support (``torch.Tensor``).

    Make tensors with the factory functions (``minitorch_nn.tensor``, ``zeros``, ``randn``...).
    ``Tensor()`` with no argument is an empty float tensor, as in PyTorch.
    """

    def __new__(cls, *args, device=None):
        # PyTorch's legacy constructor: Tensor(2, 3), Tensor([1, 2]), Tensor(other); see _legacy.py.
        # New code should prefer minitorch_nn.tensor(data) and the factories (empty, zeros, ...).
        from minitorch_nn._legacy import legacy_new

        return legacy_new(cls, dt.get_default_dtype(), args, device)

    def __init__(self, *args, **kwargs):
        pass

    # -- printing --------------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from minitorch_nn import _tensor_str

        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, format_spec):
        # As in PyTorch, only a plain 0-d tensor formats as its number; any subclass (Parameter
        # included) goes to object.__format__, which takes only an empty spec (then str(self)).
        if self.dim() == 0 and not self.is_meta and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # -- Python protocols --------------------------------------------------------------------
    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'} is ambiguous"
            )
        return bool(self.item())

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        return int(self._scalar_value("int"))

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def _scalar_value(self, what):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if what != "complex" and isinstance(value, complex):
            # PyTorch converts through its C++ scalar, which refuses to drop an imaginary part
            if value.imag != 0:
                target = "double" if what == "float" else "int64_t"
                raise RuntimeError(f"value cannot be converted to type {target} without overflow")
            value = value.real
        return value

    def __array__(self, dtype=None, copy=None):
        _refuse_python_dispatch(self, "numpy")
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device.type} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first."
            )
        arr = self.detach()._array
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    # -- DLPack: zero-copy exchange with numpy, PyTorch, JAX, ... ---------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export this cpu tensor as a DLPack capsule (delegates to the numpy view of its memory)."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self.device.type != "cpu":
            raise BufferError(f"minitorch_nn exports only cpu tensors through DLPack, not {self.device.type}")
        kwargs = {"copy": copy} if copy is not None else {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        return self._array.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        """``(device_type, device_id)`` in DLPack's numbering: ``(1, 0)`` is the cpu."""
        if self.device.type != "cpu":
            raise BufferError(f"minitorch_nn exports only cpu tensors through DLPack, not {self.device.type}")
        return (1, 0)

    def is_contiguous(self, memory_format=None):
        """True when the elements are laid out in ``memory_format``'s order with no gaps: row-major
        by default, ``channels_last`` (4-d: C, W, H, N from the fastest) when asked."""
        if memory_format is dt.channels_last or memory_format is dt.channels_last_3d:
            from minitorch_nn.backends.layout import is_channels_last, is_channels_last_3d

            test = is_channels_last if memory_format is dt.channels_last else is_channels_last_3d
            return test(tuple(self.shape), self.stride())
        if memory_format is None or isinstance(memory_format, dt.memory_format):
            return TensorBase.is_contiguous(self)  # (preserve_format asks the row-major question too, as in PyTorch)
        raise TypeError(
            f"is_contiguous(): argument 'memory_format' must be torch.memory_format, not {type(memory_format).__name__}"
        )

    def __deepcopy__(self, memo):
        from minitorch_nn._serialization_helpers import deepcopy_tensor

        return deepcopy_tensor(self, memo)

    def __reduce_ex__(self, protocol):
        from minitorch_nn._serialization_helpers import reduce_tensor

        return reduce_tensor(self)

    # -- Python values -----------------------------------------------------------------------
    def item(self):
        """The single value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        if self.is_meta:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if _has_python_dispatch(self):
            # a __torch_dispatch__ subclass has the value (a wrapper has no storage): ask its
            # handler (aten._local_scalar_dense, through the hook _tensor_subclass installs)
            return dispatched_item_hook(self)
        arr = self.cpu()._array if self.device.type != "cpu" else self._array
        value = arr.reshape(-1)[0]
        if self.dtype is dt.bool:
            return bool(value)
        if self.dtype.is_floating_point:
            return float(value)
        if self.dtype.is_complex:
            return complex(value)
        return int(value)

    def tolist(self):
        """The data as nested Python lists of numbers."""
        if self.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        _refuse_python_dispatch(self, "tolist")
        arr = self.cpu()._array if self.device.type != "cpu" else self._array
        if self.dtype in (dt.bfloat16, dt.float16):
            arr = arr.astype(np.float64)
        return arr.tolist()

    def numpy(self, *, force=False):
        """A numpy array sharing this tensor's memory (cpu tensors that do not require grad)."""
        _refuse_python_dispatch(self, "numpy")
        if not force:
            if self.requires_grad:
                raise RuntimeError(
                    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
                )
            if self.device.type != "cpu":
                raise TypeError(
                    f"can't convert {self.device.type} device type tensor to numpy. "
                    "Use Tensor.cpu() to copy the tensor to host memory first."
                )
            return self._array
        return self.detach().cpu().resolve_conj()._array

    def resolve_conj(self):
        return self

    def resolve_neg(self):
        return self

    # -- autograd-facing properties (the engine arrives in autograd/) -------------------------
    @property
    def requires_grad(self):
        impl = self._impl
        if impl.requires_grad:
            return True
        # A view also reports True when its base requires grad (one made under no_grad, or before
        # the base was set to require grad), as PyTorch's DifferentiableViewMeta does. (Autograd
        # itself reads the payload's own flag: ops on such a view record nothing here.)
        base = impl.base
        return base is not None and base.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if value and not self.is_leaf:
            # the attribute refuses any change on a non-leaf (requires_grad_(True) is a no-op there)
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if value and not self.dtype.is_floating_point:
            # the attribute's wording (requires_grad_() says "only ... floating point dtype")
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records ops on this tensor (leaves only, floating dtypes only)."""
        if not self.is_leaf:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._impl.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        return self._impl.grad

    @grad.setter
    def grad(self, new_grad):
        if new_grad is not None:
            if not isinstance(new_grad, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(new_grad).__name__}")
            if new_grad.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_C_TYPE_NAMES[new_grad.dtype.name]}' to a "
                    f"tensor with grad_dtype '{_SCALAR_TYPE_NAMES[self.dtype.name]}'. The gradient must match "
                    "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype "
                    "with caution. Diverging the dtypes of a tensor and its gradient may break downstream "
                    "systems that assume they match."
                )
            if new_grad.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
            if tuple(new_grad.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(new_grad.shape)}' to a tensor of size "
                    f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._impl.grad = new_grad

    @grad.deleter
    def grad(self):
        self._impl.grad = None

    @property
    def data(self):
        """A tensor sharing this one's storage but detached from autograd.

        Unlike ``detach()`` it has a version counter of its own (as in PyTorch): writes through
        ``.data`` are invisible to autograd, which is what makes them unsafe.
        """
        from minitorch_nn.autograd import grad_mode   # (autograd imports this module)

        out = self.detach()
        out._impl.version = grad_mode.detached_counter(self._impl.version, own=True)
        return out

    @data.setter
    def data(self, new_data):
        if not isinstance(new_data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new_data).__name__}")
        src = new_data._impl
        impl = self._impl
        # .data = x re-points this tensor at x's storage and metadata; autograd state stays.
        impl.storage = src.storage
        impl.sizes, impl.strides, impl.offset = src.sizes, src.strides, src.offset
        impl.dtype, impl.device = src.dtype, src.device
        impl.array = None

    # -- type conversion shorthands ---------------------------------------------------------
    def float(self, memory_format=None):
        return self.to(dt.float32)

    def double(self, memory_format=None):
        return self.to(dt.float64)

    def half(self, memory_format=None):
        return self.to(dt.float16)

    def bfloat16(self, memory_format=None):
        return self.to(dt.bfloat16)

    def int(self, memory_format=None):
        return self.to(dt.int32)

    def long(self, memory_format=None):
        return self.to(dt.int64)

    def short(self, memory_format=None):
        return self.to(dt.int16)

    def char(self, memory_format=None):
        return self.to(dt.int8)

    def byte(self, memory_format=None):
        return self.to(dt.uint8)

    def bool(self, memory_format=None):
        return self.to(dt.bool)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return _LEGACY_TYPE_NAMES[self.dtype]
        if isinstance(dtype, str):
            for d, name in _LEGACY_TYPE_NAMES.items():
                if name == dtype:
                    return self.to(d)
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype)

    def type_as(self, other):
        return self.to(other.dtype)

    # new_tensor, new_zeros and the other methods that call the public functions are attached by
    # _tensor_methods.py, the method table.


# Called with a tensor subclass just before ``Tensor(...)`` or unpickling makes an instance of it,
# so that its ``__torch_function__`` handler can start running. The subclass machinery
# (_tensor_subclass.py, a layer above the tensor object) installs it.
instance_class_hook = None  # fn(cls) -> None
dispatched_item_hook = None  # fn(tensor) -> number: item() of a __torch_dispatch__ subclass


# c10's names in the ``.grad`` dtype message: the C type of the gradient, the ScalarType of the tensor
_C_TYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
    "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}
_SCALAR_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}

_LEGACY_TYPE_NAMES = {
    dt.float32: "torch.FloatTensor", dt.float64: "torch.DoubleTensor", dt.float16: "torch.HalfTensor",
    dt.bfloat16: "torch.BFloat16Tensor", dt.int64: "torch.LongTensor", dt.int32: "torch.IntTensor",
    dt.int16: "torch.ShortTensor", dt.int8: "torch.CharTensor", dt.uint8: "torch.ByteTensor",
    dt.bool: "torch.BoolTensor", dt.complex64: "torch.ComplexFloatTensor", dt.complex128: "torch.ComplexDoubleTensor",
}


# ---------------------------------------------------------------------------------------------
# How tensors come to exist
# ---------------------------------------------------------------------------------------------


def contiguous_strides(sizes) -> tuple:
    """Row-major strides (in elements) for ``sizes``."""
    try:
        return _STRIDES_CACHE[sizes]  # every op result needs these; most shapes repeat
    except (KeyError, TypeError):
        pass
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    strides = tuple(reversed(strides))
    if type(sizes) is tuple:
        if len(_STRIDES_CACHE) > 4096:
            _STRIDES_CACHE.clear()
        _STRIDES_CACHE[sizes] = strides
    return strides


_STRIDES_CACHE: dict = {}


def _from_array(arr: np.ndarray, dtype=None, *, cls=Tensor, requires_grad=False, device=CPU) -> Tensor:
    """Wrap a numpy array as a cpu tensor, sharing its memory when its layout allows.

    ``arr`` must already have ``dtype``'s numpy dtype (callers cast). A C-contiguous array is
    shared as is; other layouts are copied to C order (PyTorch keeps permuted layouts of
    elementwise results; we keep the rule simple and only promise correct values and
    row-major strides for fresh results).
    """
    if dtype is None:
        dtype = dt.from_numpy_dtype(arr.dtype)
    if not arr.flags.c_contiguous:
        arr = np.array(arr, order="C")  # (not ascontiguousarray: it turns 0-d into 1-d)
    sizes = arr.shape
    if _wrap_array is not None:  # the same payload, built in C (every op result comes here)
        t = _wrap_array(cls, arr, dtype, device, contiguous_strides(sizes))
        if requires_grad:
            t._impl.requires_grad = True
        return t
    impl = TensorImpl(arr.reshape(-1), sizes, contiguous_strides(sizes), 0, dtype, device)
    impl.array = arr
    impl.requires_grad = requires_grad
    return _C._wrap(cls, impl)


# The compiled payload builder where the extension has one; otherwise _from_array builds it in Python
_wrap_array = getattr(_C, "_wrap_array", None)


def _new_meta(sizes, dtype, *, strides=None, cls=Tensor) -> Tensor:
    """A tensor on the meta device: sizes, strides and dtype, no storage."""
    sizes = tuple(sizes)
    strides = contiguous_strides(sizes) if strides is None else tuple(strides)
    _C.check_geometry(sizes, strides, 0, dtype.itemsize)   # no storage, but the arithmetic must fit
    impl = TensorImpl(None, sizes, strides, 0, dtype, META)
    return _C._wrap(cls, impl)


def _make_view(base: TensorBase, sizes, strides, offset) -> Tensor:
    """A new tensor reading ``base``'s storage through other sizes/strides/offset.

    It shares the storage and the version counter, and remembers its base (``._base``), so an
    in-place write through either is seen by both and counted once; ``_C.mark_view`` also notes the
    counter's value now and the grad mode, which autograd reads (``view_version``, ``creation_meta``).
    """
    b = base._impl
    sizes, strides = tuple(sizes), tuple(strides)
    impl = TensorImpl(b.storage, sizes, strides, offset, b.dtype, b.device, b.version)
    _C.mark_view(impl, b)
    if len(sizes) == 2 and offset == b.offset and b.array is not None and strides == b.strides[::-1] \
            and sizes == b.sizes[::-1]:
        # a matrix transpose (``w.t()``, as in every linear layer): its numpy view is the base's,
        # transposed, which costs far less now than numpy_view() building it from storage later
        impl.array = b.array.T
    return _C._wrap(Tensor, impl)


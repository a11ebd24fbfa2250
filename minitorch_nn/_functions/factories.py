"""Factory functions: ``tensor``, ``zeros``, ``arange``, ``randn``, ... (mirrors ``torch.*``).

Each resolves PyTorch's defaults (dtype from the data or the default dtype, device from the
argument or the ``with device(...)`` context) and calls the factory op, so the op and its
``device=``/``dtype=`` keywords are what ``__torch_dispatch__`` sees, as in PyTorch.
"""

from __future__ import annotations

import numbers

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, check_geometry
from minitorch_nn._device import canonical, get_default_device
from minitorch_nn._functions._out import writes_out_factory
from minitorch_nn._ops import aten
from minitorch_nn._shape import normalize_size
from minitorch_nn._tensor import Tensor, _from_array
from minitorch_nn._warnings import warn_user
from minitorch_nn.overrides import public


def _finish(t, requires_grad):
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            # the factories' wording (Tensor.requires_grad_ says "only ... floating point dtype")
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _device(device):
    return canonical(device) if device is not None else get_default_device()


def _factory_kwargs(dtype, device):
    kw = {}
    if dtype is not None:
        kw["dtype"] = dtype
    kw["device"] = _device(device)
    kw["pin_memory"] = False
    return kw


# -- from data ------------------------------------------------------------------------------------

def _infer_dtype(data):
    """The dtype PyTorch infers for nested Python data: bool < int64 < default float < default complex."""
    rank = -1
    stack = [data]
    while stack:
        x = stack.pop()
        # exact Python ints and floats first: the checks against the numbers ABCs below cost
        # far more, and a batch of labels is a list of ints (bool is not `int` here)
        if type(x) is int:
            rank = max(rank, 1)
        elif type(x) is float:
            rank = max(rank, 2)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, TensorBase):
            return x.dtype if x.dim() == 0 or True else x.dtype
        elif isinstance(x, (bool, np.bool_)):
            rank = max(rank, 0)
        elif isinstance(x, (numbers.Integral,)):
            rank = max(rank, 1)
        elif isinstance(x, numbers.Real):
            rank = max(rank, 2)
        elif isinstance(x, numbers.Complex):
            rank = 3
        elif isinstance(x, str):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        else:   # (PyTorch's words for an object that is neither a number nor a sequence)
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    if rank == 3:
        return dt.get_default_complex_dtype()
    return {-1: dt.get_default_dtype(), 0: dt.bool, 1: dt.int64, 2: dt.get_default_dtype()}[rank]


def _to_numpy(data, dtype):
    if isinstance(data, np.ndarray):
        return data.astype(dtype.numpy_dtype, copy=True)
    if isinstance(data, (list, tuple)) and any(isinstance(x, TensorBase) for x in data):
        data = [x.tolist() if isinstance(x, TensorBase) else x for x in data]
    try:
        arr = np.array(data, dtype=np.float64 if dtype.is_floating_point else None)
    except ValueError:
        arr = None
    except TypeError:
        arr = np.array(data)  # complex numbers for a floating dtype: refused below
    if arr is None or arr.dtype == object:
        _raise_ragged(data)
    if arr.dtype.kind == "c" and not dtype.is_complex:
        if dtype is dt.bool:
            return arr != 0
        # PyTorch reads each number with its C++ type's converter, which refuses complex numbers
        if dtype.is_floating_point:
            raise TypeError("must be real number, not complex")
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return arr.astype(dtype.numpy_dtype)


def _raise_ragged(data, dim=0):
    """PyTorch's message for nested lists of uneven lengths: where the first mismatch is."""
    if not isinstance(data, (list, tuple)) or not data:
        return
    first = data[0]
    expected = len(first) if isinstance(first, (list, tuple)) else None
    for item in data:
        got = len(item) if isinstance(item, (list, tuple)) else None
        if got != expected:
            raise ValueError(f"expected sequence of length {expected} at dim {dim + 1} (got {got})")
    for item in data:
        _raise_ragged(item, dim + 1)
    raise ValueError("expected sequence of length consistent across dimensions (ragged nested sequence)")


@public
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays)."""
    if isinstance(data, TensorBase):
        warn_user(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
        )
        out = data.detach().clone()
        if dtype is not None or device is not None:
            out = out.to(dtype=dtype, device=device)
        return _finish(out, requires_grad)
    if isinstance(data, np.ndarray):
        d = dtype if dtype is not None else dt.from_numpy_dtype(data.dtype)
    else:
        d = dtype if dtype is not None else _infer_dtype(data)
    # (not np.ascontiguousarray: it would turn 0-d data into a 1-d array)
    t = _from_array(np.asarray(_to_numpy(data, d), order="C"), d)
    dev = _device(device)
    if dev.type != "cpu":
        t = t.to(dev)
    t = aten.lift_fresh.default(t)
    return _finish(t, requires_grad)


@public
def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor`, but shares memory with a tensor or numpy array when it can."""
    if isinstance(data, TensorBase):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy_dtype == data.dtype) and device in (None, "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A cpu tensor sharing memory with ``ndarray`` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides "
            "are not currently supported. (You can probably work around this by making a copy of your array "
            " with array.copy().) "
        )
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.")
    if ndarray.flags.c_contiguous:
        return _from_array(ndarray, d)
    # Share a strided numpy array: the storage is the memory span it covers.
    from minitorch_nn._C import TensorImpl, _wrap
    from minitorch_nn._device import CPU

    itemsize = ndarray.itemsize
    strides = tuple(s // itemsize for s in ndarray.strides)
    extent = 1 + sum((n - 1) * s for n, s in zip(ndarray.shape, strides)) if ndarray.size else 0
    storage = np.lib.stride_tricks.as_strided(ndarray, shape=(extent,), strides=(itemsize,))
    check_geometry(ndarray.shape, strides, 0, itemsize, storage.nbytes)   # (numpy's own, re-checked)
    impl = TensorImpl(storage, tuple(ndarray.shape), strides, 0, d, CPU)
    return _wrap(Tensor, impl)


class _CapsuleHolder:
    """Lets numpy import a bare DLPack capsule (the legacy ``to_dlpack`` form): numpy wants an object."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A cpu tensor sharing memory with any DLPack producer (numpy, PyTorch, JAX, a capsule).

    Mirrors ``torch.from_dlpack``. numpy does the import (``np.from_dlpack``) and the tensor wraps
    its array without a copy, so writes through either side are seen by the other.
    """
    if isinstance(ext_tensor, TensorBase):
        return ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise TypeError(f"from_dlpack() expects an object with __dlpack__ or a DLPack capsule, got {type(ext_tensor).__name__}")
        ext_tensor = _CapsuleHolder(ext_tensor)
    elif hasattr(ext_tensor, "__dlpack_device__"):
        device_type, _ = ext_tensor.__dlpack_device__()
        if int(device_type) != 1:
            raise RuntimeError(f"minitorch_nn imports only cpu DLPack tensors (device type 1), got device type {int(device_type)}")
    return from_numpy(np.from_dlpack(ext_tensor))


# -- sized factories --------------------------------------------------------------------------------

@public
@writes_out_factory
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, memory_format=None):
    """An uninitialised tensor (zero-filled here, which PyTorch does not promise)."""
    kw = _factory_kwargs(dtype, device)
    if memory_format is not None:
        kw["memory_format"] = memory_format
    return _finish(aten.empty.memory_format(normalize_size(size, "empty"), **kw), requires_grad)


@public
@writes_out_factory
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    size = normalize_size(size, "zeros")
    if any(s < 0 for s in size) and _device(device).type != "meta":
        # torch.zeros words its own check (new_zeros and the meta kernel give at::empty's)
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _finish(aten.zeros.default(size, **_factory_kwargs(dtype, device)), requires_grad)


@public
@writes_out_factory
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(aten.ones.default(normalize_size(size, "ones"), **_factory_kwargs(dtype, device)), requires_grad)


@public
@writes_out_factory
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(aten.full.default(normalize_size((size,), "full"), fill_value, **_factory_kwargs(dtype, device)), requires_grad)


@public
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _finish(aten.empty_strided.default(normalize_size((size,), "empty_strided"), tuple(stride), **_factory_kwargs(dtype, device)), requires_grad)


@public
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    kw = _factory_kwargs(dtype or dt.get_default_dtype(), device)
    return _finish(aten.scalar_tensor.default(s, **kw), requires_grad)


def _like_kwargs(dtype, device, memory_format=None):
    kw = {}
    if memory_format is not None and memory_format is not dt.preserve_format:
        kw["memory_format"] = memory_format
    if dtype is not None:
        kw["dtype"] = dtype
    if device is not None:
        kw["device"] = canonical(device)
    kw["pin_memory"] = False
    return kw


@public
def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.empty_like.default(input, **_like_kwargs(dtype, device, memory_format)), requires_grad)


@public
def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.zeros_like.default(input, **_like_kwargs(dtype, device, memory_format)), requires_grad)


@public
def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.ones_like.default(input, **_like_kwargs(dtype, device, memory_format)), requires_grad)


@public
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.full_like.default(input, fill_value, **_like_kwargs(dtype, device, memory_format)), requires_grad)


@public
def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.rand_like.default(input, **_like_kwargs(dtype, device, memory_format)), requires_grad)


@public
def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(aten.randn_like.default(input, **_like_kwargs(dtype, device, memory_format)), requires_grad)


# -- ranges ---------------------------------------------------------------------------------------

def _number(x):
    return x.item() if isinstance(x, TensorBase) else x


@public
@writes_out_factory
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) every ``step`` (PyTorch's dtype rules)."""
    start, end, step = _number(start), _number(end), _number(step)
    if dtype is dt.int64 and end is not None and (end - start) * step >= 0:
        # PyTorch's int64 arange truncates bounds and step to integers first (its other integer
        # dtypes do not): ``arange(0.5, 3.7, dtype=int64)`` is ``[0, 1, 2]``, with int32 it is
        # ``[0, 1, 2, 3]``; a step truncated to 0 is a ValueError there
        if step and not int(step):
            raise ValueError("step must be nonzero")
        start, end, step = int(start), int(end), int(step)
    elif dtype is dt.int64 and end is None and start >= 0:
        start = int(start)  # ``arange(2.5, dtype=int64)``: the end truncated the same way
    kw = _factory_kwargs(dtype, device)
    if end is None:
        out_t = aten.arange.default(start, **kw)
    elif step == 1:
        out_t = aten.arange.start(start, end, **kw)
    else:
        out_t = aten.arange.start_step(start, end, step, **kw)
    return _finish(out_t, requires_grad)


@public
@writes_out_factory
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(aten.linspace.default(_number(start), _number(end), steps, **_factory_kwargs(dtype, device)), requires_grad)


@public
@writes_out_factory
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(aten.logspace.default(_number(start), _number(end), steps, float(base), **_factory_kwargs(dtype, device)),
                   requires_grad)


@public
@writes_out_factory
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    kw = _factory_kwargs(dtype, device)
    return _finish(aten.eye.default(n, **kw) if m is None else aten.eye.m(n, m, **kw), requires_grad)


# -- random ---------------------------------------------------------------------------------------

def _gen_kwargs(generator, dtype, device):
    kw = _factory_kwargs(dtype, device)
    if generator is not None:
        kw["generator"] = generator
    return kw


# (the signatures PyTorch lists for rand/randn when the sizes fit neither)
_RANDOM_OVERLOADS = (
    "tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    "tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False",
)


@public
@writes_out_factory
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1), the same numbers as PyTorch's cpu generator."""
    size = normalize_size(size, "rand", "size", _RANDOM_OVERLOADS)
    op = aten.rand.generator if generator is not None else aten.rand.default
    return _finish(op(size, **_gen_kwargs(generator, dtype, device)), requires_grad)


@public
@writes_out_factory
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal samples, the same numbers as PyTorch's cpu generator."""
    size = normalize_size(size, "randn", "size", _RANDOM_OVERLOADS)
    op = aten.randn.generator if generator is not None else aten.randn.default
    return _finish(op(size, **_gen_kwargs(generator, dtype, device)), requires_grad)


@public
@writes_out_factory
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Random integers in [low, high); ``randint(high, size)`` is accepted too."""
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    kw = _gen_kwargs(generator, dtype or dt.int64, device)
    return _finish(aten.randint.low(low, high, normalize_size((size,)), **kw), requires_grad)


@public
@writes_out_factory
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A random permutation of ``0..n-1``."""
    kw = _gen_kwargs(generator, dtype or dt.int64, device)
    return _finish(aten.randperm.default(n, **kw), requires_grad)


__all__ = [
    "tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "empty_strided",
    "scalar_tensor", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
]

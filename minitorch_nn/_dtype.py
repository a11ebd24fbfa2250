"""dtypes and type promotion, mirroring ``torch.dtype`` and ``torch.result_type``.

Each :class:`dtype` wraps the numpy dtype that stores its elements (``bfloat16`` comes from
``ml_dtypes``). Promotion follows PyTorch, not numpy: categories rank bool < integer < floating <
complex, and within ``result_type`` a dimensioned tensor outranks a zero-dim tensor, which outranks a
Python number, but only when it is of an equal or higher category. So ``int64_tensor + 2.5`` is
float32 (the default dtype) and ``float16_tensor + 1000.0`` stays float16, where numpy would say
float64 and float16.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type (``torch.dtype``). Prints as ``torch.float32`` like PyTorch."""

    __slots__ = ("name", "numpy_dtype", "itemsize", "is_floating_point", "is_complex", "is_signed", "_rank")

    def __init__(self, name, numpy_dtype, is_floating_point, is_signed, rank):
        self.name = name
        self.numpy_dtype = np.dtype(numpy_dtype)
        self.itemsize = self.numpy_dtype.itemsize
        self.is_floating_point = is_floating_point
        self.is_complex = rank == 3
        self.is_signed = is_signed
        self._rank = rank

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        # dtypes are singletons: unpickle to the same object.
        return (_dtype_from_name, (self.name,))

    def to_real(self):
        """The real dtype of a complex dtype's parts (complex64 -> float32); any other dtype itself."""
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts have this floating dtype (float64 -> complex128)."""
        if self.is_complex:
            return self
        if self is float16:
            raise _no_complex32()
        try:
            return _REAL_TO_COMPLEX[self]
        except KeyError:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_NAMES[self.name]}") from None


bool = dtype("bool", np.bool_, False, False, 0)  # noqa: A001 - the torch name
uint8 = dtype("uint8", np.uint8, False, False, 1)
int8 = dtype("int8", np.int8, False, True, 1)
int16 = dtype("int16", np.int16, False, True, 1)
int32 = dtype("int32", np.int32, False, True, 1)
int64 = dtype("int64", np.int64, False, True, 1)
float16 = dtype("float16", np.float16, True, True, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, True, True, 2)
float32 = dtype("float32", np.float32, True, True, 2)
float64 = dtype("float64", np.float64, True, True, 2)
complex64 = dtype("complex64", np.complex64, False, True, 3)
complex128 = dtype("complex128", np.complex128, False, True, 3)

# PyTorch's aliases are the same objects.
half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
# bfloat16 has no complex twin of its own; PyTorch maps it to complex64.
_REAL_TO_COMPLEX = {float32: complex64, float64: complex128, bfloat16: complex64}
_COMPLEX_TO_REAL = {complex64: float32, complex128: float64}
# c10's ScalarType names, used in a few of PyTorch's messages
_SCALAR_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def _no_complex32() -> TypeError:
    return TypeError(
        "complex32 (torch.chalf) is not supported by minitorch_nn: PyTorch would give a complex32 result "
        "here (a float16 value meeting a complex one). Convert the float16 tensor to float32 first "
        "(x.float()) to get complex64."
    )
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.numpy_dtype: d for d in ALL_DTYPES}


def _dtype_from_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The minitorch_nn dtype that stores elements of numpy dtype ``np_dtype``."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ) from None


# -- the default dtype ------------------------------------------------------------------------

_default_dtype = float32


def get_default_dtype() -> dtype:
    """The floating dtype factories use when none is given (float32 unless changed)."""
    return _default_dtype


def get_default_complex_dtype() -> dtype:
    """The complex dtype a Python complex number becomes: the default dtype's complex twin."""
    return _default_dtype.to_complex()


def set_default_dtype(d: dtype) -> None:
    """Change the default floating dtype. Like PyTorch, only floating dtypes are allowed."""
    global _default_dtype
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


# -- promotion ---------------------------------------------------------------------------------

def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._rank != b._rank:
        high, low = (a, b) if a._rank > b._rank else (b, a)
        if high.is_complex and low.is_floating_point:
            # the complex type wide enough for both parts: float64 with complex64 is complex128
            return _REAL_TO_COMPLEX.get(promote_types(high.to_real(), low), high) if low is not float16 else high
        return high
    if a._rank == 3:
        return a if a.itemsize > b.itemsize else b
    if a._rank == 2:
        # Among floats the wider wins; float16 with bfloat16 meet at float32.
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    if a._rank == 1:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            # uint8 with a signed type needs a signed type that holds 0..255.
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    return a


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be converted to without losing category (``torch.promote_types``)."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"promote_types(): argument '{name}' (position {position}) must be torch.dtype, "
                            f"not {type(value).__name__}")
    try:
        return _PROMOTE_TABLE[(type1, type2)]
    except NameError:  # while the table itself is being built
        return _promote_pair(type1, type2)


_PROMOTE_TABLE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def _scalar_category(value) -> int:
    # Python bool, int, float, complex rank like bool, integer, floating, complex dtypes.
    if isinstance(value, (builtins_bool, np.bool_)):
        return 0
    if isinstance(value, (builtins_int, np.integer)):
        return 1
    if isinstance(value, (complex, np.complexfloating)):
        return 3
    return 2


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
builtins_int = _builtins.int
builtins_float = _builtins.float


def result_type_from(tensor_dtypes_dim, tensor_dtypes_zero_dim, scalars) -> dtype:
    """PyTorch's three-tier promotion (``at::native::result_type``).

    ``tensor_dtypes_dim`` are dtypes of tensors with ``dim() > 0``; ``tensor_dtypes_zero_dim``
    those of zero-dim tensors; ``scalars`` are Python numbers. A lower tier only matters when it
    is of a higher category (bool < int < float < complex) than everything above it.

    Rules:

    1. promote the dimensioned tensors' dtypes together with ``_PROMOTE_TABLE`` (``promote_types``);
    2. promote the zero-dim tensors' dtypes together the same way; this tier changes the result
       only when there are no dimensioned tensors, or when its category (``dtype._rank``: 0 bool,
       1 integer, 2 floating, 3 complex) is higher than the result's: then the two are promoted
       together (``int32`` tensor + ``float64`` 0-d tensor is ``float64``, ``float32`` + ``float64``
       0-d is ``float32``), except that a floating result meeting a complex tier becomes its own
       complex twin (``float64`` tensor + ``complex64`` 0-d tensor is ``complex128``);
    3. Python numbers (``scalars``) have the category of their type (``bool`` < ``int`` <
       ``float`` < ``complex``); when there is no tensor dtype yet they give ``bool``, ``int64``,
       the default dtype (``get_default_dtype()``) or its complex twin; otherwise they change the
       result only when their highest category is above the result's, to ``int64`` (an int), the
       default dtype (a float) or, for a complex number, the result's complex twin (a floating
       result) or the default complex dtype: ``uint8`` tensor + ``1000`` stays ``uint8``, ``int32``
       tensor + ``2.5`` is the default dtype, ``float64`` tensor + ``1j`` is ``complex128``.

    >>> result_type_from([int32], [], [2.5]) is get_default_dtype()
    True
    """
    # BEGIN SOLUTION type-promotion
    result = None
    for d in tensor_dtypes_dim:
        result = d if result is None else _PROMOTE_TABLE[(result, d)]
    zero = None
    for d in tensor_dtypes_zero_dim:
        zero = d if zero is None else _PROMOTE_TABLE[(zero, d)]
    if zero is not None:
        if result is None:
            result = zero
        elif zero._rank > result._rank:
            if zero.is_complex and result.is_floating_point:
                result = result.to_complex()
            else:
                result = _PROMOTE_TABLE[(result, zero)]
    if scalars:
        cat = max(_scalar_category(s) for s in scalars)
        if result is None:
            result = (bool, int64, get_default_dtype(), None)[cat] or get_default_complex_dtype()
        elif cat > result._rank:
            if cat == 3:
                result = result.to_complex() if result.is_floating_point else get_default_complex_dtype()
            else:
                result = int64 if cat == 1 else get_default_dtype()
    return result
    # END SOLUTION


# -- layouts and memory formats (only the strided layout exists here) ----------------------------

class layout:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = layout("strided")


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def iinfo_bounds(d: dtype):
    info = np.iinfo(d.numpy_dtype)
    return info.min, info.max


class finfo:
    """``torch.finfo`` for our floating dtypes (and complex ones: the limits of their parts)."""

    def __init__(self, type=None):  # noqa: A002 - torch's argument name
        d = get_default_dtype() if type is None else type
        d = d.to_real()  # (a complex dtype reports the limits of its parts, as in PyTorch)
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        info = ml_dtypes.finfo(d.numpy_dtype)
        self.bits = d.itemsize * 8
        self.eps = _builtins.float(info.eps)
        self.max = _builtins.float(info.max)
        self.min = _builtins.float(info.min)
        self.tiny = _builtins.float(info.tiny)
        self.smallest_normal = self.tiny
        # PyTorch reports 10 ** -precision as a Python float (numpy rounds it to the dtype)
        self.resolution = 10.0 ** -_builtins.int(info.precision)
        self.dtype = d.name


class iinfo:
    """``torch.iinfo`` for our integer dtypes."""

    def __init__(self, type):  # noqa: A002
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.numpy_dtype)
        self.bits = type.itemsize * 8
        self.min = _builtins.int(info.min)
        self.max = _builtins.int(info.max)
        self.dtype = type.name

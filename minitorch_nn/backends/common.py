"""Helpers every backend shares: PyTorch's result dtype for an op's operands, cast checks.

Type promotion is decided here once, from the op's operands, the way PyTorch's
``TensorIterator`` decides it; the cpu, meta and cuda kernels then only compute.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase


def result_type(*operands) -> dt.dtype:
    """PyTorch's ``result_type`` over tensors and Python numbers (None operands are ignored)."""
    # fast path for the common cases: a tensor with dims, then tensors of its dtype (with dims or
    # not) and Python numbers of its category or a lower one (``a + b``, ``x * 2.0``, ``x.clamp(0, 1)``):
    # no tier below the first can change its dtype
    if operands and isinstance(operands[0], TensorBase):
        first = operands[0]._impl
        if first.sizes:
            dtype = first.dtype
            rank = dtype._rank
            for o in operands[1:]:
                if o is None:
                    continue
                if isinstance(o, TensorBase):
                    if o._impl.dtype is not dtype:
                        break
                elif _SCALAR_CATEGORY.get(type(o), 3) > rank:
                    break
            else:
                return dtype
    dims, zeros, scalars = [], [], []
    for o in operands:
        if o is None:
            continue
        if isinstance(o, TensorBase):
            (dims if len(o._impl.sizes) else zeros).append(o._impl.dtype)
        else:
            scalars.append(o)
    return dt.result_type_from(dims, zeros, scalars)


# the categories dt.result_type_from gives Python numbers (bool < int < float), by exact type
_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def compute_dtype(d: dt.dtype) -> dt.dtype:
    """16-bit floats are computed in float32 and rounded back, as PyTorch's cpu kernels do."""
    return _COMPUTE.get(d, d)


_COMPUTE = {dt.float16: dt.float32, dt.bfloat16: dt.float32}


def can_cast(src: dt.dtype, dst: dt.dtype) -> bool:
    """PyTorch's ``canCast``: no complex -> non-complex, no float -> integer and no non-bool -> bool
    in in-place ops."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    if src is not dt.bool and dst is dt.bool:
        return False
    return True


_TYPE_NAMES = {
    dt.float32: "Float", dt.float64: "Double", dt.float16: "Half", dt.bfloat16: "BFloat16",
    dt.int64: "Long", dt.int32: "Int", dt.int16: "Short", dt.int8: "Char", dt.uint8: "Byte",
    dt.bool: "Bool", dt.complex64: "ComplexFloat", dt.complex128: "ComplexDouble",
}


def type_name(d: dt.dtype) -> str:
    """The C++ scalar-type name PyTorch uses in messages (``Float``, ``Long``, ...)."""
    return _TYPE_NAMES[d]


def not_implemented(kernel: str, d: dt.dtype) -> NotImplementedError:
    """PyTorch's error for a kernel with no loop for a dtype (``"abs_cpu" not implemented for 'Bool'``).

    PyTorch raises ``NotImplementedError`` (a subclass of ``RuntimeError``) with the name of its
    internal kernel; we keep that name so that a search for the message finds PyTorch's answers.
    """
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')


def check_inplace_cast(result: dt.dtype, out: dt.dtype) -> None:
    if not can_cast(result, out):
        raise RuntimeError(f"result type {type_name(result)} can't be cast to the desired output type {type_name(out)}")


def mean_dtype(self, dtype, name="mean"):
    """The output dtype of mean/var/std: the input's (or ``dtype=``), which must be floating."""
    d = dtype if dtype is not None else self.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {type_name(d)}"
        )
    return d


# the C++ type c10's Scalar conversion names when a complex number does not fit a real dtype
_SCALAR_CONVERSION_NAMES = {
    dt.float32: "float", dt.float64: "double", dt.float16: "double", dt.bfloat16: "double",
    dt.int64: "int64_t", dt.int32: "int", dt.int16: "int16_t", dt.int8: "int8_t", dt.uint8: "uint8_t",
}


def real_scalar(value, d: dt.dtype):
    """A Python number made ready for a tensor of dtype ``d``: a complex number meeting a real dtype
    must have no imaginary part (PyTorch's "value cannot be converted" error otherwise), and then
    counts as its real part. Other numbers pass through unchanged."""
    if not isinstance(value, complex) or d.is_complex:
        return value
    if d is dt.bool:
        return value != 0
    if value.imag != 0:
        raise RuntimeError(
            f"value cannot be converted to type {_SCALAR_CONVERSION_NAMES[d]} without overflow\n"
            "A complex number with a non-zero imaginary part only fits a complex tensor: use a complex dtype "
            "(torch.complex64) or pass value.real."
        )
    return value.real


_warned_complex_to_real = False


def complex_to_real_warning():
    """PyTorch's warning when a copy drops imaginary parts (``x.to(torch.float32)`` of a complex x),
    given once per process as PyTorch's ``TORCH_WARN_ONCE`` does."""
    global _warned_complex_to_real
    if _warned_complex_to_real:
        return
    _warned_complex_to_real = True
    from minitorch_nn._warnings import warn_user

    warn_user("Casting complex values to real discards the imaginary part", UserWarning)

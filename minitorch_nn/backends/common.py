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
_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2}


def compute_dtype(d: dt.dtype) -> dt.dtype:
    """16-bit floats are computed in float32 and rounded back, as PyTorch's cpu kernels do."""
    return _COMPUTE.get(d, d)


_COMPUTE = {dt.float16: dt.float32, dt.bfloat16: dt.float32}


def can_cast(src: dt.dtype, dst: dt.dtype) -> bool:
    """PyTorch's ``canCast``: no float -> integer and no non-bool -> bool in in-place ops."""
    if src.is_floating_point and not dst.is_floating_point:
        return False
    if src is not dt.bool and dst is dt.bool:
        return False
    return True


_TYPE_NAMES = {
    dt.float32: "Float", dt.float64: "Double", dt.float16: "Half", dt.bfloat16: "BFloat16",
    dt.int64: "Long", dt.int32: "Int", dt.int16: "Short", dt.int8: "Char", dt.uint8: "Byte",
    dt.bool: "Bool",
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
    if not d.is_floating_point:
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {type_name(d)}"
        )
    return d

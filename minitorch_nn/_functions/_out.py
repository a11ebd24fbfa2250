"""``out=``: writing an elementwise function's result into a tensor the caller gives.

Mirrors what PyTorch's ``TensorIterator`` and its ``*_out`` kernels do with an ``out`` argument
(``aten/src/ATen/TensorIterator.cpp``, ``native/Resize.cpp``), in PyTorch's order:

1. autograd refuses: "functions with out=... arguments don't support automatic differentiation";
2. ``out`` must not have two elements at one memory location, nor partly overlap an input
   (``backends/layout.py``); ``out`` being one of the inputs exactly is fine;
3. the result's dtype must suit ``out`` (each op family has its own rule and words, see ``CAST``);
4. an ``out`` of another shape is resized, with PyTorch's deprecation warning unless it was empty,
   and then laid out as a fresh result would be (so ``add(x.t(), 1, out=empty(0))`` is
   column-major too);
5. the values are copied in (one version bump) and ``out`` itself is returned.

The result is computed first and copied; PyTorch writes into ``out`` directly, which nobody can
tell apart except by timing.
"""

from __future__ import annotations

import functools

from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._warnings import warn_user
from minitorch_nn.backends.common import can_cast, type_name
from minitorch_nn.backends.layout import check_inplace_overlap


def _safe(name, result, out):
    # TensorIterator's enforce_safe_casting_to_output (binary ops, float unary ops, comparisons)
    if not can_cast(result, out):
        raise RuntimeError(f"result type {type_name(result)} can't be cast to the desired output type {type_name(out)}")


def _same(name, result, out):
    # unary ops that keep their input's dtype check that ``out`` has it
    if result is not out:
        raise RuntimeError(f"Found dtype {type_name(out)} but expected {type_name(result)}")


def _where(name, result, out):
    if result is not out:
        raise RuntimeError(f"Expected out type to be {type_name(result)} but got {type_name(out)}")


def _nan_to_num(name, result, out):
    if result is not out:
        raise RuntimeError(f"nan_to_num: dtype of out: {type_name(out)} should be same as input: {type_name(result)}")


CAST = {"safe": _safe, "same": _same, "where": _where, "nan_to_num": _nan_to_num}

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the "
    "required output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will "
    "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
    "inplace, to zero elements with t.resize_(0)."
)


def writes_out(cast="safe"):
    """Give a function PyTorch's ``out=`` behaviour; ``cast`` names the dtype rule (``CAST``), or
    None for functions PyTorch gives no ``out`` argument (then ``out=`` is a TypeError)."""

    def decorate(fn):
        @functools.wraps(fn)
        def with_out(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            if cast is None:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'out'")
            inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorBase)]
            return write_out(fn.__name__, out, inputs, lambda: fn(*args, **kwargs), CAST[cast])

        # ``overrides.public`` calls this directly when no keyword is passed (one frame less per call)
        with_out.__without_out__ = fn
        return with_out

    return decorate


def write_out(name, out, inputs, compute, check_dtype):
    """Steps 1-5 of the module docstring: ``compute()`` gives the result to write into ``out``."""
    from minitorch_nn.autograd import is_grad_enabled

    if not isinstance(out, TensorBase):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (out.requires_grad or any(t.requires_grad for t in inputs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of "
            "the arguments requires grad."
        )
    check_inplace_overlap(out, *inputs)
    result = compute()
    check_dtype(name, result.dtype, out.dtype)
    shape = list(result.shape)
    if list(out.shape) != shape:
        if out.numel() != 0:
            warn_user(_RESIZE_WARNING.format(old=list(out.shape), new=shape), UserWarning)
        aten.resize_.default(out, shape)
        aten.as_strided_.default(out, shape, list(result.stride()), out.storage_offset())
    return aten.copy_.default(out, result)

"""``out=``: writing a function's result into a tensor (or tuple of tensors) the caller gives.

Every public function that takes ``out`` in PyTorch takes it here through one of these
decorators: ``writes_out`` (one result: elementwise ops, reductions without ``dtype``, ``mm``,
``gather``, ``cat``, ``linalg.inv``...), ``writes_out_tuple`` (``sort``, ``topk``, ``linalg.qr``),
``writes_out_reduction`` (``sum``, ``prod``, ``cumsum``: the input is converted to ``out``'s
dtype first) and ``writes_out_factory`` (``zeros``, ``arange``, ``rand``: made in ``out``'s
dtype, resized silently).

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


def _must_match(message):
    """A rule for ops whose ``out`` must have the result's dtype exactly; ``message`` is that op's
    PyTorch wording, with ``{result}`` and ``{out}`` standing for the two dtypes' names."""

    def check(name, result, out):
        if result is not out:
            raise RuntimeError(message.format(result=type_name(result), out=type_name(out)))

    return check


# c10's ``toString`` names, the words of ``TORCH_CHECK(result.scalar_type() == ...)`` messages
_C10_NAMES = {
    "Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16", "Long": "long int",
    "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char", "Bool": "bool",
}


def _exact(name, result, out):
    # structured kernels (mm, gather, tril, argmax, linalg, ...): ``out`` must have the result's dtype
    if result is not out:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_C10_NAMES[type_name(result)]}, but got "
            f"{_C10_NAMES[type_name(out)]} instead"
        )


def _bool_result(name, result, out):
    # all/any: the result is always bool
    if out is not result:
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {type_name(out)}")


def _cat(name, result, out):
    if not can_cast(result, out):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {type_name(out)}")


def _any_dtype(name, result, out):
    # composites that end in a copy (matrix_rank, householder_product): any dtype, cast on copy
    pass


CAST = {
    "safe": _safe, "exact": _exact, "bool": _bool_result, "cat": _cat, "any": _any_dtype,
    # ``out`` must have the result's dtype, each op saying so in its own words; "same": unary ops
    # that keep their input's dtype
    "same": _must_match("Found dtype {out} but expected {result}"),
    "where": _must_match("Expected out type to be {result} but got {out}"),
    "nan_to_num": _must_match("nan_to_num: dtype of out: {out} should be same as input: {result}"),
    "amax": _must_match(
        "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for out's dtype."
    ),
    "index_select": _must_match("index_select(): self and result must have the same scalar type"),
    "masked_select": _must_match("masked_select(): self and result must have the same scalar type"),
    "dot": _must_match("result dtype {out} does not match input dtype {result}"),
    "nonzero": _must_match("nonzero: Expected out tensor to have scalar type Long but got scalar type{out}"),
    "multinomial": _must_match("multinomial expects Long tensor out, got: {out}"),
}

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the "
    "required output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will "
    "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
    "inplace, to zero elements with t.resize_(0)."
)


def writes_out(cast="safe", check_overlap=True):
    """Give a function PyTorch's ``out=`` behaviour; ``cast`` names the dtype rule (``CAST``), or
    None for functions PyTorch gives no ``out`` argument (then ``out=`` is a TypeError).
    ``check_overlap=False`` for the functions PyTorch lets write over their input (reductions,
    ``mm``, ``tril``, ``linalg``): computing first and copying gives the right values there."""

    def decorate(fn):
        @functools.wraps(fn)
        def with_out(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            if cast is None:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'out'")
            return write_out(fn.__name__, out, _inputs(args, kwargs), lambda: fn(*args, **kwargs), CAST[cast], check_overlap)

        # ``overrides.public`` calls this directly when no keyword is passed (one frame less per call)
        with_out.__without_out__ = fn
        return with_out

    return decorate


def _refuse_grad(name, outs, inputs):
    from minitorch_nn.autograd.grad_mode import is_grad_enabled

    if is_grad_enabled() and any(t.requires_grad for t in (*outs, *inputs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of "
            "the arguments requires grad."
        )


def _inputs(args, kwargs):
    # tensors among the arguments, including those inside a list (``cat([a, b], out=a)``)
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorBase):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, TensorBase))
    return found


def _copy_into(out, result, warn=True):
    """Steps 4-5: resize ``out`` to the result's shape (warning if it held elements), copy, return it."""
    shape = list(result.shape)
    if list(out.shape) != shape:
        if warn and out.numel() != 0:
            warn_user(_RESIZE_WARNING.format(old=list(out.shape), new=shape), UserWarning)
        aten.resize_.default(out, shape)
        aten.as_strided_.default(out, shape, list(result.stride()), out.storage_offset())
    return aten.copy_.default(out, result)


def write_out(name, out, inputs, compute, check_dtype, check_overlap=True):
    """Steps 1-5 of the module docstring: ``compute()`` gives the result to write into ``out``."""
    if not isinstance(out, TensorBase):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _refuse_grad(name, (out,), inputs)
    if check_overlap:
        check_inplace_overlap(out, *inputs)
    result = compute()
    check_dtype(name, result.dtype, out.dtype)
    return _copy_into(out, result)


def write_out_tuple(name, outs, inputs, compute, check_dtype, result_type):
    """``write_out`` for functions returning several tensors: ``outs`` is a tuple of tensors, each
    written with the same steps; ``result_type`` builds the named tuple returned."""
    if not isinstance(outs, (tuple, list)) or not all(isinstance(t, TensorBase) for t in outs):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(outs).__name__}")
    _refuse_grad(name, outs, inputs)
    for t in outs:
        check_inplace_overlap(t, *inputs)
    results = compute()
    if len(outs) != len(results):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(results)} Tensors, got {len(outs)}")
    for r, o in zip(results, outs):
        check_dtype(name, r.dtype, o.dtype)
    return result_type(*[_copy_into(o, r) for r, o in zip(results, outs)])


def writes_out_tuple(result_type, cast="exact"):
    """Decorator form of ``write_out_tuple`` (``sort``, ``topk``, ``linalg.qr``...)."""

    def decorate(fn):
        @functools.wraps(fn)
        def with_out(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return write_out_tuple(
                fn.__name__, out, _inputs(args, kwargs), lambda: fn(*args, **kwargs), CAST[cast], result_type
            )

        with_out.__without_out__ = fn
        return with_out

    return decorate


def writes_out_reduction(fn=None, *, check_overlap=False):
    """``out=`` for reductions with a ``dtype`` argument (``sum``, ``prod``, ``cumsum``): the input
    is converted to ``out``'s dtype before reducing (``sum([0.6, 0.6], 0, out=long)`` is 0, as in
    PyTorch); an explicit ``dtype`` must equal ``out``'s. PyTorch checks overlap for the scans
    (``cumsum``) only: ``check_overlap=True`` there."""
    if fn is None:
        return lambda f: writes_out_reduction(f, check_overlap=check_overlap)

    @functools.wraps(fn)
    def with_out(*args, out=None, dtype=None, **kwargs):
        if out is None:
            return fn(*args, dtype=dtype, **kwargs)
        if len(args) < 2 and "dim" not in kwargs and "axis" not in kwargs:
            # PyTorch's ``sum``/``prod`` take ``out`` only in their ``dim`` overloads (``axis``: numpy's name)
            raise TypeError(f"{fn.__name__}(): out= is accepted only together with dim, as in PyTorch")
        if isinstance(out, TensorBase) and dtype is not None:
            _exact(fn.__name__, dtype, out.dtype)
        inputs = _inputs(args, kwargs)
        return write_out(
            fn.__name__, out, inputs, lambda: fn(*args, dtype=out.dtype, **kwargs), CAST["exact"], check_overlap
        )

    with_out.__without_out__ = fn
    return with_out


def writes_out_factory(fn):
    """``out=`` for factories (``zeros``, ``arange``, ``rand``...): the values are made in ``out``'s
    dtype unless ``dtype`` is given, which must then equal it; ``out`` is resized without a warning
    (PyTorch's factories resize their ``out`` silently)."""

    @functools.wraps(fn)
    def with_out(*args, out=None, dtype=None, **kwargs):
        if out is None:
            return fn(*args, dtype=dtype, **kwargs)
        name = fn.__name__
        if not isinstance(out, TensorBase):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if dtype is not None and dtype is not out.dtype:
            raise RuntimeError(f"dtype {type_name(dtype)} does not match dtype of out parameter ({type_name(out.dtype)})")
        kwargs.pop("requires_grad", None)  # PyTorch ignores it when writing into ``out``
        result = fn(*args, dtype=out.dtype, **kwargs)
        return _copy_into(out, result, warn=False)

    with_out.__without_out__ = fn
    return with_out

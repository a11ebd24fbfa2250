"""PyTorch's ``TypeError`` for an argument of the wrong type, worked out after a call failed.

PyTorch's argument parser checks every argument against the function's schema before the
function runs, so ``torch.exp("x")`` raises ``TypeError: exp(): argument 'input' (position 1)
must be Tensor, not str``. Our public functions are plain Python; such a call fails somewhere
inside, with whatever error a string causes there (``AttributeError: 'str' object has no
attribute '_impl'``, numpy's ``ValueError``...). Checking every argument on every call would cost
every user; instead ``overrides.public``'s wrapper calls :func:`wrong_type_error` only when a
call has already raised, and raises PyTorch's ``TypeError`` in place of the internal error when an
argument's type explains the failure. A successful call pays nothing.

The parameter names say what type an argument must have, as in PyTorch's schemas: ``input``,
``tensor``, ``mask``, ``src``, ``target``, ``mat2``, ``vec`` (and friends) are tensors; ``other``,
``weight``, ``exponent``, ``min`` and ``max`` are tensors or numbers; ``tensors`` is a sequence of
tensors; ``fill_value``, ``value``, ``alpha``, ``mean``, ``std`` are numbers; ``dim`` is an int;
``size``, ``shifts`` and ``dims`` are tuples of ints; ``dtype`` is a ``torch.dtype`` (or a Python
type: ``int``, ``float``, ``bool``, as PyTorch accepts).
"""

from __future__ import annotations

import inspect
import numbers

from minitorch_nn._C import TensorBase

TENSOR_PARAMS = frozenset({"input", "other", "tensor", "mask", "src", "weight", "target", "A", "mat1", "mat2",
                           "vec", "vec2"})
NUMBER_OR_TENSOR_PARAMS = frozenset({"other", "exponent", "weight", "min", "max"})
NUMBER_PARAMS = frozenset({"fill_value", "value", "alpha", "scalar", "lambd", "mean", "std", "from_", "to"})
INT_PARAMS = frozenset({"dim", "dim0", "dim1", "start_dim", "end_dim", "diagonal"})
INT_LIST_PARAMS = frozenset({"shifts", "size", "dims"})

_signatures: dict = {}


def python_type_dtype(value):
    """``int``/``float``/``bool`` as dtypes, as PyTorch maps them (``zeros(2, dtype=float)`` is
    float64); other values unchanged."""
    from minitorch_nn import _dtype as dt

    return {int: dt.int64, float: dt.float64, bool: dt.bool}.get(value, value)


def _params(fn):
    sig = _signatures.get(fn)
    if sig is None:
        try:
            sig = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            sig = []
        _signatures[fn] = sig
    return sig


def _expected(name: str, value) -> str | None:
    """What PyTorch's schema calls the parameter's type when ``value`` does not fit it, else None."""
    if isinstance(value, TensorBase):
        return None
    if name == "tensors":
        return None if isinstance(value, (tuple, list)) else "tuple of Tensors"
    if name in NUMBER_OR_TENSOR_PARAMS:
        return None if isinstance(value, numbers.Number) else "Tensor"
    if name in TENSOR_PARAMS:
        return "Tensor"
    if name in NUMBER_PARAMS:
        return None if isinstance(value, (numbers.Number, bool)) else "Number"
    if name in INT_LIST_PARAMS:
        return None if value is None or hasattr(value, "__index__") or isinstance(value, (tuple, list)) \
            else "tuple of ints"
    if name in INT_PARAMS:
        return None if value is None or hasattr(value, "__index__") or isinstance(value, (tuple, list)) else "int"
    if name == "dtype":
        from minitorch_nn import _dtype as dt

        python_type = value is int or value is float or value is bool   # (identity: no __eq__ runs)
        return None if value is None or isinstance(value, dt.dtype) or python_type else "torch.dtype"
    return None


def wrong_type_error(fn, name: str, is_method: bool, args: tuple, kwargs: dict | None,
                     numbers_may_fit: bool = False):
    """PyTorch's ``TypeError`` for the first argument whose type does not fit, or None.

    ``numbers_may_fit``: the call failed with a ``RuntimeError``, which a legitimate call with a
    number where a tensor is usual (an overload taking a Scalar) may raise for another reason;
    then a number is never blamed."""
    params = _params(fn)
    if not params:
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # PyTorch counts a method's arguments without self
    offset = 1 if is_method or (positional and positional[0].name == "self") else 0
    for i, (param, value) in enumerate(zip(positional, args)):
        if i < offset:
            continue
        if param.name == "tensors" and isinstance(value, (tuple, list)):
            for j, item in enumerate(value):
                if not isinstance(item, TensorBase):
                    return TypeError(f"expected Tensor as element {j} in argument {i - offset}, "
                                     f"but got {type(item).__name__}")
        if value is None and param.default is None:
            continue   # an optional argument left out
        expected = _expected(param.name, value)
        if expected is not None and not (numbers_may_fit and isinstance(value, numbers.Number)):
            return TypeError(
                f"{name}(): argument '{param.name}' (position {i + 1 - offset}) must be {expected}, "
                f"not {type(value).__name__}"
            )
    defaults = {p.name: p.default for p in params}
    for key, value in (kwargs or {}).items():
        if value is None and defaults.get(key, 0) is None:
            continue
        expected = _expected(key, value)
        if expected is not None and not (numbers_may_fit and isinstance(value, numbers.Number)):
            return TypeError(f"{name}(): argument '{key}' must be {expected}, not {type(value).__name__}")
    return None

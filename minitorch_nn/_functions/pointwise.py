"""Elementwise functions: arithmetic, math, comparisons, logic (``torch.add``, ``torch.exp``, ...).

Python numbers are passed to the ops as they are (``x + 1`` reaches ``aten.add.Tensor(x, 1)``),
and comparisons with a number use the ``.Scalar`` overloads, as PyTorch's dispatcher shows them.
``out=`` is handled by ``_out.writes_out`` with each function's dtype rule.
"""

from __future__ import annotations

from minitorch_nn._C import TensorBase
from minitorch_nn._functions._out import writes_out
from minitorch_nn._ops import aten
from minitorch_nn.overrides import public


def _is_tensor(x):
    return isinstance(x, TensorBase)


def _scalar_arg(x):
    # numpy scalars and 0-d results of .item() behave as Python numbers
    if hasattr(x, "item") and not _is_tensor(x) and not isinstance(x, (int, float, bool, complex)):
        return x.item()
    return x


def _check_operand(x, name):
    if not isinstance(x, (TensorBase, int, float, bool, complex)):
        x = _scalar_arg(x)
        if not isinstance(x, (TensorBase, int, float, bool, complex)):
            raise TypeError(
                f"{name}(): argument 'other' (position 2) must be Tensor, not {type(x).__name__}"
            )
    return x


@public
@writes_out()
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and PyTorch's type promotion."""
    other = _check_operand(other, "add")
    if not _is_tensor(input):
        input, other = other, input
    return aten.add.Tensor(input, other) if alpha == 1 and alpha is not True else aten.add.Tensor(input, other, alpha=alpha)


@public
@writes_out()
def sub(input, other, *, alpha=1, out=None):
    other = _check_operand(other, "sub")
    if not _is_tensor(input):
        return aten.rsub.Scalar(other, input) if alpha == 1 and alpha is not True else aten.rsub.Scalar(other, input, alpha)
    return aten.sub.Tensor(input, other) if alpha == 1 and alpha is not True else aten.sub.Tensor(input, other, alpha=alpha)


subtract = sub


@public
def rsub(input, other, alpha=1):
    if _is_tensor(other):
        return aten.rsub.Tensor(input, other) if alpha == 1 and alpha is not True else aten.rsub.Tensor(input, other, alpha=alpha)
    return aten.rsub.Scalar(input, other) if alpha == 1 and alpha is not True else aten.rsub.Scalar(input, other, alpha)


@public
@writes_out()
def mul(input, other, *, out=None):
    other = _check_operand(other, "mul")
    if not _is_tensor(input):
        input, other = other, input
    return aten.mul.Tensor(input, other)


multiply = mul


@public
@writes_out()
def div(input, other, *, rounding_mode=None, out=None):
    other = _check_operand(other, "div")
    if not _is_tensor(input):
        from minitorch_nn._functions.factories import scalar_tensor

        input = scalar_tensor(input, dtype=None, device=other.device)
        if not isinstance(input, TensorBase):
            raise TypeError("div(): expected a tensor")
    if rounding_mode is None:
        return aten.div.Tensor(input, other)
    return aten.div.Tensor_mode(input, other, rounding_mode=rounding_mode)


divide = div
true_divide = div


@public
@writes_out()
def floor_divide(input, other, *, out=None):
    return aten.floor_divide.default(input, other)


@public
@writes_out()
def remainder(input, other, *, out=None):
    if not _is_tensor(input):
        if _is_tensor(other):
            return aten.remainder.Scalar_Tensor(input, other)  # ``7 % x``
        raise _no_overload("remainder", (input, other), _SCALAR_TENSOR_FORMS, explain=1)
    if _is_tensor(other):
        return aten.remainder.Tensor(input, other)
    return aten.remainder.Scalar(input, other)


@public
@writes_out()
def fmod(input, other, *, out=None):
    """C's ``fmod``: the remainder of truncated division, with the sign of ``input``."""
    if _is_tensor(input) and _is_tensor(other):
        return aten.fmod.Tensor(input, other)
    if _is_tensor(input) and isinstance(_scalar_arg(other), (int, float, bool)):
        return aten.fmod.Scalar(input, _scalar_arg(other))
    raise _no_overload("fmod", (input, other), (_THREE_FORMS[0], _THREE_FORMS[2]))


@public
@writes_out()
def pow(input, exponent, *, out=None):
    if not _is_tensor(input):
        return aten.pow.Scalar(input, exponent)
    if _is_tensor(exponent):
        return aten.pow.Tensor_Tensor(input, exponent)
    return aten.pow.Tensor_Scalar(input, exponent)


def _tensor_only(x, fn_name, arg="other", pos=2):
    """Functions with only a Tensor overload refuse Python numbers, with PyTorch's argument-parser message."""
    if not _is_tensor(x):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")
    return x


@public
@writes_out()
def square(input, *, out=None):
    """``input * input`` (``pow(input, 2)``; bool input gives int64, as in PyTorch)."""
    return aten.pow.Tensor_Scalar(input, 2)


@public
@writes_out("same")
def neg(input, *, out=None):
    return aten.neg.default(input)


negative = neg


@public
@writes_out()
def maximum(input, other, *, out=None):
    return aten.maximum.default(_tensor_only(input, "maximum", "input", 1), _tensor_only(other, "maximum"))


@public
@writes_out()
def minimum(input, other, *, out=None):
    return aten.minimum.default(_tensor_only(input, "minimum", "input", 1), _tensor_only(other, "minimum"))


@public
@writes_out()
def atan2(input, other, *, out=None):
    return aten.atan2.default(_tensor_only(input, "atan2", "input", 1), _tensor_only(other, "atan2"))


arctan2 = atan2


# -- binary math: xlogy, hypot, copysign, float_power, fmax, fmin ----------------------------------
# (kernels in backends/cpu/binary_math.py; derivatives in autograd/derivatives_binary_math.py)

_NUMBER = (int, float, bool)


def _no_overload(fn_name, args, signatures, explain=None):
    """PyTorch's argument-parser error when no overload fits: each signature, and for the one
    (``explain``, an index) that it found the only plausible one, every argument marked as unfit."""
    names = ", ".join(type(a).__name__ if not _is_tensor(a) else "Tensor" for a in args)
    lines = [f"{fn_name}() received an invalid combination of arguments - got ({names}), but expected one of:"]
    for k, signature in enumerate(signatures):
        lines.append(f" * ({signature})")
        if k == explain:
            lines.append(f"      didn't match because some of the arguments have invalid types: "
                         f"({', '.join('!' + (type(a).__name__ if not _is_tensor(a) else 'Tensor') + '!' for a in args)})")
    return TypeError("\n".join(lines) + "\n")


_THREE_FORMS = ("Tensor input, Tensor other, *, Tensor out = None", "Number self, Tensor other, *, Tensor out = None",
                "Tensor input, Number other, *, Tensor out = None")


@public
@writes_out()
def xlogy(input, other, *, out=None):
    """``input * log(other)``, defined as 0 where ``input`` is 0 (even for ``other`` 0 or inf),
    NaN where ``other`` is NaN. Integer and bool operands give the default float dtype."""
    input, other = _scalar_arg(input), _scalar_arg(other)
    if _is_tensor(input) and _is_tensor(other):
        return aten.xlogy.Tensor(input, other)
    if _is_tensor(input) and isinstance(other, _NUMBER):
        return aten.xlogy.Scalar_Other(input, other)
    if isinstance(input, _NUMBER) and _is_tensor(other):
        return aten.xlogy.Scalar_Self(input, other)
    raise _no_overload("xlogy", (input, other), _THREE_FORMS)


@public
@writes_out()
def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)`` without overflow; floating-point tensors only."""
    return aten.hypot.default(_tensor_only(input, "hypot", "input", 1), _tensor_only(other, "hypot"))


@public
@writes_out()
def copysign(input, other, *, out=None):
    """The magnitude of ``input`` with the sign (bit) of ``other``: ``copysign(x, -0.0)`` is negative.
    Integer and bool operands give the default float dtype."""
    other = _scalar_arg(other)
    if _is_tensor(input) and _is_tensor(other):
        return aten.copysign.Tensor(input, other)
    if _is_tensor(input) and isinstance(other, _NUMBER):
        return aten.copysign.Scalar(input, other)
    raise _no_overload("copysign", (input, other), (_THREE_FORMS[0], _THREE_FORMS[2]))


@public
@writes_out()
def fmax(input, other, *, out=None):
    """Elementwise maximum that ignores NaN (C's ``fmax``): NaN only where both are NaN."""
    return aten.fmax.default(_tensor_only(input, "fmax", "input", 1), _tensor_only(other, "fmax"))


@public
@writes_out()
def fmin(input, other, *, out=None):
    """Elementwise minimum that ignores NaN (C's ``fmin``): NaN only where both are NaN."""
    return aten.fmin.default(_tensor_only(input, "fmin", "input", 1), _tensor_only(other, "fmin"))


@public
@writes_out()
def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))`` without overflow; floating-point tensors only."""
    return aten.logaddexp.default(_tensor_only(input, "logaddexp", "input", 1), _tensor_only(other, "logaddexp"))


@public
@writes_out()
def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)`` without overflow; floating-point tensors only."""
    return aten.logaddexp2.default(_tensor_only(input, "logaddexp2", "input", 1), _tensor_only(other, "logaddexp2"))


def _ldexp_out_dtype(name, result, out):
    from minitorch_nn.backends.common import can_cast, type_name

    if not can_cast(result, out):  # (ldexp's own words, not TensorIterator's)
        raise RuntimeError(f"ldexp can't be cast to the desired output type {type_name(out)}")


@public
def ldexp(input, other, *, out=None):
    """``input * 2**other`` (a float result; ``other`` need not hold integers)."""
    _tensor_only(input, "ldexp", "input", 1)
    _tensor_only(other, "ldexp")
    if out is None:
        return aten.ldexp.Tensor(input, other)
    from minitorch_nn._functions._out import write_out

    return write_out("ldexp", out, [input, other], lambda: aten.ldexp.Tensor(input, other), _ldexp_out_dtype)


@public
@writes_out()
def heaviside(input, values, *, out=None):
    """The step function: 0 where ``input < 0``, ``values`` where it is 0, 1 where ``input > 0``.
    Both tensors must have one dtype (PyTorch does not promote here)."""
    return aten.heaviside.default(_tensor_only(input, "heaviside", "input", 1), _tensor_only(values, "heaviside", "values"))


@public
@writes_out()
def gcd(input, other, *, out=None):
    """Greatest common divisor (non-negative), integer tensors only."""
    return aten.gcd.default(_tensor_only(input, "gcd", "input", 1), _tensor_only(other, "gcd"))


@public
@writes_out()
def lcm(input, other, *, out=None):
    """Least common multiple (non-negative, wrapping around in the dtype), integer tensors only."""
    return aten.lcm.default(_tensor_only(input, "lcm", "input", 1), _tensor_only(other, "lcm"))


def _as_double(x, wide=None):
    """``x.to(float64)`` (or ``complex128`` when an operand is complex) as PyTorch's decomposition
    does it: an ``_to_copy`` only if the dtype changes."""
    from minitorch_nn import _dtype as dt

    wide = wide or dt.float64
    return x if x.dtype is wide else aten._to_copy.default(x, dtype=wide)


def _power_dtype(*operands):
    from minitorch_nn import _dtype as dt

    complex_operand = any(x.dtype.is_complex if _is_tensor(x) else isinstance(x, complex) for x in operands)
    return dt.complex128 if complex_operand else dt.float64


_POWER_FORMS = ("Tensor input, Tensor exponent, *, Tensor out = None",
                "Number self, Tensor exponent, *, Tensor out = None",
                "Tensor input, Number exponent, *, Tensor out = None")


def _float_power(input, exponent):
    input, exponent = _scalar_arg(input), _scalar_arg(exponent)
    wide = _power_dtype(input, exponent)
    number = complex if wide.is_complex else float
    if _is_tensor(input) and _is_tensor(exponent):
        return aten.pow.Tensor_Tensor(_as_double(input, wide), _as_double(exponent, wide))
    if _is_tensor(input) and isinstance(exponent, (*_NUMBER, complex)):
        return aten.pow.Tensor_Scalar(_as_double(input, wide), number(exponent))
    if isinstance(input, (*_NUMBER, complex)) and _is_tensor(exponent):
        return aten.pow.Scalar(number(input), _as_double(exponent, wide))
    raise _no_overload("float_power", (input, exponent), _POWER_FORMS)


@public
def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in float64, whatever the operands' dtypes (PyTorch's
    composite: both are converted with ``_to_copy`` and ``pow`` runs; so ``__torch_dispatch__``
    sees those ops and autograd records ``PowBackward*``). With a complex operand the work is done
    in complex128."""
    if out is None:
        return _float_power(input, exponent)
    from minitorch_nn import _dtype as dt
    from minitorch_nn._functions._out import CAST, _inputs, write_out
    from minitorch_nn.backends.common import type_name

    if _is_tensor(out) and out.dtype is not dt.float64:  # PyTorch checks this before pow's out= rules
        raise RuntimeError(f"the output given to float_power has dtype {type_name(out.dtype)} but the "
                           "operation's result requires dtype Double")
    return write_out("pow", out, _inputs((input, exponent), {}), lambda: _float_power(input, exponent), CAST["safe"])


# -- bit shifts ---------------------------------------------------------------------------------------
# (kernels in backends/cpu/bit_shifts.py: what shifts that are negative or as wide as the dtype give)

# the overloads of remainder and the shifts: the number-first one takes no ``out``
_SCALAR_TENSOR_FORMS = ("Tensor input, Tensor other, *, Tensor out = None", "Number self, Tensor other",
                "Tensor input, Number other, *, Tensor out = None")


def _shift(packet, name, input, other):
    input, other = _scalar_arg(input), _scalar_arg(other)
    if _is_tensor(input) and _is_tensor(other):
        return packet.Tensor(input, other)
    if _is_tensor(input) and isinstance(other, _NUMBER):
        return packet.Tensor_Scalar(input, other)
    if isinstance(input, _NUMBER) and _is_tensor(other):
        return packet.Scalar_Tensor(input, other)
    raise _no_overload(name, (input, other), _SCALAR_TENSOR_FORMS, explain=1)


@public
@writes_out()
def bitwise_left_shift(input, other, *, out=None):
    """``input << other`` on integers: 0 where the shift is negative or at least the dtype's width."""
    return _shift(aten.bitwise_left_shift, "bitwise_left_shift", input, other)


@public
@writes_out()
def bitwise_right_shift(input, other, *, out=None):
    """``input >> other`` on integers (arithmetic for signed dtypes): a negative or too-wide shift
    gives the sign (0 or -1; 0 for uint8)."""
    return _shift(aten.bitwise_right_shift, "bitwise_right_shift", input, other)


@public
@writes_out()
def lerp(input, end, weight, *, out=None):
    if _is_tensor(weight):
        return aten.lerp.Tensor(input, end, weight)
    return aten.lerp.Scalar(input, end, weight)


@public
@writes_out()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return aten.addcmul.default(input, tensor1, tensor2, value=value) if value != 1 else aten.addcmul.default(input, tensor1, tensor2)


@public
@writes_out()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    return aten.addcdiv.default(input, tensor1, tensor2, value=value) if value != 1 else aten.addcdiv.default(input, tensor1, tensor2)


@public
@writes_out("same")
def clamp(input, min=None, max=None, *, out=None):
    """Limit values to [min, max]; NaN stays NaN."""
    if _is_tensor(min) or _is_tensor(max):
        return aten.clamp.Tensor(input, min, max)
    if max is None:
        return aten.clamp.default(input, min)
    return aten.clamp.default(input, min, max)


clip = clamp


@public
def clamp_min(input, min):
    return aten.clamp_min.default(input, min)


@public
def clamp_max(input, max):
    return aten.clamp_max.default(input, max)


@public
@writes_out("where")
def where(condition, input=None, other=None, *, out=None):
    """Pick from ``input`` where ``condition`` holds, else from ``other``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    from minitorch_nn._functions.factories import scalar_tensor

    # PyTorch turns Python-number branches into 0-d tensors of the promoted dtype first.
    if not _is_tensor(input) or not _is_tensor(other):
        from minitorch_nn.backends.common import result_type

        d = result_type(input, other)
        ref = input if _is_tensor(input) else other if _is_tensor(other) else condition
        if not _is_tensor(input):
            input = scalar_tensor(input, dtype=d, device=ref.device)
        if not _is_tensor(other):
            other = scalar_tensor(other, dtype=d, device=ref.device)
    return aten.where.self(condition, input, other)


@public
@writes_out("nonzero")
def nonzero(input, *, out=None, as_tuple=False):
    if as_tuple and input.dim() == 0:
        input = aten.unsqueeze.default(input, 0)  # PyTorch answers a 0-d input as a 1-element vector here
    idx = aten.nonzero.default(input)
    if as_tuple:
        return tuple(idx[:, i] for i in range(idx.shape[1]))
    return idx


def _make_unary(op_name, doc):
    op = getattr(aten, op_name).default

    def fn(input):
        return op(input)

    fn.__name__ = fn.__qualname__ = op_name
    fn.__doc__ = doc
    return public(writes_out(_UNARY_OUT.get(op_name, "safe"))(fn))


# the ``out=`` dtype rule of each unary function (``_out.CAST``); "safe" for the rest (the float
# functions, whose integer inputs give floats); None: PyTorch's function takes no ``out``
_UNARY_OUT = {"abs": "same", "sign": "same", "floor": "same", "ceil": "same", "trunc": "same", "frac": "same",
              "bitwise_not": "same", "relu": None, "isnan": None, "isinf": None, "isfinite": None, "silu": None}


_UNARY_DOCS = {
    "abs": "Absolute value.", "exp": "e to the power of each element.", "exp2": "2 ** x.",
    "expm1": "exp(x) - 1, accurate near 0.", "log": "Natural logarithm.", "log2": "Base-2 logarithm.",
    "log10": "Base-10 logarithm.", "log1p": "log(1 + x), accurate near 0.", "sqrt": "Square root.",
    "rsqrt": "1 / sqrt(x).", "sin": "Sine.", "cos": "Cosine.", "tan": "Tangent.", "asin": "Arcsine.",
    "acos": "Arccosine.", "atan": "Arctangent.", "sinh": "Hyperbolic sine.", "cosh": "Hyperbolic cosine.",
    "tanh": "Hyperbolic tangent.", "sigmoid": "1 / (1 + exp(-x)).", "erf": "The error function.",
    "erfc": "1 - erf(x).", "erfinv": "Inverse of erf.", "reciprocal": "1 / x.", "sign": "-1, 0 or 1.",
    "floor": "Round down.", "ceil": "Round up.", "trunc": "Round towards zero.", "frac": "x - trunc(x).",
    "relu": "max(x, 0).", "logical_not": "Elementwise not, as bool.", "bitwise_not": "Bitwise not.",
    "isnan": "True where NaN.", "isinf": "True where +-inf.", "isfinite": "True where finite.",
    "silu": "x * sigmoid(x).",
}
for _name, _doc in _UNARY_DOCS.items():
    globals()[_name] = _make_unary(_name, _doc)

absolute = globals()["abs"]
arcsin, arccos, arctan = globals()["asin"], globals()["acos"], globals()["atan"]
fix = globals()["trunc"]


@public
@writes_out("same")
def round(input, *, decimals=0, out=None):
    if decimals:
        return aten.round.decimals(input, decimals=decimals)
    return aten.round.default(input)


@public
@writes_out("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return aten.nan_to_num.default(input, nan, posinf, neginf)


def _make_compare(name):
    packet = getattr(aten, name)

    def fn(input, other):
        if not _is_tensor(input):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        if _is_tensor(other):
            return packet.Tensor(input, other)
        return packet.Scalar(input, _check_operand(other, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` comparison, as a bool tensor."
    return public(writes_out()(fn))


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    globals()[_name] = _make_compare(_name)
greater, greater_equal, less, less_equal = globals()["gt"], globals()["ge"], globals()["lt"], globals()["le"]
not_equal = globals()["ne"]


@public
def equal(input, other):
    """True when both tensors have the same size and elements."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(aten.all.default(aten.eq.Tensor(input, other)).item())


@public
@writes_out()
def logical_and(input, other, *, out=None):
    return aten.logical_and.default(_tensor_only(input, "logical_and", "input", 1), _tensor_only(other, "logical_and"))


@public
@writes_out()
def logical_or(input, other, *, out=None):
    return aten.logical_or.default(_tensor_only(input, "logical_or", "input", 1), _tensor_only(other, "logical_or"))


@public
@writes_out()
def logical_xor(input, other, *, out=None):
    return aten.logical_xor.default(_tensor_only(input, "logical_xor", "input", 1), _tensor_only(other, "logical_xor"))


def _bitwise(packet, name, input, other):
    # ``x & y`` is the Tensor overload, ``x & 2`` Scalar, ``2 & x`` Scalar_Tensor (as PyTorch shows them)
    input, other = _scalar_arg(input), _scalar_arg(other)
    if _is_tensor(input):
        if _is_tensor(other):
            return packet.Tensor(input, other)
        if isinstance(other, _NUMBER):
            return packet.Scalar(input, other)
    elif isinstance(input, _NUMBER) and _is_tensor(other):
        return packet.Scalar_Tensor(input, other)
    raise _no_overload(name, (input, other), _SCALAR_TENSOR_FORMS, explain=1)


@public
@writes_out()
def bitwise_and(input, other, *, out=None):
    return _bitwise(aten.bitwise_and, "bitwise_and", input, other)


@public
@writes_out()
def bitwise_or(input, other, *, out=None):
    return _bitwise(aten.bitwise_or, "bitwise_or", input, other)


@public
@writes_out()
def bitwise_xor(input, other, *, out=None):
    return _bitwise(aten.bitwise_xor, "bitwise_xor", input, other)


@public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if isinstance(other, TensorBase) and input.dtype is not other.dtype:
        from minitorch_nn.backends.common import type_name

        raise RuntimeError(f"{type_name(input.dtype)} did not match {type_name(other.dtype)}")  # as PyTorch
    diff = abs(input - other)
    close = le(diff, atol + rtol * abs(other))  # noqa: F821  (defined by the loop above)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))  # noqa: F821
    return logical_or(close, eq(input, other))  # noqa: F821


@public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(aten.all.default(isclose(input, other, rtol, atol, equal_nan)).item())

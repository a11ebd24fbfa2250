"""Turning raw Mersenne-Twister words into samples, exactly like PyTorch's CPU kernels.

Mirrors, in PyTorch 2.13:

* ``aten/src/ATen/core/TransformationHelper.h`` and ``DistributionsHelper.h``: how one value of each
  distribution is made from one or two 32-bit words;
* ``aten/src/ATen/native/cpu/DistributionTemplates.h`` / ``DistributionKernels.cpp``: which of those
  recipes each kernel uses, in which element order, and the size-dependent fast paths;
* ``aten/src/ATen/native/TensorFactories.cpp`` (``randperm_cpu``).

PyTorch draws one element at a time in a C++ loop; here every recipe is written for a whole array at
once with numpy (draw all the words, then transform them), which gives the same numbers because each
element only depends on its own words. The only inherently sequential pieces are the shuffle in
``randperm`` and the cached second Box-Muller value of the small ``normal_`` path.

The recipes, in short
---------------------
* uniform: keep the low 24 bits of one word (float32, and also float16/bfloat16, which PyTorch
  computes in float32 and rounds once) or 53 bits of a 64-bit pair (float64), scale by
  ``2**-digits``, then ``x * (to - from) + from`` with a fused multiply-add (see ``fpmath``). A value
  that rounds up to ``to`` is replaced by ``from``, which keeps the range half-open.
* normal, contiguous with >= 16 elements: fill with uniforms first, then Box-Muller on blocks of 16
  (first 8 values give the radii, last 8 the angles); a size that is not a multiple of 16 draws 16
  *fresh* uniforms for the last 16 slots and transforms those again. float32, float16 and bfloat16
  use the AVX2 Cephes functions in float32 (``avx2_math``; the narrow types skip drawing the leftover
  uniforms that the redone tail overwrites); float64 uses libm in double precision.
* normal, otherwise (fewer than 16 elements, or a non-contiguous target): the textbook double
  precision Box-Muller, one pair of 53-bit uniforms per two values; the second value is cached *in
  the generator* and handed out first by the next small normal draw.
* randint / random_(from, to): ``(word % range) + from``, with a 64-bit pair once the range reaches
  ``2**28`` and one 32-bit word below; for floating dtypes ``from``/``to`` are first nudged so that
  they survive rounding to the dtype (ATen's ``update_from``/``update_to``).
* random_(): ``word % (max + 1)`` for integers, ``% (2**digits + 1)`` for floating types.
* randperm: a forward Fisher-Yates swap with ``word % (n - i)`` for n below 214748364 (2**32 / 20),
  the "inside-out"
  variant with 64-bit draws above.
* bernoulli: ``uniform < p``; a double uniform (64-bit pair) for a Python-float ``p`` or a float64
  ``p`` tensor, a float32 uniform (one word) for float32/float16/bfloat16 ``p`` tensors.
* exponential: ``(-1/lambda) * log1p(-u)`` with a double uniform.

Where we differ from PyTorch
----------------------------
* ``bernoulli_(p)`` with a scalar ``p`` on an *Intel* CPU: PyTorch's MKL build then seeds MKL's
  MCG31 generator from one word and samples with it. We always follow the portable path (which is
  what PyTorch runs on AMD and other CPUs), so on Intel machines the values differ from PyTorch's.
* libm: float64 (and small-size) normal values come from the platform libm through numpy, as
  PyTorch's come from glibc; ``_libm_ok`` checks once that numpy agrees with libm and otherwise falls
  back to calling ``math`` per element (slower but identical).
"""

from __future__ import annotations

import math

import numpy as np

from minitorch_nn._warnings import warn_user

from .avx2_math import log_ps, sincos_ps
from .fpmath import fma_f32, fma_f64

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TWO_PI_F32 = np.float32(2.0 * math.pi)
_TWO_PI = 2.0 * math.pi

# significant bits of each floating type (std::numeric_limits<T>::digits)
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
# the PyTorch names used in error messages
_TORCH_NAME = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _fmt(x) -> str:
    """Format a number the way C++ ``operator<<`` does in PyTorch's messages (``%g``)."""
    return f"{x:g}"


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


_NAMES: dict = {}


def _name(dt: np.dtype) -> str:
    """``dt.name``, remembered: numpy computes the name in Python on every access (about 1.5 us),
    and each sampler asks several times, whatever the number of values drawn."""
    name = _NAMES.get(dt)
    if name is None:
        name = _NAMES[dt] = dt.name
    return name


def _is_float(dt: np.dtype) -> bool:
    return _name(dt) in _DIGITS


# (from, to) pairs whose cast cannot overflow, so need no np.errstate (which costs about 1.5 us)
_SAFE_CASTS = {(_F32, _F32), (_F64, _F64), (_F32, _F64)}


def _to_dtype(values: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Cast float32/float64/int64 results the way C++ ``static_cast<scalar_t>`` does.

    c10's Half and BFloat16 are built from a float, so doubles and integers go through float32
    first (two roundings, as in PyTorch; numpy would round a double to half only once).
    """
    if (values.dtype, dt) in _SAFE_CASTS:
        return values.astype(dt)
    if _name(dt) in ("float16", "bfloat16") and values.dtype != _F32:
        values = values.astype(np.float32)
    if dt == np.bool_:
        return values != 0
    with np.errstate(over="ignore", invalid="ignore"):  # C++ casts overflow silently (to inf/wrap)
        return values.astype(dt)


# --------------------------------------------------------------------------------------- libm
_LIBM_CHECKED = None


def _libm_ok() -> bool:
    """True when numpy's float64 log/log1p/sin/cos give libm's exact bits on this machine.

    PyTorch calls glibc for these; numpy calls it too on most builds, but may use its own SIMD
    versions on some CPUs. Checked once on a fixed sample.
    """
    global _LIBM_CHECKED
    if _LIBM_CHECKED is None:
        x = np.random.Generator(np.random.PCG64(12345)).random(2048)
        t = x * _TWO_PI
        ok = (
            np.array_equal(np.log(x), [math.log(v) for v in x.tolist()])
            and np.array_equal(np.log1p(-x), [math.log1p(-v) for v in x.tolist()])
            and np.array_equal(np.sin(t), [math.sin(v) for v in t.tolist()])
            and np.array_equal(np.cos(t), [math.cos(v) for v in t.tolist()])
        )
        _LIBM_CHECKED = bool(ok)
    return _LIBM_CHECKED


def _libm(name: str, x: np.ndarray) -> np.ndarray:
    if len(x) > 64 and _libm_ok():
        return getattr(np, name)(x)
    f = getattr(math, name)
    return np.array([f(v) for v in x.tolist()], dtype=np.float64)


# ------------------------------------------------------------------------------------ uniform
_LOW_53_BITS = np.uint64((1 << 53) - 1)
_LOW_24_BITS = np.uint32((1 << 24) - 1)
_TWO_TO_MINUS_24 = np.float32(2.0**-24)


def _unit_uniform(eng, n: int, dt: np.dtype) -> np.ndarray:
    """n values k * 2**-digits in [0, 1): 53 bits (float64) for float64, 24 bits (float32) otherwise.

    float16/bfloat16 draw the float32 way: PyTorch computes them in float and rounds at the end.
    """
    if dt == _F64:
        x = (eng.random64(n) & _LOW_53_BITS).astype(np.float64)
        x *= 2.0**-53
        return x
    x = (eng.random(n) & _LOW_24_BITS).astype(np.float32)
    x *= _TWO_TO_MINUS_24
    return x


def _check_bound(x: float, dt: np.dtype, what: str) -> None:
    """PyTorch refuses a bound outside the dtype's finite range (so also inf and nan)."""
    name = _name(dt)
    if not -_FMAX[name] <= x <= _FMAX[name]:
        raise RuntimeError(f"{what} is out of bounds for {_CPP_NAME[name]}")


_F32_MAX = float(np.finfo(np.float32).max)
_FLOAT_MAX = {"float32": _F32_MAX, "float64": float(np.finfo(np.float64).max)}


def _scalar_as(x: float, dt: np.dtype):
    """The Python float ``x`` cast to ``dt`` as one numpy scalar (``static_cast<scalar_t>(x)``)."""
    if dt == _F64:
        return np.float64(x)
    if dt == _F32 and not abs(x) > _F32_MAX:  # in range (or nan): no overflow to silence
        return np.float32(x)
    return _to_dtype(np.array([x], dtype=np.float64), dt)[0]


def uniform(eng, shape, dt: np.dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    _check_bound(low, dt, "from")  # PyTorch's order: both bounds, then their order, then the span
    _check_bound(high, dt, "to")
    if low > high:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_fmt(low)} > to={_fmt(high)}"
        )
    name = _name(dt)
    if name in _FLOAT_MAX and high - low > _FLOAT_MAX[name]:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_TORCH_NAME[name]}>::max(), but found "
            f"to={_fmt(high)} and from={_fmt(low)} which result in to-from to exceed the limit"
        )
    x = _unit_uniform(eng, _numel(shape), dt)
    if dt == _F64:
        frm, to = float(low), float(high)
        out = x if (frm == 0.0 and to == 1.0) else fma_f64(x, to - frm, frm)
    else:
        frm, to = np.float32(low), np.float32(high)
        out = x if (frm == 0.0 and to == 1.0) else fma_f32(x, to - frm, frm)
    if out.dtype != dt:
        out = _to_dtype(out, dt)
    # Rounding can land exactly on `to`; PyTorch keeps the range half-open by returning `from`.
    to_t = _scalar_as(high, dt)
    from_t = _scalar_as(low, dt)
    out[out >= to_t] = from_t  # `out` is a fresh array: safe to edit in place
    return out.reshape(shape)


# ------------------------------------------------------------------------------------- normal
_CHUNK = 32768  # elements per pass: keeps the many temporaries of the float32 path in cache


def _box_muller_blocks_f32(u: np.ndarray, mean, std) -> np.ndarray:
    """``normal_fill_16_AVX2`` over consecutive blocks of 16 float32 uniforms."""
    if len(u) > _CHUNK:
        return np.concatenate(
            [_box_muller_blocks_f32(u[i : i + _CHUNK], mean, std) for i in range(0, len(u), _CHUNK)]
        )
    u = u.reshape(-1, 16)
    u1 = np.float32(1.0) - u[:, :8]  # [0, 1) -> (0, 1] so the log is finite
    u2 = u[:, 8:]
    radius = np.sqrt(np.float32(-2.0) * log_ps(u1))
    sin_t, cos_t = sincos_ps(_TWO_PI_F32 * u2)
    first = radius * cos_t
    second = radius * sin_t
    if std == 1:  # fma(v, 1, mean) is one rounded addition; it also turns -0.0 into +0.0
        first, second = first + mean, second + mean
    else:
        first, second = fma_f32(first, std, mean), fma_f32(second, std, mean)
    return np.concatenate([first, second], axis=1).ravel()


def _box_muller_blocks_f64(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16<double>`` (libm in double precision)."""
    u = u.reshape(-1, 16)
    u1 = 1.0 - u[:, :8]
    u2 = u[:, 8:]
    radius = np.sqrt(-2.0 * _libm("log", u1.ravel())).reshape(u1.shape)
    theta = (_TWO_PI * u2).ravel()
    c = _libm("cos", theta).reshape(u1.shape)
    s = _libm("sin", theta).reshape(u1.shape)
    first, second = radius * c, radius * s
    if std == 1.0:  # see _box_muller_blocks_f32
        first, second = first + mean, second + mean
    else:
        first, second = fma_f64(first, std, mean), fma_f64(second, std, mean)
    return np.concatenate([first, second], axis=1).ravel()


def _normal_fill(eng, n: int, dt: np.dtype, mean: float, std: float) -> np.ndarray:
    """The >= 16 element contiguous path."""
    if dt == _F64:
        u = _unit_uniform(eng, n, dt)
        # the last, partial block is redone with 16 fresh uniforms drawn after all the others
        tail = _unit_uniform(eng, 16, dt) if n % 16 else None
        blocks, m, s = _box_muller_blocks_f64, float(mean), float(std)
    else:
        if dt == _F32:
            u = _unit_uniform(eng, n, dt)
        else:
            # float16/bfloat16 go through a float32 buffer and only draw the whole blocks before
            # the redone tail (so n rounded up to 16 words in all, where float32 draws n + 16)
            u = _unit_uniform(eng, n - n % 16, dt)
        tail = _unit_uniform(eng, 16, dt) if n % 16 else None
        blocks, m, s = _box_muller_blocks_f32, np.float32(mean), np.float32(std)
    out = np.empty(n, dtype=np.float64 if dt == _F64 else np.float32)
    k = n - n % 16
    if k:
        out[:k] = blocks(u[:k], m, s)
    if tail is not None:
        out[n - 16 :] = blocks(tail, m, s)
    return out


def _normal_scalar(gen, n: int, mean: float, std: float) -> np.ndarray:
    """``at::normal_distribution<double>`` called n times, sharing the generator's cache."""
    out = np.empty(n, dtype=np.float64)
    i = 0
    if n and gen._next_double_normal is not None:
        out[0] = gen._next_double_normal
        gen._next_double_normal = None
        i = 1
    rest = n - i
    if rest:
        pairs = (rest + 1) // 2
        u = _unit_uniform(gen._engine, 2 * pairs, _F64)
        u1, u2 = u[0::2], u[1::2]  # u1 (the angle) is drawn first
        r = np.sqrt(-2.0 * _libm("log1p", -u2))
        theta = _TWO_PI * u1
        vals = np.empty(2 * pairs, dtype=np.float64)
        vals[0::2] = r * _libm("cos", theta)
        vals[1::2] = r * _libm("sin", theta)
        out[i:] = vals[:rest]
        if rest % 2:
            gen._next_double_normal = float(vals[-1])  # the unused sine value waits for next time
    # val * std + mean, fused; with std == 1 a plain addition (which also maps -0.0 to +0.0)
    return out + float(mean) if std == 1.0 else fma_f64(out, float(std), float(mean))


def normal(
    gen, shape, dt: np.dtype, mean: float = 0.0, std: float = 1.0, contiguous: bool = True
) -> np.ndarray:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    n = _numel(shape)
    if n >= 16 and contiguous:
        out = _normal_fill(gen._engine, n, dt, mean, std)
    else:
        out = _normal_scalar(gen, n, mean, std)
    return _to_dtype(out, dt).reshape(shape)


# ----------------------------------------------------------------------------------- integers
# C++ type names PyTorch prints in randint's bounds messages
_CPP_NAME = {
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}
# PyTorch 2.13 switches to a 64-bit pair per value once the range reaches 2**28, for every dtype
# (measured against the wheel: at that size a 32-bit word's modulo bias would reach 1/16). Older
# releases switched only from 2**32, and only for int64/double/float/bfloat16.
_WIDE_RANGE = 1 << 28


def _as_float_int(x: int, dt: np.dtype) -> int:
    """``static_cast<int64_t>(static_cast<scalar_t>(x))`` for a floating dtype."""
    f = float(_to_dtype(np.array([x], dtype=np.int64), dt)[0])
    if not -(2.0**63) <= f < 2.0**63:
        # out of range: undefined in C++, and x86's cvttsd2si answers INT64_MIN, which PyTorch uses
        return -(1 << 63)
    return int(f)


def _update_from(frm: int, dt: np.dtype) -> int:
    """Raise `from` so that it survives rounding to the float dtype (``update_from`` in ATen)."""
    from_plus_1 = _as_float_int(frm + 1, dt)
    if from_plus_1 < frm:
        nbits = abs(frm + 1).bit_length() - 1
        frm = from_plus_1 + (1 << (nbits - _DIGITS[_name(dt)] + 1))
    return frm


def _update_to(to: int, dt: np.dtype) -> int:
    """Lower `to` so that `to - 1` survives rounding to the float dtype (``update_to`` in ATen)."""
    to_minus_1 = _as_float_int(to - 1, dt)
    if to_minus_1 >= to:
        nbits = abs(to - 1).bit_length() - 1
        to = to_minus_1 - (1 << (nbits - _DIGITS[_name(dt)] + 1))
    return to


def _check_int_bounds(frm: int, to_inc: int, dt: np.dtype) -> None:
    """``check_from_to_in_range``: errors outside the dtype, warnings past exact float integers."""
    name = _CPP_NAME.get(_name(dt), _name(dt))
    if _is_float(dt):
        lo, hi = -_FMAX[_name(dt)], _FMAX[_name(dt)]
    elif dt == np.bool_:
        lo, hi = 0, 1
    else:
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    for var, what in ((frm, "from"), (to_inc, "to - 1")):
        if not lo <= var <= hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if _is_float(dt):
        d = _DIGITS[_name(dt)]
        for var, what in ((frm, "from"), (to_inc, "to - 1")):
            if var < -(1 << d) or var > (1 << d):
                warn_user(
                    f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations {name} can "
                    "support discrete uniform distribution only within this range. This warning will become "
                    "an error in version 1.7 release, please fix the code in advance",
                    UserWarning,
                )


_FMAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}


def randint(eng, shape, dt: np.dtype, low: int, high) -> np.ndarray:
    """``random_(from, to)``: ``(word % range) + from``.

    ``high=None`` is PyTorch's ``to=None``: up to the largest value of the dtype (``2**digits`` for
    floating types), or every int64 value when ``low == -2**63``; ``high=2**63`` means the same.
    """
    low = int(low)
    if low == -(1 << 63) and (high is None or int(high) == 1 << 63):  # every int64 value
        return random_full_range(eng, shape, dt)
    if high is None:
        return _randint_to_max(eng, shape, dt, low)
    high = int(high)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if _is_float(dt):
        low, high = _update_from(low, dt), _update_to(high, dt)
        if low >= high:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                f"from={low} >= to={high}"
            )
    _check_int_bounds(low, high - 1, dt)
    n = _numel(shape)
    span = high - low
    w = eng.random64(n) if span >= _WIDE_RANGE else eng.random(n).astype(np.uint64)
    # (word % range) + from, wrapping in 64 bits like the C++ (uint64 + int64)
    v = (w % np.uint64(span)) + np.uint64(low & 0xFFFFFFFFFFFFFFFF)
    return _to_dtype(v.view(np.int64), dt).reshape(shape)


def _randint_to_max(eng, shape, dt: np.dtype, low: int) -> np.ndarray:
    """``random_(from, None)`` with ``from > -2**63``: the inclusive range [from, max of dtype]."""
    if _is_float(dt):
        to_inc = min(1 << _DIGITS[_name(dt)], (1 << 63) - 1)
        low = _update_from(low, dt)
        if not low < to_inc:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, "
                f"but got from={low} > to_inc={to_inc}"
            )
    elif dt == np.bool_:
        to_inc = 1
    else:
        to_inc = int(np.iinfo(dt).max)
    _check_int_bounds(low, to_inc, dt)
    n = _numel(shape)
    span = to_inc - low + 1
    w = eng.random64(n) if span >= _WIDE_RANGE else eng.random(n).astype(np.uint64)
    v = (w % np.uint64(span)) + np.uint64(low & 0xFFFFFFFFFFFFFFFF)
    return _to_dtype(v.view(np.int64), dt).reshape(shape)


def random_full_range(eng, shape, dt: np.dtype) -> np.ndarray:
    """``random_(from=-2**63, to=None)``: every int64 value, one 64-bit pair each."""
    if _name(dt) in ("float16", "bool"):  # not even dispatched for these in ATen
        raise RuntimeError(
            f"\"random_full_64_bits_range_kernel_cpu\" not implemented for '{'Half' if _name(dt) == 'float16' else 'Bool'}'"
        )
    if _name(dt) not in ("int64", "float64", "float32", "bfloat16"):
        raise RuntimeError(
            "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16"
        )
    v = eng.random64(_numel(shape)).view(np.int64)
    return _to_dtype(v, dt).reshape(shape)


def random_(eng, shape, dt: np.dtype) -> np.ndarray:
    """``random_()`` without bounds."""
    n = _numel(shape)
    name = _name(dt)
    if name == "bool":
        return (eng.random(n) & np.uint32(1)).astype(np.bool_).reshape(shape)
    if name in ("int64", "float64"):
        w = eng.random64(n)
    else:
        w = eng.random(n).astype(np.uint64)
    if _is_float(dt):
        v = w % np.uint64((1 << _DIGITS[name]) + 1)
    else:
        v = w % np.uint64(int(np.iinfo(dt).max) + 1)
    return _to_dtype(v.astype(np.int64), dt).reshape(shape)


# ----------------------------------------------------------------------------------- randperm
_RANDPERM_SMALL_LIMIT = 0xFFFFFFFF // 20  # below this PyTorch keeps the 32-bit algorithm


def randperm(eng, n: int, dt: np.dtype) -> np.ndarray:
    n = int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if _is_float(dt):
        limit = (1 << _DIGITS[_name(dt)]) + 1
        if n > limit:
            raise RuntimeError(f"n cannot be greater than {limit} for {_TORCH_NAME[_name(dt)]} type.")
    elif dt != np.bool_ and n > 0 and n - 1 > int(np.iinfo(dt).max):
        raise RuntimeError(f"n is too large for result tensor type: '{_torch_int_name(dt)}'")
    if n < _RANDPERM_SMALL_LIMIT:
        perm = list(range(n))
        if n > 1:
            # forward Fisher-Yates: slot i swaps with slot i + (word % (n - i))
            z = eng.random(n - 1).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)
            targets = (z + np.arange(n - 1, dtype=np.int64)).tolist()
            for i, j in enumerate(
                targets
            ):  # inherently sequential: each swap sees the previous ones
                perm[i], perm[j] = perm[j], perm[i]
    else:
        # "inside-out" Fisher-Yates with 64-bit draws (PyTorch: huge n, where 32-bit % is biased)
        z = (eng.random64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
        perm = [0] * n
        for i, j in enumerate(z):
            perm[i] = perm[j]
            perm[j] = i
    return _to_dtype(np.array(perm, dtype=np.int64), dt)


def _torch_int_name(dt: np.dtype) -> str:
    return {"int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long"}.get(
        _name(dt), _name(dt)
    )


# ---------------------------------------------------------------------------------- bernoulli
def bernoulli(eng, shape, dt: np.dtype, p) -> np.ndarray:
    n = _numel(shape)
    if not isinstance(p, (float, int, np.generic)):  # an array of probabilities
        p = np.asarray(p)
        if p.dtype.kind not in "f" and p.dtype.name != "bfloat16":
            p = p.astype(np.float32)
        if np.any(~((p >= 0) & (p <= 1))):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        pb = np.broadcast_to(p, shape).ravel()
        if p.dtype == _F64:
            u = _unit_uniform(eng, n, _F64)  # bernoulli_distribution<double>
            res = u < pb
        else:
            u = _unit_uniform(eng, n, _F32)  # bernoulli_distribution<float>
            res = u < pb.astype(np.float32)
    else:
        p = float(p)
        if not (0.0 <= p <= 1.0):
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        res = _unit_uniform(eng, n, _F64) < p
    return _to_dtype(res.astype(np.uint8), dt).reshape(shape)


# -------------------------------------------------------------------------------- exponential
def exponential(eng, shape, dt: np.dtype, lambd: float = 1.0) -> np.ndarray:
    lambd = float(lambd)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    u = _unit_uniform(eng, _numel(shape), _F64)
    out = (-1.0 / lambd) * _libm(
        "log1p", -u
    )  # log1p(-u) == log(1 - u) without the rounding of 1 - u
    return _to_dtype(out, dt).reshape(shape)


# ------------------------------------------------------------------------------ compiled twin
def _bind_twins() -> None:
    """Let the compiled twin (``_ext/twins/_random/distributions.pyx``) stand in for ``uniform``,
    ``normal``, ``randperm`` and ``bernoulli`` while the switch ``minitorch_nn.backends.compiled`` is on and each
    of them, with its helpers, is the code the twin was written against (see
    ``backends/compiled.py``'s ``bind``). With the switch off, or without the built extension,
    the functions above are what runs."""
    try:
        from minitorch_nn._twins._random import distributions as twin
    except ImportError:  # pragma: no cover - the extension is not built: only the readable code
        return
    import sys

    from minitorch_nn.backends import compiled

    from . import avx2_math
    from .engine import MT19937Engine

    readables = {"uniform": uniform, "normal": normal, "randperm": randperm, "bernoulli": bernoulli}
    # the module-level names each one reads (helpers and constants), checked by identity at
    # every call: one replaced at run time sends the call to the readable function
    unit = ("_unit_uniform", "_LOW_24_BITS", "_TWO_TO_MINUS_24", "_LOW_53_BITS", "_F32", "_F64")
    helpers = {
        "uniform": ("_check_bound", "_scalar_as", "_to_dtype", "_numel", "fma_f32", "fma_f64", "_FMAX",
                    "_FLOAT_MAX", *unit),
        "normal": ("_normal_fill", "_box_muller_blocks_f32", "_box_muller_blocks_f64", "_libm", "_to_dtype",
                   "_numel", "log_ps", "sincos_ps", "fma_f32", "fma_f64", "_TWO_PI_F32", "_TWO_PI", *unit),
        "randperm": ("_is_float", "_to_dtype", "_RANDPERM_SMALL_LIMIT"),
        "bernoulli": ("_to_dtype", "_numel", "_fmt", *unit),
    }
    twin.setup(readables, globals(), helpers, MT19937Engine)
    engine = (MT19937Engine.random, MT19937Engine.random64)
    module = sys.modules[__name__]
    compiled.bind(module, "uniform", twin.uniform, uniform, mirrors=(uniform, fma_f32, fma_f64, *engine))
    compiled.bind(module, "normal", twin.normal, normal,
                  mirrors=(normal, avx2_math.log_ps, avx2_math.sincos_ps, fma_f32, fma_f64, *engine))
    compiled.bind(module, "randperm", twin.randperm, randperm, mirrors=(randperm, *engine))
    compiled.bind(module, "bernoulli", twin.bernoulli, bernoulli, mirrors=(bernoulli, *engine))


_bind_twins()

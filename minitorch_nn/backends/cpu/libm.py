"""``pow``, ``exp2``, ``erf``, ``exp`` and ``tanh`` as the C library computes them, element by element.

PyTorch computes ``logspace`` and the power in ``ldexp`` with the C library's ``pow``/``exp2``,
which are correctly rounded here. numpy's own versions are too on most machines, but on a CPU
with AVX-512 numpy switches to SIMD routines (Intel's SVML) that can be an ulp away, so the same
call gave machine-dependent results. Going through Python's ``math.pow`` (the C library's)
costs a Python call per element, which is fine for the few values these ops produce.

``erf``, ``exp`` and ``tanh`` serve GELU and its backward, on every element of a tensor: PyTorch's
scalar loop calls ``std::erf``/``std::exp``/``std::tanh``, the C library's ``erff``/``expf``/``tanhf``
for float32 and ``erf``/``exp``/``tanh`` for float64. numpy has no erf (scipy's is another
implementation, an ulp away from the C library's in 10% of float64 elements) and its exp and tanh
are its own SIMD routines, so these run a compiled loop calling the C functions
(``_ext/_unary_kernels.pyx``: ``libm_erf``, ``libm_exp``, ``libm_tanh``; part of the reference, like
numpy's own ufuncs, so it runs with the compiled twins switched off too). Without that extension
they call the C library from Python, one element at a time: ``math`` for float64, and ctypes for
float32.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

try:
    from minitorch_nn._unary_kernels import libm_erf as _compiled_erf
    from minitorch_nn._unary_kernels import libm_exp as _compiled_exp
    from minitorch_nn._unary_kernels import libm_tanh as _compiled_tanh
except ImportError:  # pragma: no cover - an extension built before these functions existed
    _compiled_erf = _compiled_exp = _compiled_tanh = None


def _pow(base: float, exponent: float) -> float:
    # math.pow raises where C's pow returns inf or nan: give C's answers
    try:
        return math.pow(base, exponent)
    except OverflowError:
        odd = exponent == math.floor(exponent) and math.fmod(exponent, 2.0) != 0
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        return math.nan


_pow_ufunc = np.frompyfunc(_pow, 2, 1)


def pow_float64(base, exponents) -> np.ndarray:
    """``base ** exponents`` in float64, correctly rounded (the C library's ``pow``)."""
    return np.asarray(_pow_ufunc(np.float64(base), np.asarray(exponents, dtype=np.float64)), dtype=np.float64)


def exp2(exponents, dtype) -> np.ndarray:
    """``2 ** exponents`` correctly rounded to ``dtype``.

    A float32 (or narrower) result is numpy's float64 ``exp2`` rounded once: even the SIMD routine
    is far closer than half a float32 ulp, so the rounding lands where the C library's does, at
    numpy's speed. A float64 result needs the C library itself, one Python call per element."""
    exponents = np.asarray(exponents)
    if np.dtype(dtype).itemsize < 8:
        return np.exp2(exponents.astype(np.float64)).astype(dtype)
    return pow_float64(2.0, exponents).astype(dtype)


@functools.cache
def _float_function(name):
    """The C library's float32 function ``name`` (``erff``...) as a Python callable."""
    library = ctypes.CDLL(ctypes.util.find_library("m") or None)
    fn = getattr(library, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def _per_element(x, float64_fn, float32_name):
    x = np.asarray(x)
    if x.dtype == np.float64:
        return np.frompyfunc(float64_fn, 1, 1)(x).astype(np.float64)
    if x.dtype == np.float32:
        return np.frompyfunc(_float_function(float32_name), 1, 1)(x).astype(np.float32)
    raise TypeError(f"libm: float32 or float64 values expected, got {x.dtype}")


def _exp_float64(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:   # (C's exp returns inf where math.exp raises)
        return math.inf


def erf(x) -> np.ndarray:
    """``erf`` of every element of a float32 or float64 array, as the C library computes it
    (``erff`` for float32, ``erf`` for float64), in the array's dtype."""
    r = None if _compiled_erf is None else _compiled_erf(x)
    return _per_element(x, math.erf, "erff") if r is None else r


def exp(x) -> np.ndarray:
    """``exp`` of every element of a float32 or float64 array, as the C library computes it
    (``expf`` for float32, ``exp`` for float64), in the array's dtype."""
    r = None if _compiled_exp is None else _compiled_exp(x)
    return _per_element(x, _exp_float64, "expf") if r is None else r


def tanh(x) -> np.ndarray:
    """``tanh`` of every element of a float32 or float64 array, as the C library computes it
    (``tanhf`` for float32, ``tanh`` for float64), in the array's dtype."""
    r = None if _compiled_tanh is None else _compiled_tanh(x)
    return _per_element(x, math.tanh, "tanhf") if r is None else r

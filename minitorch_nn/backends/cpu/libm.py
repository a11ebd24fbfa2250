"""``pow`` and ``exp2`` as the C library computes them, element by element.

PyTorch computes ``logspace`` and the power in ``ldexp`` with the C library's ``pow``/``exp2``,
which are correctly rounded here. numpy's own versions are too on most machines, but on a CPU
with AVX-512 numpy switches to SIMD routines (Intel's SVML) that can be an ulp away, so the same
call gave machine-dependent results. Going through Python's ``math.pow`` (the C library's)
costs a Python call per element, which is fine for the few values these ops produce.
"""

from __future__ import annotations

import math

import numpy as np


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

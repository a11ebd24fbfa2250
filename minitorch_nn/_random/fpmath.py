"""Floating-point helpers that reproduce what PyTorch's compiled CPU kernels compute, bit for bit.

Why this file exists
--------------------
PyTorch's Linux wheels build the CPU kernels once per instruction set (``CPU_CAPABILITY``
DEFAULT/AVX2/AVX512) with GCC, which by default *contracts* ``a * b + c`` into one fused
multiply-add (one rounding instead of two). numpy has no FMA ufunc, and rounding twice gives a
different last bit about half the time, so we emulate an exactly rounded FMA:

* ``fma_f32``: the product of two floats is exact in float64, so only the final addition needs
  care: float64 rounding followed by float32 rounding ("double rounding") is only wrong when the
  float64 sum lands exactly on a float32 halfway point, and we repair just those elements.
* ``fma_f64``: Dekker's exact product (Veltkamp splitting) and the "round to odd" summation of
  Boldo & Melquiond (2008), which yields a correctly rounded ``a * b + c``.

Mirrors: nothing in PyTorch's Python API; it models the machine code of ``cpu_serial_kernel``
loops and of ``avx_mathfun.h`` as GCC compiles them. See ``avx2_math.py``.
"""

from __future__ import annotations

import numpy as np

_F64_TIE_MASK = np.uint64((1 << 29) - 1)  # float64 bits dropped when rounding to float32
_F64_TIE_BITS = np.uint64(1 << 28)  # ... and the pattern of an exact halfway point


def _two_sum(a, b):
    """s, e with s = fl(a + b) and s + e == a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def fma_f32(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` with a single rounding (float32 arrays or scalars; result float32)."""
    s = np.multiply(a, b, dtype=np.float64)  # exact: 24 + 24 significant bits fit in 53
    s += c
    if s.ndim == 0:
        s = s.reshape(1)
    ties = (s.view(np.uint64) & _F64_TIE_MASK) == _F64_TIE_BITS
    if np.count_nonzero(ties):  # about one element in 2**29: fix them one by one
        for i in np.flatnonzero(ties).tolist():
            ai = np.float64(np.broadcast_to(a, s.shape).flat[i])
            bi = np.float64(np.broadcast_to(b, s.shape).flat[i])
            ci = np.float64(np.broadcast_to(c, s.shape).flat[i])
            _, err = _two_sum(ai * bi, ci)
            if err != 0:  # the true value is above or below the halfway point: step off it
                s.flat[i] = np.nextafter(s.flat[i], np.inf if err > 0 else -np.inf)
    return s.astype(np.float32)


_SPLITTER = 134217729.0  # 2**27 + 1


def _two_prod(a, b):
    """p, e with p = fl(a * b) and p + e == a * b exactly (Dekker, no hardware FMA needed)."""
    p = a * b
    t = _SPLITTER * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLITTER * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def fma_f64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` with a single rounding."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        # round-to-odd of tl + ul: keeps a sticky bit so the final rounding cannot go wrong
        v, err = _two_sum(tl, ul)
        v = np.atleast_1d(v)
        err = np.broadcast_to(err, v.shape)
        fix = (err != 0) & ((v.view(np.uint64) & np.uint64(1)) == 0)
        if fix.any():
            v[fix] = np.nextafter(v[fix], np.where(err[fix] > 0, np.inf, -np.inf))
        z = th + v
        plain = a * b + c
    # non-finite inputs or an overflowing product: the exact algorithm has nothing to add
    out = np.where(np.isfinite(z), z, plain)
    # Dekker's split loses bits once the product falls near the subnormal range; those (rare)
    # elements are done exactly with rationals, which round to nearest-even like the hardware
    tiny = np.atleast_1d((np.abs(uh) < 2.0**-968) & (uh != 0) & np.isfinite(out))
    if tiny.any():
        from fractions import Fraction

        out = np.array(out, dtype=np.float64, ndmin=1)
        shape = out.shape
        ab = np.broadcast_to(a, shape), np.broadcast_to(b, shape), np.broadcast_to(c, shape)
        for i in np.flatnonzero(tiny).tolist():
            ai, bi, ci = (float(x.flat[i]) for x in ab)
            out.flat[i] = float(Fraction(ai) * Fraction(bi) + Fraction(ci))
    return out

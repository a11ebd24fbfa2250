"""float32 ``log`` and ``sincos`` exactly as PyTorch's AVX2 ``normal_`` kernel computes them.

Mirrors ``aten/src/ATen/native/cpu/avx_mathfun.h`` (``log256_ps`` and ``sincos256_ps``, Giovanni
Garberoglio's AVX port of Julien Pommier's ``sse_mathfun``, itself a transcription of the Cephes
``logf``/``sinf``/``cosf``). PyTorch uses them in ``normal_fill_16_AVX2``, the Box-Muller fill for
contiguous float32 tensors with at least 16 elements.

These are *not* correctly rounded functions, so to reproduce PyTorch bit for bit we repeat the
same float32 steps: the same range reduction, the same Cephes polynomials, in the same order. Each
step here is a float32 numpy operation; the steps that GCC fuses into FMA instructions when it
builds the AVX2 kernels (checked against torch 2.13 wheels, see ``tests/oracle``) use
``fpmath.fma_f32``.

Differences from PyTorch: none in the values for the inputs the normal kernel gives (``u`` in
(0, 1]); we do not reproduce the NaN results for ``x <= 0`` because that never happens there.
A PyTorch build without AVX2 (``CPU_CAPABILITY=DEFAULT``) uses libm instead and gives different
last bits; we always follow the AVX2 build, which is what every x86-64 wheel picks on any CPU
made in the last decade.
"""

from __future__ import annotations

import numpy as np

from .fpmath import fma_f32

f32 = np.float32

# Cephes constants, as float32 (the C source writes them as float literals)
_SQRTHF = f32(0.707106781186547524)
_LOG_P = [
    f32(v)
    for v in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
]
_LOG_Q1 = f32(-2.12194440e-4)
_LOG_Q2 = f32(0.693359375)
_MIN_NORM = np.array(0x00800000, dtype=np.int32).view(np.float32)

_FOPI = f32(1.27323954473516)  # 4 / pi
_DP1 = f32(-0.78515625)  # -pi/4 split into three parts of decreasing size ("extended precision
_DP2 = f32(-2.4187564849853515625e-4)  # modular arithmetic"): the first two multiply small
_DP3 = f32(-3.77489497744594108e-8)  # integers exactly, only the last one rounds
_SIN_P = [f32(v) for v in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COS_P = [f32(v) for v in (2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002)]
_HALF = f32(0.5)
_ONE = f32(1.0)


def log_ps(x: np.ndarray) -> np.ndarray:
    """``log256_ps`` for positive float32 input."""
    x = np.maximum(x.astype(np.float32, copy=False), _MIN_NORM)  # flush denormals, as the C does
    bits = x.view(np.uint32)
    # exponent and mantissa: x = m * 2**e with m in [0.5, 1)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(np.float32) + _ONE
    m = ((bits & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | np.uint32(0x3F000000)).view(np.float32)
    # if m < sqrt(1/2): use 2m - 1 and e - 1, so that the polynomial argument stays in [-0.29, 0.41]
    small = m < _SQRTHF
    xr = (m - _ONE) + np.where(small, m, f32(0.0))  # both steps are exact
    e = e - np.where(small, _ONE, f32(0.0))
    z = xr * xr
    y = fma_f32(_LOG_P[0], xr, _LOG_P[1])
    for p in _LOG_P[2:]:
        y = fma_f32(y, xr, p)  # Horner step: GCC emits vfmadd
    y = y * xr
    y = fma_f32(y, z, e * _LOG_Q1)  # y*z + e*q1: the first product is fused, the second not
    y = y - z * _HALF  # z * 0.5 is exact, so fused or not gives the same
    return (xr + y) + e * _LOG_Q2  # e * q2 is exact (small integer times a 9-bit constant)


def sincos_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sincos256_ps`` for float32 input of moderate size (here: 0 <= x < 2*pi)."""
    x = x.astype(np.float32, copy=False)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    # octant j (made even), then x - j*pi/4 in three exact-ish steps
    j = (np.trunc(x * _FOPI).astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sign_cos = ((~(j - 2)) & 4) != 0
    use_sin_poly = (j & 2) == 0
    # y * DP1 and y * DP2 are exact (y <= 8 here; DP1, DP2 have 8 and 12 significant bits), so
    # GCC's FMA and a separate multiply and add round identically; only the DP3 step needs an FMA
    x = x + y * _DP1
    x = x + y * _DP2
    x = fma_f32(y, _DP3, x)
    z = x * x
    # cosine polynomial on the reduced argument
    yc = fma_f32(fma_f32(_COS_P[0], z, _COS_P[1]), z, _COS_P[2])
    yc = yc * z
    yc = fma_f32(yc, z, -(z * _HALF))  # y*z - 0.5*z: the first product is fused
    yc = yc + _ONE
    # sine polynomial
    ys = fma_f32(fma_f32(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2])
    ys = ys * z
    ys = fma_f32(ys, x, x)
    s = np.where(use_sin_poly, ys, yc)
    c = np.where(use_sin_poly, yc, ys)
    s = np.where(sign_sin, -s, s)
    c = np.where(sign_cos, -c, c)
    return s, c

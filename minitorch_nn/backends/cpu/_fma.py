"""Fused multiply-add on numpy arrays: ``x * y + z`` rounded once, as PyTorch's cpu kernels round it.

PyTorch's cpu kernels for ``add``/``sub`` with ``alpha``, ``addcmul`` and ``lerp`` are written as
``a + b * c`` (``aten/src/ATen/native/cpu/BinaryOpsKernel.cpp``, ``PointwiseOpsKernel.cpp``,
``Lerp.h``). Its build compiles them for AVX2 with FMA, and the compiler fuses each such
expression into one multiply-add instruction: the product is not rounded before the sum. numpy
rounds the product first, which differs from PyTorch by one unit in the last place on a few
percent of the elements, enough for an optimizer's trajectory to drift away from PyTorch's.

The shapes the kernels use (checked against PyTorch 2.13 on a million random elements of each
dtype, at sizes that exercise both its vector loop and its scalar tail):

* ``add(a, b, alpha)``  = ``fma(b, alpha, a)``; ``sub`` is ``add`` with ``-alpha``;
* ``addcmul(s, t1, t2, value)`` = ``fma(value * t1, t2, s)`` (``value * t1`` rounded first);
* ``addcdiv(s, t1, t2, value)`` = ``s + (value * t1) / t2`` (a division cannot fuse: no fma);
* ``lerp(s, e, w)`` = ``fma(w, e - s, s)`` when ``|w| < 0.5``, else ``fma(w - 1, e - s, e)``.

bfloat16 and float16 compute in float32 (as PyTorch's kernels do) and round the result once
more: ``addcmul``, ``addcdiv`` and ``lerp`` use the formulas above in float32 and then match PyTorch.
``add``/``sub`` with ``alpha`` do not: PyTorch's vector loop reads alpha in the 16-bit dtype but
its scalar loop (a tensor's last few elements, per thread) in float32, so its result depends on
where an element falls; they keep their unfused float32 formula.

The loop is compiled (``_ext/_fma_kernels.pyx``: C's ``fma``/``fmaf``). Without the extension,
float32 is computed in float64 and rounded once, which equals the fused result except in
vanishingly rare double-rounding cases; float64 then falls back to numpy's two roundings (so it
may differ from PyTorch in the last bit).
"""

from __future__ import annotations

import numpy as np

try:
    from minitorch_nn._fma_kernels import fused_multiply_add as _compiled_fma
except ImportError:  # pragma: no cover - an extension built before this function existed
    _compiled_fma = None

FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _operand(v, dtype, shape, size):
    """``v`` as a C-contiguous array of ``dtype`` holding one value or ``size`` values in ``shape``."""
    v = np.asarray(v, dtype)
    if v.size != size and v.size != 1:
        v = np.broadcast_to(v, shape)
    return np.ascontiguousarray(v)


def _fits(v, shape):
    # an operand the compiled loop reads as it is: the result's shape, or one value
    return type(v) is np.ndarray and (v.shape == shape or (v.size == 1 and v.ndim <= len(shape)))


def fma(x, y, z, out=None):
    """``x * y + z`` with one rounding, broadcast like numpy, in the dtype of ``out`` or else of
    ``z`` (float32 or float64; the operands already have it). ``out`` may be ``z``'s array
    (the in-place ops); it must have the broadcast shape. Returns the result array."""
    if _compiled_fma is not None and type(z) is np.ndarray:
        # The common case first, without the general path's broadcasting: the loop itself
        # declines (None) operands of another dtype or layout.
        target = out if out is not None else np.empty(z.shape, z.dtype)
        shape = target.shape
        if (type(target) is np.ndarray and _fits(x, shape) and _fits(y, shape) and _fits(z, shape)
                and _compiled_fma(x, y, z, target) is not None):
            return target
    dtype = out.dtype if out is not None else np.result_type(z)
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
    if out is not None and out.shape != shape:
        raise ValueError(f"fma: output of shape {out.shape} does not hold the broadcast shape {shape}")
    if _compiled_fma is not None:
        size = 1
        for s in shape:
            size *= s
        target = out if out is not None and out.flags.c_contiguous else np.empty(shape, dtype)
        xa, ya, za = (_operand(v, dtype, shape, size) for v in (x, y, z))
        if _compiled_fma(xa, ya, za, target) is not None:
            if target is not out and out is not None:
                out[...] = target
            return target if out is None else out
    if dtype == np.float32:  # the product of two float32 values is exact in float64
        wide = np.multiply(x, y, dtype=np.float64)
        np.add(wide, z, out=wide, dtype=np.float64)
        r = wide.astype(np.float32)
    else:
        r = np.add(np.multiply(x, y), z)
    if out is None:
        return np.asarray(r, dtype)
    out[...] = r
    return out

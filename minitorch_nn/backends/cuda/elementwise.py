"""Elementwise kernels on the GPU: strided ``map`` (one input) and ``zip`` (two or three inputs).

Mirrors PyTorch's ``TensorIterator`` + ``gpu_kernel`` (``Loops.cuh``) the MiniTorch way: a kernel
gets each operand as its *flat storage* plus ``shape``, ``strides`` and ``offset``, and every
thread computes one output element:

1. ``to_index``: turn the thread's ordinal ``i`` into a multi-index of the output shape;
2. ``broadcast_index``: map that index into each (smaller, broadcast) input shape;
3. ``index_to_position``: multi-index + strides + offset -> position in the flat storage.

Outputs are fresh, and laid out as PyTorch's ``TensorIterator`` lays them out: in the memory order
of the operands (``backends/layout.py``'s :func:`elementwise_strides`, the cpu backend's rule too),
so ``x.t().exp()`` is column-major. The strided kernels write through the output's strides. When
every operand has the output's shape and exactly its dense strides, a second, flat kernel skips the
index arithmetic: element ``i`` of each storage block belongs with element ``i`` of the output's.

The function applied (``a + b``, ``exp(x)``...) is a small Python function compiled as a CUDA
*device function* and baked into its own kernel (``make_map``/``make_zip``), one per function,
cached. Python numbers become 0-d device tensors, so ``x + 1`` is a zip that broadcasts.

Dtypes follow PyTorch (``backends/common.py``): operands are cast to the compute dtype first
(float16/bfloat16 compute in float32), the kernel runs, and the result is cast to the result dtype, keeping its layout.
Under the simulator the device functions run as plain Python, where ``math.log(0.0)`` would raise
instead of returning ``-inf``: the math functions guard their domain edges so that both agree.
"""

from __future__ import annotations

import math

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.backends.common import compute_dtype, result_type
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.layout import elementwise_strides

_cuda = cuda()
MAX_DIMS = 16
# threads per block; the simulator runs each thread as a Python thread, so it gets few
THREADS = 32 if simulator() else 256


def blocks_for(n: int) -> int:
    return max((n + THREADS - 1) // THREADS, 1)


_INTS: dict = {}


def device_ints(values: tuple):
    """``values`` as an int64 device array, cached: a host array would be copied in and back out
    again at every launch, which costs more than a small kernel."""
    arr = _INTS.get(values)
    if arr is None:
        if len(_INTS) > 4096:
            _INTS.clear()
        arr = _INTS[values] = _cuda.to_device(np.array(values, dtype=np.int64).reshape(len(values)))
    return arr


def device_meta(impl):
    """(shape, strides, offset) of a payload as the kernels take them (int64 device arrays)."""
    return device_ints(tuple(impl.sizes)), device_ints(tuple(impl.strides)), impl.offset


# -- index helpers (device functions) -------------------------------------------------------------


@_cuda.jit(device=True)
def to_index(ordinal, shape, out_index):
    """Row-major multi-index of element number ``ordinal`` in ``shape``, written into ``out_index``.

    The last dim varies fastest: in shape ``(2, 3, 4)`` element 7 is at ``(0, 1, 3)``. Works for
    any number of dims (``len(shape)``), ``out_index`` has at least that many slots."""
    # BEGIN SOLUTION cuda-index
    for d in range(len(shape) - 1, -1, -1):
        out_index[d] = ordinal % shape[d]
        ordinal = ordinal // shape[d]
    # END SOLUTION


@_cuda.jit(device=True)
def index_to_position(index, strides, offset):
    """Position in flat storage of multi-index ``index``."""
    pos = offset
    for d in range(len(strides)):
        pos += index[d] * strides[d]
    return pos


@_cuda.jit(device=True)
def broadcast_index(big_index, big_shape, shape, out_index):
    """The index into ``shape`` that a broadcast to ``big_shape`` reads at ``big_index``.

    Dimensions are aligned on the right (``shape`` may have fewer dims than ``big_shape``); a
    dimension of size 1 is read at 0, any other at the big index's value. Writes ``len(shape)``
    entries of ``out_index``.
    """
    # BEGIN SOLUTION cuda-index
    shift = len(big_shape) - len(shape)
    for d in range(len(shape)):
        out_index[d] = 0 if shape[d] == 1 else big_index[d + shift]
    # END SOLUTION


# -- kernel factories ------------------------------------------------------------------------------

_KERNELS: dict = {}


def make_map(fn):
    """Kernels applying ``fn(x)`` elementwise: (strided, flat)."""
    key = ("map", fn)
    if key in _KERNELS:
        return _KERNELS[key]
    f = _cuda.jit(device=True)(fn)

    @_cuda.jit
    def strided(out, out_shape, out_strides, n, a, a_shape, a_strides, a_offset):
        i = _cuda.grid(1)
        if i < n:
            out_index = _cuda.local.array(MAX_DIMS, np.int64)
            a_index = _cuda.local.array(MAX_DIMS, np.int64)
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            out[index_to_position(out_index, out_strides, 0)] = f(a[index_to_position(a_index, a_strides, a_offset)])

    @_cuda.jit
    def flat(out, n, a, a_offset):
        i = _cuda.grid(1)
        if i < n:
            out[i] = f(a[a_offset + i])

    _KERNELS[key] = (strided, flat)
    return strided, flat


def make_zip(fn):
    """Kernels applying ``fn(x, y)`` elementwise with broadcasting: (strided, flat)."""
    key = ("zip", fn)
    if key in _KERNELS:
        return _KERNELS[key]
    f = _cuda.jit(device=True)(fn)

    @_cuda.jit
    def strided(out, out_shape, out_strides, n, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset):
        i = _cuda.grid(1)
        if i < n:
            out_index = _cuda.local.array(MAX_DIMS, np.int64)
            a_index = _cuda.local.array(MAX_DIMS, np.int64)
            b_index = _cuda.local.array(MAX_DIMS, np.int64)
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            out[index_to_position(out_index, out_strides, 0)] = f(
                a[index_to_position(a_index, a_strides, a_offset)],
                b[index_to_position(b_index, b_strides, b_offset)],
            )

    @_cuda.jit
    def flat(out, n, a, a_offset, b, b_offset):
        i = _cuda.grid(1)
        if i < n:
            out[i] = f(a[a_offset + i], b[b_offset + i])

    _KERNELS[key] = (strided, flat)
    return strided, flat


def make_zip3(fn):
    """The strided kernel applying ``fn(x, y, z)`` (``where``, ``lerp``...) with broadcasting."""
    key = ("zip3", fn)
    if key in _KERNELS:
        return _KERNELS[key]
    f = _cuda.jit(device=True)(fn)

    @_cuda.jit
    def strided(out, out_shape, out_strides, n, a, a_shape, a_strides, a_offset, b, b_shape, b_strides,
                b_offset, c, c_shape, c_strides, c_offset):
        i = _cuda.grid(1)
        if i < n:
            out_index = _cuda.local.array(MAX_DIMS, np.int64)
            idx = _cuda.local.array(MAX_DIMS, np.int64)
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, idx)
            x = a[index_to_position(idx, a_strides, a_offset)]
            broadcast_index(out_index, out_shape, b_shape, idx)
            y = b[index_to_position(idx, b_strides, b_offset)]
            broadcast_index(out_index, out_shape, c_shape, idx)
            z = c[index_to_position(idx, c_strides, c_offset)]
            out[index_to_position(out_index, out_strides, 0)] = f(x, y, z)

    _KERNELS[key] = strided
    return strided


# -- launching ---------------------------------------------------------------------------------------


def scalar_operand(value, dtype) -> TensorBase:
    """A Python number as a 0-d cuda tensor of ``dtype`` (so that it broadcasts in a zip)."""
    return storage.from_host(np.asarray(value).astype(dtype.numpy_dtype), dtype)


def _as_compute(x, cdt):
    """Operand ``x`` as a cuda tensor whose dtype is ``cdt`` (cast on the GPU if needed)."""
    if not isinstance(x, TensorBase):
        return scalar_operand(x, cdt)
    if x._impl.device.type == "cpu":  # a 0-d cpu tensor is a scalar operand, as in PyTorch
        from minitorch_nn.backends.cuda.copy import to_device

        x = to_device(x, None, x._impl.dtype)
    if x._impl.dtype is cdt:
        return x
    from minitorch_nn.backends.cuda.copy import cast_contiguous

    return cast_contiguous(x, cdt)


def launch(fn, operands, out_dtype, compute, cast=True, *, layout=None, common_dtype=None):
    """Run ``fn`` over ``operands`` (cuda tensors / numbers) in dtype ``compute``; result ``out_dtype``.

    The result is laid out by :func:`elementwise_strides` over ``layout`` (the op's operands as
    PyTorch's TensorIterator sees them, numbers included; default: the tensors among ``operands``,
    since a number argument is usually a parameter, as ``clamp``'s bounds) in ``common_dtype``
    (default ``out_dtype``). The kernel writes the compute dtype (or bool); a last cast, keeping
    the layout, gives ``out_dtype`` (float32 -> float16, for instance).
    """
    if layout is None:
        layout = [x for x in operands if isinstance(x, TensorBase)]
    ops = [_as_compute(x, compute) for x in operands] if cast else list(operands)
    shape = broadcast_shapes(*[tuple(o.shape) for o in ops])
    strides = elementwise_strides(shape, layout, out_dtype if common_dtype is None else common_dtype)
    kernel_dtype = dt.bool if out_dtype is dt.bool else compute
    out = storage.empty(shape, kernel_dtype, strides)
    n = out.numel()
    if n:
        impls = [o._impl for o in ops]
        o = out._impl.storage
        out_strides = out._impl.strides
        grid = (blocks_for(n), THREADS)
        # (the output's strides are dense, so an operand with the same sizes and strides is too)
        flat_ok = all(tuple(i.sizes) == shape and i.strides == out_strides for i in impls)
        dev_shape, dev_strides = device_ints(tuple(shape)), device_ints(tuple(out_strides))
        if len(ops) == 1:
            strided, flat = make_map(fn)
            a = impls[0]
            if flat_ok:
                flat[grid](o, n, a.storage, a.offset)
            else:
                strided[grid](o, dev_shape, dev_strides, n, a.storage, *device_meta(a))
        elif len(ops) == 2:
            strided, flat = make_zip(fn)
            a, b = impls
            if flat_ok:
                flat[grid](o, n, a.storage, a.offset, b.storage, b.offset)
            else:
                strided[grid](o, dev_shape, dev_strides, n, a.storage, *device_meta(a), b.storage, *device_meta(b))
        else:
            a, b, c = impls
            make_zip3(fn)[grid](o, dev_shape, dev_strides, n, a.storage, *device_meta(a), b.storage,
                                *device_meta(b), c.storage, *device_meta(c))
    if out_dtype is not kernel_dtype:
        from minitorch_nn.backends.cuda.copy import cast_keeping_layout

        out = cast_keeping_layout(out, out_dtype)
    return out


def pointwise(fn, *operands, kind="promote"):
    """Apply ``fn`` with PyTorch's dtype rule ``kind`` (``promote``, ``float`` or ``bool``)."""
    dtype = result_type(*operands)
    if kind == "float" and not dtype.is_floating_point:
        dtype = dt.get_default_dtype()
    cdt = compute_dtype(dtype)
    # every operand counts for the layout, numbers too (the ``2`` of ``x + 2``), as on cpu
    return launch(fn, operands, dt.bool if kind == "bool" else dtype, cdt, layout=operands, common_dtype=dtype)


# -- the functions (compiled as device functions) -----------------------------------------------------
# Plain Python: numba compiles them for the GPU; the simulator runs them as they are.


def f_add(x, y):
    return x + y


def f_sub(x, y):
    return x - y


def f_mul(x, y):
    return x * y


def f_div(x, y):
    return x / y


def f_maximum(x, y):
    if x != x or y != y:  # NaN propagates, as in PyTorch
        return x + y
    return x if x > y else y


def f_minimum(x, y):
    if x != x or y != y:
        return x + y
    return x if x < y else y


def f_pow(x, y):
    return x ** y


def f_atan2(x, y):
    return math.atan2(x, y)


def f_eq(x, y):
    return x == y


def f_ne(x, y):
    return x != y


def f_lt(x, y):
    return x < y


def f_le(x, y):
    return x <= y


def f_gt(x, y):
    return x > y


def f_ge(x, y):
    return x >= y


def f_logical_and(x, y):
    return (x != 0) and (y != 0)


def f_logical_or(x, y):
    return (x != 0) or (y != 0)


def f_logical_xor(x, y):
    return (x != 0) != (y != 0)


def f_neg(x):
    return -x


def f_abs(x):
    return x if x >= 0 else -x


def f_reciprocal(x):
    return 1.0 / x


def f_exp(x):
    # the guards in these math functions give a GPU's IEEE answers (inf, -inf, nan) also on the
    # simulator, where Python's math module would raise OverflowError / ValueError instead
    if x > 709.0:
        return math.inf
    return math.exp(x)


def f_exp2(x):
    return 2.0 ** x


def f_expm1(x):
    if x > 709.0:
        return math.inf
    return math.expm1(x)


def f_log(x):
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def f_log2(x):
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def f_log10(x):
    if x > 0:
        return math.log10(x)
    return -math.inf if x == 0 else math.nan


def f_log1p(x):
    if x > -1:
        return math.log1p(x)
    return -math.inf if x == -1 else math.nan


def f_sqrt(x):
    if x >= 0:
        return math.sqrt(x)
    return math.nan


def f_rsqrt(x):
    if x > 0:
        return 1.0 / math.sqrt(x)
    return math.inf if x == 0 else math.nan


def f_sin(x):
    return math.sin(x)


def f_cos(x):
    return math.cos(x)


def f_tan(x):
    return math.tan(x)


def f_asin(x):
    return math.asin(x)


def f_acos(x):
    return math.acos(x)


def f_atan(x):
    return math.atan(x)


def f_sinh(x):
    return math.sinh(x)


def f_cosh(x):
    return math.cosh(x)


def f_tanh(x):
    return math.tanh(x)


def f_sigmoid(x):
    # written so that exp never overflows: for x < 0 use exp(x) / (1 + exp(x))
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def f_silu(x):
    if x >= 0:
        return x / (1.0 + math.exp(-x))
    e = math.exp(x)
    return x * e / (1.0 + e)


def f_erf(x):
    return math.erf(x)


def f_erfc(x):
    return math.erfc(x)


def f_floor(x):
    # math.floor gives an integer: keep NaN, infinities and huge values (already integral) as they are
    if not abs(x) < 4503599627370496.0:  # 2**52
        return x
    return math.floor(x)


def f_ceil(x):
    if not abs(x) < 4503599627370496.0:
        return x
    return math.ceil(x)


def f_trunc(x):
    if not abs(x) < 4503599627370496.0:
        return x
    return math.floor(x) if x >= 0 else math.ceil(x)


def f_relu(x):
    return x if x > 0 else x * 0  # x * 0 keeps NaN as NaN


def f_sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0  # zero, and NaN (PyTorch's sign(nan) is 0)


def f_isnan(x):
    return x != x


def f_logical_not(x):
    return x == 0


def f_where(c, x, y):
    return x if c else y


def f_tanh_backward(g, y):
    return g * (1 - y * y)


def f_sigmoid_backward(g, y):
    return g * (1 - y) * y


def f_threshold_backward(g, x, threshold):
    return g * 0 if x <= threshold else g


def f_lerp(a, b, w):
    return a + w * (b - a)


def f_clamp(x, lo, hi):
    if x != x:
        return x
    return lo if x < lo else (hi if x > hi else x)


def f_mse(x, y):
    return (x - y) * (x - y)

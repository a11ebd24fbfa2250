"""Normalization layers on the GPU: ``batch_norm``, ``layer_norm``, ``group_norm``, forward and backward.

Mirrors PyTorch's ``Normalization.cu``, ``layer_norm_kernel.cu`` and ``group_norm_kernel.cu``. All
three normalize groups of elements by their mean and ``rstd = 1 / sqrt(var + eps)``; they differ
only in *which* elements form a group. Seen as a contiguous ``(A, C, B)`` array, group ``c`` is
every ``x[a, c, b]``:

* batch norm: ``(N, C, H*W)`` -- one group per channel, across the batch;
* layer norm: ``(1, rows, row_len)`` -- one group per row (the normalized dims, flattened);
* group norm: ``(1, N*G, C/G*H*W)`` -- one group per (sample, channel group).

So three kernels serve them all, each **one thread block per group** with the shared-memory tree
of ``softmax.py``:

1. ``moments``: mean, then the (biased) variance around it, two sweeps of the group;
2. ``grad_sums``: ``sum(gh)`` and ``sum(gh * xhat)``, where ``gh`` is the gradient reaching the
   normalized value ``xhat`` (``grad * weight`` for layer/group norm, ``grad`` for batch norm);
3. ``grad_input`` (one thread per element):
   ``gx = scale[c] * (gh - sum(gh)/n - xhat * sum(gh * xhat)/n)``, with ``scale = rstd`` (layer,
   group) or ``invstd * weight[c]`` (batch norm).

The affine ``* weight + bias`` and the weight/bias gradients are broadcast elementwise ops and
reductions from ``elementwise.py``/``reduction.py``. Running statistics are updated on the GPU
without bumping their version counter, as PyTorch (and ``backends/cpu/nn_ops.py``) do.
float16/bfloat16 compute in float32; anything unusual (integer input, wrong shapes, empty input)
takes the host path (``fallback.py``), which raises the cpu backend's errors.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous, copy_into
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.reduction import reduce

_cuda = cuda()
BLOCK = 8 if simulator() else 128  # threads per group (a power of two)
_KERNELS: dict = {}


def make_group_kernels(np_dtype):
    """(moments, grad_sums) for one element dtype (the shared-memory buffer has the element type)."""
    key = np.dtype(np_dtype)
    if key in _KERNELS:
        return _KERNELS[key]
    shared_type = numba.from_dtype(key)

    @_cuda.jit(device=True)
    def block_sum(buf, tid, value):
        """The sum of ``value`` over the block's threads (a shared-memory tree), returned to all."""
        buf[tid] = value
        _cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            _cuda.syncthreads()
            step //= 2
        total = buf[0]
        _cuda.syncthreads()  # everyone has read it before buf is reused
        return total

    @_cuda.jit
    def moments(mean, rstd, var, x, A, C, B, eps, zero):
        c = _cuda.blockIdx.x
        tid = _cuda.threadIdx.x
        buf = _cuda.shared.array(BLOCK, shared_type)
        count = A * B
        s = zero
        for j in range(tid, count, BLOCK):
            s += x[((j // B) * C + c) * B + j % B]
        m = block_sum(buf, tid, s) / count
        s = zero
        for j in range(tid, count, BLOCK):
            d = x[((j // B) * C + c) * B + j % B] - m
            s += d * d
        v = block_sum(buf, tid, s) / count
        if tid == 0:
            mean[c] = m
            var[c] = v
            rstd[c] = 1.0 / math.sqrt(v + eps)

    @_cuda.jit
    def grad_sums(s1, s2, gh, x, mean, rstd, A, C, B, zero):
        c = _cuda.blockIdx.x
        tid = _cuda.threadIdx.x
        buf = _cuda.shared.array(BLOCK, shared_type)
        a1 = zero
        a2 = zero
        for j in range(tid, A * B, BLOCK):
            i = ((j // B) * C + c) * B + j % B
            a1 += gh[i]
            a2 += gh[i] * (x[i] - mean[c]) * rstd[c]
        t1 = block_sum(buf, tid, a1)
        t2 = block_sum(buf, tid, a2)
        if tid == 0:
            s1[c] = t1
            s2[c] = t2

    _KERNELS[key] = (moments, grad_sums)
    return moments, grad_sums


@_cuda.jit
def _normalize(y, x, mean, rstd, C, B, n):
    i = _cuda.grid(1)
    if i < n:
        c = (i // B) % C
        y[i] = (x[i] - mean[c]) * rstd[c]


@_cuda.jit
def _grad_input(gx, gh, x, mean, rstd, scale, s1, s2, C, B, count, n):
    i = _cuda.grid(1)
    if i < n:
        c = (i // B) % C
        xhat = (x[i] - mean[c]) * rstd[c]
        gx[i] = scale[c] * (gh[i] - s1[c] / count - xhat * s2[c] / count)


# -- launchers on (A, C, B) contiguous tensors of the compute dtype ---------------------------------


def _flat(t):
    i = t._impl
    return i.storage[i.offset : i.offset + t.numel()]


def _zero(cdt):
    return np.dtype(storage.storage_dtype(cdt)).type(0)


def group_moments(x, A, C, B, eps):
    """(mean, rstd, var) of each group c of contiguous x seen as (A, C, B): three (C,) tensors."""
    cdt = x.dtype
    mean, rstd, var = (storage.empty((C,), cdt) for _ in range(3))
    moments, _ = make_group_kernels(storage.storage_dtype(cdt))
    moments[C, BLOCK](mean._impl.storage, rstd._impl.storage, var._impl.storage, _flat(x), A, C, B, eps, _zero(cdt))
    return mean, rstd, var


def group_grad_sums(gh, x, mean, rstd, A, C, B):
    cdt = x.dtype
    s1, s2 = storage.empty((C,), cdt), storage.empty((C,), cdt)
    _, grad_sums = make_group_kernels(storage.storage_dtype(cdt))
    grad_sums[C, BLOCK](s1._impl.storage, s2._impl.storage, _flat(gh), _flat(x), _flat(mean), _flat(rstd), A, C, B,
                        _zero(cdt))
    return s1, s2


def normalize(x, mean, rstd, C, B):
    y = storage.empty(tuple(x.shape), x.dtype)
    n = x.numel()
    _normalize[ew.blocks_for(n), ew.THREADS](y._impl.storage, _flat(x), _flat(mean), _flat(rstd), C, B, n)
    return y


def grad_input(gh, x, mean, rstd, scale, s1, s2, C, B, count):
    gx = storage.empty(tuple(x.shape), x.dtype)
    n = x.numel()
    _grad_input[ew.blocks_for(n), ew.THREADS](gx._impl.storage, _flat(gh), _flat(x), _flat(mean), _flat(rstd),
                                              _flat(scale), _flat(s1), _flat(s2), C, B, count, n)
    return gx


def _c(t, cdt):
    """``t`` contiguous in dtype ``cdt`` (None stays None)."""
    if t is None:
        return None
    return contiguous(t) if t.dtype is cdt else cast_contiguous(t, cdt)


def _out(t, d):
    return t if t is None or t.dtype is d else cast_contiguous(t, d)


def _reshape(t, shape):
    """A view of contiguous ``t`` with a new shape."""
    return storage.wrap(t._impl.storage, shape, t.dtype, offset=t._impl.offset)


def _mul(a, b, cdt):
    return ew.launch(ew.f_mul, [a, b], cdt, cdt)


def _add(a, b, cdt):
    return ew.launch(ew.f_add, [a, b], cdt, cdt)


def _affine(y, weight, bias, cdt):
    """y * weight + bias, with weight/bias already viewed to broadcast against y."""
    if weight is not None:
        y = _mul(y, weight, cdt)
    if bias is not None:
        y = _add(y, bias, cdt)
    return y


def _on_gpu(*ts):
    return all(t is None or t.device.type == "cuda" for t in ts)


# -- layer norm ------------------------------------------------------------------------------------

_host_layer_norm = host_kernel(aten.native_layer_norm.default)
_host_layer_norm_backward = host_kernel(aten.native_layer_norm_backward.default)


def _ln_ok(input, normalized_shape, weight, bias):
    shape = tuple(normalized_shape)
    k = len(shape)
    return (input.dtype.is_floating_point and input.numel() > 0 and 0 < k <= input.dim()
            and tuple(input.shape[input.dim() - k:]) == shape and _on_gpu(input, weight, bias)
            and all(t is None or tuple(t.shape) == shape for t in (weight, bias)))


def _ln_sizes(input, normalized_shape):
    k = len(normalized_shape)
    row_len = 1
    for s in normalized_shape:
        row_len *= s
    return input.numel() // row_len, row_len, tuple(input.shape[: input.dim() - k]) + (1,) * k


@aten.native_layer_norm.default.impl("cuda")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    if not _ln_ok(input, normalized_shape, weight, bias):
        return _host_layer_norm(input, normalized_shape, weight, bias, eps)
    d = input.dtype
    cdt = compute_dtype(d)
    rows, row_len, stat_shape = _ln_sizes(input, normalized_shape)
    x = _c(input, cdt)
    mean, rstd, _ = group_moments(x, 1, rows, row_len, eps)
    y = _affine(normalize(x, mean, rstd, rows, row_len), weight, bias, cdt)
    return _out(y, d), _out(_reshape(mean, stat_shape), d), _out(_reshape(rstd, stat_shape), d)


@aten.native_layer_norm_backward.default.impl("cuda")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    if not _ln_ok(input, normalized_shape, weight, bias) or not _on_gpu(grad_out, mean, rstd):
        return _host_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
    d = input.dtype
    cdt = compute_dtype(d)
    rows, row_len, _ = _ln_sizes(input, normalized_shape)
    x, g, mu, rs = _c(input, cdt), _c(grad_out, cdt), _c(mean, cdt), _c(rstd, cdt)
    gx = gw = gb = None
    if output_mask[0]:
        gh = _mul(g, weight, cdt) if weight is not None else g
        s1, s2 = group_grad_sums(gh, x, mu, rs, 1, rows, row_len)
        gx = grad_input(gh, x, mu, rs, rs, s1, s2, rows, row_len, row_len)
    lead = list(range(input.dim() - len(normalized_shape)))
    if output_mask[1] and weight is not None:
        gw = reduce(_mul(g, normalize(x, mu, rs, rows, row_len), cdt), lead, False, "sum", cdt)
    if output_mask[2] and bias is not None:
        gb = reduce(g, lead, False, "sum", cdt)
    return _out(gx, d), _out(gw, d), _out(gb, d)


# -- group norm ------------------------------------------------------------------------------------

_host_group_norm = host_kernel(aten.native_group_norm.default)
_host_group_norm_backward = host_kernel(aten.native_group_norm_backward.default)


def _gn_ok(input, weight, bias, C, group):
    return (input.dtype.is_floating_point and input.numel() > 0 and group > 0 and C % group == 0
            and _on_gpu(input, weight, bias))


def _channel_view(t, C):
    """A (C,) vector viewed as (C, 1), to broadcast against (N, C, HxW)."""
    return None if t is None else _make_view(t, (C, 1), (t._impl.strides[0], 0), t._impl.offset)


@aten.native_group_norm.default.impl("cuda")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if not _gn_ok(input, weight, bias, C, group):
        return _host_group_norm(input, weight, bias, N, C, HxW, group, eps)
    d = input.dtype
    cdt = compute_dtype(d)
    x = _c(input, cdt)
    B = (C // group) * HxW
    mean, rstd, _ = group_moments(x, 1, N * group, B, eps)
    y = _reshape(normalize(x, mean, rstd, N * group, B), (N, C, HxW))
    y = _affine(y, _channel_view(weight, C), _channel_view(bias, C), cdt)
    return _out(_reshape(y, tuple(input.shape)), d), _out(_reshape(mean, (N, group)), d), _out(_reshape(rstd, (N, group)), d)


@aten.native_group_norm_backward.default.impl("cuda")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    if not _gn_ok(input, weight, None, C, group) or not _on_gpu(grad_out, mean, rstd):
        return _host_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
    d = input.dtype
    cdt = compute_dtype(d)
    B = (C // group) * HxW
    x, mu, rs = _c(input, cdt), _c(mean, cdt), _c(rstd, cdt)
    g = _reshape(_c(grad_out, cdt), (N, C, HxW))
    gx = gw = gb = None
    if output_mask[0]:
        gh = _mul(g, _channel_view(weight, C), cdt) if weight is not None else g
        s1, s2 = group_grad_sums(gh, x, mu, rs, 1, N * group, B)
        gx = _reshape(grad_input(gh, x, mu, rs, rs, s1, s2, N * group, B, B), tuple(input.shape))
    if output_mask[1]:
        xhat = _reshape(normalize(x, mu, rs, N * group, B), (N, C, HxW))
        gw = reduce(_mul(g, xhat, cdt), [0, 2], False, "sum", cdt)
    if output_mask[2]:
        gb = reduce(g, [0, 2], False, "sum", cdt)
    return _out(gx, d), _out(gw, d), _out(gb, d)


# -- batch norm ------------------------------------------------------------------------------------

_host_bn = {op: host_kernel(op) for op in (aten.native_batch_norm.default, aten._native_batch_norm_legit.default,
                                           aten._native_batch_norm_legit_no_training.default,
                                           aten.native_batch_norm_backward.default)}


def _bn_ok(input, tensors, training, running_mean, running_var):
    if not input.dtype.is_floating_point or input.dim() < 2 or input.numel() == 0 or not _on_gpu(*tensors):
        return False
    C = input.shape[1]
    if any(t is not None and t.numel() != C for t in tensors[1:]):
        return False  # the host path raises the size error
    count = input.numel() // C
    if training:
        return count > 1
    return running_mean is not None and running_var is not None


def _bn_view(t, C, nd):
    """A (C,) vector viewed as (C, 1, ..., 1) to broadcast against (N, C, *spatial)."""
    return _make_view(t, (C,) + (1,) * (nd - 2), (t._impl.strides[0],) + (0,) * (nd - 2), t._impl.offset)


def _update_running(stat, new_value):
    """Write a running statistic in place, *not* bumping its version (as PyTorch's kernels do)."""
    copy_into(stat, new_value)


def _rsqrt_plus(v, eps, cdt):
    return ew.launch(ew.f_rsqrt, [ew.launch(ew.f_add, [v, eps], cdt, cdt)], cdt, cdt)


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    d = input.dtype
    cdt = compute_dtype(d)
    N, C = input.shape[:2]
    B = input.numel() // (N * C)
    nd = input.dim()
    x = _c(input, cdt)
    w = None if weight is None else _bn_view(weight, C, nd)
    b = None if bias is None else _bn_view(bias, C, nd)
    if training:
        mean, invstd, var = group_moments(x, N, C, B, eps)
        count = N * B
        if running_mean is not None:  # (1 - m) * running + m * batch statistic
            _update_running(running_mean, ew.launch(ew.f_lerp, [_c(running_mean, cdt), mean, momentum], cdt, cdt))
        if running_var is not None:  # the running variance takes the unbiased estimate
            unbiased = ew.launch(ew.f_mul, [var, count / (count - 1)], cdt, cdt)
            _update_running(running_var, ew.launch(ew.f_lerp, [_c(running_var, cdt), unbiased, momentum], cdt, cdt))
        y = _affine(normalize(x, mean, invstd, C, B), w, b, cdt)
        return _out(y, d), _out(mean, d), _out(invstd, d)
    mean, invstd = _c(running_mean, cdt), _rsqrt_plus(_c(running_var, cdt), eps, cdt)
    y = _affine(normalize(x, mean, invstd, C, B), w, b, cdt)
    return _out(y, d), storage.empty((0,), d), storage.empty((0,), d)


@aten.native_batch_norm.default.impl("cuda")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if not _bn_ok(input, (input, weight, bias, running_mean, running_var), training, running_mean, running_var):
        return _host_bn[aten.native_batch_norm.default](input, weight, bias, running_mean, running_var, training,
                                                        momentum, eps)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@aten._native_batch_norm_legit.default.impl("cuda")
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if not _bn_ok(input, (input, weight, bias, running_mean, running_var), training, running_mean, running_var):
        return _host_bn[aten._native_batch_norm_legit.default](input, weight, bias, running_mean, running_var, training,
                                                               momentum, eps)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@aten._native_batch_norm_legit_no_training.default.impl("cuda")
def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    if not _bn_ok(input, (input, weight, bias, running_mean, running_var), False, running_mean, running_var):
        return _host_bn[aten._native_batch_norm_legit_no_training.default](input, weight, bias, running_mean,
                                                                           running_var, momentum, eps)
    return _batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)


@aten.native_batch_norm_backward.default.impl("cuda")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    stats = (save_mean, save_invstd) if train else (running_mean, running_var)
    if (not input.dtype.is_floating_point or input.dim() < 2 or input.numel() == 0 or any(s is None for s in stats)
            or not _on_gpu(grad_out, input, weight, *stats)):
        return _host_bn[aten.native_batch_norm_backward.default](grad_out, input, weight, running_mean, running_var,
                                                                  save_mean, save_invstd, train, eps, output_mask)
    d = input.dtype
    cdt = compute_dtype(d)
    N, C = input.shape[:2]
    B = input.numel() // (N * C)
    x, g = _c(input, cdt), _c(grad_out, cdt)
    if train:
        mean, invstd = _c(save_mean, cdt), _c(save_invstd, cdt)
    else:
        mean, invstd = _c(running_mean, cdt), _rsqrt_plus(_c(running_var, cdt), eps, cdt)
    scale = invstd if weight is None else _mul(invstd, _c(weight, cdt), cdt)  # invstd * weight, per channel
    s1, s2 = group_grad_sums(g, x, mean, invstd, N, C, B)  # sum(g), sum(g * xhat) per channel
    gx = None
    if output_mask[0]:
        if train:
            gx = grad_input(g, x, mean, invstd, scale, s1, s2, C, B, N * B)
        else:
            gx = _mul(g, _bn_view(scale, C, input.dim()), cdt)
    return _out(gx, d), _out(s2, d) if output_mask[1] else None, _out(s1, d) if output_mask[2] else None


"""``softmax`` and ``log_softmax`` on the GPU: one thread block per row, three sweeps.

Mirrors PyTorch's ``SoftMax.cu`` (its "one block per row" kernel). For each row x:

1. m = max(x)                 (threads stride over the row, then a shared-memory tree)
2. s = sum(exp(x - m))        (same pattern; subtracting m keeps exp from overflowing)
3. y = exp(x - m) / s   or   y = x - m - log(s) for log_softmax.

The softmax dim is moved last and made contiguous first (``copy.py``), and the result is put back
in the input's dim order. float16/bfloat16 compute in float32.

Cross-entropy is ``log_softmax`` then ``nll_loss``: ``nll_loss_forward`` picks ``-x[i, target[i]]``
for each sample with one thread per sample (ignored targets count 0) and reduces with
``reduction.py``; its backward writes ``-grad`` (divided by the count for a mean) at the same
places of a zero gradient. Class weights ``w`` scale each sample's loss by ``w[target]`` and the
mean divides by their sum. Inputs with more than two dims and out-of-range targets take the host
path (``fallback.py``), which raises PyTorch's errors.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn._tensor import _make_view
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda, simulator
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous

_cuda = cuda()
THREADS = 8 if simulator() else 128  # a power of two; few on the simulator (Python threads)
_KERNELS: dict = {}


def make_softmax(np_dtype):
    key = np.dtype(np_dtype)
    if key in _KERNELS:
        return _KERNELS[key]
    shared_type = numba.from_dtype(key)

    @_cuda.jit
    def softmax_rows(out, x, row_len, log, neg_inf, zero):
        row = _cuda.blockIdx.x
        tid = _cuda.threadIdx.x
        base = row * row_len
        buf = _cuda.shared.array(THREADS, shared_type)
        # 1. the row's max
        m = neg_inf
        j = tid
        while j < row_len:
            v = x[base + j]
            if v > m or v != v:
                m = v
            j += THREADS
        buf[tid] = m
        _cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                other = buf[tid + step]
                if other > buf[tid] or other != other:
                    buf[tid] = other
            _cuda.syncthreads()
            step //= 2
        m = buf[0]
        _cuda.syncthreads()  # everyone has read the max before buf is reused
        # 2. sum of exp(x - m)
        s = zero
        j = tid
        while j < row_len:
            s += math.exp(x[base + j] - m)
            j += THREADS
        buf[tid] = s
        _cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            _cuda.syncthreads()
            step //= 2
        s = buf[0]
        # 3. write the row
        j = tid
        while j < row_len:
            if log:
                out[base + j] = x[base + j] - m - math.log(s)
            else:
                out[base + j] = math.exp(x[base + j] - m) / s
            j += THREADS

    _KERNELS[key] = softmax_rows
    return softmax_rows


def _softmax(self, dim, half_to_float, log):
    if not self.dtype.is_floating_point:
        from minitorch_nn.backends.cuda.fallback import host_kernel

        op = aten._log_softmax.default if log else aten._softmax.default
        return host_kernel(op)(self, dim, half_to_float)  # PyTorch's dtype error
    nd = self.dim()
    d = wrap_dim(dim, max(nd, 1))
    out_dtype = dt.float32 if half_to_float and self.dtype in (dt.float16, dt.bfloat16) else self.dtype
    cdt = compute_dtype(self.dtype)
    impl = self._impl
    if nd == 0:
        order = []
    else:
        order = [i for i in range(nd) if i != d] + [d]
    moved = _make_view(self, [impl.sizes[i] for i in order], [impl.strides[i] for i in order], impl.offset)
    x = cast_contiguous(moved, cdt) if self.dtype is not cdt else contiguous(moved)
    n = self.numel()
    row_len = impl.sizes[d] if nd else 1
    y = storage.empty(x.shape, cdt)
    if n:
        xi = x._impl
        np_dt = storage.storage_dtype(cdt)
        make_softmax(np_dt)[n // row_len, THREADS](
            y._impl.storage, xi.storage[xi.offset : xi.offset + n], row_len, bool(log),
            np.dtype(np_dt).type(-np.inf), np.dtype(np_dt).type(0),
        )
    if nd == 0 or d == nd - 1:
        return y if out_dtype is cdt else cast_contiguous(y, out_dtype)
    # back to the input's dim order: the inverse permutation of a contiguous result
    yi = y._impl
    inverse = [0] * nd
    for pos, i in enumerate(order):
        inverse[i] = pos
    back = _make_view(y, [yi.sizes[inverse[i]] for i in range(nd)], [yi.strides[inverse[i]] for i in range(nd)], 0)
    return cast_contiguous(back, out_dtype)


@aten._softmax.default.impl("cuda")
def softmax(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, log=False)


@aten._log_softmax.default.impl("cuda")
def log_softmax(self, dim, half_to_float):
    return _softmax(self, dim, half_to_float, log=True)


def _softmax_backward(grad_output, output, dim, log):
    # y * (g - sum(g * y)) or g - exp(y) * sum(g), from the cuda kernels of those ops (called
    # directly: a dispatch mode sees only the backward op, as on cpu); contiguous, as PyTorch's
    if not grad_output.dtype.is_floating_point or output.dtype is not grad_output.dtype \
            or tuple(grad_output.shape) != tuple(output.shape):
        from minitorch_nn.backends.cuda.fallback import host_kernel

        op = aten._log_softmax_backward_data.default if log else aten._softmax_backward_data.default
        return host_kernel(op)(grad_output, output, dim, grad_output.dtype)   # PyTorch's errors
    k = lambda op: op.kernel_for("cuda")   # noqa: E731
    dims = [wrap_dim(dim, max(grad_output.dim(), 1))] if grad_output.dim() else []
    if log:
        total = k(aten.sum.dim_IntList)(grad_output, dims, True)
        r = k(aten.sub.Tensor)(grad_output, k(aten.mul.Tensor)(k(aten.exp.default)(output), total))
    else:
        total = k(aten.sum.dim_IntList)(k(aten.mul.Tensor)(grad_output, output), dims, True)
        r = k(aten.mul.Tensor)(output, k(aten.sub.Tensor)(grad_output, total))
    return contiguous(r)


@aten._softmax_backward_data.default.impl("cuda")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward(grad_output, output, dim, log=False)


@aten._log_softmax_backward_data.default.impl("cuda")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward(grad_output, output, dim, log=True)


# -- nll_loss (the second half of cross_entropy) ---------------------------------------------------


@_cuda.jit
def _nll_pick(losses, weights, x, xs0, xs1, x_off, target, ts0, t_off, n, ignore_index, w, ws0, w_off, has_w):
    """losses[i] = -w[t] * x[i, t] and weights[i] = w[t] for t = target[i] (w = 1 without class
    weights), or 0 and 0 for an ignored target."""
    i = _cuda.grid(1)
    if i < n:
        t = target[t_off + i * ts0]
        if t == ignore_index:
            losses[i] = 0
            weights[i] = 0
        else:
            wt = w[w_off + t * ws0] if has_w else 1
            losses[i] = -wt * x[x_off + i * xs0 + t * xs1]
            weights[i] = wt


@_cuda.jit
def _nll_grad(g, n_classes, target, ts0, t_off, go, gos0, go_off, total, total_off, mean, n, ignore_index, w, ws0,
              w_off, has_w):
    """Row i of the gradient: zeros, and -w[t] * grad_output (/ total for a mean) at the target t."""
    i = _cuda.grid(1)
    if i < n:
        for c in range(n_classes):
            g[i * n_classes + c] = 0
        t = target[t_off + i * ts0]
        if t != ignore_index:
            v = -go[go_off + i * gos0]
            if has_w:
                v = v * w[w_off + t * ws0]
            if mean:
                v = v / total[total_off]
            g[i * n_classes + t] = v


def _nll_simple(self, target, weight):
    """True when the kernels handle it: (N, C) float input, class weights (if any) of its dtype on cuda."""
    if self.dim() != 2 or self.dtype not in (dt.float32, dt.float64):
        return False
    if weight is not None and (weight.dtype is not self.dtype or weight.device.type != "cuda"
                               or weight.dim() != 1 or weight.shape[0] != self.shape[1]):
        return False
    if target.dim() != 1 or target.shape[0] != self.shape[0] or target.dtype is not dt.int64 or target.device.type != "cuda":
        return False
    return True


def _weight_args(weight, any_impl):
    """(array, stride, offset, has_weight) for the kernels; a stand-in array when there are no weights."""
    if weight is None:
        return any_impl.storage, 0, 0, False
    wi = weight._impl
    return wi.storage, wi.strides[0], wi.offset, True


def _targets_in_range(target, n_classes, ignore_index):
    t = storage.to_host(target)  # N integers: a small copy, and the check PyTorch does with a device assert
    t = t[t != ignore_index]
    return t.size == 0 or (t.min() >= 0 and t.max() < n_classes)


def _host(op):
    from minitorch_nn.backends.cuda.fallback import host_kernel

    return host_kernel(op)


@aten.nll_loss_forward.default.impl("cuda")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    if not _nll_simple(self, target, weight) or not _targets_in_range(target, self.shape[1], ignore_index):
        return _host(aten.nll_loss_forward.default)(self, target, weight, reduction, ignore_index)
    from minitorch_nn.backends.cuda import elementwise as ew
    from minitorch_nn.backends.cuda.reduction import reduce

    d = self.dtype
    n = self.shape[0]
    losses, weights = storage.empty((n,), d), storage.empty((n,), d)
    xi, ti = self._impl, target._impl
    if n:
        _nll_pick[ew.blocks_for(n), ew.THREADS](losses._impl.storage, weights._impl.storage, xi.storage,
                                                 xi.strides[0], xi.strides[1], xi.offset, ti.storage,
                                                 ti.strides[0], ti.offset, n, ignore_index, *_weight_args(weight, xi))
    if reduction == 0:
        return losses, ew.scalar_operand(0.0, d)
    total = reduce(weights, None, False, "sum", d)
    summed = reduce(losses, None, False, "sum", d)
    if reduction == 2:
        return summed, total
    return ew.launch(ew.f_div, [summed, total], d, d), total


@aten.nll_loss_backward.default.impl("cuda")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    if not _nll_simple(self, target, weight) or grad_output.dtype is not self.dtype or grad_output.device.type != "cuda":
        return _host(aten.nll_loss_backward.default)(grad_output, self, target, weight, reduction, ignore_index,
                                                     total_weight)
    from minitorch_nn.backends.cuda import elementwise as ew
    from minitorch_nn.backends.cuda.copy import cast_contiguous as _cc

    n, c = self.shape
    g = storage.empty((n, c), self.dtype)
    go = grad_output._impl
    gos0 = go.strides[0] if (reduction == 0 and go.sizes) else 0
    tw = _cc(total_weight, self.dtype)._impl if total_weight.device.type == "cuda" else None
    if tw is None:
        from minitorch_nn.backends.cuda.copy import to_device

        tw = to_device(total_weight, None, self.dtype)._impl
    ti = target._impl
    if n:
        _nll_grad[ew.blocks_for(n), ew.THREADS](g._impl.storage, c, ti.storage, ti.strides[0], ti.offset, go.storage,
                                                 gos0, go.offset, tw.storage, tw.offset, reduction == 1, n,
                                                 ignore_index, *_weight_args(weight, ti))
    return g

"""Copies on the GPU: strided -> contiguous, dtype casts (incl. 16-bit floats), cpu <-> cuda.

Mirrors PyTorch's ``Copy.cu`` / ``copy_`` / ``_to_copy`` for the cuda device. One strided copy
kernel does all the work: it reads any (sizes, strides, offset) layout and writes another, casting
on the way (numba converts on the store). Two small kernels convert bfloat16, which we store as raw
16-bit words (see ``storage.py``): a bfloat16 is the top half of a float32, so widening is a shift
and narrowing is a shift with round-to-nearest-even.

As on cpu, a copy is laid out by ``backends/layout.py``: ``clone``, ``to``/``.cuda()``/``.cpu()`` and
the ``*_like`` factories keep a tensor's memory order (``like_strides``), and ``copy_`` refuses to
write into a tensor that overlaps itself or its source (``check_inplace_overlap``).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.layout import check_inplace_overlap, like_strides
from minitorch_nn.backends.cuda.elementwise import (
    MAX_DIMS,
    THREADS,
    blocks_for,
    broadcast_index,
    device_meta,
    index_to_position,
    to_index,
)

_cuda = cuda()


@_cuda.jit
def _strided_copy(out, out_shape, out_strides, out_offset, src, src_shape, src_strides, src_offset, n):
    """out[i] = src[i] for every element i of out's shape; src broadcasts to it."""
    i = _cuda.grid(1)
    if i < n:
        out_index = _cuda.local.array(MAX_DIMS, np.int64)
        src_index = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, out_index)
        broadcast_index(out_index, out_shape, src_shape, src_index)
        out[index_to_position(out_index, out_strides, out_offset)] = src[
            index_to_position(src_index, src_strides, src_offset)
        ]


@_cuda.jit
def _bf16_to_f32_bits(out_bits, words, n):
    """float32 bit pattern of each bfloat16 word: the word becomes the high 16 bits."""
    i = _cuda.grid(1)
    if i < n:
        out_bits[i] = np.uint32(words[i]) << np.uint32(16)


@_cuda.jit
def _f32_bits_to_bf16(words, bits, n):
    """Round each float32 (as uint32 bits) to the nearest bfloat16, ties to even; NaN stays NaN."""
    i = _cuda.grid(1)
    if i < n:
        b = bits[i]
        if (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
            words[i] = np.uint16((b >> np.uint32(16)) | np.uint32(0x40))  # quiet NaN
        else:
            lsb = (b >> np.uint32(16)) & np.uint32(1)
            words[i] = np.uint16((b + np.uint32(0x7FFF) + lsb) >> np.uint32(16))


def copy_into(out, src) -> None:
    """Write ``src`` (a cuda tensor broadcastable to ``out``) into ``out``'s memory, casting."""
    o, s = out._impl, src._impl
    n = out.numel()
    if n == 0:
        return
    if (o.dtype is dt.bfloat16) != (s.dtype is dt.bfloat16) or (o.dtype is dt.bfloat16 and s.dtype is not o.dtype):
        # bfloat16 words need the bit conversion: go through float32
        src = cast_contiguous(src, o.dtype) if o.dtype is dt.bfloat16 else cast_contiguous(src, dt.float32)
        s = src._impl
    elif o.dtype is dt.bool and s.dtype is dt.float16:
        # numba's GPU compiler emits invalid NVVM IR for a float16 -> bool conversion (the
        # simulator, running Python, cannot tell): go through float32
        src = cast_contiguous(src, dt.float32)
        s = src._impl
    os_, ost, oo = device_meta(o)
    ss, sst, so = device_meta(s)
    _strided_copy[blocks_for(n), THREADS](o.storage, os_, ost, oo, s.storage, ss, sst, so, n)


def contiguous(t) -> TensorBase:
    """``t`` itself if it is contiguous from offset 0, else a contiguous copy."""
    if t.is_contiguous():
        return t
    out = storage.empty(t.shape, t.dtype)
    copy_into(out, t)
    return out


def cast_contiguous(t, dtype) -> TensorBase:
    """A contiguous copy of ``t`` with ``dtype`` (always a new tensor)."""
    src = t._impl
    if dtype is src.dtype:
        out = storage.empty(t.shape, dtype)
        copy_into(out, t)
        return out
    n = t.numel()
    if src.dtype is dt.bfloat16:
        c = contiguous(t)._impl
        bits = storage.device_array(n, np.uint32)
        if n:
            _bf16_to_f32_bits[blocks_for(n), THREADS](bits, c.storage[c.offset : c.offset + n], n)
        f = storage.wrap(bits.view(np.float32), t.shape, dt.float32)
        return f if dtype is dt.float32 else cast_contiguous(f, dtype)
    if dtype is dt.bfloat16:
        f = t if src.dtype is dt.float32 else cast_contiguous(t, dt.float32)
        f = contiguous(f)._impl
        out = storage.empty(t.shape, dt.bfloat16)
        if n:
            _f32_bits_to_bf16[blocks_for(n), THREADS](
                out._impl.storage, f.storage[f.offset : f.offset + n].view(np.uint32), n
            )
        return out
    out = storage.empty(t.shape, dtype)
    copy_into(out, t)
    return out


def cast_keeping_layout(t, dtype, memory_format=None) -> TensorBase:
    """A copy of ``t`` with ``dtype``, laid out as ``empty_like(t, memory_format=...)`` is
    (``backends/layout.py``: a permuted ``t`` gives a permuted copy), as ``clone``/``to`` do."""
    strides = like_strides(t, memory_format)
    if strides is None:
        return cast_contiguous(t, dtype)
    out = storage.empty(t.shape, dtype, strides)
    copy_into(out, t)
    return out


# -- registered kernels ----------------------------------------------------------------------------


def to_device(t, device, dtype, memory_format=None):
    """cpu (or cuda) tensor ``t`` -> a new cuda tensor of ``dtype`` (``backends/transfer.py`` calls
    this), laid out as ``empty_like(t)`` is: ``x.t().cuda()`` stays column-major, as in PyTorch."""
    if t.device.type == "cuda":
        return cast_keeping_layout(t, dtype, memory_format)
    from minitorch_nn.backends.cpu._numpy import as_array

    arr = as_array(t)
    # (np.asarray, not np.ascontiguousarray: that one turns a 0-d array into shape (1,))
    return storage.from_host(np.asarray(arr).astype(dtype.numpy_dtype, copy=False), dtype,
                             like_strides(t, memory_format))


@aten._to_copy.default.impl("cuda")
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    from minitorch_nn._device import canonical
    from minitorch_nn._tensor import _from_array, _new_meta

    target = self.dtype if dtype is None else dtype
    dev = self.device if device is None else canonical(device)
    if dev.type == "cuda":
        return cast_keeping_layout(self, target, memory_format)
    if dev.type == "meta":
        return _new_meta(tuple(self.shape), target, strides=like_strides(self, memory_format))
    # to the host: the cpu tensor keeps the layout too (``x.t().cuda().cpu()`` is still column-major)
    from minitorch_nn.backends.cpu._numpy import wrap_strided

    strides = like_strides(self, memory_format)
    host = storage.to_host(self)
    if strides is None:
        return _from_array(host.astype(target.numpy_dtype, copy=False), target)
    return wrap_strided(host.astype(target.numpy_dtype, copy=False), target, strides)


@aten.clone.default.impl("cuda")
def clone(self, *, memory_format=None):
    return cast_keeping_layout(self, self.dtype, memory_format)


@aten.copy_.default.impl("cuda")
def copy_(self, src, non_blocking=False):
    if isinstance(src, TensorBase):
        check_inplace_overlap(self, src)  # PyTorch's refusals, before anything is written
    if not isinstance(src, TensorBase):
        from minitorch_nn.backends.cuda.elementwise import scalar_operand

        src = scalar_operand(src, self.dtype)
    if src.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if src.device.type == "cpu":
        src = to_device(src, None, src.dtype)
    if tuple(src.shape) != tuple(self.shape):
        if broadcast_shapes(tuple(self.shape), tuple(src.shape)) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(broadcast_shapes(tuple(self.shape), tuple(src.shape)))}"
            )
    if src._impl.storage is self._impl.storage:
        src = cast_contiguous(src, src.dtype)  # overlapping memory: read everything first
    copy_into(self, src)
    self._impl.version.value += 1
    return self


@aten._local_scalar_dense.default.impl("cuda")
def _local_scalar_dense(self):
    v = storage.to_host(self).reshape(-1)[0]
    if self.dtype is dt.bool:
        return bool(v)
    return float(v) if self.dtype.is_floating_point else int(v)


# -- cat / stack: each input is copied into its slice of the output ----------------------------------


def _cat_into(tensors, d, out_sizes, dtype):
    from minitorch_nn._tensor import _make_view

    out = storage.empty(out_sizes, dtype)
    oi = out._impl
    start = 0
    for t in tensors:
        sizes = list(out_sizes)
        sizes[d] = t.shape[d]
        if sizes[d]:
            copy_into(_make_view(out, sizes, oi.strides, start * oi.strides[d]), t)
        start += sizes[d]
    return out


@aten.cat.default.impl("cuda")
def cat(tensors, dim=0):
    from minitorch_nn.backends.common import result_type
    from minitorch_nn.backends.cpu.factories import (
        _check_cat,  # the same checks and messages as on cpu
    )
    from minitorch_nn.backends.cuda.fallback import host_kernel

    if any(t.device.type != "cuda" for t in tensors):
        return host_kernel(aten.cat.default)(tensors, dim)
    d = _check_cat(tensors, dim)
    dtype = result_type(*tensors)
    parts = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]  # legacy empty tensors are skipped
    if not parts:
        return storage.empty((0,), dtype)
    sizes = list(parts[0].shape)
    sizes[d] = sum(t.shape[d] for t in parts)
    return _cat_into(parts, d, sizes, dtype)


@aten.stack.default.impl("cuda")
def stack(tensors, dim=0):
    from minitorch_nn._shape import wrap_dim
    from minitorch_nn._tensor import _make_view
    from minitorch_nn.backends.common import result_type
    from minitorch_nn.backends.cuda.fallback import host_kernel

    if not tensors or any(t.device.type != "cuda" or t.shape != tensors[0].shape for t in tensors):
        return host_kernel(aten.stack.default)(tensors, dim)  # PyTorch's errors
    d = wrap_dim(dim, tensors[0].dim() + 1)
    # each input as a view with a size-1 dim inserted at d, then a cat along d
    parts = []
    for t in tensors:
        i = t._impl
        parts.append(_make_view(t, i.sizes[:d] + (1,) + i.sizes[d:], i.strides[:d] + (1,) + i.strides[d:], i.offset))
    sizes = list(parts[0].shape)
    sizes[d] = len(parts)
    return _cat_into(parts, d, sizes, result_type(*tensors))


# -- fills and the factories built on them ------------------------------------------------------------
# A fill is a copy from a 0-d tensor holding the value, broadcast by the strided copy kernel, so it
# works on any view. Only the value (one element) crosses from the host.


def fill_value(t, value):
    from minitorch_nn.backends.cuda.elementwise import scalar_operand

    copy_into(t, scalar_operand(value, t.dtype))
    return t


@aten.fill_.Scalar.impl("cuda")
def fill_(self, value):
    fill_value(self, value)
    self._impl.version.value += 1
    return self


@aten.zero_.default.impl("cuda")
def zero_(self):
    return fill_(self, 0)


def _simple_size(size):
    return all(type(s) is int and s >= 0 for s in size)


def _factory(op, value):
    from minitorch_nn.backends.cuda.fallback import host_kernel

    host = host_kernel(op)

    def kernel(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        if not _simple_size(size):
            return host(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
        if memory_format is not None:
            from minitorch_nn.backends.layout import format_strides

            strides = format_strides(size, memory_format)
            if strides is not None:  # empty(..., memory_format=channels_last(_3d))
                return aten.empty_strided.default.kernel_for("cuda")(size, strides, dtype=dtype)
        t = storage.empty(tuple(size), dtype if dtype is not None else dt.get_default_dtype())
        return t if value is None else fill_value(t, value)

    op.impl("cuda")(kernel)


_factory(aten.zeros.default, 0)
_factory(aten.ones.default, 1)
_factory(aten.empty.memory_format, None)


def _like(op, value):
    def kernel(self, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        v = args[0] if args else value
        # laid out as PyTorch's empty_like(self, memory_format=...): a permuted self, a permuted result
        t = storage.empty(tuple(self.shape), dtype if dtype is not None else self.dtype,
                          like_strides(self, memory_format))
        return t if v is None else fill_value(t, v)

    op.impl("cuda")(kernel)


_like(aten.zeros_like.default, 0)
_like(aten.ones_like.default, 1)
_like(aten.empty_like.default, None)
_like(aten.full_like.default, None)

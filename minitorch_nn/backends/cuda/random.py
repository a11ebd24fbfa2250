"""Random fills on the GPU from a counter-based generator (Philox-2x32-10).

PyTorch's CUDA generator is Philox-4x32-10 ("Random123", Salmon et al. 2011): a random number is
a *pure function* of (key, counter), so every GPU thread can compute its own without sharing
state. We use the smaller Philox-2x32 variant with the same idea:

* key = the seed (``minitorch_nn.cuda.manual_seed``), counter = (element index, call offset);
* each call (``uniform_``, ``normal_``...) uses a new offset, so calls never repeat numbers;
* one Philox round multiplies a 32-bit word by a constant, keeping the 64-bit product's two
  halves; ten rounds mix the bits well enough for simulation (not for cryptography).

The numbers are **not** PyTorch's CUDA numbers (those depend on its kernel launch geometry too);
they are reproducible from the seed, the same on a GPU and in the simulator. Ops given an explicit
``generator=`` (a cpu ``Generator``) take the host path (the cpu stream); ``multinomial.py``
samples categories from this generator.

``randperm(n)`` sorts ``n`` random 53-bit keys (``sort.py``) and returns the order.
"""

from __future__ import annotations

import math

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.layout import check_inplace_overlap, like_strides

_cuda = cuda()

# the generator's state: key and the offset of the next call
STATE = {"seed": 0x853C49E6748FEA9B & 0xFFFFFFFF, "offset": 0}

_MUL = np.uint64(0xD256D193)   # Philox-2x32 multiplier
_WEYL = np.uint64(0x9E3779B9)  # key increment per round (the golden ratio)
_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def manual_seed(seed: int) -> None:
    STATE["seed"] = int(seed) & 0xFFFFFFFF
    STATE["offset"] = (int(seed) >> 32) & 0xFFFFFFFF  # keep the high bits of a 64-bit seed
    STATE["calls"] = 0


def _next_offset() -> np.uint64:
    STATE["calls"] = STATE.get("calls", 0) + 1
    return np.uint64((STATE["offset"] + STATE["calls"]) & 0xFFFFFFFF)


@_cuda.jit(device=True)
def philox2x32(c0, c1, key):
    """Ten Philox rounds on the counter (c0, c1) with ``key``; returns two random 32-bit words."""
    for _ in range(10):
        prod = _MUL * c0  # < 2**64: no overflow
        hi = prod >> _SHIFT
        lo = prod & _MASK
        c0 = hi ^ key ^ c1
        c1 = lo
        key = (key + _WEYL) & _MASK
    return c0, c1


@_cuda.jit
def _fill(out, n, key, offset, kind, a, b):
    """kind 0: uniform in [a, b); 1: normal(mean a, std b) by Box-Muller; 2: bernoulli(p=a);
    3: exponential(rate a); 4: integers a, a+1, ..., a+b-1 (b values); 5: uniform [0, 1), 53 bits."""
    i = _cuda.grid(1)
    if i < n:
        w0, w1 = philox2x32(np.uint64(i) & _MASK, offset, key)
        u = (w0 >> np.uint64(8)) * (1.0 / 16777216.0)  # 24 random bits -> [0, 1)
        if kind == 0:
            out[i] = a + (b - a) * u
        elif kind == 1:
            u1 = (w0 + 1.0) * (1.0 / 4294967297.0)  # (0, 1): log(0) never happens
            u2 = w1 * (1.0 / 4294967296.0)
            out[i] = a + b * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        elif kind == 2:
            out[i] = 1.0 if u < a else 0.0
        elif kind == 3:
            u1 = (w0 + 1.0) * (1.0 / 4294967297.0)  # (0, 1): -log(u1) is finite and positive
            out[i] = -math.log(u1) / a
        elif kind == 4:
            # 64 random bits modulo the count: the bias is below count / 2**64, negligible here
            out[i] = a + ((w0 << _SHIFT) | w1) % np.uint64(b)
        else:
            out[i] = ((w0 >> np.uint64(6)) * 134217728.0 + (w1 >> np.uint64(5))) * (1.0 / 9007199254740992.0)


@_cuda.jit
def _fill_bernoulli_tensor(out, p, n, key, offset):
    """out[i] = 1 with probability p[i] (p contiguous, float64, the shape of out)."""
    i = _cuda.grid(1)
    if i < n:
        w0, w1 = philox2x32(np.uint64(i) & _MASK, offset, key)
        u = (w0 * 2097152.0 + (w1 >> np.uint64(11))) * (1.0 / 9007199254740992.0)  # 53 bits
        out[i] = 1.0 if u < p[i] else 0.0


def _fill_tensor(self, kind, a, b):
    from minitorch_nn.backends.cuda.copy import copy_into

    n = self.numel()
    cdt = compute_dtype(self.dtype)
    exact = kind in (4, 5)  # integers and 53-bit uniforms are made in float64, exactly
    # the draws go in self's memory order (tmp is laid out like it), as PyTorch's TensorIterator fills
    tmp = storage.empty(self.shape, cdt if self.dtype.is_floating_point and not exact else dt.float64,
                        like_strides(self))
    if n:
        _fill[blocks_for(n), THREADS](tmp._impl.storage, n, np.uint64(STATE["seed"]), _next_offset(), kind,
                                      float(a), float(b))
    copy_into(self, tmp)
    self._impl.version.value += 1
    return self


_host_uniform = host_kernel(aten.uniform_.default)
_host_normal = host_kernel(aten.normal_.default)
_host_bernoulli = host_kernel(aten.bernoulli_.float)


@aten.uniform_.default.impl("cuda")
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    lo = kw.pop("from", from_)
    check_inplace_overlap(self)  # PyTorch's refusal of an expanded self, on every path
    if generator is not None or not self.dtype.is_floating_point:
        return _host_uniform(self, lo, to, generator=generator)
    return _fill_tensor(self, 0, lo, to)


@aten.normal_.default.impl("cuda")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    check_inplace_overlap(self)
    if generator is not None or not self.dtype.is_floating_point or std < 0:
        return _host_normal(self, mean, std, generator=generator)  # PyTorch's checks
    return _fill_tensor(self, 1, mean, std)


@aten.bernoulli_.float.impl("cuda")
def bernoulli_(self, p=0.5, *, generator=None):
    check_inplace_overlap(self)
    if generator is not None or not 0 <= p <= 1:
        return _host_bernoulli(self, p, generator=generator)
    return _fill_tensor(self, 2, p, 0.0)


def _factory(kind):
    def kernel(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
        d = dtype if dtype is not None else dt.get_default_dtype()
        t = storage.empty(tuple(size), d)
        return _fill_tensor(t, kind, 0.0, 1.0)

    return kernel


for _op, _kind in ((aten.rand.default, 0), (aten.randn.default, 1)):
    _host = host_kernel(_op)
    _k = _factory(_kind)
    _op.impl("cuda")(lambda size, *, dtype=None, _k=_k, _host=_host, **kw: _host(size, dtype=dtype, **kw)
                     if dtype is not None and not dtype.is_floating_point else _k(size, dtype=dtype, **kw))


def _like(kind):
    def kernel(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        # laid out as empty_like(self, memory_format=...), as PyTorch's rand_like is
        t = storage.empty(tuple(self.shape), dtype if dtype is not None else self.dtype,
                          like_strides(self, memory_format))
        return _fill_tensor(t, kind, 0.0, 1.0)

    return kernel


aten.rand_like.default.impl("cuda")(_like(0))
aten.randn_like.default.impl("cuda")(_like(1))


# -- dropout: a Bernoulli(1 - p) keep-mask from the same generator --------------------------------------

_host_dropout = host_kernel(aten.native_dropout.default)


@aten.native_dropout.default.impl("cuda")
def native_dropout(input, p, train):
    from minitorch_nn.backends.cuda import elementwise as ew
    from minitorch_nn.backends.cuda.copy import cast_contiguous

    if not (train is None or train) or p == 1 or not input.dtype.is_floating_point:
        return _host_dropout(input, p, train)  # eval mode, p == 1 and odd dtypes: as on cpu
    keep = storage.empty(tuple(input.shape), input.dtype)
    _fill_tensor(keep, 2, 1 - p, 0.0)  # 1.0 with probability 1 - p
    out = ew.pointwise(ew.f_mul, ew.pointwise(ew.f_mul, input, keep), 1.0 / (1 - p))
    return cast_contiguous(out, input.dtype), cast_contiguous(keep, dt.bool)


@aten.native_dropout_backward.default.impl("cuda")
def native_dropout_backward(grad_output, mask, scale):
    from minitorch_nn.backends.cuda import elementwise as ew
    from minitorch_nn.backends.cuda.copy import cast_contiguous

    d = grad_output.dtype
    g = ew.pointwise(ew.f_mul, grad_output, cast_contiguous(mask, d))
    return cast_contiguous(ew.pointwise(ew.f_mul, g, scale), d)


def _apply_pending_seed():
    # A minitorch_nn.manual_seed(s) made before cuda was first used applies now (PyTorch seeds
    # every device from manual_seed, lazily for cuda).
    from minitorch_nn import random as _random_api

    if _random_api._cuda_seed is not None:
        manual_seed(_random_api._cuda_seed)


_apply_pending_seed()


# -- more distributions ------------------------------------------------------------------------------


def _launch_bernoulli_tensor(out, p):
    """Fill ``out`` with bernoulli(p) for a cuda tensor ``p`` broadcastable to it."""
    from minitorch_nn.backends.cuda.copy import copy_into

    probs = storage.empty(tuple(out.shape), dt.float64)
    copy_into(probs, p)  # broadcast and cast to float64
    tmp = storage.empty(tuple(out.shape), dt.float64)
    n = out.numel()
    if n:
        _fill_bernoulli_tensor[blocks_for(n), THREADS](tmp._impl.storage, probs._impl.storage, n,
                                                       np.uint64(STATE["seed"]), _next_offset())
    copy_into(out, tmp)
    out._impl.version.value += 1
    return out


_host_bernoulli_tensor = host_kernel(aten.bernoulli_.Tensor)
_host_bernoulli_default = host_kernel(aten.bernoulli.default)
_host_bernoulli_p = host_kernel(aten.bernoulli.p)


def _probabilities_ok(p):
    """p in [0, 1] everywhere (two reductions); the host path raises PyTorch's error otherwise."""
    from minitorch_nn.backends.cuda.reduction import reduce

    if p.numel() == 0:
        return True
    return reduce(p, None, False, "min", p.dtype).item() >= 0 and reduce(p, None, False, "max", p.dtype).item() <= 1


@aten.bernoulli_.Tensor.impl("cuda")
def bernoulli_tensor_(self, p, *, generator=None):
    if generator is not None or p.device.type != "cuda" or not p.dtype.is_floating_point or not _probabilities_ok(p):
        return _host_bernoulli_tensor(self, p, generator=generator)
    return _launch_bernoulli_tensor(self, p)


@aten.bernoulli.default.impl("cuda")
def bernoulli(self, *, generator=None):
    if generator is not None or not self.dtype.is_floating_point or not _probabilities_ok(self):
        return _host_bernoulli_default(self, generator=generator)
    return _launch_bernoulli_tensor(storage.empty(tuple(self.shape), self.dtype), self)


@aten.bernoulli.p.impl("cuda")
def bernoulli_p(self, p, *, generator=None):
    if generator is not None or not 0 <= p <= 1:
        return _host_bernoulli_p(self, p, generator=generator)
    return _fill_tensor(storage.empty(tuple(self.shape), self.dtype), 2, p, 0.0)


_host_exponential = host_kernel(aten.exponential_.default)


@aten.exponential_.default.impl("cuda")
def exponential_(self, lambd=1.0, *, generator=None):
    check_inplace_overlap(self)
    if generator is not None or not self.dtype.is_floating_point or not lambd > 0:
        return _host_exponential(self, lambd, generator=generator)
    return _fill_tensor(self, 3, lambd, 0.0)


# integers: a + (random % count), made exactly in float64, so counts are kept below 2**53
_EXACT = 2 ** 53


def _mantissa_range(d):
    """random_()'s range for a floating dtype: 0 .. 2**mantissa_bits (inclusive)."""
    bits = {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24, dt.float64: 53}[d]
    return 2 ** bits + 1


def _integer_fill(self, low, count):
    if count <= 0 or count > _EXACT or self.dtype is dt.bool:
        return None
    return _fill_tensor(self, 4, float(low), float(count))


_host_random_from = host_kernel(getattr(aten.random_, "from"))
_host_random_to = host_kernel(aten.random_.to)
_host_random = host_kernel(aten.random_.default)


def _random_from(self, from_, to, *, generator=None):
    check_inplace_overlap(self)
    r = None
    if generator is None and to is not None and from_ < to:
        r = _integer_fill(self, from_, to - from_)
    return r if r is not None else _host_random_from(self, from_, to, generator=generator)


getattr(aten.random_, "from").impl("cuda")(_random_from)


@aten.random_.to.impl("cuda")
def random_to(self, to, *, generator=None):
    check_inplace_overlap(self)
    r = _integer_fill(self, 0, to) if generator is None and to > 0 else None
    return r if r is not None else _host_random_to(self, to, generator=generator)


@aten.random_.default.impl("cuda")
def random_(self, *, generator=None):
    check_inplace_overlap(self)
    r = None
    if generator is None and self.dtype is not dt.bool:
        d = self.dtype
        count = _mantissa_range(d) if d.is_floating_point else int(np.iinfo(d.numpy_dtype).max) + 1
        r = _integer_fill(self, 0, count)
    return r if r is not None else _host_random(self, generator=generator)


_host_randint_low = host_kernel(aten.randint.low)
_host_randint = host_kernel(aten.randint.default)


@aten.randint.low.impl("cuda")
def randint_low(low, high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.int64
    r = None
    if low < high and all(type(s) is int and s >= 0 for s in size):
        r = _integer_fill(storage.empty(tuple(size), d), low, high - low)
    return r if r is not None else _host_randint_low(low, high, size, dtype=dtype)


@aten.randint.default.impl("cuda")
def randint(high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low(0, high, size, dtype=dtype)


_host_randperm = host_kernel(aten.randperm.default)


@aten.randperm.default.impl("cuda")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.int64
    if n <= 0 or d is dt.bool or (not d.is_floating_point and n - 1 > np.iinfo(d.numpy_dtype).max):
        return _host_randperm(n, dtype=dtype)
    from minitorch_nn.backends.cuda.copy import cast_contiguous
    from minitorch_nn.backends.cuda.sort import sort_rows

    keys = _fill_tensor(storage.empty((n,), dt.float64), 5, 0.0, 0.0)  # n random 53-bit keys
    _, order = sort_rows(keys, False)  # the order that sorts them is a uniform random permutation
    return order if d is dt.int64 else cast_contiguous(order, d)

"""``multinomial`` on the GPU: the exponential race (``topk``) and inverse-CDF sampling.

Mirrors the two algorithms of PyTorch's multinomial (see ``backends/cpu/random.py``):

* **without replacement, or one sample**: draw ``q ~ Exp(1)`` for every category (``random.py``)
  and take the categories with the largest ``p / q`` -- ``argmax`` for one sample, ``topk``
  (``sort.py``) for several. Category ``i`` wins with probability ``p_i / sum(p)``, and taking the
  next-largest scores samples without replacement;
* **with replacement**: the cumulative sums of each row (``scan.py``), then one thread per sample
  draws ``u`` in [0, 1) from the Philox generator and binary-searches the first category whose
  cumulative sum exceeds ``u * total``.

The samples come from the cuda generator, so they are not PyTorch's. Argument checks are the cpu
backend's; bad probabilities (negative, infinite, NaN, a zero row) and an explicit ``generator=``
take the host path, which raises PyTorch's errors or uses the cpu stream.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.cpu.random import _multinomial_checks
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.random import _MASK, STATE, _next_offset, philox2x32
from minitorch_nn.backends.cuda.reduction import reduce

_cuda = cuda()


@_cuda.jit
def _search(out, cum, n_cat, n_samples, n, key, offset):
    """out[r, s] = the first category j of row r with cum[r, j] > u * cum[r, last], u uniform."""
    i = _cuda.grid(1)
    if i < n:
        r = i // n_samples
        w0, w1 = philox2x32(np.uint64(i) & _MASK, offset, key)
        u = ((w0 >> np.uint64(6)) * 134217728.0 + (w1 >> np.uint64(5))) * (1.0 / 9007199254740992.0)
        base = r * n_cat
        target = u * cum[base + n_cat - 1]
        lo = 0
        hi = n_cat - 1
        while lo < hi:  # the answer is in [lo, hi]
            mid = (lo + hi) // 2
            if cum[base + mid] > target:
                hi = mid
            else:
                lo = mid + 1
        out[i] = lo


def _valid(p, wide):
    """Finite, non-negative probabilities with a positive sum in every row (three reductions)."""
    lo = reduce(p, None, False, "min", p.dtype).item()
    hi = reduce(p, None, False, "max", p.dtype).item()
    if not (lo >= 0 and hi < float("inf")):
        return False
    sums = reduce(p, [p.dim() - 1], False, "sum", wide)
    return reduce(sums, None, False, "min", wide).item() > 0


_host_multinomial = host_kernel(aten.multinomial.default)


@aten.multinomial.default.impl("cuda")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    _multinomial_checks(self, num_samples, replacement)
    if generator is not None or self.numel() == 0:
        return _host_multinomial(self, num_samples, replacement, generator=generator)
    wide = dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else self.dtype
    if not _valid(self, wide):
        return _host_multinomial(self, num_samples, replacement, generator=generator)  # the error
    if not replacement or num_samples == 1:
        from minitorch_nn.backends.cuda.arg_reduction import arg_reduce
        from minitorch_nn.backends.cuda.random import exponential_
        from minitorch_nn.backends.cuda.sort import topk

        q = exponential_(storage.empty(tuple(self.shape), wide), 1.0)
        scores = ew.launch(ew.f_div, [self, q], self.dtype, wide)  # p / q, rounded to p's dtype
        if num_samples == 1:
            _, idx = arg_reduce(scores, self.dim() - 1, True)
            return storage.wrap(idx._impl.storage, tuple(self.shape[:-1]) + (1,), dt.int64)
        return topk(scores, num_samples, -1, True)[1]
    from minitorch_nn.backends.cuda.scan import _scan_rows, flat

    p = cast_contiguous(self, wide)
    n_cat = self.shape[-1]
    rows = self.numel() // n_cat
    cum = storage.empty((rows, n_cat), wide)
    _scan_rows[blocks_for(rows), THREADS](cum._impl.storage, flat(p), rows, n_cat, False)
    out_shape = (num_samples,) if self.dim() == 1 else (rows, num_samples)
    out = storage.empty(out_shape, dt.int64)
    n = rows * num_samples
    _search[blocks_for(n), THREADS](out._impl.storage, cum._impl.storage, n_cat, num_samples, n,
                                    np.uint64(STATE["seed"]), _next_offset())
    return out

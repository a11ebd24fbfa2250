"""cpu kernels for random ops: they ask ``minitorch_nn.random``'s generator for numbers.

The generator reproduces PyTorch's cpu stream (Mersenne Twister plus PyTorch's transforms), so
``manual_seed(0); randn(3)`` gives PyTorch's numbers. In-place fills (``uniform_``) draw a
contiguous block and write it into the tensor, which is how PyTorch fills contiguous tensors.

Complex tensors are filled as PyTorch fills them: through their real view (``view_as_real``), so
each element takes two consecutive draws, real part first. ``normal_`` divides ``std`` by
``sqrt(2)`` there, so that ``randn(dtype=torch.complex64)`` has unit variance (half in each part).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import check_size_nonnegative
from minitorch_nn._tensor import _from_array
from minitorch_nn.backends.common import not_implemented
from minitorch_nn.backends.cpu._numpy import as_array
from minitorch_nn.backends.layout import check_inplace_overlap

_random_module = None   # minitorch_nn.random, imported on the first draw (it seeds from the OS)


def _gen(generator):
    """``generator``, or else the default generator (``minitorch_nn.random.default_generator``)."""
    global _random_module
    if generator is not None:
        return generator
    if _random_module is None:
        from minitorch_nn import random as _random_module
    return _random_module.default_generator


def _check_float(d, name):
    if not (d.is_floating_point or d.is_complex):
        raise not_implemented(name, d)  # PyTorch's NotImplementedError and words


def _draw(sample, shape, d):
    """``sample(shape, numpy_dtype)`` for a real ``d``; for a complex ``d``, the draws for its real
    view (shape + (2,)) read back as complex numbers."""
    if not d.is_complex:
        return sample(tuple(shape), d.numpy_dtype)
    parts = sample(tuple(shape) + (2,), d.to_real().numpy_dtype)
    return np.ascontiguousarray(parts).view(d.numpy_dtype).reshape(tuple(shape))


_SQRT2 = float(np.sqrt(2.0))


@aten.rand.default.impl("cpu")
@aten.rand.generator.impl("cpu")
def rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)  # at::empty's check comes first, as in PyTorch
    d = dtype or dt.get_default_dtype()
    _check_float(d, "check_uniform_bounds")
    return _from_array(_draw(lambda shape, nd: _gen(generator)._uniform(shape, nd, 0.0, 1.0), size, d), d)


@aten.randn.default.impl("cpu")
@aten.randn.generator.impl("cpu")
def randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = dtype or dt.get_default_dtype()
    _check_float(d, "normal_kernel_cpu")
    std = 1.0 / _SQRT2 if d.is_complex else 1.0
    return _from_array(_draw(lambda shape, nd: _gen(generator)._normal(shape, nd, 0.0, std), size, d), d)


def _empty_like(self, dtype, memory_format):
    from minitorch_nn.backends.cpu.factories import zeros_like

    return zeros_like(self, dtype=dtype or self.dtype, memory_format=memory_format)


@aten.rand_like.default.impl("cpu")
def rand_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    # PyTorch: empty_like(self) (keeping a permuted layout), then uniform_ in memory order
    return uniform_(_empty_like(self, dtype, memory_format))


@aten.randn_like.default.impl("cpu")
def randn_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return normal_(_empty_like(self, dtype, memory_format))


@aten.randint.low.impl("cpu")
@aten.randint.low_generator.impl("cpu")
def randint_low(low, high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    check_size_nonnegative(size)
    d = dtype or dt.int64
    if d.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    return _from_array(_gen(generator)._randint(tuple(size), d.numpy_dtype, low, high), d)


@aten.randint.default.impl("cpu")
@aten.randint.generator.impl("cpu")
def randint(high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low(0, high, size, generator=generator, dtype=dtype)


@aten.randperm.default.impl("cpu")
@aten.randperm.generator.impl("cpu")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.int64
    if d.is_complex:
        raise not_implemented("randperm", d)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return _from_array(_gen(generator)._randperm(n, d.numpy_dtype), d)


def _memory_order(t):
    """Dims from outermost to innermost in memory: the order PyTorch's TensorIterator walks.

    PyTorch writes random draws to a tensor in memory order, so a transposed tensor receives the
    same numbers as its contiguous base would, not the same numbers at the same indices.
    """
    strides = t.stride()
    # largest stride first; a stable sort keeps equal strides (size-1 dims) in index order
    return sorted(range(len(strides)), key=strides.__getitem__, reverse=True)


def _fill(self, sample):
    """Draw with ``sample(shape, numpy_dtype)`` in memory order and write the values into ``self``."""
    check_inplace_overlap(self)
    order = _memory_order(self)
    target = self._array.transpose(order)
    np.copyto(target, _draw(sample, target.shape, self.dtype), casting="unsafe")
    self._impl.version.value += 1
    return self


@aten.uniform_.default.impl("cpu")
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    _check_float(self.dtype, "check_uniform_bounds")
    return _fill(self, lambda shape, nd: _gen(generator)._uniform(shape, nd, from_, to))


@aten.normal_.default.impl("cpu")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_float(self.dtype, "normal_kernel_cpu")
    # PyTorch fills non-contiguous tensors element by element, which draws differently.
    contiguous = self.is_contiguous()
    if self.dtype.is_complex:
        std = std / _SQRT2
    return _fill(self, lambda shape, nd: _gen(generator)._normal(shape, nd, mean, std, contiguous=contiguous))


def _refuse_complex(self, message):
    """PyTorch has only uniform and normal draws for complex tensors; the others refuse them."""
    if self.dtype.is_complex:
        if message.startswith('"'):
            raise NotImplementedError(f"{message} not implemented for '{_type_name(self.dtype)}'")
        raise RuntimeError(message)


@aten.bernoulli_.float.impl("cpu")
def bernoulli_float_(self, p=0.5, *, generator=None):
    _refuse_complex(self, '"bernoulli_scalar_cpu_"')
    return _fill(self, lambda shape, nd: _gen(generator)._bernoulli(shape, nd, p))


@aten.bernoulli_.Tensor.impl("cpu")
def bernoulli_tensor_(self, p, *, generator=None):
    _refuse_complex(self, '"bernoulli_tensor_cpu_self_"')
    # p is read in the same memory order as self is written; its own dtype picks the precision
    p_in_order = np.broadcast_to(as_array(p), tuple(self.shape)).transpose(_memory_order(self))
    return _fill(self, lambda shape, nd: _gen(generator)._bernoulli(shape, nd, p_in_order))


@aten.bernoulli.default.impl("cpu")
def bernoulli(self, *, generator=None):
    out = _from_array(np.zeros(tuple(self.shape), dtype=self.dtype.numpy_dtype), self.dtype)
    return bernoulli_tensor_(out, self, generator=generator)


@aten.bernoulli.p.impl("cpu")
def bernoulli_p(self, p, *, generator=None):
    out = _from_array(np.zeros(tuple(self.shape), dtype=self.dtype.numpy_dtype), self.dtype)
    return bernoulli_float_(out, p, generator=generator)


def random_from(self, from_, to, *, generator=None):
    _refuse_complex(self, "check_random_bounds handles only integral, floating-point and boolean types")
    # to=None means "up to the largest value the dtype holds", which the sampler handles.
    return _fill(self, lambda shape, nd: _gen(generator)._randint(shape, nd, from_, to))


# "from" is a Python keyword, so this overload is reached with getattr and positional args.
getattr(aten.random_, "from").impl("cpu")(random_from)


@aten.random_.to.impl("cpu")
def random_to(self, to, *, generator=None):
    return random_from(self, 0, to, generator=generator)


@aten.random_.default.impl("cpu")
def random_(self, *, generator=None):
    _refuse_complex(self, '"random_kernel_cpu"')
    return _fill(self, lambda shape, nd: _gen(generator)._random(shape, nd))


@aten.exponential_.default.impl("cpu")
def exponential_(self, lambd=1.0, *, generator=None):
    _refuse_complex(
        self,
        "Exponential distribution is a continuous probability distribution. dtype must be a floating point "
        f"but you specified {_type_name(self.dtype)}",
    )
    return _fill(self, lambda shape, nd: _gen(generator)._exponential(shape, nd, lambd))


# -- multinomial --------------------------------------------------------------------------------------
# PyTorch's cpu multinomial (aten/src/ATen/native/Distributions.cpp, cpu/MultinomialKernel.cpp) has
# two algorithms, and we follow both draw for draw, so ``manual_seed(s)`` gives PyTorch's samples:
#
# * without replacement, or for a single sample: the "exponential race" (Gumbel-max in disguise).
#   Draw q ~ Exp(1) for every category (``exponential_`` on a tensor laid out like the input), and
#   take the categories with the largest p / q: ``argmax`` for one sample, ``topk`` for several.
#   Category i wins with probability p_i / sum(p), and removing winners gives sampling without
#   replacement.
# * with replacement (two or more samples): row by row, the normalised cumulative sums of p, one
#   float64 uniform u per sample, and a binary search for the first bucket whose cumulative sum
#   reaches u.


def _multinomial_checks(self, num_samples, replacement):
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_type_name(self.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > self.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if self.shape[-1] > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _type_name(d):
    from minitorch_nn.backends.common import type_name

    return type_name(d)


@aten.multinomial.default.impl("cpu")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    _multinomial_checks(self, num_samples, replacement)
    shape = (num_samples,) if self.dim() == 1 else (self.shape[0], num_samples)
    if 0 in shape:
        return _from_array(np.zeros(shape, dtype=np.int64), dt.int64)
    if not replacement or num_samples == 1:
        return _from_array(_exponential_race(self, num_samples, generator), dt.int64)
    return _from_array(_inverse_cdf(self, num_samples, generator), dt.int64)


def _exponential_race(self, num_samples, generator):
    p = as_array(self)
    if p.size == 0:  # (PyTorch checks the values with aminmax, which refuses an empty tensor)
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    if not (p.max() < np.inf and p.min() >= 0):  # (NaN fails both comparisons)
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    wide = np.float32 if p.dtype.itemsize < 4 else p.dtype  # 16-bit floats are summed and divided in float32
    if np.any(p.astype(wide).sum(axis=-1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    from minitorch_nn.backends.cpu.factories import zeros_like

    q = exponential_(zeros_like(self), 1.0, generator=generator)._array  # drawn in the input's memory order
    scores = (p.astype(wide) / q.astype(wide)).astype(p.dtype)  # p / q, rounded to p's dtype
    if num_samples == 1:
        return np.argmax(scores, axis=-1)[..., None].astype(np.int64)
    # topk: the largest first; equal scores keep index order
    n = scores.shape[-1]
    order = (n - 1) - np.flip(np.argsort(np.flip(scores, axis=-1), axis=-1, kind="stable"), axis=-1)
    return np.ascontiguousarray(order[..., :num_samples]).astype(np.int64)


def _inverse_cdf(self, num_samples, generator):
    p = as_array(self)
    rows = p.reshape(1, -1) if p.ndim == 1 else p
    acc = np.float32 if p.dtype.itemsize < 4 else p.dtype  # the cumulative sums' dtype, as PyTorch's kernel
    gen = _gen(generator)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(rows):  # row by row: a bad row raises after the rows before it drew
        row = row.astype(acc)
        negative = ~(row >= 0)  # (NaN is caught here too, as in PyTorch)
        infinite = ~np.isfinite(row)
        bad = negative | infinite
        if bad.any():
            j = int(np.argmax(bad))
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0)" if negative[j] else
                "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
            )
        cum = np.cumsum(row, dtype=acc)  # (sequential sums, like the kernel's loop)
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[-1] = 1
        u = gen._uniform((num_samples,), np.float64, 0.0, 1.0)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")  # the first bucket reaching u
    return out.reshape(-1) if p.ndim == 1 else out


__all__ = ["TensorBase"]

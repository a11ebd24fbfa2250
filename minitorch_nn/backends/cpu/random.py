"""cpu kernels for random ops: they ask ``minitorch_nn.random``'s generator for numbers.

The generator reproduces PyTorch's cpu stream (Mersenne Twister plus PyTorch's transforms), so
``manual_seed(0); randn(3)`` gives PyTorch's numbers. In-place fills (``uniform_``) draw a
contiguous block and write it into the tensor, which is how PyTorch fills contiguous tensors.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._tensor import _from_array
from minitorch_nn.backends.cpu._numpy import as_array
from minitorch_nn.backends.layout import check_inplace_overlap


def _gen(generator):
    if generator is not None:
        return generator
    from minitorch_nn.random import default_generator

    return default_generator


def _check_float(d, name):
    if not d.is_floating_point:
        raise RuntimeError(f'"{name}" not implemented for \'{d.name}\'')


@aten.rand.default.impl("cpu")
@aten.rand.generator.impl("cpu")
def rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.get_default_dtype()
    _check_float(d, "check_uniform_bounds")
    return _from_array(_gen(generator)._uniform(tuple(size), d.numpy_dtype, 0.0, 1.0), d)


@aten.randn.default.impl("cpu")
@aten.randn.generator.impl("cpu")
def randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.get_default_dtype()
    _check_float(d, "normal_kernel_cpu")
    return _from_array(_gen(generator)._normal(tuple(size), d.numpy_dtype, 0.0, 1.0), d)


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
    d = dtype or dt.int64
    return _from_array(_gen(generator)._randint(tuple(size), d.numpy_dtype, low, high), d)


@aten.randint.default.impl("cpu")
@aten.randint.generator.impl("cpu")
def randint(high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low(0, high, size, generator=generator, dtype=dtype)


@aten.randperm.default.impl("cpu")
@aten.randperm.generator.impl("cpu")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype or dt.int64
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return _from_array(_gen(generator)._randperm(n, d.numpy_dtype), d)


def _memory_order(t):
    """Dims from outermost to innermost in memory: the order PyTorch's TensorIterator walks.

    PyTorch writes random draws to a tensor in memory order, so a transposed tensor receives the
    same numbers as its contiguous base would, not the same numbers at the same indices.
    """
    return sorted(range(t.dim()), key=lambda d: -t.stride(d))


def _fill(self, sample):
    """Draw with ``sample(shape)`` in memory order and write the values into ``self``."""
    check_inplace_overlap(self)
    order = _memory_order(self)
    target = self._array.transpose(order)
    np.copyto(target, sample(target.shape), casting="unsafe")
    self._impl.version.value += 1
    return self


@aten.uniform_.default.impl("cpu")
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    _check_float(self.dtype, "check_uniform_bounds")
    return _fill(self, lambda shape: _gen(generator)._uniform(shape, self.dtype.numpy_dtype, from_, to))


@aten.normal_.default.impl("cpu")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_float(self.dtype, "normal_kernel_cpu")
    # PyTorch fills non-contiguous tensors element by element, which draws differently.
    contiguous = self.is_contiguous()
    return _fill(self, lambda shape: _gen(generator)._normal(shape, self.dtype.numpy_dtype, mean, std, contiguous=contiguous))


@aten.bernoulli_.float.impl("cpu")
def bernoulli_float_(self, p=0.5, *, generator=None):
    return _fill(self, lambda shape: _gen(generator)._bernoulli(shape, self.dtype.numpy_dtype, p))


@aten.bernoulli_.Tensor.impl("cpu")
def bernoulli_tensor_(self, p, *, generator=None):
    # p is read in the same memory order as self is written; its own dtype picks the precision
    p_in_order = np.broadcast_to(as_array(p), tuple(self.shape)).transpose(_memory_order(self))
    return _fill(self, lambda shape: _gen(generator)._bernoulli(shape, self.dtype.numpy_dtype, p_in_order))


@aten.bernoulli.default.impl("cpu")
def bernoulli(self, *, generator=None):
    out = _from_array(np.zeros(tuple(self.shape), dtype=self.dtype.numpy_dtype), self.dtype)
    return bernoulli_tensor_(out, self, generator=generator)


@aten.bernoulli.p.impl("cpu")
def bernoulli_p(self, p, *, generator=None):
    out = _from_array(np.zeros(tuple(self.shape), dtype=self.dtype.numpy_dtype), self.dtype)
    return bernoulli_float_(out, p, generator=generator)


def random_from(self, from_, to, *, generator=None):
    # to=None means "up to the largest value the dtype holds", which the sampler handles.
    return _fill(self, lambda shape: _gen(generator)._randint(shape, self.dtype.numpy_dtype, from_, to))


# "from" is a Python keyword, so this overload is reached with getattr and positional args.
getattr(aten.random_, "from").impl("cpu")(random_from)


@aten.random_.to.impl("cpu")
def random_to(self, to, *, generator=None):
    return random_from(self, 0, to, generator=generator)


@aten.random_.default.impl("cpu")
def random_(self, *, generator=None):
    return _fill(self, lambda shape: _gen(generator)._random(shape, self.dtype.numpy_dtype))


@aten.exponential_.default.impl("cpu")
def exponential_(self, lambd=1.0, *, generator=None):
    return _fill(self, lambda shape: _gen(generator)._exponential(shape, self.dtype.numpy_dtype, lambd))


@aten.multinomial.default.impl("cpu")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    raise NotImplementedError("multinomial is not implemented in minitorch_nn yet")


__all__ = ["TensorBase"]

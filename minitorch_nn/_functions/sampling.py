"""``torch.bernoulli`` and ``torch.normal``: the top-level sampling functions.

Both are thin spellings of the in-place fills every tensor has, made the way PyTorch's CPU
kernels make them, so ``manual_seed(s)`` gives PyTorch's numbers:

* ``bernoulli(input)`` draws one 0/1 sample per element with probability ``input``
  (``bernoulli(input, p)`` uses the number ``p`` for every element instead);
* ``normal(mean, std)`` fills the broadcast shape with standard normal samples, then scales
  by ``std`` and shifts by ``mean`` (``output.mul_(std).add_(mean)``, in that order, as
  PyTorch does); ``normal(mean, std, size)`` with two numbers is ``empty(size).normal_(mean, std)``.
"""

from __future__ import annotations

from numbers import Number

from minitorch_nn._functions.factories import empty
from minitorch_nn._shape import broadcast_shapes_public as broadcast_shapes

__all__ = ["bernoulli", "normal"]


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples, ``1`` with probability ``input`` (or ``p``) for each element."""
    result = input.bernoulli(p, generator=generator) if p is not None else input.bernoulli(generator=generator)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def _check_std(std):
    # PyTorch checks std before it draws anything (a tensor std gets a message of its own)
    if isinstance(std, Number):
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    elif std.numel() and std.min().item() < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _fmt(x):
    return str(int(x)) if float(x).is_integer() else str(x)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Normal samples with the given ``mean`` and ``std`` (numbers or tensors; see the module doc)."""
    mean_is_number, std_is_number = isinstance(mean, Number), isinstance(std, Number)
    if mean_is_number and std_is_number:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got (float, float), but expected "
                "one of:\n * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = "
                "None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool "
                "pin_memory = False, bool requires_grad = False)\n"
            )
        _check_std(std)
        result = empty(size, dtype=dtype, device=device).normal_(mean, std, generator=generator)
        result.requires_grad_(requires_grad)
    else:
        _check_std(std)
        like = std if mean_is_number else mean
        shape = broadcast_shapes(
            () if mean_is_number else tuple(mean.shape), () if std_is_number else tuple(std.shape)
        )
        result = empty(shape, dtype=like.dtype, device=like.device)
        result.normal_(0.0, 1.0, generator=generator)
        result.mul_(std).add_(mean)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


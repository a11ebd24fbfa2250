"""Flattening parameters into one vector and back (mirrors ``torch/nn/utils/convert_parameters.py``).

``parameters_to_vector`` concatenates ``p.view(-1)`` of every parameter, so the result is a new
tensor that autograd connects to the parameters (``CatBackward0``). ``vector_to_parameters``
does the reverse by replacing each parameter's ``.data`` with a view of the right slice, so the
parameters then share storage with ``vec``.
"""

from __future__ import annotations

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, first_device):
    # PyTorch refuses a mix of devices (cpu with cuda, or two GPUs); the first parameter decides
    if first_device is None:
        return param.device
    if param.device != first_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return first_device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's elements, in order."""
    import minitorch_nn as torch

    device = None
    flat = []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.view(-1))
    return torch.cat(flat)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into ``parameters`` (each takes ``numel()`` elements)."""
    from minitorch_nn._tensor import Tensor

    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device = None
    start = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[start:start + n].view_as(param).data
        start += n


def _typename(obj):
    # torch.typename: the qualified class name, builtins unqualified
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"

"""``minitorch_nn.nn``: parameters, modules, functional, init (mirrors ``torch.nn``)."""

from minitorch_nn.nn.parameter import Buffer, Parameter

__all__ = ["Parameter", "Buffer"]

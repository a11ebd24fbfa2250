"""Copies between devices (``_to_copy`` with a different ``device``)."""

from __future__ import annotations


def to_device(t, device, dtype):
    """Copy ``t`` to ``device`` with ``dtype``; cuda arrives with the CUDA backend."""
    if device.type == "meta":
        from minitorch_nn._tensor import _new_meta
        from minitorch_nn.backends.layout import like_strides

        return _new_meta(tuple(t.shape), dtype, strides=like_strides(t))  # (preserve_format, as PyTorch)
    if device.type == "cuda":
        from minitorch_nn import _dispatch

        return _dispatch._load_cuda().to_device(t, device, dtype)
    raise RuntimeError(f"unsupported device {device}")

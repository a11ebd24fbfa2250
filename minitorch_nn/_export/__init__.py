"""Private helpers for ``minitorch_nn.export`` (mirrors the helper part of ``torch/_export/``).

Only :mod:`minitorch_nn._export.utils` is provided; PyTorch's ``torch._export`` also holds the
serializer, passes and verifier, which live in ``minitorch_nn/export/`` here.
"""

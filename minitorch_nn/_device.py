"""Devices, mirroring ``torch.device`` and the ``with torch.device("meta"):`` context.

A device is ``cpu`` (numpy storage), ``meta`` (shapes and dtypes only, no storage) or ``cuda``
(numba device arrays; see ``backends/cuda``). ``device("cuda")`` has no index, like PyTorch;
tensors made on it report ``cuda:0``.

Using a device as a context manager makes it the default for factories (and so for module
constructors). PyTorch does this with a ``TorchFunctionMode``; here it is a small stack that the
factories consult, which is simpler to read and has the same effect for factories.
"""

from __future__ import annotations

_VALID_TYPES = ("cpu", "meta", "cuda")


class device:
    """Where a tensor's data lives (``torch.device``)."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's argument name
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): a device object was given together with an index")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            # torch.device(0) means cuda:0
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _VALID_TYPES:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: " + type
                + "\n(minitorch_nn supports the cpu, meta and cuda devices.)"
            )
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # -- default-device context -------------------------------------------------------------
    def __enter__(self):
        _DEFAULT_DEVICE_STACK.append(self)
        return self

    def __exit__(self, *exc):
        _DEFAULT_DEVICE_STACK.pop()
        return False


CPU = device("cpu")
META = device("meta")
CUDA0 = device("cuda", 0)

_DEFAULT_DEVICE_STACK: list[device] = []
_default_device: device | None = None


def canonical(d) -> device:
    """Turn a str/int/device into the device tensors report (``cuda`` becomes ``cuda:0``)."""
    if d is None:
        return get_default_device()
    if d.__class__ is device:
        dev = d
    elif isinstance(d, str) and d in _CANONICAL_STR:
        return _CANONICAL_STR[d]
    else:
        dev = device(d)
    if dev.type == "cpu":
        if dev.index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {dev.index}")
        return CPU
    if dev.type == "meta":
        return META
    return device("cuda", 0 if dev.index is None else dev.index)


_CANONICAL_STR = {"cpu": CPU, "meta": META, "cuda": CUDA0, "cuda:0": CUDA0}


def get_default_device() -> device:
    """The device factories use when none is given (``torch.get_default_device``)."""
    if _DEFAULT_DEVICE_STACK:
        return canonical(_DEFAULT_DEVICE_STACK[-1])
    if _default_device is not None:
        return _default_device
    return CPU


def set_default_device(d) -> None:
    """Set the default device for factories; ``None`` resets it to cpu."""
    global _default_device
    _default_device = None if d is None else canonical(d)

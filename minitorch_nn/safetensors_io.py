"""safetensors files, through the ``safetensors`` package (mirrors ``safetensors.torch``).

A safetensors file is an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the raw bytes: no pickle, so nothing in it can run.
This module gives the four functions PyTorch users know from ``safetensors.torch`` --
:func:`save_file`, :func:`load_file`, :func:`save` (to bytes) and :func:`load` (from bytes)
-- for minitorch_nn tensors; ``minitorch_nn.safetensors_save`` and
``minitorch_nn.safetensors_load`` are ``save_file`` and ``load_file``. Files are
interchangeable with ``safetensors.torch`` in both directions, bfloat16 included.

The checks before saving are the package's own: a dict of str -> tensor, every tensor dense
and contiguous, and no two tensors overlapping in memory (PyTorch users meet these exact
messages). Where we differ: a damaged file raises :class:`~minitorch_nn.serialization.CheckpointError`
(a ``RuntimeError``) carrying the package's message, rather than ``SafetensorError``.

Needs ``pip install safetensors`` (the ``io`` extra of minitorch_nn).
"""

from __future__ import annotations

import os

import ml_dtypes  # noqa: F401  (registers numpy's "bfloat16", which safetensors needs for BF16)
import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._device import CPU
from minitorch_nn._device import canonical as _canonical_device
from minitorch_nn._serialization.zip_reader import CheckpointError
from minitorch_nn._tensor import Tensor, _from_array, _new_meta

__all__ = [
    "save_file",
    "load_file",
    "save",
    "load",
    "load_metadata",
    "safetensors_save",
    "safetensors_load",
]

# The header's dtype codes that minitorch_nn has.
_CODES = {
    "BOOL": dt.bool,
    "U8": dt.uint8,
    "I8": dt.int8,
    "I16": dt.int16,
    "I32": dt.int32,
    "I64": dt.int64,
    "F16": dt.float16,
    "BF16": dt.bfloat16,
    "F32": dt.float32,
    "F64": dt.float64,
    "C64": dt.complex64,  # (the format has no complex128 code)
}


def _package():
    try:
        import safetensors
    except ImportError:
        raise ImportError(
            "safetensors support needs the `safetensors` package: pip install safetensors "
            "(or pip install 'minitorch-nn[io]')"
        ) from None
    return safetensors


# -- saving ----------------------------------------------------------------------------------


def _check_and_flatten(tensors, keep_alive):
    """The package's checks, then one ``TensorSpec`` per tensor pointing at its bytes."""
    safetensors = _package()
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
    shared = _overlapping_groups(tensors)
    if shared:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {shared}.\n"
            "A potential way to correctly save your model is to use `save_model`.\n"
            "More information at https://huggingface.co/docs/safetensors/torch_shared_tensors\n"
            "(In minitorch_nn: save clones, {k: v.clone() for k, v in sd.items()}, or use minitorch_nn.save, "
            "which keeps sharing.)"
        )
    specs = {}
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended to save"
                " only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to"
                " pack it before saving."
            )
        if v.is_meta:
            raise ValueError(f"Key `{k}` is a meta tensor: it has no data to save")
        arr = v.detach()._array if v.device.type == "cpu" else v.detach().cpu()._array
        arr = np.ascontiguousarray(arr)
        keep_alive.append(arr)
        specs[k] = safetensors.TensorSpec(
            dtype=v.dtype.name, shape=tuple(v.shape), data_ptr=arr.ctypes.data, data_len=arr.nbytes
        )
    return specs


def _overlapping_groups(tensors) -> list[set]:
    """Names of tensors whose bytes overlap (``safetensors.torch._find_shared_tensors``)."""
    by_storage: dict[int, list] = {}
    for k, v in tensors.items():
        storage = v._impl.storage
        if storage is None or v.numel() == 0:
            continue
        by_storage.setdefault(id(storage), []).append(k)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        areas = []
        for name in names:
            t = tensors[name]
            start = t.storage_offset()
            stop = start + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
            areas.append((start, stop, name))
        areas.sort()
        current, last_stop = {areas[0][2]}, areas[0][1]
        for start, stop, name in areas[1:]:
            if start >= last_stop:
                if len(current) > 1:
                    groups.append(current)
                current = {name}
            else:
                current.add(name)
            last_stop = max(last_stop, stop)
        if len(current) > 1:
            groups.append(current)
    return groups


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write ``tensors`` (name -> contiguous tensor) to ``filename`` in safetensors format.

    ``metadata`` is an optional dict of str -> str stored in the header.
    """
    keep_alive: list = []
    specs = _check_and_flatten(tensors, keep_alive)
    _package().serialize_file(specs, os.fspath(filename), metadata=metadata)


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (``safetensors.torch.save``)."""
    keep_alive: list = []
    specs = _check_and_flatten(tensors, keep_alive)
    return bytes(_package().serialize(specs, metadata=metadata))


# -- loading ----------------------------------------------------------------------------------


def _to_tensor(name, array, code, device):
    dtype = _CODES.get(code)
    if dtype is None:
        raise TypeError(
            f"tensor {name!r} has safetensors dtype {code}, which minitorch_nn does not have"
        )
    array = array.view(dtype.numpy_dtype) if array.dtype != dtype.numpy_dtype else array
    if device.type == "meta":
        return _new_meta(array.shape, dtype)
    # arrays from deserialize() read the caller's bytes: copy those; safe_open's are our own
    array = np.asarray(array, order="C") if array.flags.writeable else np.array(array, order="C")
    t = _from_array(array, dtype)
    return t if device == CPU else t.to(device)


def _raise_damaged(e: BaseException):
    """Raise our error for a malformed file, chained to the package's.

    Callers catch BaseException because pyo3 derives a Rust panic from it; KeyboardInterrupt
    and SystemExit go on as they are.
    """
    if isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise e
    raise CheckpointError(
        f"cannot read safetensors data: {e}\n(The file is damaged or not a safetensors file.)"
    ) from e


def load_file(filename, device="cpu") -> dict:
    """Read a safetensors file into a dict of name -> tensor on ``device`` (cpu, meta or cuda)."""
    safetensors = _package()
    dev = _canonical_device(device)
    path = os.fspath(filename)
    try:
        with safetensors.safe_open(path, framework="np") as f:
            out = {}
            for name in f.keys():
                code = f.get_slice(name).get_dtype()
                array = f.get_tensor(name) if code in _CODES else np.empty(0)
                out[name] = (array, code)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except BaseException as e:  # SafetensorError, header errors, a Rust panic
        _raise_damaged(e)
    return {name: _to_tensor(name, array, code, dev) for name, (array, code) in out.items()}


def load(data: bytes, device="cpu") -> dict:
    """Tensors from safetensors ``data`` bytes (``safetensors.torch.load``)."""
    safetensors = _package()
    dev = _canonical_device(device)
    try:
        flat = safetensors.deserialize(bytes(data))
    except BaseException as e:
        _raise_damaged(e)
    out = {}
    for name, info in flat:
        code = info["dtype"]
        dtype = _CODES.get(code)
        if dtype is None:
            raise TypeError(
                f"tensor {name!r} has safetensors dtype {code}, which minitorch_nn does not have"
            )
        array = np.frombuffer(info["data"], dtype=dtype.numpy_dtype).reshape(info["shape"])
        out[name] = _to_tensor(name, array, code, dev)
    return out


def load_metadata(filename) -> dict | None:
    """The header's ``__metadata__`` dict (str -> str), or None."""
    safetensors = _package()
    try:
        with safetensors.safe_open(os.fspath(filename), framework="np") as f:
            return f.metadata()
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except BaseException as e:
        _raise_damaged(e)


safetensors_save = save_file
safetensors_load = load_file

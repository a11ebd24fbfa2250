"""Reads PyTorch's legacy checkpoint format (``torch.save`` before 1.6, or with
``_use_new_zipfile_serialization=False``); mirrors ``torch/serialization.py::_legacy_load``.

The file is five things one after another, each read with the restricted unpickler:

1. the magic number ``0x1950a86a20f9469cfc6c`` (a pickled int),
2. the protocol version ``1001``,
3. ``sys_info``, a dict (``little_endian``, type sizes),
4. the object itself, whose storages are persistent ids
   ``('storage', torch.FloatStorage, key, location, numel, view_metadata)``,
5. the list of storage keys, followed, for each key, by the element count (8-byte integer)
   and the raw bytes.

Because the bytes come *after* the object, storages are allocated while unpickling (after
checking that the file is long enough to hold them) and filled at the end. There is no
checksum in this format. Each pickle is read from memory when it lies within the next 64 MiB
(the unpickler then asks BytesIO for its bytes, in C, instead of a Python call per opcode: as
fast as the zip reader), else through the bounded stream. Storages can only be placed on cpu or meta here; load on cpu and
move tensors with ``.to()`` otherwise.
"""

from __future__ import annotations

import io

import numpy as np

from minitorch_nn._device import CPU, META
from minitorch_nn._serialization.unpickler import (
    CheckpointStorage,
    CheckpointUnpickler,
    UnpicklingError,
)
from minitorch_nn._serialization.zip_reader import CheckpointError

# A pickle that lies within this many bytes of where it starts is read from memory (see load_legacy).
_IN_MEMORY = 64 << 20

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def _no_storages(*args):
    raise UnpicklingError("a storage may only appear in the main object of a legacy checkpoint")


class _Bounded:
    """The file as the unpickler sees it: a read never asks for more than the file holds.

    A pickle states string lengths itself; ``BufferedReader.read(n)`` allocates ``n`` bytes up
    front, so a lying length of 2**40 must be cut down to what is left before reading.
    """

    def __init__(self, stream, end):
        self._stream, self._end = stream, end

    def read(self, n=-1):
        left = max(self._end - self._stream.tell(), 0)
        return self._stream.read(left if n is None or n < 0 else min(n, left))

    def readline(self):
        return self._stream.readline(1 << 26)


def load_legacy(stream, target):
    """Load a legacy checkpoint from ``stream``; ``target(location)`` is the planned device."""
    start = stream.tell()
    end = stream.seek(0, 2)
    stream.seek(start)
    bounded = _Bounded(stream, end)

    size = end - start

    def unpickle(storage_loader, reset=None):
        """The pickle at the stream's position. It is read from memory when it lies within the
        next ``_IN_MEMORY`` bytes (the unpickler then reads through BytesIO's C code, not one
        Python call per opcode); a longer one is read again through the stream, after ``reset``
        forgot what the first try made."""
        pos = stream.tell()
        left = end - pos
        chunk = stream.read(min(left, _IN_MEMORY))
        buf = io.BytesIO(chunk)
        try:
            result = CheckpointUnpickler(buf, storage_loader, size=size).load()
        except Exception:   # (a pickle cut short fails in many ways: EOFError, IndexError...)
            if buf.tell() < len(chunk) or len(chunk) == left:
                raise   # a real error, not the end of what was read into memory
            stream.seek(pos)
            if reset is not None:
                reset()
            return CheckpointUnpickler(bounded, storage_loader, size=size).load()
        stream.seek(pos + buf.tell())
        return result

    def plain():
        return unpickle(_no_storages)

    if plain() != MAGIC_NUMBER:
        raise CheckpointError("Invalid magic number; corrupt file?")
    version = plain()
    if version != PROTOCOL_VERSION:
        raise CheckpointError(f"Invalid protocol version: {version!r:.50}")
    sys_info = plain()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True) is not False

    storages: dict[str, CheckpointStorage] = {}
    budget = [end - stream.tell()]  # every storage's bytes must fit in what is left of the file
    budget_at_start = budget[0]

    def reset():
        storages.clear()
        budget[0] = budget_at_start

    def load_storage(dtype, key, location, numel, view=None):
        root = storages.get(key)
        if root is None:
            nbytes = numel * dtype.itemsize
            if nbytes + 8 > budget[0]:
                raise CheckpointError(
                    f"storage {key!r} declares {numel} {dtype} elements, more than the file holds"
                )
            budget[0] -= nbytes + 8
            device = target(location)
            if device not in (CPU, META):
                raise CheckpointError(
                    f"legacy checkpoints load on cpu or meta only (map_location gave {device}); "
                    "load with map_location='cpu' and move the tensors with .to()"
                )
            array = None if device == META else np.empty(numel, dtype.numpy_dtype)
            root = storages[key] = CheckpointStorage(array, dtype, device, numel, key)
        elif root.dtype is not dtype or root.numel != numel:
            raise CheckpointError(
                f"storage {key!r} is described twice differently: the checkpoint is damaged"
            )
        if view is None:
            return root
        view_key, offset, size = view
        if offset + size > root.numel:
            raise CheckpointError(f"storage view {view_key!r} reaches past storage {key!r}")
        array = None if root.array is None else root.array[offset : offset + size]
        return CheckpointStorage(array, dtype, root.device, size, view_key)

    result = unpickle(load_storage, reset)
    keys = plain()
    if type(keys) is not list or not all(type(k) is str for k in keys):
        raise CheckpointError("the legacy checkpoint's storage key list is malformed")
    for key in keys:
        storage = storages.get(key)
        if storage is None:
            raise CheckpointError(
                f"the legacy checkpoint lists storage {key!r} that no tensor uses"
            )
        head = stream.read(8)
        if len(head) != 8:
            raise CheckpointError(f"the legacy checkpoint is truncated at storage {key!r}")
        count = int.from_bytes(head, "little" if little else "big", signed=True)
        if count != storage.numel:
            raise CheckpointError(
                f"storage {key!r} holds {count} elements in the file but {storage.numel} in its description"
            )
        nbytes = count * storage.dtype.itemsize
        if storage.array is None:
            stream.seek(nbytes, 1)
            continue
        view = memoryview(storage.array.view(np.uint8))
        got = 0
        while got < nbytes:
            n = stream.readinto(view[got:]) if hasattr(stream, "readinto") else 0
            if not n:
                raise CheckpointError(f"the legacy checkpoint is truncated in storage {key!r}")
            got += n
        if not little and storage.dtype.itemsize > 1:
            storage.array.byteswap(inplace=True)
    missing = set(storages) - set(keys)
    if missing:
        raise CheckpointError(
            f"the legacy checkpoint has no data for storages {sorted(missing)[:5]}"
        )
    return result

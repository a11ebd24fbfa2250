"""``minitorch_nn.save`` and ``minitorch_nn.load`` in PyTorch's own checkpoint format.

Mirrors ``torch/serialization.py``: a file written here is a PyTorch zip checkpoint that
``torch.load(f, weights_only=True)`` reads, and ``torch.save`` output loads here, with the same
values, dtypes (bfloat16 included), strides, ``requires_grad``, Parameters, OrderedDict
``_metadata`` and *sharing*: tensors that viewed one storage when saved view one storage
after loading, as in PyTorch. How the file is laid out, and how each piece is read, is in
``_serialization/`` (``zip_writer``, ``zip_reader``, ``pickler``, ``unpickler``).

Loading is safe by construction: the file's ``data.pkl`` is read by a restricted unpickler that
maps a fixed list of names (tensor rebuild functions, storage and dtype names, OrderedDict...)
to our own functions and refuses everything else. It never imports or calls anything a file
names.

Where we differ from PyTorch:

* Loading follows PyTorch's ``weights_only`` rule: the default (``True``, also for ``None``)
  reads with the restricted reader, which never imports or calls anything a file names;
  ``weights_only=False`` uses Python's own unpickling (``_serialization/full_unpickler.py``),
  which **runs code**, as PyTorch's does: it is how a whole pickled model (``save(model, f)``,
  written by class reference) loads, and it is only for files you trust. Names under
  ``torch.`` are looked up under ``minitorch_nn.``; PyTorch is never imported.
* A damaged file gets a specific error (truncated record, CRC mismatch, a tensor reading past
  its storage, a storage record of the wrong size, an unexpected archive member) where PyTorch
  may fail later or with a generic miniz message. Storage bytes are checked against the
  archive's CRC-32, which PyTorch skips (it loads a flipped bit silently); ``mmap=True`` skips
  the check, as PyTorch does. Each error is a ``RuntimeError``
  (:class:`CheckpointError`) or ``pickle.UnpicklingError``, as in PyTorch.
* PyTorch's legacy (pre-1.6) format is read (``_serialization/legacy.py``) onto cpu or meta
  only; ``save`` writes only the zip format.

Example::

    >>> import minitorch_nn as torch
    >>> torch.save({"w": torch.ones(2, 3)}, "ckpt.pt")
    >>> torch.load("ckpt.pt")["w"].shape
    torch.Size([2, 3])

    # loading weights into a model, from a file written here or by PyTorch:
    >>> model.load_state_dict(torch.load("ckpt.pt"))   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
import mmap as mmap_module
import os
import pickle

import numpy as np

from minitorch_nn._device import CPU, META
from minitorch_nn._device import canonical as _canonical_device
from minitorch_nn._device import device as _device_type
from minitorch_nn._serialization.full_unpickler import FullCheckpointUnpickler
from minitorch_nn._serialization.legacy import load_legacy
from minitorch_nn._serialization.pickler import CheckpointPickler
from minitorch_nn._serialization.unpickler import (
    USER_GLOBALS,
    CheckpointStorage,
    CheckpointUnpickler,
    global_name,
    weights_only_failure,
)
from minitorch_nn._serialization.zip_reader import CheckpointError, CheckpointZipReader
from minitorch_nn._serialization.zip_writer import ALIGNMENT, CheckpointZipWriter

__all__ = [
    "save",
    "load",
    "CheckpointError",
    "CheckpointStorage",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
]

_ZIP_MAGIC = b"PK\x03\x04"


# ---------------------------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------------------------


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save ``obj`` (tensors, state dicts, containers; any picklable object) to ``f``.

    ``f`` is a path or a binary file object with ``write``. The file is a PyTorch zip
    checkpoint (``archive/data.pkl`` plus one raw little-endian record per storage), readable by
    ``torch.load(f, weights_only=True)``. Tensors sharing a storage are written once and share
    it again after loading; the whole storage is written, as PyTorch does, even for a slice.

    Other objects (a whole ``nn.Module``...) are pickled by class reference, as by
    ``torch.save``; loading them needs ``load(f, weights_only=False)``. Everything is pickled in
    memory first, so an object that cannot be pickled fails before ``f`` is opened or written. ``pickle_protocol`` is accepted for
    compatibility; ``data.pkl`` is always written with protocol 2, PyTorch's default.
    """
    if pickle_module not in (None, pickle):
        raise TypeError(
            "minitorch_nn.save writes with its own pickler; pickle_module must be None or pickle"
        )
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "minitorch_nn.save writes only the zip format (PyTorch's default since 1.6); "
            "the legacy format (_use_new_zipfile_serialization=False) is not supported"
        )
    buf = io.BytesIO()
    pickler = CheckpointPickler(buf)
    pickler.dump(obj)
    data_pkl = buf.getvalue()
    storages = list(pickler.storages.values())  # in the order met, as PyTorch writes them

    def write(stream, archive_name):
        writer = CheckpointZipWriter(stream, archive_name)
        writer.write_record("data.pkl", data_pkl)
        writer.write_record(".format_version", b"1")
        writer.write_record(".storage_alignment", str(ALIGNMENT).encode())
        if not _disable_byteorder_record:
            writer.write_record("byteorder", b"little")
        for ref in storages:
            writer.write_record(f"data/{ref.key}", ref.host_bytes())
        writer.close()

    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        # PyTorch names the top folder after the file (``model.pt`` -> ``model/``).
        archive_name = os.path.splitext(os.path.basename(path))[0] or "archive"
        with open(path, "wb") as stream:
            write(stream, archive_name)
    elif hasattr(f, "write"):
        write(f, "archive")
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise AttributeError(
            f"'{type(f).__name__}' object has no attribute 'write' (save needs a path or a binary file)"
        )


# ---------------------------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------------------------


def load(
    f,
    map_location=None,
    pickle_module=None,
    *,
    weights_only: bool | None = True,
    mmap: bool | None = None,
    **pickle_load_args,
):
    """Load an object saved by :func:`save` or by ``torch.save``.

    Parameters
    ----------
    f : path or binary file object (with ``read`` and ``seek``)
    map_location : where storages go, as in PyTorch:

        * ``None``: where they were saved (``'cpu'``; ``'cuda:N'`` needs a CUDA device);
        * a ``str`` or :class:`device` (``'cpu'``, ``'cuda:0'``, ``'meta'``): everything there.
          ``'meta'`` gives meta tensors (shapes, dtypes and strides only) and reads no data;
        * a ``dict`` mapping saved locations to new ones (``{'cuda:0': 'cpu'}``);
        * a callable ``fn(storage, location)`` returning a :class:`CheckpointStorage` (for
          example ``lambda s, loc: s`` keeps everything on cpu) or ``None`` for the default.
    weights_only : ``True`` (the default; ``None`` means the same): the restricted reader, which
        never imports or executes anything a checkpoint names; a file that needs other Python
        objects is refused with PyTorch's message (:func:`add_safe_globals` allows a class or
        function you trust). ``False``: Python's own unpickling, which imports and calls what the
        file names -- it can run arbitrary code; use it only for files you trust (a whole pickled
        model needs it).
    mmap : if true, storages of a file given by path are memory-mapped (copy-on-write, like
        PyTorch's ``MAP_PRIVATE``) instead of read into memory.

    Raises ``pickle.UnpicklingError`` for a pickle that asks for anything not allowed (naming
    it), and :class:`CheckpointError` (a ``RuntimeError``) for a damaged archive.
    """
    if pickle_module not in (None, pickle):
        raise RuntimeError(
            "Can not safely load weights when explicit pickle_module is specified\n"
            "(minitorch_nn always reads checkpoints with its own restricted unpickler.)"
        )
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(unknown)}")
    unpickler = CheckpointUnpickler if weights_only or weights_only is None else FullCheckpointUnpickler
    try:
        if isinstance(f, (str, os.PathLike)):
            path = os.fspath(f)
            with open(path, "rb") as stream:
                return _load_stream(stream, map_location, path if mmap else None, unpickler)
        if mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        if not (hasattr(f, "read") and hasattr(f, "seek")):
            raise AttributeError(
                f"'{type(f).__name__}' object has no attribute 'read' (load needs a path or a binary file)"
            )
        return _load_stream(f, map_location, None, unpickler)
    except pickle.UnpicklingError as e:
        if unpickler is FullCheckpointUnpickler:
            raise
        raise pickle.UnpicklingError(weights_only_failure(str(e))) from None


def _load_stream(stream, map_location, mmap_path, unpickler_class=CheckpointUnpickler):
    start = stream.tell() if hasattr(stream, "tell") else 0
    magic = stream.read(4)
    stream.seek(start)
    if magic[:1] == b"\x80":  # a pickle: the legacy (pre-1.6) format
        planned = _StorageLoader(None, map_location, "little", None).planned_device
        return _guarded(lambda: load_legacy(stream, lambda location: planned(location) or CPU))
    if magic != _ZIP_MAGIC:
        raise _not_a_zip(magic)
    reader = CheckpointZipReader(stream)
    if not reader.has_record("data.pkl"):
        raise CheckpointError(
            "PytorchStreamReader failed locating file data.pkl: file not found\n"
            f"(the archive's records are {reader.record_names()[:10]}; a torch.save file has data.pkl)"
        )
    byteorder = "little"
    if reader.has_record("byteorder"):
        byteorder = reader.get_record("byteorder", limit=16).decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise CheckpointError(
                f"Unknown endianness type: {byteorder!r} (expected 'little' or 'big')"
            )
    data_pkl = reader.get_record("data.pkl")
    loader = _StorageLoader(reader, map_location, byteorder, mmap_path)
    unpickler = unpickler_class(io.BytesIO(data_pkl), loader)

    def unpickle():
        result = unpickler.load()
        reader.verify()  # the storage CRCs checked on a helper thread while reading
        return result

    if unpickler_class is not CheckpointUnpickler:
        # the caller's own classes run here: their errors are theirs, passed on unchanged
        try:
            return unpickle()
        except _UserError as e:
            raise e.error from None
    return _guarded(unpickle)


def _guarded(unpickle):
    """Run ``unpickle``, turning the many exception types a malformed pickle causes into one."""
    try:
        return unpickle()
    except _UserError as e:  # raised by the caller's map_location: theirs, passed on unchanged
        raise e.error from None
    except (pickle.UnpicklingError, RuntimeError):
        raise
    except Exception as e:  # a malformed pickle makes pickle's own code raise many types
        raise pickle.UnpicklingError(
            f"the checkpoint's data.pkl is malformed ({type(e).__name__}: {e})"
        ) from e


def _not_a_zip(magic: bytes) -> Exception:
    return CheckpointError(
        "PytorchStreamReader failed reading zip archive: failed finding central directory\n"
        f"(the file starts with {magic!r}; a PyTorch checkpoint is a zip archive starting with "
        f"{_ZIP_MAGIC!r}. It may be empty, truncated, or not a checkpoint.)"
    )


class _UserError(Exception):
    """Carries an exception from a ``map_location`` callable through the unpickler unchanged."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class _StorageLoader:
    """Reads each storage the pickle asks for, once, and puts it where ``map_location`` says."""

    def __init__(self, reader, map_location, byteorder, mmap_path):
        self.reader, self.map_location, self.byteorder, self.mmap_path = (
            reader,
            map_location,
            byteorder,
            mmap_path,
        )
        self.cache: dict[str, CheckpointStorage] = {}

    def __call__(self, dtype, key, location, numel):
        hit = self.cache.get(key)
        if hit is not None:
            if hit.dtype is not dtype or hit.numel != numel:
                raise CheckpointError(
                    f"storage {key!r} is described twice differently ({hit.dtype}[{hit.numel}] and "
                    f"{dtype}[{numel}]): the checkpoint is damaged"
                )
            return hit
        record = f"data/{key}"
        if not self.reader.has_record(record):
            raise CheckpointError(
                f"PytorchStreamReader failed locating file {record}: file not found"
            )
        nbytes = numel * dtype.itemsize
        if self.reader.record_size(record) != nbytes:
            raise CheckpointError(
                f"storage {key!r} declares {numel} {dtype} elements ({nbytes} bytes) but its record "
                f"{record} holds {self.reader.record_size(record)} bytes: the checkpoint is damaged"
            )
        if self.planned_device(location) == META:
            storage = CheckpointStorage(None, dtype, META, numel, key)  # no data read
        else:
            storage = CheckpointStorage(self._read(record, dtype, numel), dtype, CPU, numel, key)
            storage = self._restore(storage, location)
        self.cache[key] = storage
        return storage

    def _read(self, record, dtype, numel):
        if (
            self.mmap_path is not None
            and numel
            and self.byteorder == "little"
            and self.reader.is_stored(record)
        ):
            offset = self.reader.data_offset(record)
            mapped = np.memmap(
                self.mmap_path, dtype=dtype.numpy_dtype, mode="c", offset=offset, shape=(numel,)
            )
            return mapped.view(np.ndarray)
        array = _new_storage(numel, dtype.numpy_dtype)
        self.reader.read_into(record, array.view(np.uint8), defer_check=True)
        if self.byteorder == "big" and dtype.itemsize > 1:
            array.byteswap(inplace=True)
        return array

    def planned_device(self, location):
        m = self.map_location
        if m is None:
            where = location
        elif isinstance(m, dict):
            where = m.get(location, location)
        elif isinstance(m, (str, _device_type)):
            where = m
        else:
            return None  # a callable decides after the data is read
        return _safe_canonical(where)

    def _restore(self, storage, location):
        m = self.map_location
        if m is None:
            return _to_location(storage, location)
        if isinstance(m, dict):
            return _to_location(storage, m.get(location, location))
        if isinstance(m, (str, _device_type)):
            return _to_location(storage, m)
        if callable(m):
            try:
                result = m(storage, location)
            except Exception as e:
                raise _UserError(e) from e
            if result is None:
                return _to_location(storage, location)
            if type(result) is not CheckpointStorage:
                raise _UserError(
                    TypeError(
                        f"map_location callable must return a storage (the one it was given, or its .to(device)) "
                        f"or None, got {type(result).__name__}"
                    )
                )
            return result
        raise _UserError(
            TypeError(
                f"map_location must be None, a str, a device, a dict or a callable, got {type(m).__name__}"
            )
        )


_HUGE = 2 << 20  # 2 MiB, the size of one transparent huge page on x86-64 and arm64


def _new_storage(numel, np_dtype):
    """An uninitialised flat array for a storage about to be filled from the file.

    Filling fresh memory is dominated by page faults. On Linux a big storage gets its own
    anonymous mapping marked ``MADV_HUGEPAGE``: the kernel aligns such mappings to 2 MiB and
    backs them with huge pages, one fault per 2 MiB instead of per 4 KiB (about 3x faster to
    fill here). The array owns the mapping; it is unmapped when the array is freed.
    """
    nbytes = numel * np.dtype(np_dtype).itemsize
    if nbytes >= _HUGE and hasattr(mmap_module, "MADV_HUGEPAGE"):
        try:
            region = mmap_module.mmap(
                -1, nbytes, flags=mmap_module.MAP_PRIVATE | mmap_module.MAP_ANONYMOUS
            )
            region.madvise(mmap_module.MADV_HUGEPAGE)
            return np.frombuffer(region, dtype=np_dtype, count=numel)
        except (OSError, ValueError):
            pass
    return np.empty(numel, dtype=np_dtype)


def _safe_canonical(where):
    try:
        return _canonical_device(where)
    except (RuntimeError, TypeError, ValueError):
        return None


def _cuda_available() -> bool:
    try:
        from minitorch_nn import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def _to_location(storage, where):
    try:
        dev = _canonical_device(where)
    except (RuntimeError, TypeError, ValueError) as e:
        raise RuntimeError(
            f"cannot restore a storage saved on {where!r}: {e}\n"
            "Use map_location='cpu' to load everything on the CPU."
        ) from None
    if dev.type == "cuda" and not _cuda_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU."
        )
    return storage.to(dev)


# ---------------------------------------------------------------------------------------------
# user-approved globals (torch.serialization.add_safe_globals)
# ---------------------------------------------------------------------------------------------


def add_safe_globals(safe_globals: list) -> None:
    """Allow checkpoints to name these classes/functions (``torch.serialization.add_safe_globals``).

    Each entry is an object or an ``(object, "module.name")`` pair. A file may then call the
    object (``REDUCE``) and set its instances' state (``BUILD``): only allow code you trust.
    """
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, name = entry
        else:
            obj, name = entry, global_name(entry)
        USER_GLOBALS[name] = obj


def get_safe_globals() -> list:
    """The user-approved globals (``torch.serialization.get_safe_globals``)."""
    return list(USER_GLOBALS.values())


def clear_safe_globals() -> None:
    """Forget all user-approved globals."""
    USER_GLOBALS.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Allow ``safe_globals`` inside a ``with`` block only (``torch.serialization.safe_globals``)."""
    before = dict(USER_GLOBALS)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        USER_GLOBALS.clear()
        USER_GLOBALS.update(before)

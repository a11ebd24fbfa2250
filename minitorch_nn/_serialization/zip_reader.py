"""Reads PyTorch's checkpoint zip archive, checking it before trusting it.

Mirrors ``PyTorchStreamReader`` (``caffe2/serialize/inline_container.cc``): every member sits
under one top folder (``archive/`` or the saved file's stem), storages are uncompressed
records, and ``data.pkl`` is read first. Python's :mod:`zipfile` parses the central directory;
the bytes of a record are read here straight into the numpy array that becomes the storage, so
a 100 MB checkpoint is copied once.

Where we are stricter than PyTorch (a file PyTorch writes always passes):

* a member must be one PyTorch writes (``data.pkl``, ``data/<key>``, ``version``, ``byteorder``,
  ``.format_version``, ``.storage_alignment``, ``.data/...``); anything else is an error,
  and a TorchScript archive (``code/``, ``constants.pkl``) is named as such;
* duplicate names, a local header that disagrees with the central directory, a record that
  runs past the end of the file, a stored record whose two sizes differ, a compression ratio
  DEFLATE cannot reach, and a CRC mismatch are errors; all are checked before ``load`` returns
  (PyTorch never checks storage CRCs). Sizes are checked against the bytes in the file before
  anything is allocated for them, so a small file never makes ``load`` allocate much.

Deflated records (a checkpoint someone re-zipped) are read too, as PyTorch's reader does.

Every problem is raised as :class:`CheckpointError` (a ``RuntimeError``, PyTorch's type for
archive errors) whose message starts like PyTorch's.
"""

from __future__ import annotations

import os
import re
import struct
import zipfile
import zlib

_ASYNC_CRC_BYTES = 1 << 20  # records this big are checksummed on a helper thread
_POOL: dict[int, object] = {}  # process id -> executor


def crc_pool():
    # One helper thread per process: a child made by fork() (a DataLoader worker) has the
    # executor object but not its thread, and would wait forever on it.
    pid = os.getpid()
    if pid not in _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.clear()
        _POOL[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minitorch_nn-crc")
    return _POOL[pid]


class CheckpointError(RuntimeError):
    """A checkpoint file is damaged, truncated, or not a PyTorch checkpoint."""


_READER = "PytorchStreamReader failed reading zip archive: "
_KNOWN_RECORDS = {"data.pkl", "version", "byteorder", ".format_version", ".storage_alignment"}
_STORAGE_RECORD = re.compile(r"data/[A-Za-z0-9_.\-]+\Z")
_DOT_DATA_RECORD = re.compile(r"\.data/[A-Za-z0-9_.\-]+\Z")


def _damaged(detail: str) -> CheckpointError:
    return CheckpointError(
        _READER
        + detail
        + "\n(The checkpoint is damaged or not a PyTorch zip checkpoint: it may have "
        "been truncated while saving or copying. Save it again from its source.)"
    )


def _bad_crc(info) -> CheckpointError:
    return _damaged(f"invalid CRC-32 for record {info.filename!r} (the bytes were changed)")


class CheckpointZipReader:
    """The records of a checkpoint archive in a seekable binary stream."""

    def __init__(self, stream):
        self._f = stream
        self._pending = []  # (ZipInfo, future CRC) of records read with defer_check
        try:
            self._end = stream.seek(0, 2)
            stream.seek(0)
            self._zip = zipfile.ZipFile(stream)
            infos = self._zip.infolist()
        except Exception as e:  # zipfile raises many types on damaged input
            raise _damaged(f"failed finding central directory ({type(e).__name__}: {e})") from e
        if not infos:
            raise _damaged("the archive has no records")
        prefix = infos[0].filename.split("/", 1)[0]
        self.prefix = prefix
        self._records: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if not name.startswith(prefix + "/"):
                raise _damaged(f"file in archive is not in a subdirectory {prefix}/: {name}")
            rel = name[len(prefix) + 1 :]
            if rel in self._records:
                raise _damaged(f"duplicate record {name!r}")
            if rel.startswith("code/") or rel in ("constants.pkl", "bytecode.pkl"):
                raise CheckpointError(
                    f"{name!r}: this is a TorchScript archive (torch.jit.save), not a torch.save "
                    "checkpoint. minitorch_nn cannot run TorchScript code; in PyTorch, load it with "
                    "torch.jit.load and torch.save(model.state_dict()) instead."
                )
            if not (
                rel in _KNOWN_RECORDS or _STORAGE_RECORD.match(rel) or _DOT_DATA_RECORD.match(rel)
            ):
                raise CheckpointError(
                    f"unexpected record {name!r} in the checkpoint archive; a torch.save file holds only "
                    "data.pkl, data/<key>, version, byteorder, .format_version, .storage_alignment and .data/*"
                )
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise _damaged(
                    f"record {name!r} uses unsupported compression method {info.compress_type}"
                )
            if (
                info.file_size < 0
                or info.header_offset < 0
                or info.header_offset + 30 + info.compress_size > self._end
            ):
                raise _damaged(
                    f"record {name!r} claims {info.compress_size} bytes past the end of the file"
                )
            if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
                # checked here, before anything is allocated for the size the entry claims
                raise _damaged(f"stored record {name!r} has two different sizes")
            if (
                info.compress_type == zipfile.ZIP_DEFLATED
                and info.file_size > 1032 * info.compress_size + 1024
            ):
                # DEFLATE cannot expand more than 1032:1; a bigger claim is a lie (or a bomb)
                raise _damaged(
                    f"record {name!r} claims to inflate {info.compress_size} bytes to {info.file_size}"
                )
            self._records[rel] = info

    # -- queries ----------------------------------------------------------------------------
    def has_record(self, name: str) -> bool:
        return name in self._records

    def record_size(self, name: str) -> int:
        return self._records[name].file_size

    def is_stored(self, name: str) -> bool:
        """True when the record's bytes lie uncompressed in the file (so they can be mapped)."""
        return self._records[name].compress_type == zipfile.ZIP_STORED

    def record_names(self):
        return list(self._records)

    def data_offset(self, name: str) -> int:
        """Where the (uncompressed) bytes of ``name`` start in the file, after checking its header."""
        info = self._records[name]
        self._f.seek(info.header_offset)
        header = self._f.read(30)
        if len(header) != 30:
            raise _damaged(f"truncated local header for {info.filename!r}")
        sig, _, flags, method, _, _, _, _, _, nlen, elen = struct.unpack("<IHHHHHIIIHH", header)
        if sig != 0x04034B50:
            raise _damaged(f"bad local header signature for {info.filename!r}")
        raw_name = self._f.read(nlen)
        encoding = "utf-8" if flags & 0x800 else "cp437"
        try:
            expected = info.orig_filename.encode(encoding)
        except UnicodeEncodeError:
            expected = None
        if raw_name != expected or method != info.compress_type:
            raise _damaged(
                f"local header of {info.filename!r} does not match the central directory"
            )
        start = info.header_offset + 30 + nlen + elen
        if start + info.compress_size > self._end:
            raise _damaged(f"record {info.filename!r} runs past the end of the file")
        return start

    # -- reading ----------------------------------------------------------------------------
    def get_record(self, name: str, limit: int = 1 << 31, max_ratio: int | None = None) -> bytes:
        """The bytes of a small record (``data.pkl``, ``version``...).

        Nothing is allocated on the archive's say-so: a stored record's bytes must lie in the file
        (checked when the archive was opened), and a deflated one is inflated chunk by chunk, so
        memory grows only with the bytes actually produced. ``max_ratio`` caps how far a deflated
        record may inflate (``data.pkl``: a pickle that inflates 1000-fold is a bomb, not a
        checkpoint).
        """
        info = self._records[name]
        size = info.file_size
        if size > limit:
            raise _damaged(f"record {name!r} is {size} bytes, more than the {limit} expected")
        if info.compress_type == zipfile.ZIP_STORED:
            out = bytearray(size)
            self.read_into(name, out)
            return bytes(out)
        if max_ratio is not None and size > max_ratio * info.compress_size + 4096:
            raise CheckpointError(
                f"record {info.filename!r} inflates from {info.compress_size} to {size} bytes, more than "
                f"{max_ratio} times; minitorch_nn refuses such a record as a decompression bomb. "
                "(If the file is genuine, re-save it with torch.save, which stores data.pkl uncompressed.)"
            )
        self.data_offset(name)
        chunks, got = [], 0
        try:
            with self._zip.open(info) as fh:
                while got < size:
                    chunk = fh.read(min(1 << 20, size - got))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    got += len(chunk)
        except Exception as e:
            raise _damaged(f"cannot inflate record {info.filename!r} ({type(e).__name__}: {e})") from e
        if got != size:
            raise _damaged(f"record {info.filename!r} is truncated ({got} of {size} bytes)")
        data = b"".join(chunks)
        if zlib.crc32(data) != info.CRC:
            raise _bad_crc(info)
        return data

    def inflate(self, name: str) -> bytearray:
        """A deflated record's bytes, inflated chunk by chunk and CRC-checked (no allocation of
        the size the archive declares before the bytes are produced)."""
        info = self._records[name]
        self.data_offset(name)
        out = bytearray()
        try:
            with self._zip.open(info) as fh:
                while len(out) < info.file_size:
                    chunk = fh.read(min(1 << 24, info.file_size - len(out)))
                    if not chunk:
                        break
                    out += chunk
        except Exception as e:
            raise _damaged(f"cannot inflate record {info.filename!r} ({type(e).__name__}: {e})") from e
        if len(out) != info.file_size:
            raise _damaged(f"record {info.filename!r} is truncated ({len(out)} of {info.file_size} bytes)")
        if zlib.crc32(out) != info.CRC:
            raise _bad_crc(info)
        return out

    def read_into(self, name: str, out, *, defer_check: bool = False) -> None:
        """Fill the writable buffer ``out`` (exactly the record's size) with the record's bytes.

        The CRC-32 is checked before returning, or, with ``defer_check``, by a helper thread
        while the caller reads the next record (``zlib.crc32`` and file reads both release the
        GIL); :meth:`verify` then waits for those checks. PyTorch does not check storage CRCs
        at all; this is how we afford to.
        """
        info = self._records[name]
        view = memoryview(out).cast("B")
        if view.nbytes != info.file_size:
            raise _damaged(
                f"record {info.filename!r} has {info.file_size} bytes, expected {view.nbytes}"
            )
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size:
                raise _damaged(f"stored record {info.filename!r} has two different sizes")
            self._f.seek(self.data_offset(name))
            got = 0
            while got < view.nbytes:
                n = self._readinto(view[got:])
                if not n:
                    raise _damaged(
                        f"record {info.filename!r} is truncated ({got} of {view.nbytes} bytes)"
                    )
                got += n
            if defer_check and view.nbytes >= _ASYNC_CRC_BYTES:
                self._pending.append((info, crc_pool().submit(zlib.crc32, view)))
                return
            crc = zlib.crc32(view)
        else:
            # Deflated records (a re-zipped checkpoint): zipfile inflates at most file_size bytes.
            self.data_offset(name)
            try:
                with self._zip.open(info) as fh:
                    got = 0
                    while got < view.nbytes:
                        chunk = fh.read(min(1 << 24, view.nbytes - got))
                        if not chunk:
                            break
                        view[got : got + len(chunk)] = chunk
                        got += len(chunk)
            except Exception as e:
                raise _damaged(
                    f"cannot inflate record {info.filename!r} ({type(e).__name__}: {e})"
                ) from e
            if got != view.nbytes:
                raise _damaged(
                    f"record {info.filename!r} is truncated ({got} of {view.nbytes} bytes)"
                )
            crc = zlib.crc32(view)
        if crc != info.CRC:
            raise _bad_crc(info)

    def verify(self) -> None:
        """Wait for the deferred CRC checks; raise if any record's bytes were changed."""
        pending, self._pending = self._pending, []
        for info, future in pending:
            if future.result() != info.CRC:
                raise _bad_crc(info)

    def _readinto(self, view) -> int:
        readinto = getattr(self._f, "readinto", None)
        if readinto is not None:
            return readinto(view) or 0
        chunk = self._f.read(view.nbytes)
        view[: len(chunk)] = chunk
        return len(chunk)

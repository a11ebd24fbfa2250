"""Writes PyTorch's checkpoint zip layout (mirrors ``caffe2/serialize/inline_container.cc``).

PyTorch's ``PyTorchStreamWriter`` (built on miniz) writes every record uncompressed and
streams it: the local header carries zero sizes and a *data descriptor* after the bytes gives
the CRC and sizes (general-purpose flag bit 3), so the writer never has to seek back. Each
local header has an extra field with id ``FB`` padded with ``Z`` bytes so that the record's
data starts at a multiple of 64 bytes (``.storage_alignment``): that is what makes
``torch.load(mmap=True)`` possible. The archive always ends with the zip64 end records.
We write the same bytes, so files from here and from PyTorch look alike to any tool.

Differences: none in the layout. We compute the CRC with ``zlib.crc32`` as PyTorch does by
default.
"""

from __future__ import annotations

import secrets
import struct
import zlib

from minitorch_nn._serialization.zip_reader import _ASYNC_CRC_BYTES, crc_pool

ALIGNMENT = 64
_ZIP64_LIMIT = 0xFFFFFFFF
_FLAGS = 0x0808  # bit 3: sizes in a data descriptor; bit 11: names are UTF-8


class CheckpointZipWriter:
    """Appends records to a binary stream as ``<archive_name>/<record>`` zip members.

    Only ``write`` is needed on the stream (no seek), like PyTorch's writer. Offsets in the
    zip are counted from where this writer started.
    """

    def __init__(self, stream, archive_name: str = "archive"):
        self._f = stream
        self._prefix = archive_name + "/"
        self._pos = 0
        self._entries = []  # (name bytes, crc, size, local header offset)
        self._closed = False

    def _write(self, data) -> None:
        self._f.write(data)
        self._pos += len(data) if isinstance(data, bytes) else memoryview(data).nbytes

    def write_record(self, name: str, data) -> None:
        """One member holding ``data`` (bytes or any contiguous buffer) at a 64-byte boundary."""
        full = (self._prefix + name).encode("utf-8")
        buf = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        size = len(buf)
        offset = self._pos
        # Padding so that the data (after 30 header bytes, the name and a 4-byte extra header)
        # starts at a multiple of ALIGNMENT.
        pad = (-(offset + 30 + len(full) + 4)) % ALIGNMENT
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        header = struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 0, _FLAGS, 0, 0, 0, 0, 0, 0, len(full), len(extra)
        )
        self._write(header + full + extra)
        if size >= _ASYNC_CRC_BYTES:
            # the CRC goes in the descriptor *after* the data, so a helper thread can compute it
            # while the data is written (both release the GIL)
            pending = crc_pool().submit(zlib.crc32, buf)
            self._write(buf)
            crc = pending.result()
        else:
            crc = zlib.crc32(buf)
            if size:
                self._write(buf)
        if size >= _ZIP64_LIMIT:
            descriptor = struct.pack("<IIQQ", 0x08074B50, crc, size, size)
        else:
            descriptor = struct.pack("<IIII", 0x08074B50, crc, size, size)
        self._write(descriptor)
        self._entries.append((full, crc, size, offset))

    def close(self) -> None:
        """Writes ``version`` and ``.data/serialization_id``, then the central directory."""
        if self._closed:
            return
        self._closed = True
        self.write_record("version", b"3\n")
        # PyTorch's id: two random 64-bit numbers, each as 20 zero-padded decimal digits.
        serial = f"{secrets.randbits(64):020d}{secrets.randbits(64):020d}"
        self.write_record(".data/serialization_id", serial.encode())
        cd_start = self._pos
        for name, crc, size, offset in self._entries:
            zip64 = b""
            if size >= _ZIP64_LIMIT:
                zip64 += struct.pack("<QQ", size, size)
            if offset >= _ZIP64_LIMIT:
                zip64 += struct.pack("<Q", offset)
            extra = struct.pack("<HH", 0x0001, len(zip64)) + zip64 if zip64 else b""
            small_size = _ZIP64_LIMIT if size >= _ZIP64_LIMIT else size
            small_offset = _ZIP64_LIMIT if offset >= _ZIP64_LIMIT else offset
            self._write(
                struct.pack(
                    "<IHHHHHHIIIHHHHHII",
                    0x02014B50,
                    0,
                    0,
                    _FLAGS,
                    0,
                    0,
                    0,
                    crc,
                    small_size,
                    small_size,
                    len(name),
                    len(extra),
                    0,
                    0,
                    0,
                    0,
                    small_offset,
                )
                + name
                + extra
            )
        cd_size = self._pos - cd_start
        n = len(self._entries)
        eocd64_offset = self._pos
        self._write(
            struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, n, n, cd_size, cd_start)
        )
        self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64_offset, 1))
        self._write(
            struct.pack(
                "<IHHHHIIH",
                0x06054B50,
                0,
                0,
                min(n, 0xFFFF),
                min(n, 0xFFFF),
                min(cd_size, _ZIP64_LIMIT),
                min(cd_start, _ZIP64_LIMIT),
                0,
            )
        )

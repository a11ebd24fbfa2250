"""Hostile and damaged checkpoints: each gets a clear error, runs nothing and creates nothing.

The pickles here are built by hand or with Python's own pickler, so these tests need no torch.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import subprocess
import tracemalloc
import zipfile

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn._serialization.pickler import (
    REBUILD_PARAMETER,
    REBUILD_TENSOR_V2,
    CheckpointPickler,
    StorageRef,
    TorchName,
)
from minitorch_nn._serialization.zip_writer import CheckpointZipWriter
from minitorch_nn.serialization import CheckpointError

BAD = (RuntimeError, pickle.UnpicklingError)


@pytest.fixture(autouse=True)
def in_empty_dir(tmp_path, monkeypatch):
    """Every test runs in an empty directory and checks that loading left it empty."""
    monkeypatch.chdir(tmp_path)
    yield
    assert os.listdir(tmp_path) == [], "loading created files"


def archive(records: dict, prefix="archive") -> io.BytesIO:
    out = io.BytesIO()
    w = CheckpointZipWriter(out, prefix)
    for name, data in records.items():
        w.write_record(name, data)
    w.close()
    out.seek(0)
    return out


def valid_file(obj=None) -> bytes:
    buf = io.BytesIO()
    base = mt.arange(12, dtype=mt.float32)
    mt.save(
        {"w": base.reshape(3, 4), "v": base[2:5], "i": mt.ones(2, dtype=mt.int64)}
        if obj is None
        else obj,
        buf,
    )
    return buf.getvalue()


class Call:
    """In a test pickle: call ``func(*args)`` (func is usually a TorchName)."""

    def __init__(self, func, *args):
        self.func, self.args = func, args


class _TestPickler(CheckpointPickler):
    def reducer_override(self, obj):
        if type(obj) is Call:
            return (obj.func, obj.args)
        return super().reducer_override(obj)


def pkl(obj) -> bytes:
    buf = io.BytesIO()
    _TestPickler(buf).dump(obj)
    return buf.getvalue()


# -- code execution attempts -----------------------------------------------------------------


class RunsShell:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class Popens:
    def __reduce__(self):
        return (subprocess.Popen, (["touch", "pwned_popen"],))


class Evals:
    def __reduce__(self):
        return (eval, ("open('pwned_eval', 'w')",))


# (weights_only=False is PyTorch's "I trust this file": it runs what the file names, as in
# PyTorch, so it is not exercised with a malicious file here.)
@pytest.mark.parametrize("weights_only", [True, None])
@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_os_system_is_refused_and_not_run(weights_only, protocol):
    evil = pickle.dumps({"w": 1, "x": RunsShell("touch pwned_system")}, protocol=protocol)
    f = archive({"data.pkl": evil, "byteorder": b"little"})
    with pytest.raises(pickle.UnpicklingError) as info:
        mt.load(f, weights_only=weights_only)
    msg = str(info.value)
    assert "Weights only load failed" in msg
    assert f"GLOBAL {os.system.__module__}.system" in msg and "is blocked" in msg
    assert not os.path.exists("pwned_system")


@pytest.mark.parametrize("evil,name", [(Popens(), "subprocess.Popen"), (Evals(), "eval")])
def test_other_globals_are_refused_by_name(evil, name):
    f = archive({"data.pkl": pickle.dumps([evil], protocol=2)})
    with pytest.raises(
        pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {name} was not an allowed global"
    ):
        mt.load(f)


def test_torch_features_we_lack_are_named():
    data = pkl(Call(TorchName("torch._utils", "_rebuild_qtensor"), 1))
    with pytest.raises(pickle.UnpicklingError, match="quantized tensors"):
        mt.load(archive({"data.pkl": data}))


@pytest.mark.parametrize(
    "raw",
    [
        b"(ios\nsystem\nS'touch pwned'\no.",  # INST
        b"\x80\x02cposix\nsystem\n.",  # the global alone
        b"\x80\x02(cbuiltins\nprint\nX\x01\x00\x00\x00ao.",  # OBJ
        b"\x80\x02\x82\x01.",  # EXT1
        b"\x80\x05\x97.",  # NEXT_BUFFER
        b"\x80\x02X\x03\x00\x00\x00abcQ.",  # BINPERSID with a str id
        b"\x80\x02Pfoo\n.",  # PERSID
        b"\x80\x02ctorch\nfloat32\n)R.",  # calling a dtype
        b"\x80\x02c__builtin__\nbytes\nJ\x00\x00\x00\x40\x85R.",  # bytes(1 GiB)
        b"\x80\x02ccollections\nOrderedDict\n)R]\x85R.",  # calling an OrderedDict instance
    ],
    ids=[
        "INST",
        "GLOBAL-posix",
        "OBJ",
        "EXT1",
        "NEXT_BUFFER",
        "str-pid",
        "PERSID",
        "REDUCE-dtype",
        "bytes-n",
        "REDUCE-instance",
    ],
)
def test_forbidden_opcodes_and_calls(raw):
    with pytest.raises(pickle.UnpicklingError):
        mt.load(archive({"data.pkl": raw}))
    assert not os.path.exists("pwned")


def test_build_cannot_change_our_dtypes_or_functions():
    # BUILD with slot state on the float32 singleton would rename it for the whole process
    raw = b"\x80\x02ctorch\nfloat32\nN}X\x04\x00\x00\x00nameX\x04\x00\x00\x00evils\x86b."
    with pytest.raises(pickle.UnpicklingError, match="Can only build"):
        mt.load(archive({"data.pkl": raw}))
    assert mt.float32.name == "float32"
    raw = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nN}X\x0c\x00\x00\x00__defaults__)s\x86b."
    with pytest.raises(pickle.UnpicklingError, match="Can only build"):
        mt.load(archive({"data.pkl": raw}))


@pytest.mark.parametrize("attr", ["__class__", "requires_grad", "data", "add_"])
def test_saved_tensor_state_cannot_reach_tensor_machinery(attr):
    storage = StorageRef("0", np.zeros(2, np.float32), mt.float32, 2, "cpu")
    args = (storage, 0, (2,), (1,), False, collections.OrderedDict())
    data = pkl(
        Call(
            TorchName("torch._tensor", "_rebuild_from_type_v2"),
            REBUILD_TENSOR_V2,
            TorchName("torch", "Tensor"),
            args,
            {attr: 1},
        )
    )
    f = archive({"data.pkl": data, "data/0": bytes(8)})
    with pytest.raises(pickle.UnpicklingError, match="may not set the attribute"):
        mt.load(f)


def test_appends_and_setitems_only_on_containers():
    t = Call(
        REBUILD_TENSOR_V2,
        StorageRef("0", np.zeros(2, np.float32), mt.float32, 2, "cpu"),
        0,
        (2,),
        (1,),
        False,
        collections.OrderedDict(),
    )
    data = pkl(t)[:-1] + b"K\x00K\x01s."  # tensor[0] = 1 through SETITEM
    with pytest.raises(pickle.UnpicklingError, match="Can only SETITEM"):
        mt.load(archive({"data.pkl": data, "data/0": bytes(8)}))
    data = pkl(t)[:-1] + b"K\x01a."  # APPEND to a tensor
    with pytest.raises(pickle.UnpicklingError, match="Can only APPEND"):
        mt.load(archive({"data.pkl": data, "data/0": bytes(8)}))


# -- lies about sizes ------------------------------------------------------------------------


def tensor_file(numel_in_id, record_bytes, size=(3,), stride=(1,), offset=0):
    ref = StorageRef("0", np.zeros(1, np.float32), mt.float32, numel_in_id, "cpu")
    data = pkl(Call(REBUILD_TENSOR_V2, ref, offset, size, stride, False, collections.OrderedDict()))
    return archive({"data.pkl": data, "byteorder": b"little", "data/0": bytes(record_bytes)})


def test_storage_size_that_does_not_match_its_record():
    with pytest.raises(
        CheckpointError,
        match=r"declares 100 torch.float32 elements \(400 bytes\) but its record data/0 holds 12",
    ):
        mt.load(tensor_file(100, 12))


@pytest.mark.parametrize(
    "size,stride,offset",
    [((4,), (1,), 0), ((2,), (1,), 2), ((2, 2), (2, 1), 0), ((3,), (2,), 0), ((1 << 40,), (1,), 0)],
)
def test_tensor_reading_past_its_storage(size, stride, offset):
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 12"):
        mt.load(tensor_file(3, 12, size, stride, offset))


@pytest.mark.parametrize(
    "size,stride,offset", [((3,), (-1,), 2), ((-1,), (1,), 0), ((3,), (1, 1), 0), ((3,), (1,), -1)]
)
def test_malformed_layouts(size, stride, offset):
    with pytest.raises(BAD):
        mt.load(tensor_file(3, 12, size, stride, offset))


def test_expanded_tensor_with_zero_stride_is_fine():
    t = mt.load(tensor_file(3, 12, size=(1000,), stride=(0,)))
    assert t.shape == (1000,) and t.sum().item() == 0.0


def test_one_storage_described_two_ways():
    a = StorageRef("0", None, mt.float32, 3, "cpu")
    b = StorageRef("0", None, mt.float32, 2, "cpu")
    hooks = collections.OrderedDict
    data = pkl(
        [
            Call(REBUILD_TENSOR_V2, a, 0, (3,), (1,), False, hooks()),
            Call(REBUILD_TENSOR_V2, b, 0, (2,), (1,), False, hooks()),
        ]
    )
    with pytest.raises(CheckpointError, match="described twice"):
        mt.load(archive({"data.pkl": data, "data/0": bytes(12)}))


def test_missing_storage_record():
    ref = StorageRef("7", None, mt.float32, 3, "cpu")
    data = pkl(Call(REBUILD_TENSOR_V2, ref, 0, (3,), (1,), False, collections.OrderedDict()))
    with pytest.raises(CheckpointError, match="data/7"):
        mt.load(archive({"data.pkl": data}))


def test_integer_parameter_requiring_grad_is_torchs_error():
    ref = StorageRef("0", None, mt.int64, 1, "cpu")
    inner = Call(REBUILD_TENSOR_V2, ref, 0, (1,), (1,), False, collections.OrderedDict())
    data = pkl(Call(REBUILD_PARAMETER, inner, True, collections.OrderedDict()))
    with pytest.raises(RuntimeError, match="floating point"):
        mt.load(archive({"data.pkl": data, "data/0": bytes(8)}))


# -- damaged archives ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content,match",
    [
        (b"", "failed finding central directory"),
        (b"hello world, not a checkpoint", "failed finding central directory"),
    ],
    ids=["empty", "text"],
)
def test_not_a_zip(content, match):
    with pytest.raises(CheckpointError, match=match):
        mt.load(io.BytesIO(content))


def test_a_lone_legacy_magic_number_is_a_clean_error():
    with pytest.raises(BAD):
        mt.load(io.BytesIO(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19."))


def test_every_truncation_is_a_clean_error():
    data = valid_file()
    for cut in list(range(0, len(data), 37)) + [len(data) - 1, len(data) - 22]:
        with pytest.raises(BAD):
            mt.load(io.BytesIO(data[:cut]))


def _record_span(data: bytes, member: str):
    z = zipfile.ZipFile(io.BytesIO(data))
    info = z.getinfo(member)
    nlen, elen = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + nlen + elen
    return start, start + info.file_size


@pytest.mark.parametrize("member", ["archive/data/0", "archive/data.pkl"])
def test_changed_bytes_fail_the_crc(member):
    data = bytearray(valid_file())
    start, _ = _record_span(bytes(data), member)
    data[start + 5] ^= 0x10
    with pytest.raises(CheckpointError, match="CRC-32"):
        mt.load(io.BytesIO(bytes(data)))


def test_central_directory_lying_about_a_size():
    data = bytearray(valid_file())
    cd = data.rfind(b"PK\x01\x02" + bytes(2 * 2) + b"\x08\x08", 0)  # the last central entry
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    # grow the stated size of data/0 in its central entry past the end of the file
    name = b"archive/data/0"
    pos = bytes(data).find(b"PK\x01\x02", 0)
    while pos != -1:
        nlen = struct.unpack("<H", data[pos + 28 : pos + 30])[0]
        if bytes(data[pos + 46 : pos + 46 + nlen]) == name:
            data[pos + 20 : pos + 28] = struct.pack("<II", 10**9, 10**9)
            break
        pos = bytes(data).find(b"PK\x01\x02", pos + 1)
    assert cd != -1 and z is not None
    with pytest.raises(CheckpointError):
        mt.load(io.BytesIO(bytes(data)))


@pytest.mark.parametrize(
    "records,match",
    [
        ({"data.pkl": pkl(1), "run.sh": b"rm -rf /"}, "unexpected record 'archive/run.sh'"),
        ({"data.pkl": pkl(1), "code/__torch__.py": b"x"}, "TorchScript"),
        ({"byteorder": b"little"}, "data.pkl"),
        ({"data.pkl": pkl(1), "byteorder": b"middle"}, "endianness"),
    ],
    ids=["extra-member", "torchscript", "no-data.pkl", "byteorder"],
)
def test_archive_members(records, match):
    with pytest.raises(CheckpointError, match=match):
        mt.load(archive(records))


def test_members_in_two_folders_and_duplicates():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", pkl(1))
        z.writestr("other/data.pkl", pkl(2))
    with pytest.raises(CheckpointError, match="not in a subdirectory archive/"):
        mt.load(io.BytesIO(out.getvalue()))
    out = io.BytesIO()
    with pytest.warns(UserWarning), zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", pkl(1))
        z.writestr("archive/data.pkl", pkl(2))
    with pytest.raises(CheckpointError, match="duplicate"):
        mt.load(io.BytesIO(out.getvalue()))


def test_a_deflated_archive_still_loads():
    # someone re-zipped a checkpoint with compression: still readable, CRC still checked
    src = zipfile.ZipFile(io.BytesIO(valid_file()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info.filename))
    got = mt.load(io.BytesIO(out.getvalue()))
    assert got["v"].tolist() == [2.0, 3.0, 4.0] and got["v"]._storage is got["w"]._storage


def test_local_header_disagreeing_with_the_directory():
    data = bytearray(valid_file())
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    off = z.getinfo("archive/data/0").header_offset
    data[off + 30 + len("archive/data/")] = ord("9")  # local name archive/data/9
    with pytest.raises(CheckpointError, match="does not match the central directory"):
        mt.load(io.BytesIO(bytes(data)))


# -- the legacy (pre-1.6) format ---------------------------------------------------------------


class _LegacyPickler(_TestPickler):
    def persistent_id(self, obj):
        pid = super().persistent_id(obj)
        return None if pid is None else pid + (None,)


def legacy_file(obj, *, magic=0x1950A86A20F9469CFC6C, counts=None, little=True) -> bytes:
    """PyTorch's legacy layout: magic, version, sys_info, object, keys, then (count, bytes)s."""
    out = io.BytesIO()
    for header in (magic, 1001, {"protocol_version": 1001, "little_endian": little}):
        out.write(pickle.dumps(header, protocol=2))
    p = _LegacyPickler(out)
    p.dump(obj)
    refs = list(p.storages.values())
    out.write(pickle.dumps([r.key for r in refs], protocol=2))
    for i, r in enumerate(refs):
        count = r.numel if counts is None else counts[i]
        out.write(count.to_bytes(8, "little" if little else "big", signed=True))
        data = np.ascontiguousarray(r.storage).reshape(-1)
        out.write((data if little else data.astype(data.dtype.newbyteorder(">"))).tobytes())
    return out.getvalue()


def test_legacy_files_load_with_sharing_and_both_byte_orders():
    base = mt.arange(6, dtype=mt.int32)
    for little in (True, False):
        got = mt.load(io.BytesIO(legacy_file({"a": base, "b": base[2:]}, little=little)))
        assert got["a"].tolist() == list(range(6)) and got["b"].tolist() == [2, 3, 4, 5]
        assert got["a"]._storage is got["b"]._storage


def test_legacy_bad_magic_counts_and_truncation():
    base = mt.arange(6.0)
    with pytest.raises(CheckpointError, match="magic number"):
        mt.load(io.BytesIO(legacy_file(base, magic=7)))
    with pytest.raises(CheckpointError, match="holds 5 elements"):
        mt.load(io.BytesIO(legacy_file(base, counts=[5])))
    data = legacy_file({"a": base, "b": [1, 2]})
    for cut in range(1, len(data), 11):
        with pytest.raises(BAD):
            mt.load(io.BytesIO(data[:cut]))


def test_legacy_storage_larger_than_the_file_is_refused_before_allocating():
    ref = StorageRef("0", np.zeros(1, np.float32), mt.float32, 1 << 40, "cpu")
    out = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        out.write(pickle.dumps(header, protocol=2))
    _LegacyPickler(out).dump(
        Call(REBUILD_TENSOR_V2, ref, 0, (1,), (1,), False, collections.OrderedDict())
    )
    with pytest.raises(CheckpointError, match="more than the file holds"):
        mt.load(io.BytesIO(out.getvalue()))


def test_legacy_code_execution_is_refused():
    out = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        out.write(pickle.dumps(header, protocol=2))
    out.write(pickle.dumps([RunsShell("touch pwned_legacy")], protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="is blocked"):
        mt.load(io.BytesIO(out.getvalue()))
    assert not os.path.exists("pwned_legacy")


def test_legacy_string_lengths_that_lie_do_not_allocate(tmp_path):
    out = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001):
        out.write(pickle.dumps(header, protocol=2))
    out.write(b"\x80\x04\x8d" + (1 << 31).to_bytes(8, "little") + b"abc")  # BINUNICODE8 of 2 GiB
    path = tmp_path / "lie.pt"
    path.write_bytes(out.getvalue())
    tracemalloc.start()
    try:
        with pytest.raises(BAD):
            mt.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    path.unlink()
    assert peak < 50 << 20, f"loading allocated {peak} bytes"


def test_a_deflate_bomb_claim_is_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", pkl([1]))
        z.writestr("archive/data/0", bytes(1 << 20))  # 1 MiB of zeros deflates ~1000:1
    data = bytearray(out.getvalue())
    # raise the stated uncompressed size of data/0 in the central directory to 1 GiB
    pos = data.find(b"archive/data/0", data.find(b"PK\x01\x02")) - 46
    data[pos + 24 : pos + 28] = struct.pack("<I", 1 << 30)
    with pytest.raises(CheckpointError, match="claims to inflate"):
        mt.load(io.BytesIO(bytes(data)))

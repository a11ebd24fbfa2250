"""minitorch_nn.save / minitorch_nn.load without PyTorch: round trips, sharing, layout, map_location.

tests/oracle/test_serialization_oracle.py checks the same files against a live torch;
test_serialization_malicious.py and test_serialization_fuzz.py cover bad files.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import time
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import serialization
from minitorch_nn._serialization.zip_writer import CheckpointZipWriter
from tests.strategies import build, tensor_specs

ALL_DTYPES = [
    mt.bool,
    mt.uint8,
    mt.int8,
    mt.int16,
    mt.int32,
    mt.int64,
    mt.float16,
    mt.bfloat16,
    mt.float32,
    mt.float64,
]


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    mt.save(obj, buf)
    buf.seek(0)
    return mt.load(buf, **load_kwargs)


def sample(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape) * 50
    if dtype is mt.bool:
        values = values > 0
    return mt.from_numpy(np.asarray(values).astype(dtype.numpy_dtype))


def same(a, b):
    assert type(a) is type(b)
    assert a.dtype is b.dtype
    assert tuple(a.shape) == tuple(b.shape)
    assert a.requires_grad == b.requires_grad
    if not a.is_meta:
        np.testing.assert_array_equal(
            a.detach()._array.view(np.uint8) if a.dim() == 0 else a.detach()._array,
            b.detach()._array if b.dim() else b.detach()._array.view(np.uint8),
        )


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips_bit_for_bit(dtype):
    t = sample(dtype)
    out = roundtrip(t)
    assert out.dtype is dtype and out.shape == t.shape and out.stride() == t.stride()
    np.testing.assert_array_equal(out._array.view(np.uint8), t._array.view(np.uint8))


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (5, 1, 2)])
def test_shapes_including_scalar_and_empty(shape):
    t = sample(mt.float32, shape)
    out = roundtrip(t)
    assert out.shape == t.shape
    np.testing.assert_array_equal(out._array, t._array)


def test_views_share_one_storage_after_load():
    base = mt.arange(24, dtype=mt.float32).reshape(4, 6)
    views = {
        "base": base,
        "row": base[1],
        "cols": base[:, 2:5],
        "t": base.t(),
        "step": base.reshape(-1)[3::5],
    }
    out = roundtrip(views)
    storage = out["base"]._storage
    for name, original in views.items():
        got = out[name]
        assert got._storage is storage, name
        assert got.storage_offset() == original.storage_offset()
        assert got.stride() == original.stride()
        np.testing.assert_array_equal(got._array, original._array)
    out["base"][1, 3] = -1.0  # writes are seen through every view, as in PyTorch
    assert out["row"][3].item() == -1.0 and out["t"][3, 1].item() == -1.0


def test_a_slice_saves_its_whole_storage_like_torch():
    base = mt.arange(100, dtype=mt.int64)
    buf = io.BytesIO()
    mt.save(base[10:12], buf)
    names = zipfile.ZipFile(buf).namelist()
    assert zipfile.ZipFile(buf).getinfo("archive/data/0").file_size == 800
    buf.seek(0)
    out = mt.load(buf)
    assert out.storage_offset() == 10 and out.tolist() == [10, 11]
    assert "archive/data.pkl" in names


def test_distinct_storages_stay_distinct_and_repeated_objects_stay_identical():
    a, b = mt.ones(2), mt.ones(2)
    out = roundtrip([a, b, a])
    assert out[0]._storage is not out[1]._storage
    assert out[0] is out[2]


def test_parameters_and_requires_grad():
    p = mt.nn.Parameter(mt.randn(3, 2))
    frozen = mt.nn.Parameter(mt.randn(2), requires_grad=False)
    leaf = mt.randn(2).requires_grad_()
    out = roundtrip({"p": p, "frozen": frozen, "leaf": leaf, "plain": mt.zeros(1)})
    assert type(out["p"]) is mt.nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is mt.nn.Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is mt.Tensor and out["leaf"].requires_grad and out["leaf"].is_leaf
    assert not out["plain"].requires_grad
    np.testing.assert_array_equal(out["p"].detach()._array, p.detach()._array)


def test_parameter_and_a_view_of_it_share_storage():
    p = mt.nn.Parameter(mt.randn(4))
    out = roundtrip({"p": p, "half": p.detach()[2:]})
    assert out["p"]._storage is out["half"]._storage and out["half"].storage_offset() == 2


def test_state_dict_keeps_ordereddict_and_metadata():
    sd = collections.OrderedDict([("z.weight", mt.ones(2)), ("a.bias", mt.zeros(1))])
    sd._metadata = {"": {"version": 1}, "z": {"version": 2}}
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict
    assert list(out) == ["z.weight", "a.bias"]
    assert out._metadata == sd._metadata


def test_nested_plain_values():
    obj = {
        "epoch": 3,
        "lr": 1e-3,
        "name": "résumé",
        "flag": True,
        "nothing": None,
        "raw": b"\x00\xff",
        "empty": b"",
        "big": 2**80,
        "neg": -7,
        "c": 1 + 2j,
        "tags": {"a", "b"},
        "ba": bytearray(b"xy"),
        "counts": collections.Counter(a=2),
        "nested": [(1, [2.5, {"deep": mt.tensor([1, 2])}])],
        "dtype": mt.bfloat16,
        "device": mt.device("cpu"),
        "size": mt.Size([2, 3]),
    }
    out = roundtrip(obj)
    deep = out["nested"][0][1][1].pop("deep")
    assert deep.tolist() == [1, 2] and deep.dtype is mt.int64
    del obj["nested"][0][1][1]["deep"]
    assert out == obj
    assert (
        out["dtype"] is mt.bfloat16
        and type(out["size"]) is mt.Size
        and type(out["ba"]) is bytearray
    )


def test_self_referencing_list():
    lst = [1]
    lst.append(lst)
    out = roundtrip(lst)
    assert out[1] is out


def test_tensor_python_attributes_round_trip():
    t = mt.ones(2)
    t.note = "hello"
    p = mt.nn.Parameter(mt.ones(2))
    p.tag = 7
    out = roundtrip({"t": t, "p": p})
    assert out["t"].note == "hello" and type(out["t"]) is mt.Tensor
    assert out["p"].tag == 7 and type(out["p"]) is mt.nn.Parameter


def test_meta_tensors_round_trip():
    m = mt.empty(3, 4, device="meta").t()
    out = roundtrip(m)
    assert out.is_meta and out.shape == (4, 3) and out.stride() == (1, 4)


@pytest.mark.parametrize("where", ["meta", mt.device("meta"), {"cpu": "meta"}])
def test_map_location_meta_reads_no_data(where, monkeypatch):
    buf = io.BytesIO()
    base = mt.arange(6.0)
    mt.save({"a": base, "b": base[2:]}, buf)
    buf.seek(0)

    def refuse(*args):
        raise AssertionError("storage bytes were read")

    monkeypatch.setattr(serialization.CheckpointZipReader, "read_into", refuse, raising=False)
    # data.pkl is read through get_record -> read_into; keep that path working
    monkeypatch.setattr(
        serialization.CheckpointZipReader, "get_record", lambda self, name, limit=0: _raw(buf, name)
    )
    out = mt.load(buf, map_location=where)
    assert (
        out["a"].is_meta
        and out["b"].is_meta
        and out["b"].storage_offset() == 2
        and out["b"].shape == (4,)
    )


def _raw(buf, name):
    return zipfile.ZipFile(buf).read("archive/" + name)


@pytest.mark.parametrize(
    "where",
    [None, "cpu", mt.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s, lambda s, loc: None],
)
def test_map_location_cpu_forms(where):
    out = roundtrip({"a": mt.ones(2)}, map_location=where)
    assert out["a"].device == mt.device("cpu") and out["a"].tolist() == [1.0, 1.0]


def test_map_location_callable_sees_storage_and_location():
    seen = []

    def fn(storage, location):
        seen.append((storage.dtype, storage.size(), location))
        return storage

    base = mt.zeros(5, dtype=mt.float16)
    roundtrip([base, base[1:]], map_location=fn)
    assert seen == [(mt.float16, 5, "cpu")]


def test_map_location_callable_must_return_a_storage():
    with pytest.raises(TypeError, match="map_location"):
        roundtrip(mt.ones(1), map_location=lambda s, loc: "nope")


def _cuda_file():
    """A file whose storage claims to live on cuda:0 (as a GPU machine writes it)."""
    buf = io.BytesIO()
    mt.save(mt.arange(3.0), buf)
    data = buf.getvalue().replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    # data.pkl changed length: rebuild the archive with a correct directory
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    pkl = z.read("archive/data.pkl").replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    return _archive(
        {"data.pkl": pkl, "byteorder": b"little", "data/0": z.read("archive/data/0")}
    ), data


def _archive(records, prefix="archive"):
    out = io.BytesIO()
    w = CheckpointZipWriter(out, prefix)
    for name, data in records.items():
        w.write_record(name, data)
    w.close()
    out.seek(0)
    return out


def test_cuda_location_without_cuda_is_torchs_error_and_map_location_fixes_it(monkeypatch):
    f, _ = _cuda_file()
    # Pretend there is no CUDA (tests/cuda turns numba's simulator on for the whole pytest run).
    monkeypatch.setattr(serialization, "_cuda_available", lambda: False)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        mt.load(f)
    for where in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s):
        f.seek(0)
        assert mt.load(f, map_location=where).tolist() == [0.0, 1.0, 2.0]


def test_big_endian_file_is_byteswapped():
    values = np.arange(5, dtype=np.int32) * 1000
    pkl = _pickle_of(mt.from_numpy(values))
    f = _archive({"data.pkl": pkl, "byteorder": b"big", "data/0": values.astype(">i4").tobytes()})
    assert mt.load(f).tolist() == values.tolist()


def _pickle_of(obj):
    buf = io.BytesIO()
    mt.save(obj, buf)
    return zipfile.ZipFile(buf).read("archive/data.pkl")


def test_path_archive_is_named_after_the_file_and_records_are_aligned(tmp_path):
    path = tmp_path / "model.best.pt"
    mt.save({"w": mt.ones(3), "b": mt.zeros(2, dtype=mt.bfloat16)}, path)
    raw = path.read_bytes()
    z = zipfile.ZipFile(path)
    assert z.namelist() == [
        "model.best/data.pkl",
        "model.best/.format_version",
        "model.best/.storage_alignment",
        "model.best/byteorder",
        "model.best/data/0",
        "model.best/data/1",
        "model.best/version",
        "model.best/.data/serialization_id",
    ]
    assert z.read("model.best/version") == b"3\n" and z.read("model.best/byteorder") == b"little"
    assert (
        z.read("model.best/.storage_alignment") == b"64"
        and z.read("model.best/.format_version") == b"1"
    )
    assert len(z.read("model.best/.data/serialization_id")) == 40
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        nlen, elen = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
        assert (info.header_offset + 30 + nlen + elen) % 64 == 0, info.filename
    assert mt.load(str(path))["w"].tolist() == [1.0, 1.0, 1.0]


def test_mmap_load(tmp_path):
    path = tmp_path / "m.pt"
    t = mt.arange(10, dtype=mt.float64)
    mt.save({"t": t, "v": t[4:]}, path)
    out = mt.load(path, mmap=True)
    assert out["t"].tolist() == t.tolist() and out["v"]._storage is out["t"]._storage
    out["t"][0] = 99.0  # copy-on-write: the file is unchanged
    assert mt.load(path)["t"][0].item() == 0.0
    with pytest.raises(ValueError, match="file path"):
        mt.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_weights_only_false_reads_the_same_way():
    out = roundtrip({"a": mt.ones(1)}, weights_only=False)
    assert out["a"].tolist() == [1.0]


def _module_level_function():
    return 1


@pytest.mark.parametrize(
    "other",
    [
        _module_level_function,
        np.float32(1.0),
        frozenset([1]),
        slice(1, 2),
        collections.defaultdict(int, {"a": 1}),
    ],
    ids=["function", "numpy-scalar", "frozenset", "slice", "defaultdict"],
)
def test_other_objects_save_but_load_only_with_weights_only_false(other, tmp_path):
    # As torch.save: any picklable object is written (classes and functions by reference); the
    # default weights_only=True refuses the file, weights_only=False (which runs code) reads it.
    path = tmp_path / "x.pt"
    mt.save({"ok": mt.ones(1), "other": other}, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        mt.load(path)
    out = mt.load(path, weights_only=False)
    assert out["ok"].tolist() == [1.0] and out["other"] == other and type(out["other"]) is type(other)


def test_an_unpicklable_object_fails_before_creating_a_file(tmp_path):
    path = tmp_path / "x.pt"
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        mt.save({"ok": mt.ones(1), "bad": lambda: None}, path)
    assert not path.exists()


def test_a_whole_module_round_trips_with_weights_only_false():
    net = mt.nn.Sequential(mt.nn.Linear(2, 2), mt.nn.ReLU())
    buf = io.BytesIO()
    mt.save(net, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="minitorch_nn.nn.modules.container.Sequential was not an allowed"):
        mt.load(buf)
    buf.seek(0)
    back = mt.load(buf, weights_only=False)
    assert type(back) is mt.nn.Sequential and back is not net
    assert [v.tolist() for v in back.state_dict().values()] == [v.tolist() for v in net.state_dict().values()]


class MyTensor(mt.Tensor):
    pass


def test_tensor_subclasses_save_by_class_reference():
    t = mt.ones(2).as_subclass(MyTensor)
    t.tag = "x"
    buf = io.BytesIO()
    mt.save(t, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="MyTensor was not an allowed global"):
        mt.load(buf)
    buf.seek(0)
    back = mt.load(buf, weights_only=False)
    assert type(back) is MyTensor and back.tolist() == [1.0, 1.0] and back.tag == "x"


def test_save_and_load_argument_errors(tmp_path):
    with pytest.raises(AttributeError, match="write"):
        mt.save(mt.ones(1), 42)
    with pytest.raises(NotImplementedError, match="zip"):
        mt.save(mt.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="pickle_module"):
        mt.load(io.BytesIO(), pickle_module=object())
    with pytest.raises(TypeError, match="unexpected keyword"):
        mt.load(io.BytesIO(), bogus=1)
    with pytest.raises(FileNotFoundError):
        mt.load(tmp_path / "missing.pt")


def test_add_safe_globals_allows_a_trusted_function():
    buf = io.BytesIO()
    w = CheckpointZipWriter(buf, "archive")
    w.write_record("data.pkl", pickle.dumps(_trusted_point(1, 2), protocol=2))
    w.close()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="_trusted_point"):
        mt.load(buf)
    with serialization.safe_globals([_trusted_point]):
        buf.seek(0)
        assert mt.load(buf) == (1, 2)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        mt.load(buf)
    assert serialization.get_safe_globals() == []


class _trusted_point(tuple):
    def __new__(cls, x, y):
        return tuple.__new__(cls, (x, y))

    def __reduce__(self):
        return (_trusted_point, tuple(self))


def test_module_load_state_dict_from_a_file(tmp_path):
    src = mt.nn.Linear(3, 2)
    path = tmp_path / "lin.pt"
    mt.save(src.state_dict(), path)
    dst = mt.nn.Linear(3, 2)
    dst.load_state_dict(mt.load(path))
    x = mt.randn(4, 3)
    np.testing.assert_array_equal(dst(x).detach()._array, src(x).detach()._array)


def test_save_to_file_object_does_not_close_it(tmp_path):
    with open(tmp_path / "f.pt", "wb") as fh:
        mt.save(mt.ones(1), fh)
        assert not fh.closed
    with open(tmp_path / "f.pt", "rb") as fh:
        assert mt.load(fh).tolist() == [1.0]
        assert not fh.closed
    assert os.path.getsize(tmp_path / "f.pt") > 0


def test_mmap_of_a_deflated_archive_reads_instead(tmp_path):
    buf = io.BytesIO()
    mt.save({"a": mt.arange(4.0)}, buf)
    src = zipfile.ZipFile(buf)
    path = tmp_path / "deflated.pt"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info.filename))
    assert mt.load(path, mmap=True)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("data", [b"", b"garbage", b"\x40" + bytes(7) + b"{}", b"\xff" * 8 + b"{}"])
def test_bad_safetensors_bytes_are_a_clean_error(data):
    pytest.importorskip("safetensors")
    with pytest.raises(serialization.CheckpointError, match="safetensors"):
        mt.safetensors_io.load(data)


def test_safetensors_round_trip_keeps_dtypes_and_metadata(tmp_path):
    pytest.importorskip("safetensors")
    tensors = {d.name: sample(d, (2, 3)) for d in ALL_DTYPES}
    mt.safetensors_save(tensors, tmp_path / "m.safetensors", metadata={"step": "3"})
    out = mt.safetensors_load(tmp_path / "m.safetensors")
    for k, v in tensors.items():
        assert out[k].dtype is v.dtype
        np.testing.assert_array_equal(out[k]._array.view(np.uint8), v._array.view(np.uint8))
    assert mt.safetensors_io.load_metadata(tmp_path / "m.safetensors") == {"step": "3"}
    meta = mt.safetensors_load(tmp_path / "m.safetensors", device="meta")
    assert all(t.is_meta for t in meta.values())
    with pytest.raises(ValueError, match="non contiguous"):
        mt.safetensors_save({"t": tensors["float32"].t()}, tmp_path / "x.safetensors")
    with pytest.raises(RuntimeError, match="share memory"):
        base = mt.arange(4.0)
        mt.safetensors_save({"a": base, "b": base[1:]}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        mt.safetensors_save({"a": 1}, tmp_path / "x.safetensors")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_load_in_a_forked_child_does_not_hang(tmp_path):
    # the CRC helper thread does not survive fork(); the child must start its own
    path = tmp_path / "big.pt"
    mt.save({"w": mt.zeros(1 << 19)}, path)  # 2 MiB: checked on the helper thread
    mt.load(path)
    pid = os.fork()
    if pid == 0:  # child: whatever happens, it must leave through os._exit (never back into pytest)
        ok = False
        try:
            ok = mt.load(path)["w"].shape == (1 << 19,)
        finally:
            os._exit(0 if ok else 1)
    # a hang guard, not a speed test: generous so that a busy machine cannot trip it
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("load in a forked child hung")


# -- random memory layouts (hypothesis) ----------------------------------------------------------


def _sharing(tensors):
    return [[a._storage is b._storage for b in tensors] for a in tensors]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(tensor_specs(), min_size=1, max_size=4), view_of=st.integers(0, 3))
def test_random_layouts_round_trip_with_sharing(specs, view_of):
    tensors = [build(mt, s) for s in specs]
    base = tensors[view_of % len(tensors)]
    if base.dim():
        tensors.append(base[-1:])  # another view of the same storage
    tensors.append(tensors[0])  # the same object twice
    out = roundtrip(tensors)
    assert out[-1] is out[0]
    for a, b in zip(tensors, out):
        assert b.dtype is a.dtype and b.shape == a.shape
        assert b.stride() == a.stride() and b.storage_offset() == a.storage_offset()
        np.testing.assert_array_equal(
            np.ascontiguousarray(b._array).reshape(-1).view(np.uint8),
            np.ascontiguousarray(a._array).reshape(-1).view(np.uint8),
        )
    assert _sharing(out) == _sharing(tensors)

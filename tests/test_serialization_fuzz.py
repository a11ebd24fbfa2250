"""Fuzzing the checkpoint readers with mutated real files (hypothesis).

Every mutated file must either load or fail with our clean error types -- never another
exception, never a hang, never a call to anything that runs code or touches files (checked
with a ``sys.addaudithook`` hook that records such events while a load runs).
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import sys
import time
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import safetensors_io
from minitorch_nn._serialization.zip_writer import CheckpointZipWriter

CLEAN = (RuntimeError, pickle.UnpicklingError)  # CheckpointError is a RuntimeError
FUZZ = settings(
    max_examples=800,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- watching for side effects ------------------------------------------------------------------
_FORBIDDEN = {
    "os.system",
    "subprocess.Popen",
    "exec",
    "compile",
    "open",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.remove",
    "os.rename",
    "os.mkdir",
    "shutil.rmtree",
    "ctypes.dlopen",
    "pickle.find_class",
    "os.chmod",
    "socket.connect",
}
_events: list = []
_watching = [False]


_STDLIB = os.path.dirname(os.__file__)


def _is_stdlib_module_load(event, args) -> bool:
    # Python itself imports codecs lazily (zipfile's cp437 names, pickle's raw_unicode_escape):
    # reading a stdlib .pyc and running its module code is not the file's doing.
    if event == "open":
        path, mode = str(args[0]), args[1]
        return path.startswith(_STDLIB) and path.endswith((".py", ".pyc")) and mode in ("r", "rb")
    if event == "exec":
        code = args[0]
        return getattr(code, "co_name", "") == "<module>" and code.co_filename.startswith(_STDLIB)
    return False


def _hook(event, args):
    if _watching[0] and event in _FORBIDDEN and not _is_stdlib_module_load(event, args):
        _events.append((event, repr(args)[:200]))


sys.addaudithook(_hook)


def guarded(fn, *args, **kwargs):
    """Call ``fn``; return its result or the clean exception; fail on anything else."""
    _events.clear()
    _watching[0] = True
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    except CLEAN as e:
        return e
    finally:
        _watching[0] = False
        assert not _events, f"forbidden side effects: {_events}"
        # A hang guard, not a speed test: a mutated file must not make a load run away (a real
        # hang or bomb takes far longer); the bound is loose so a busy CI machine cannot trip it.
        assert time.perf_counter() - start < 20.0, "a single load took over 20 s (hang or bomb?)"


# -- seed files -----------------------------------------------------------------------------


def _seed_objects():
    base = mt.arange(12, dtype=mt.float32).reshape(3, 4)
    sd = collections.OrderedDict(
        [
            ("w", base),
            ("v", base[:, 1:3]),
            ("t", base.t()),
            ("p", mt.nn.Parameter(mt.ones(2, dtype=mt.bfloat16))),
            ("i", mt.arange(3, dtype=mt.int64)),
            ("m", mt.empty(2, device="meta")),
            ("b", mt.tensor([True, False])),
        ]
    )
    sd._metadata = {"": {"version": 1}}
    nested = {
        "state": {0: {"step": mt.tensor(3.0), "exp_avg": mt.zeros(2)}},
        "param_groups": [
            {"lr": 0.1, "betas": (0.9, 0.999), "params": [0], "name": None, "raw": b"xy"}
        ],
    }
    return [sd, nested, [1, 2.5, "s", {3}, mt.int8, mt.Size([2])]]


def _file(obj) -> bytes:
    buf = io.BytesIO()
    mt.save(obj, buf)
    return buf.getvalue()


def _legacy_file(obj) -> bytes:
    """The same object in PyTorch's legacy (pre-1.6) layout."""
    from minitorch_nn._serialization.pickler import CheckpointPickler

    class Legacy(CheckpointPickler):
        def persistent_id(self, o):
            pid = super().persistent_id(o)
            return None if pid is None else pid + (None,)

    out = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        out.write(pickle.dumps(header, protocol=2))
    p = Legacy(out)
    p.dump(obj)
    out.write(pickle.dumps([r.key for r in p.storages.values()], protocol=2))
    for r in p.storages.values():
        out.write(r.numel.to_bytes(8, "little") + r.host_bytes().tobytes())
    return out.getvalue()


SEEDS = [_file(o) for o in _seed_objects()]
LEGACY_SEEDS = [_legacy_file(o) for o in _seed_objects()]
PICKLES = [zipfile.ZipFile(io.BytesIO(s)).read("archive/data.pkl") for s in SEEDS]
RECORDS = [
    {
        i.filename.split("/", 1)[1]: zipfile.ZipFile(io.BytesIO(s)).read(i.filename)
        for i in zipfile.ZipFile(io.BytesIO(s)).infolist()
    }
    for s in SEEDS
]


def mutate(data: bytes, edits, cut, insert) -> bytes:
    out = bytearray(data)
    for pos, value in edits:
        out[pos % len(out)] = value
    if insert is not None:
        pos, chunk = insert
        out[pos % len(out) : pos % len(out)] = chunk
    if cut is not None:
        out = out[: cut % (len(out) + 1)]
    return bytes(out)


edits = st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=8)
cuts = st.none() | st.integers(0, 1 << 16)
inserts = st.none() | st.tuples(st.integers(0, 1 << 16), st.binary(min_size=1, max_size=16))


@FUZZ
@given(seed=st.sampled_from(range(len(SEEDS))), edits=edits, cut=cuts, insert=inserts)
def test_mutated_archives(seed, edits, cut, insert):
    guarded(mt.load, io.BytesIO(mutate(SEEDS[seed], edits, cut, insert)))


def _rezip(records: dict) -> io.BytesIO:
    out = io.BytesIO()
    w = CheckpointZipWriter(out, "archive")
    for name, data in records.items():
        if name not in ("version", ".data/serialization_id"):
            w.write_record(name, data)
    w.close()
    out.seek(0)
    return out


@FUZZ
@given(
    seed=st.sampled_from(range(len(SEEDS))),
    edits=edits,
    cut=cuts,
    insert=inserts,
    where=st.sampled_from([None, "cpu", "meta"]),
)
def test_mutated_pickles_in_valid_archives(seed, edits, cut, insert, where):
    # the archive (and its CRCs) is valid, so every mutation reaches the restricted unpickler
    records = dict(RECORDS[seed])
    records["data.pkl"] = mutate(PICKLES[seed], edits, cut, insert)
    guarded(mt.load, _rezip(records), map_location=where)


try:
    import safetensors  # noqa: F401

    ST_SEED = safetensors_io.save(
        {
            "a": mt.arange(6, dtype=mt.float32).reshape(2, 3),
            "b": mt.ones(3, dtype=mt.bfloat16),
            "c": mt.tensor([1, 2], dtype=mt.int16),
        },
        metadata={"format": "pt"},
    )
except ImportError:  # the io extra is not installed
    ST_SEED = None


@FUZZ
@given(seed=st.sampled_from(range(len(LEGACY_SEEDS))), edits=edits, cut=cuts, insert=inserts)
def test_mutated_legacy_files(seed, edits, cut, insert):
    guarded(mt.load, io.BytesIO(mutate(LEGACY_SEEDS[seed], edits, cut, insert)))


@pytest.mark.skipif(ST_SEED is None, reason="needs the safetensors package (the io extra)")
@FUZZ
@given(edits=edits, cut=cuts, insert=inserts)
def test_mutated_safetensors(edits, cut, insert):
    data = mutate(ST_SEED, edits, cut, insert)
    try:
        guarded(safetensors_io.load, data)
    except TypeError as e:  # a header naming a dtype we do not have
        assert "does not have" in str(e)


def test_seeds_load():
    for s in SEEDS + LEGACY_SEEDS:
        assert not isinstance(guarded(mt.load, io.BytesIO(s)), Exception)


@pytest.mark.parametrize("proto", [0, 1, 2, 3, 4, 5])
def test_arbitrary_python_pickles_of_plain_data(proto):
    # what Python's own pickler writes for plain data (any protocol) loads, or fails cleanly
    obj = {
        "a": [1, 2.5, None, True],
        "b": (b"x", "y"),
        "c": {1, 2},
        "d": collections.OrderedDict(k=1),
    }
    out = io.BytesIO()
    w = CheckpointZipWriter(out, "archive")
    w.write_record("data.pkl", pickle.dumps(obj, protocol=proto))
    w.close()
    out.seek(0)
    got = guarded(mt.load, out)
    assert got == obj or isinstance(got, CLEAN)

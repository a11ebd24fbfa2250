"""Inputs that once crashed the interpreter (SIGSEGV) or made ``load`` allocate without bound.

Each repro runs in a fresh subprocess, so a crash fails its test (with the signal named) instead
of killing the test run. The child prints what it observed; the test checks the words. The
classes covered:

* use-after-free of a tensor handle freed by the cyclic garbage collector while its payload lived
  on (``TensorImpl.owner``, a borrowed pointer; fixed with ``no_gc_clear`` on ``TensorBase``);
* geometries that reach outside their storage: negative or huge sizes, strides and offsets through
  ``as_strided(_)``, ``set_``, ``resize_``, indexing with huge steps and meta factories (one shared
  check, ``_C.check_geometry``, also run before numpy reads a payload);
* checkpoints that nest tuples a million deep (C's recursive tuple hash overflows the stack);
* checkpoints that declare sizes far beyond their bytes (``BYTEARRAY8``, a zip entry claiming a
  huge ``data.pkl``, a deflate bomb).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(code: str, timeout: float = 180.0) -> str:
    """Run ``code`` in a fresh interpreter with this checkout importable; return its stdout.

    A crash (negative return code) or an exception fails the test with the child's stderr."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    if proc.returncode < 0:
        pytest.fail(f"the child died of signal {signal.Signals(-proc.returncode).name}:\n{proc.stderr[-2000:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# -- 1. the cyclic garbage collector and the payload's back pointer ------------------------------


def test_gc_cleared_handle_leaves_no_dangling_owner():
    out = run_child(
        """
        import gc, weakref, minitorch_nn as torch
        for i in range(60):
            x = torch.randn(8, requires_grad=True); b = x * 1; v = b[:4]
            r = weakref.ref(b)
            b.me = b; del b; gc.collect()          # b's handle is freed inside a cycle
            assert r() is None, "the cycle was not collected"
            junk = [object() for _ in range(40)] + [[1.0] * 3 for _ in range(40)]
            base = v._base                          # a fresh handle, not freed memory
            assert type(base).__name__ == "Tensor" and base.shape == (8,), type(base)
            v.mul_(2)
            base.sum()
        print("survived")
        """
    )
    assert "survived" in out


def test_gc_cycle_through_saved_tensor_and_set_data():
    # the payload outlives its handle through an autograd node; ``.data =`` re-points a handle
    out = run_child(
        """
        import gc, minitorch_nn as torch
        for i in range(40):
            w = torch.randn(4, requires_grad=True)
            h = w * 2
            y = (h * h).sum()                       # h's payload is saved by the mul node
            h.cycle = h; del h; gc.collect()
            y.backward()
            a = torch.randn(3); old_view = a[:2]
            a.data = torch.zeros(3)                  # the old payload forgets a's handle
            a.cycle = a; del a; gc.collect()
            junk = [object() for _ in range(40)]
            assert old_view._base.shape == (3,)
        print("survived", float(w.grad.abs().sum()) > 0)
        """
    )
    assert "survived True" in out


# -- 2. geometry: one check for every path that builds sizes/strides/offset ----------------------


def test_as_strided_inplace_with_huge_negative_strides_is_refused():
    out = run_child(
        """
        import minitorch_nn as torch
        t = torch.zeros(1, 6, dtype=torch.uint8)
        try:
            t.as_strided_((2, 3, 1), (-(2**63) + 1, -1, 1), 3); t.fill_(7)
        except RuntimeError as e:
            print("refused:", e)
        print("geometry kept:", tuple(t.shape), t.stride(), t.storage_offset())
        t = torch.zeros(2, 3, dtype=torch.float16)
        try:
            t.as_strided_((2, 2), (-2, -(2**62))); t.contiguous()
        except RuntimeError as e:
            print("refused:", e)
        """
    )
    assert out.count("refused: as_strided: Negative strides are not supported at the moment") == 2
    assert "geometry kept: (1, 6) (6, 1) 0" in out


BAD_GEOMETRIES = [
        ("t.as_strided((-2,), (1,))", "Storage size calculation overflowed with sizes=[-2] and strides=[1]"),
        ("t.as_strided_((-2,), (1,))", "Storage size calculation overflowed"),
        ("t.as_strided((2,), (1,), -1)", "Tensor: invalid storage offset -1"),
        ("t.as_strided_((2,), (1,), -1)", "Tensor: invalid storage offset -1"),
        ("t.as_strided((2,), (-1,))", "as_strided: Negative strides are not supported"),
        ("t.as_strided((2**62, 2), (1, 1))", "Storage size calculation overflowed"),
        ("t.as_strided((2, 2), (2**63 - 1, 1))", "Storage size calculation overflowed"),
        ("t.as_strided((2,), (1,), 2**63 - 1)", "Storage size calculation overflowed"),
        ("t.as_strided((3,), (1,), 4)", "out of bounds for storage of size 24"),
        ("t.as_strided_((3,), (1,), 4)", "out of bounds for storage of size 24"),
        ("torch.empty(2**32, 2**32, device='meta')", "Storage size calculation overflowed with sizes=[4294967296, 4294967296]"),
        ("torch.zeros(2).resize_(2**62)", "Storage size calculation overflowed"),
        ("torch.zeros(2).resize_(2**31, 2**31, 4)", "overflow"),
    ]


def test_bad_geometries_raise_pytorch_errors():
    # all cases in one child (each prints one line), so a crash in any of them fails the test
    calls = [call for call, _ in BAD_GEOMETRIES]
    out = run_child(
        f"""
        import minitorch_nn as torch
        for call in {calls!r}:
            t = torch.zeros(6)
            try:
                r = eval(call)
                print("accepted", r.shape)
            except RuntimeError as e:
                print("RuntimeError:", str(e).splitlines()[0])
            assert (tuple(t.shape), t.stride(), t.storage_offset()) == ((6,), (1,), 0), call
        """
    )
    lines = out.splitlines()
    assert len(lines) == len(BAD_GEOMETRIES), out
    for (call, message), line in zip(BAD_GEOMETRIES, lines):
        assert line.startswith("RuntimeError: ") and message in line, (call, line)


def test_indexing_with_a_huge_step_does_not_overflow():
    out = run_child(
        """
        import minitorch_nn as torch
        from minitorch_nn.backends import compiled
        for on in (True, False):
            with compiled.flags(enabled=on):
                x = torch.arange(10.)
                print(on, list(x[::2**63 - 1].shape), x[::2**63 - 1].tolist(), list(x[3::2**62].shape),
                      list(x[2**63 - 1:].shape), list(x[:, None][::2**63 - 1].shape))
        """
    )
    assert "True [1] [0.0] [1] [0] [1, 1]" in out
    assert "False [1] [0.0] [1] [0] [1, 1]" in out


def test_numpy_view_refuses_a_payload_outside_its_storage():
    # the last line of defence: a hand-made payload that no public path would build
    out = run_child(
        """
        import numpy as np, minitorch_nn as torch
        from minitorch_nn._C import TensorImpl, _wrap
        from minitorch_nn._tensor import Tensor
        for sizes, strides, offset in [((2, 3, 1), (-(2**63) + 1, -1, 1), 3), ((4,), (1,), 3), ((2,), (-5,), 1)]:
            impl = TensorImpl(np.zeros(6, np.uint8), sizes, strides, offset, torch.uint8, torch.device("cpu"))
            t = _wrap(Tensor, impl)
            try:
                t.fill_(7); print("wrote")
            except RuntimeError as e:
                print("refused", str(e)[:40])
        """
    )
    assert out.count("refused") == 3 and "wrote" not in out


def test_numel_cannot_wrap():
    out = run_child(
        """
        import minitorch_nn as torch
        for make in (lambda: torch.zeros(1).expand(2**62, 2**62, 1),
                     lambda: torch.zeros(1, device="meta").expand(2**62, 2**62, 1)):
            try:
                print("numel", make().numel())
            except RuntimeError as e:
                print("RuntimeError:", e)
        print("Size", torch.Size([2**32, 2**32, 0]).numel(), torch.Size([2**32, 2**32]).numel() == 2**64)
        """
    )
    assert out.count("RuntimeError: numel: integer multiplication overflow") == 2, out
    assert "Size 0 True" in out


# -- 3. checkpoints nested a million deep ---------------------------------------------------------


def _checkpoint(pickle_bytes: bytes, compress=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as z:
        z.writestr("archive/data.pkl", pickle_bytes)
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/version", b"3\n")
    return buf.getvalue()


DEEP = 10**6
DEEP_PICKLES = {
    "dict key": b"\x80\x02}N" + b"\x85" * DEEP + b"Ns.",
    "frozenset item": b"\x80\x04(N" + b"\x85" * DEEP + b"\x91.",
    "REDUCE callable": b"\x80\x02N" + b"\x85" * DEEP + b")R.",
    "set item": b"\x80\x04\x8f(N" + b"\x85" * DEEP + b"\x90.",
}


@pytest.mark.parametrize("where", sorted(DEEP_PICKLES))
def test_deeply_nested_tuples_are_refused(where, tmp_path):
    path = tmp_path / "deep.pt"
    path.write_bytes(_checkpoint(DEEP_PICKLES[where]))
    out = run_child(
        f"""
        import pickle, minitorch_nn as torch
        try:
            torch.load({str(path)!r})
            print("loaded")
        except pickle.UnpicklingError as e:
            print("UnpicklingError:", e)
        """
    )
    assert "UnpicklingError:" in out and "nests containers more than 1000 deep" in out


# -- 4. sizes a file declares but does not hold ----------------------------------------------------


def _peak_rss_child(load_code: str) -> str:
    """Run ``load_code`` in a child; it prints the outcome and the load's peak allocation (Python
    and numpy memory, traced by ``tracemalloc``; the child's RSS high-water mark would include its
    parent's, which Linux carries across ``exec``)."""
    return run_child(
        f"""
        import pickle, tracemalloc, minitorch_nn as torch
        tracemalloc.start()
        try:
            {load_code}
            print("loaded")
        except (pickle.UnpicklingError, RuntimeError) as e:
            print(type(e).__name__ + ":", " ".join(str(e).split()))
        print("peak MiB", tracemalloc.get_traced_memory()[1] // 2**20)
        """
    )


def _peak(out: str) -> int:
    return int(out.rsplit("peak MiB", 1)[1].split()[0])


def test_bytearray8_declaring_2gib_is_refused_without_allocating(tmp_path):
    pkl = b"\x80\x05\x96" + (2**31).to_bytes(8, "little") + b"."
    path = tmp_path / "bytearray8.pt"
    path.write_bytes(_checkpoint(pkl))
    out = _peak_rss_child(f"torch.load({str(path)!r})")
    assert "UnpicklingError:" in out and "Unsupported operand 150" in out
    assert _peak(out) < 16, out


@pytest.mark.parametrize("compress", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED], ids=["deflated", "stored"])
def test_zip_entry_claiming_a_huge_data_pkl_is_refused_without_allocating(tmp_path, compress):
    # a tiny data.pkl whose central directory (and local header) claims 2 GiB uncompressed
    data = bytearray(_checkpoint(b"\x80\x02N.", compress=compress))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        start = 0
        while (i := data.find(sig, start)) >= 0:
            name_at = i + (30 if sig == b"PK\x03\x04" else 46)
            if data[name_at : name_at + 16] == b"archive/data.pkl":
                at = i + (22 if sig == b"PK\x03\x04" else 24)
                data[at : at + 4] = (2**31 - 1).to_bytes(4, "little")
            start = i + 4
    path = tmp_path / "claims.pt"
    path.write_bytes(bytes(data))
    out = _peak_rss_child(f"torch.load({str(path)!r})")
    assert "RuntimeError:" in out or "CheckpointError" in out, out
    assert _peak(out) < 16, out


def test_deflate_bomb_data_pkl_is_refused_quickly(tmp_path):
    # 100 MB of cheap opcodes (NONE, POP) deflated to about 100 KB
    pkl = b"\x80\x02" + b"N0" * (50 * 2**20) + b"N."
    path = tmp_path / "bomb.pt"
    path.write_bytes(_checkpoint(pkl, compress=zipfile.ZIP_DEFLATED))
    assert path.stat().st_size < 300_000
    out = _peak_rss_child(f"torch.load({str(path)!r})")
    assert "decompression bomb" in out, out
    assert _peak(out) < 16, out


def test_repeated_hashing_of_a_large_key_is_bounded(tmp_path):
    # a 20,000-item tuple memoized once, then used as a dict key 20,000 times: quadratic hashing
    items = b"(" + b"K\x01" * 20_000 + b"t\x94"      # MARK, BININT1 x n, TUPLE, MEMOIZE
    pkl = b"\x80\x04}" + items + b"N" + b"s" + b"h\x00Ns" * 20_000 + b"."
    path = tmp_path / "hash.pt"
    path.write_bytes(_checkpoint(pkl))
    out = run_child(
        f"""
        import pickle, time, minitorch_nn as torch
        start = time.perf_counter()
        try:
            torch.load({str(path)!r}); print("loaded")
        except pickle.UnpicklingError as e:
            print("UnpicklingError:", e)
        print("seconds", round(time.perf_counter() - start, 2))
        """
    )
    assert "hashes more data than its size allows" in out, out
    assert float(out.rsplit("seconds", 1)[1]) < 10


# -- 5. save writes only what load accepts ----------------------------------------------------------

ODD_GEOMETRIES = {
    "expanded (stride 0)": "torch.zeros(3).expand(4, 3)",
    "huge step": "torch.arange(10.)[::2**63 - 1]",
    "huge step, 2-d": "torch.arange(20.).reshape(2, 10)[:, ::2**62]",
    "empty with a huge stride": "torch.zeros(0, 5).as_strided((0, 5), (2**40, 1))",
    "meta": "torch.empty(3, 4, device='meta')",
    "meta, transposed": "torch.empty(3, 4, device='meta').t()",
    "size-1 dims with huge strides": "torch.zeros(6).as_strided((1, 1, 6), (2**62, 7, 1))",
    "0-d": "torch.tensor(3.0)",
    "offset": "torch.arange(10.)[7:]",
}


@pytest.mark.parametrize("name", sorted(ODD_GEOMETRIES))
def test_save_writes_only_what_load_accepts(name):
    import minitorch_nn as torch

    t = eval(ODD_GEOMETRIES[name])
    buf = io.BytesIO()
    torch.save({"t": t}, buf)
    buf.seek(0)
    back = torch.load(buf)["t"]
    assert (back.shape, back.stride(), back.storage_offset() if not t.is_meta else 0) == (
        t.shape, t.stride(), t.storage_offset() if not t.is_meta else 0)
    if not t.is_meta:
        assert back.tolist() == t.tolist()

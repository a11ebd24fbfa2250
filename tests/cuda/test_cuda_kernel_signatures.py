"""``make cuda-check``'s list of kernels is the backend's: checked on the simulator, without NVVM.

``tools/cuda_check.py`` compiles every line of ``kernel_signatures.txt`` for real GPUs; these tests
make sure that list cannot fall behind the backend: every ``@cuda.jit`` kernel in the source is in
it, every elementwise device function is, and (``conftest.py``) every launch the simulator tests
make is.
"""

import importlib.util
import os

import numpy as np
import pytest

import minitorch_nn as mt
from tests.cuda import kernel_signatures as ks
from tests.cuda._helpers import assert_same

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
simulator_only = pytest.mark.skipif(
    os.environ.get("MINITORCH_NN_CUDA") == "gpu",
    reason="the launch recorder wraps the simulator's kernels; on a GPU launches are compiled, not recorded")


@pytest.fixture(scope="module")
def table():
    mt.zeros(1, device="cuda")  # loads the cuda backend (the simulator here)
    return ks.entries()


def test_the_source_scan_sees_module_and_factory_kernels():
    found = ks.source_kernels()
    assert "copy._strided_copy" in found
    assert "elementwise.make_zip.<locals>.flat" in found
    assert "matmul.make_matmul_blocked.<locals>.bmm_blocked" in found
    # device functions are not kernels
    assert "elementwise.to_index" not in found and "sort._merge" not in found
    assert len(found) >= 50


def test_cuda_check_compiles_exactly_the_kernels_the_backend_defines(table):
    compiled = {e.kernel_id for e in table}
    defined = ks.source_kernels()
    assert not defined - compiled, f"kernels missing from tests/cuda/kernel_signatures.txt: {sorted(defined - compiled)}"
    assert not compiled - defined, f"kernel_signatures.txt names kernels the backend no longer has: {sorted(compiled - defined)}"


def test_cuda_check_compiles_every_elementwise_device_function(table):
    named = ks.table_device_functions(table)
    defined = ks.source_device_functions()
    assert {"elementwise.f_add", "activations.make_gelu", "math_ops.f_erfinv"} <= defined
    assert "elementwise.make_zip" not in defined  # a kernel factory, not a device function
    assert not defined - named, f"device functions no kernel_signatures.txt line applies: {sorted(defined - named)}"


def test_every_table_line_builds_its_kernel_with_those_types(table):
    for e in table:
        assert len(e.signature) == len(e.tokens)
        py_func = getattr(e.kernel, "py_func", e.kernel)
        n_params = py_func.__code__.co_argcount
        assert n_params == len(e.tokens), f"line {e.line}: {e.name} takes {n_params} arguments, the line gives {len(e.tokens)}"


@pytest.mark.parametrize("token", ["f4[]", "i8[]", "b1[]", "u2[A]", "f8", "b1", "u8", "f2", "i1"])
def test_type_tokens_round_trip(token):
    assert ks.type_token(ks.parse_type(token)) == token


def test_an_unknown_type_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown type 'float32'.*f4"):
        ks.parse_type("float32")


@simulator_only
def test_a_launch_missing_from_the_table_is_reported_with_its_line(table):
    from minitorch_nn.backends.cuda import storage_ops

    recorder = ks.launch_recorder()
    mark = len(recorder.launches)
    out = np.zeros(4, dtype=np.uint32)  # no table line grows a uint32 storage
    storage_ops._grow[1, 4](out, np.ones(2, dtype=np.uint32), 2, 4, np.uint32(7))
    assert list(out) == [1, 1, 7, 7]
    missing = recorder.unlisted(mark)
    assert missing == [("storage_ops._grow", (), ("u4[]", "u4[]", "i8", "i8", "u4"))]
    assert ks.table_line(missing[0]).split() == ["storage_ops._grow", "-", "u4[]", "u4[]", "i8", "i8", "u4"]
    recorder.launches[mark:] = []  # (this test's own launch is not the backend's)


@simulator_only
def test_a_listed_launch_is_not_reported(table):
    recorder = ks.launch_recorder()
    mark = len(recorder.launches)
    x = mt.tensor([1.0, 2.0], device="cuda")
    (x + x).cpu()
    assert recorder.launches[mark:], "adding two cuda tensors launched no kernel"
    assert recorder.unlisted(mark) == []


def test_a_float16_to_bool_copy_matches_the_cpu():
    # float16 -> bool goes through float32 (NVVM refuses the direct conversion)
    x = mt.tensor([0.0, -0.0, 1.5, float("nan"), 65504.0]).half()
    assert_same(x.cuda().bool(), x.bool())
    assert_same(x.cuda().to(mt.bool)[1:], x.to(mt.bool)[1:])


def _cuda_check():
    spec = importlib.util.spec_from_file_location("cuda_check", os.path.join(ROOT, "tools", "cuda_check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_signature_is_recompiled_when_a_file_it_depends_on_changes(table):
    cuda_check = _cuda_check()
    glu = next(e for e in table if e.device_function == "activations.f_glu")
    files = {os.path.basename(f) for f in cuda_check._source_files(glu.kernel)}
    # the kernel's module, the device function's, and the helper the device function calls
    assert {"elementwise.py", "activations.py"} <= files
    copy_line = next(e for e in table if e.name == "copy._strided_copy")
    assert "activations.py" not in {os.path.basename(f) for f in cuda_check._source_files(copy_line.kernel)}
    hashes = {}
    key = cuda_check.signature_key(glu, (8, 0), hashes)
    assert key == cuda_check.signature_key(glu, (8, 0), dict(hashes))
    assert key != cuda_check.signature_key(glu, (9, 0), hashes)
    eq, ne = (next(e for e in table if e.device_function == f"elementwise.{f}" and e.name == "elementwise.make_zip.flat"
                   and e.signature_text == "b1[] i8 i8[] i8 i8[] i8") for f in ("f_eq", "f_ne"))
    assert cuda_check.signature_key(eq, (8, 0), hashes) != cuda_check.signature_key(ne, (8, 0), hashes)
    activations = next(f for f in hashes if f.endswith("activations.py"))
    hashes[activations] = "edited"
    assert key != cuda_check.signature_key(glu, (8, 0), hashes)

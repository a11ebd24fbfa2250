"""The cuda tests run on numba's CUDA simulator (no GPU needed), on tiny shapes.

The simulator is chosen when ``numba.cuda`` is first imported, so the environment variable is set
here, before any test imports minitorch_nn's cuda backend. On a machine with a GPU, run the folder
with ``MINITORCH_NN_CUDA=gpu`` to test the real kernels instead.

Under the simulator every kernel launch is also checked against ``kernel_signatures.txt``, the list
``make cuda-check`` compiles for real GPUs: a test whose launch is not in it fails, naming the line
to add (the simulator runs kernels as Python and cannot tell whether they compile). With
``CUDA_SIGNATURES_COLLECT=FILE`` the missing lines are appended to FILE instead.
"""

import importlib.util
import os

import pytest

if os.environ.get("MINITORCH_NN_CUDA", "sim") != "gpu":
    os.environ["MINITORCH_NN_CUDA"] = "sim"

_missing = [m for m in ("numba", "numba.cuda") if importlib.util.find_spec(m.split(".")[0]) is None]
try:
    _has_numba_cuda = importlib.util.find_spec("numba_cuda") is not None
except (ImportError, ValueError):
    _has_numba_cuda = False

collect_ignore_glob = []
if _missing or not _has_numba_cuda:
    collect_ignore_glob = ["test_*.py"]


def pytest_report_header(config):
    if _missing or not _has_numba_cuda:
        return 'tests/cuda skipped: numba and numba-cuda are not installed (pip install "minitorch-nn[test]")'
    return f"tests/cuda: MINITORCH_NN_CUDA={os.environ['MINITORCH_NN_CUDA']}"


@pytest.fixture(autouse=True)
def _seeded():
    import minitorch_nn as mt

    mt.manual_seed(0)
    yield


@pytest.fixture(autouse=True)
def _launches_are_compiled_by_cuda_check():
    if os.environ["MINITORCH_NN_CUDA"] != "sim":
        yield
        return
    from tests.cuda.kernel_signatures import launch_recorder, table_line

    recorder = launch_recorder()
    mark = len(recorder.launches)
    yield
    missing = recorder.unlisted(mark)
    collect = os.environ.get("CUDA_SIGNATURES_COLLECT")
    if missing and collect:  # gathering the lines to add (e.g. over several hypothesis seeds)
        with open(collect, "a") as f:
            f.write("".join(table_line(k) + "\n" for k in missing))
    elif missing:
        pytest.fail(
            "kernel launches that tests/cuda/kernel_signatures.txt lacks, so `make cuda-check` never "
            "compiles them for a GPU; add these lines:\n" + "\n".join(table_line(k) for k in missing),
            pytrace=False,
        )

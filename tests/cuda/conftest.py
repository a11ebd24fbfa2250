"""The cuda tests run on numba's CUDA simulator (no GPU needed), on tiny shapes.

The simulator is chosen when ``numba.cuda`` is first imported, so the environment variable is set
here, before any test imports minitorch_nn's cuda backend. On a machine with a GPU, run the folder
with ``MINITORCH_NN_CUDA=gpu`` to test the real kernels instead.
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

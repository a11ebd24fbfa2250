"""Oracle: ``set_num_threads`` / ``get_num_threads`` against PyTorch 2.13, and that the setting
reaches numpy's BLAS pool (through threadpoolctl)."""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from threadpoolctl import threadpool_info  # noqa: E402

import minitorch_nn as mt  # noqa: E402


def _numpy_blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas" and "numpy" in p["filepath"]]


def test_round_trip_and_blas_pool():
    before_mt, before_torch = mt.get_num_threads(), torch.get_num_threads()
    assert before_mt == before_torch  # both start at the CPUs available to this process
    try:
        for n in (1, 2):
            mt.set_num_threads(n)
            torch.set_num_threads(n)
            assert mt.get_num_threads() == torch.get_num_threads() == n
            assert set(_numpy_blas_threads()) <= {n} and _numpy_blas_threads()
    finally:
        mt.set_num_threads(before_mt)
        torch.set_num_threads(before_torch)


@pytest.mark.parametrize("value", [0, -3, 1.5, "2", True, None])
def test_bad_values(value):
    errors = []
    for lib in (mt, torch):
        before = lib.get_num_threads()
        with pytest.raises(Exception) as info:
            lib.set_num_threads(value)
        assert lib.get_num_threads() == before
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]

"""Complex tensors on cuda are refused with a clear error (the cuda kernels are real-only),
never computed on as if their parts were real numbers."""

import pytest

import minitorch_nn as mt

WAYS = {
    "to": lambda: mt.tensor([1j]).to("cuda"),
    "cuda()": lambda: mt.tensor([1 + 2j]).cuda(),
    "factory": lambda: mt.zeros(2, dtype=mt.complex64, device="cuda"),
    "randn": lambda: mt.randn(2, dtype=mt.complex128, device="cuda"),
    "cast_on_device": lambda: mt.ones(2, device="cuda").to(mt.complex64),
    "promotion": lambda: mt.ones(2, device="cuda") * 1j,
}


@pytest.mark.parametrize("way", WAYS)
def test_complex_cuda_tensors_are_refused(way):
    with pytest.raises(RuntimeError, match="cuda backend does not support complex tensors"):
        WAYS[way]()

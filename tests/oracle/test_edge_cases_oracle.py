"""Edge cases where PyTorch stays silent or raises a specific error (found in review).

Each scenario runs in both libraries with warnings turned into errors, so a numpy warning that
PyTorch does not give fails the test, and a missing PyTorch error shows up as a mismatch.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402

SILENT_NAN_CASES = {
    "mean_of_empty": lambda lib: lib.tensor([]).mean(),
    "mean_over_empty_dim": lambda lib: lib.zeros(2, 0).mean(1),
    "matmul_inf_times_zero": lambda lib: lib.tensor([[float("inf")]]) @ lib.tensor([[0.0]]),
    "cross_entropy_all_ignored": lambda lib: lib.nn.functional.cross_entropy(lib.zeros(2, 3), lib.tensor([-100, -100])),
}


@pytest.mark.parametrize("name", sorted(SILENT_NAN_CASES))
def test_no_numpy_warnings_and_same_values(name):
    scenario = SILENT_NAN_CASES[name]
    results = []
    for lib in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            results.append(scenario(lib).tolist())
    assert repr(results[0]) == repr(results[1])


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever each library raises
        return type(e).__name__, str(e)
    return None


ERROR_CASES = {
    "grad_with_empty_inputs": lambda lib: lib.autograd.grad(lib.ones(2, requires_grad=True).sum(), []),
    "bce_target_above_one": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.5]), lib.tensor([2.0])),
    "bce_target_below_zero": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.5]), lib.tensor([-0.1])),
    "bce_input_above_one": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([0.5])),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_same_error(name):
    scenario = ERROR_CASES[name]
    expected = _error(lambda: scenario(torch))
    assert expected is not None
    assert _error(lambda: scenario(mt)) == expected

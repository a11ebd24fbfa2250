"""Scenario sweep: ``torch.func.functional_call`` and the deprecated
``torch.nn.utils.stateless.functional_call`` (swapped parameters and buffers, several dicts,
tied weights, strict checks, gradients flowing to the given tensors, restoring afterwards).

Each scenario runs in PyTorch 2.13 and in minitorch_nn and the transcripts must be identical; see
``_scenario_helpers.py``.
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def _tied(t):
    class Tied(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = t.nn.Linear(1, 1, bias=False)
            self.b = t.nn.Linear(1, 1, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.a(x) + self.b(x)

    return Tied()


@case
def swap_parameters(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 1)
    print(t.func.functional_call(m, {"weight": t.ones(1, 2), "bias": t.zeros(1)}, (t.ones(1, 2),)))
    print(t.func.functional_call(m, ({"weight": t.ones(1, 2)}, {"bias": t.zeros(1)}), t.ones(1, 2)))
    print(m.weight, type(m.weight).__name__)


@case
def swap_buffers_batchnorm(t):
    m = t.nn.BatchNorm1d(2).eval()
    out = t.func.functional_call(m, {"running_mean": t.ones(2), "running_var": t.full((2,), 4.0)}, (t.ones(3, 2),))
    print(out, m.running_mean, m.running_var)


@case
def gradients_reach_the_given_tensors(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 1)
    w = t.ones(1, 2, requires_grad=True)
    t.func.functional_call(m, {"weight": w}, (t.ones(3, 2),), {}).sum().backward()
    print(w.grad, m.weight.grad, m.bias.grad)


@case
def tied_weights(t):
    m = _tied(t)
    x = t.ones(1, 1)
    print(t.func.functional_call(m, {"a.weight": t.ones(1, 1)}, (x,)))
    print((t.func.functional_call(m, {"a.weight": t.ones(1, 1)}, (x,), tie_weights=False) - m.b.weight).item() == 1.0)


@case
def strict_errors(t):
    m = t.nn.Linear(2, 1)
    t.func.functional_call(m, {"weight": t.ones(1, 2), "foo": t.ones(1)}, (t.ones(1, 2),), strict=True)


@case
def same_key_in_two_dicts(t):
    m = t.nn.Linear(2, 1)
    t.func.functional_call(m, ({"weight": t.ones(1, 2)}, {"weight": t.zeros(1, 2)}), t.ones(1, 2))


@case
def restored_after_an_error(t):
    t.manual_seed(0)
    m = t.nn.Linear(2, 1)
    w = m.weight
    try:
        t.func.functional_call(m, {"weight": t.ones(1, 3)}, (t.ones(1, 2),))
    except RuntimeError as e:
        print(type(e).__name__, e)
    print(m.weight is w)


@case
def stateless_deprecated(t):
    m = t.nn.Linear(2, 1)
    print(t.nn.utils.stateless.functional_call(m, {"weight": t.ones(1, 2), "bias": t.zeros(1)}, (t.ones(1, 2),)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_call_matches_torch(name):
    assert_same_transcript(CASES[name])

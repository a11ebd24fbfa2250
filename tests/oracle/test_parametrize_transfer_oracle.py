"""Oracle: ``parametrize.type_before_parametrizations`` and
``parametrize.transfer_parametrizations_and_params`` (sharing, partial transfer, a target without
the tensor, an already-parametrized target, an unknown name)."""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


def scenario(lib, P):
    nn = lib.nn

    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    class Split(nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, w):
            return w / 2, w / 2

    lib.manual_seed(0)
    a = nn.Linear(3, 3)
    P.register_parametrization(a, "weight", Double())
    P.register_parametrization(a, "bias", Split())
    log = [P.type_before_parametrizations(a).__name__, type(a).__name__,
           P.type_before_parametrizations(nn.Linear(1, 1)).__name__]
    b = nn.Linear(3, 3)
    log.append(P.transfer_parametrizations_and_params(a, b) is b)
    log.append((type(b).__name__, P.type_before_parametrizations(b).__name__,
                sorted(n for n, _ in b.named_parameters())))
    log.append((b.parametrizations.weight.original is a.parametrizations.weight.original,
                b.parametrizations.weight[0] is a.parametrizations.weight[0],
                b.parametrizations.bias.original0 is a.parametrizations.bias.original0))
    log.append((lib.equal(b.weight, a.weight), lib.equal(b.bias, a.bias)))
    with lib.no_grad():   # shared originals: changing one module's changes the other's
        a.parametrizations.weight.original.add_(1)
    log.append(lib.equal(b.weight, a.weight))
    c = nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(a, c, "weight")
    log.append((sorted(n for n, _ in c.named_parameters()), P.is_parametrized(c, "bias")))
    d = nn.Module()
    P.transfer_parametrizations_and_params(a, d, "weight")
    log.append((sorted(n for n, _ in d.named_parameters()), type(d).__name__, tuple(d.weight.shape)))
    e = nn.Linear(3, 3)
    log.append(P.transfer_parametrizations_and_params(nn.Linear(3, 3), e) is e and not P.is_parametrized(e))
    log.append(error_of(lambda: P.transfer_parametrizations_and_params(a, nn.Linear(3, 3), "nope")))
    f = nn.Linear(3, 3)
    P.register_parametrization(f, "weight", Double())
    P.transfer_parametrizations_and_params(a, f, "weight")
    log.append((len(f.parametrizations.weight), f.parametrizations.weight.original is a.parametrizations.weight.original))
    return log


def test_transfer_and_type_before():
    from torch.nn.utils import parametrize as tp

    from minitorch_nn.nn.utils import parametrize as mp

    assert scenario(mt, mp) == scenario(torch, tp)

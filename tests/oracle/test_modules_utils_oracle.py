"""Oracle: ``nn.modules.utils`` helpers against ``torch.nn.modules.utils``."""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import torch.nn.modules.utils as tu  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.nn.modules.utils as mu  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402

VALUES = [3, (1, 2), [4, 5, 6], range(2), "ab", 2.5, None]


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_ntuple_helpers(name, value):
    assert getattr(mu, name)(value) == getattr(tu, name)(value)
    assert getattr(mu, name).__name__ == getattr(tu, name).__name__ == name


def test_ntuple_factory():
    assert mu._ntuple(5)(1) == tu._ntuple(5)(1) == (1,) * 5
    assert mu._ntuple(3, "x").__name__ == tu._ntuple(3, "x").__name__
    assert mu._ntuple(2)(iter([7, 8, 9])) == tu._ntuple(2)(iter([7, 8, 9]))


@pytest.mark.parametrize("t,n", [((1, 2), 2), ((1, 2, 3), 1), ((), 3), ((4,), 0)])
def test_reverse_repeat_tuple(t, n):
    assert mu._reverse_repeat_tuple(t, n) == tu._reverse_repeat_tuple(t, n)


@pytest.mark.parametrize("out,defaults", [(5, [1, 2]), ([None, 3], [7, 8, 9]), ([None], [1, 2]), ([1, 2], [1, 2])])
def test_list_with_default(out, defaults):
    assert error_of(lambda: mu._list_with_default(out, defaults)) == error_of(lambda: tu._list_with_default(out, defaults))


def ddp_checkpoint(lib, prefix):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 2)
            self.bn = lib.nn.BatchNorm1d(2)

    class Wrapper(lib.nn.Module):   # stands in for DistributedDataParallel: the model under "module"
        def __init__(self, module):
            super().__init__()
            self.module = module

    sd = Wrapper(Net()).state_dict()
    (tu if lib is torch else mu).consume_prefix_in_state_dict_if_present(sd, prefix)
    net = Net()
    result = net.load_state_dict(sd, strict=False)
    return list(sd), sorted(sd._metadata.items()), sorted(result.missing_keys), sorted(result.unexpected_keys)


@pytest.mark.parametrize("prefix", ["module.", "mod", "nothing."])
def test_consume_prefix_in_state_dict_if_present(prefix):
    assert ddp_checkpoint(mt, prefix) == ddp_checkpoint(torch, prefix)


def test_plain_dict_without_metadata():
    ours = {"module.a": 1, "b": 2, "module.module.c": 3}
    theirs = dict(ours)
    mu.consume_prefix_in_state_dict_if_present(ours, "module.")
    tu.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert list(ours.items()) == list(theirs.items())


def test_reachable_as_in_pytorch():
    import minitorch_nn.nn.modules as modules

    assert modules.utils is mu
    assert mt.nn.modules.utils.consume_prefix_in_state_dict_if_present is mu.consume_prefix_in_state_dict_if_present

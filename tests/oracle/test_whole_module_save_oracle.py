"""Oracle: saving a whole module (``save(model, f)``) and loading it back, as ``torch.save`` and
``torch.load`` do: pickled by class reference; refused by the default ``weights_only=True`` with
PyTorch's message; loaded by ``weights_only=False`` or with the classes allowed through
``safe_globals``; a parametrized module refused by ``save``.
"""

import io
import os
import pickle
import re

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


# Module-level classes (pickle finds classes by module and name), one per library.
class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 3)
        self.register_buffer("steps", torch.zeros(()))
        self.note = "hello"

    def forward(self, x):
        return self.fc(x)


class OurNet(mt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = mt.nn.Linear(2, 3)
        self.register_buffer("steps", mt.zeros(()))
        self.note = "hello"

    def forward(self, x):
        return self.fc(x)


class TorchTagged(torch.Tensor):
    pass


class OurTagged(mt.Tensor):
    pass


def same_words(text):
    """A message with the library-specific names made equal."""
    text = text.replace("minitorch_nn.nn.modules.linear.Linear", "torch.nn.modules.linear.Linear")
    return re.sub(r"(Torch|Our)(Net|Tagged)", r"X\2", text)


def saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return buf


def net_facts(lib, m):
    return (type(m).__name__.replace("Torch", "X").replace("Our", "X"), type(m.fc).__name__, m.note,
            [(k, v.tolist()) for k, v in m.state_dict().items()], m(lib.ones(1, 2)).tolist(),
            m.fc.weight.requires_grad, type(m.fc.weight).__name__, m.training)


def whole_module(lib, net_cls):
    lib.manual_seed(0)
    net = net_cls()
    net.eval()
    out = {}
    buf = saved(lib, net)
    kind, message = error_of(lambda: lib.load(buf))
    out["default"] = kind, same_words(message)
    buf.seek(0)
    kind, message = error_of(lambda: lib.load(buf, weights_only=True))
    out["weights_only_true"] = kind, same_words(message)
    buf.seek(0)
    out["weights_only_false"] = net_facts(lib, lib.load(buf, weights_only=False))
    buf.seek(0)
    with lib.serialization.safe_globals([net_cls, lib.nn.Linear]):
        out["safe_globals"] = net_facts(lib, lib.load(buf))
    return out


def test_whole_module_save_and_load():
    ours, theirs = whole_module(mt, OurNet), whole_module(torch, TorchNet)
    assert ours == theirs
    assert ours["default"][0] == "UnpicklingError"
    assert "XNet was not an allowed global by default" in ours["default"][1]


def tensor_subclass(lib, cls):
    t = lib.arange(3.0).as_subclass(cls)
    t.tag = 7
    buf = saved(lib, t)
    refused = error_of(lambda: lib.load(buf))
    buf.seek(0)
    back = lib.load(buf, weights_only=False)
    return refused[0], same_words(refused[1]), type(back).__name__.replace("Torch", "X").replace("Our", "X"), back.tolist(), back.tag


def test_tensor_subclass_save_and_load():
    assert tensor_subclass(mt, OurTagged) == tensor_subclass(torch, TorchTagged)


def parametrized_save(lib, parametrize):
    class Symmetric(lib.nn.Module):
        def forward(self, w):
            return w + w.T

    m = lib.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    kind, message = error_of(lambda: lib.save(m, io.BytesIO()))
    return kind, message.split("\nHint:")[0]


def test_parametrized_module_is_refused_by_save():
    from torch.nn.utils import parametrize as tp

    from minitorch_nn.nn.utils import parametrize as mp

    ours, theirs = parametrized_save(mt, mp), parametrized_save(torch, tp)
    assert ours == theirs
    assert ours[1].startswith("Serialization of parametrized modules is only supported through state_dict()")


def test_a_whole_pytorch_module_loads_here_with_weights_only_false():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    buf = saved(torch, theirs)
    refused = error_of(lambda: mt.load(buf))
    assert refused[0] == "UnpicklingError" and "torch.nn.modules.container.Sequential" in refused[1]
    buf.seek(0)
    ours = mt.load(buf, weights_only=False)
    assert type(ours) is mt.nn.Sequential and type(ours[0]) is mt.nn.Linear
    assert ours(mt.ones(1, 2)).tolist() == theirs(torch.ones(1, 2)).tolist()


class _RunsCode:
    def __reduce__(self):
        return (os.getcwd, ())


def test_the_default_runs_no_code():
    # A file whose unpickling would call a function: the default refuses it, naming the call;
    # only weights_only=False calls it (as in PyTorch).
    buf = saved(mt, [_RunsCode()])
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.getcwd|GLOBAL nt.getcwd"):
        mt.load(buf)
    buf.seek(0)
    assert mt.load(buf, weights_only=False) == [os.getcwd()]


def test_local_objects_fail_as_in_pytorch():
    def save_local(lib):
        def make():
            class Local:
                pass

            return {"f": lambda x: x, "cls": Local}

        return error_of(lambda: lib.save(make()["f"], io.BytesIO())), error_of(lambda: lib.save(make()["cls"], io.BytesIO()))

    assert save_local(mt) == save_local(torch)

"""Oracle: two small behaviours that code written for PyTorch relies on.

* ``ExportedProgram.module()`` is a ``GraphModule``: its class name, repr and the
  ``load_state_dict`` error messages say ``GraphModule``;
* an optimizer may be built before a lazy module's first forward: the placeholders materialize
  in place, so the optimizer holds the same (now real) parameter objects and trains them like
  PyTorch's. Beyond PyTorch, ``step()`` before the dry run raises instead of doing nothing.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


def exported_module(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 2)
            self.register_buffer("b", lib.zeros(2))

        def forward(self, x):
            return self.fc(x) + self.b

    lib.manual_seed(0)
    gm = lib.export.export(M(), (lib.ones(1, 2),)).module()
    out = [type(gm).__name__, type(gm).__mro__[1].__name__, repr(gm).split("\n")[0], gm._get_name(),
           str(gm).split("\n")[0], gm(lib.ones(1, 2)).tolist()]
    good = {"fc.weight": lib.zeros(2, 2), "fc.bias": lib.zeros(2), "b": lib.zeros(2)}
    for sd in ({}, {**good, "fc.weight": lib.zeros(3, 2)}, {**good, "zzz": lib.zeros(1)}):
        out.append(error_of(lambda: gm.load_state_dict(sd)))
    out.append(repr(gm.load_state_dict(good)))
    out.append(gm(lib.ones(1, 2)).tolist())
    out.append(list(gm.state_dict()))
    return out


def test_exported_program_module_is_a_graph_module():
    ours, theirs = exported_module(mt), exported_module(torch)
    assert ours == theirs
    assert ours[0] == "GraphModule" and ours[6][1].startswith("Error(s) in loading state_dict for GraphModule:")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_built_before_the_dry_run(name):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        opt = getattr(lib.optim, name)(m.parameters(), lr=0.1)
        held = opt.param_groups[0]["params"][0]
        facts = [type(held).__name__, len(opt.state_dict()["state"])]
        m(lib.ones(2, 4)).sum().backward()
        facts += [held is m[0].weight, type(held).__name__, tuple(held.shape)]
        opt.step()
        facts.append(m[0].weight.detach().flatten().tolist())
        facts.append(sorted(opt.state_dict()["state"]))
        return facts

    assert run(mt) == run(torch)


def test_adagrad_needs_the_dry_run_first_in_both():
    assert error_of(lambda: torch.optim.Adagrad(torch.nn.LazyLinear(2).parameters()))[0] == "ValueError"
    kind, message = error_of(lambda: mt.optim.Adagrad(mt.nn.LazyLinear(2).parameters()))
    assert kind == "ValueError" and message.startswith("Attempted to use an uninitialized parameter in")


def test_step_before_the_dry_run_says_what_to_do():
    m = mt.nn.Sequential(mt.nn.Linear(4, 4), mt.nn.LazyLinear(3))
    opt = mt.optim.Adam(m.parameters(), lr=0.1)
    with pytest.raises(RuntimeError) as info:
        opt.step()
    assert str(info.value).startswith("Adam.step() got an uninitialized parameter (index 2 in its parameter list)")
    assert "run one forward pass with a dummy batch (model(example_input)) before calling step()" in str(info.value)
    # PyTorch: the same step silently updates nothing
    t = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LazyLinear(3))
    torch.optim.Adam(t.parameters(), lr=0.1).step()

"""Beyond PyTorch: ``Optimizer.step`` warns when the model replaced a parameter it still holds.

PyTorch is silent here (pytorch/pytorch#14467), so there is no oracle for the warning itself;
the optimizer oracle tests check that the updates are unchanged.
"""

import warnings

import pytest

import minitorch_nn as mt
from minitorch_nn import nn

flags = mt.__future__


def _step_warnings(optimizer, steps=1):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            optimizer.step()
    return [w for w in caught if "was replaced in the model" in str(w.message)]


@pytest.fixture
def overwrite_flag():
    flags.set_overwrite_module_params_on_conversion(True)
    yield
    flags.set_overwrite_module_params_on_conversion(False)


@pytest.fixture
def swap_flag():
    flags.set_swap_module_params_on_conversion(True)
    yield
    flags.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("make", [
    lambda ps: mt.optim.SGD(ps, lr=0.1),
    lambda ps: mt.optim.Adam(ps, lr=0.1),
    lambda ps: mt.optim.AdamW(ps, lr=0.1),
], ids=["SGD", "Adam", "AdamW"])
def test_overwrite_conversion_warns_once_per_parameter(make, overwrite_flag):
    model = nn.Linear(2, 1)
    optimizer = make(model.parameters())
    model.double()
    model(mt.ones(3, 2, dtype=mt.float64)).sum().backward()
    caught = _step_warnings(optimizer, steps=3)
    assert len(caught) == 2  # weight and bias, each once, however many steps
    assert all(w.category is UserWarning for w in caught)
    messages = [str(w.message) for w in caught]
    assert "parameter 0 of param group 0" in messages[0] and "(Linear.weight)" in messages[0]
    assert "parameter 1 of param group 0" in messages[1] and "(Linear.bias)" in messages[1]
    assert "set_swap_module_params_on_conversion(True)" in messages[0]
    assert caught[0].filename == __file__  # points at the caller of step()


def test_assignment_warns_and_names_the_parameter():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    model[2].weight = nn.Parameter(mt.zeros(1, 2))
    caught = _step_warnings(optimizer, steps=2)
    assert len(caught) == 1
    assert "parameter 2 of param group 0" in str(caught[0].message)
    assert "(Linear.weight)" in str(caught[0].message)


def test_register_parameter_over_existing_name_warns():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    model.register_parameter("bias", nn.Parameter(mt.zeros(1)))
    caught = _step_warnings(optimizer)
    assert len(caught) == 1 and "(Linear.bias)" in str(caught[0].message)


def test_load_state_dict_assign_warns():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    model.load_state_dict(nn.Linear(2, 1).state_dict(), assign=True)
    assert len(_step_warnings(optimizer)) == 2


def test_named_parameters_give_the_name_in_the_message():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.named_parameters(), lr=0.1)
    model.weight = nn.Parameter(mt.zeros(1, 2))
    (caught,) = _step_warnings(optimizer)
    assert "parameter 0 ('weight') of param group 0" in str(caught.message)


def test_each_optimizer_warns_once():
    model = nn.Linear(2, 1)
    first = mt.optim.SGD(model.parameters(), lr=0.1)
    second = mt.optim.SGD(model.parameters(), lr=0.1)
    model.weight = nn.Parameter(mt.zeros(1, 2))
    assert len(_step_warnings(first, steps=2)) == 1
    assert len(_step_warnings(second, steps=2)) == 1


def test_optimizer_built_on_stale_params_after_replacement_warns():
    model = nn.Linear(2, 1)
    old = list(model.parameters())
    model.weight = nn.Parameter(mt.zeros(1, 2))
    optimizer = mt.optim.SGD(old, lr=0.1)  # built later, but from the old list
    assert len(_step_warnings(optimizer)) == 1


def test_swap_flag_keeps_identity_and_does_not_warn(swap_flag):
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    model.double()
    model(mt.ones(3, 2, dtype=mt.float64)).sum().backward()
    assert _step_warnings(optimizer, steps=2) == []


def test_default_path_does_not_warn():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    model.double()
    model(mt.ones(3, 2, dtype=mt.float64)).sum().backward()
    assert _step_warnings(optimizer, steps=2) == []


def test_untouched_model_does_not_warn_while_others_are_replaced():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    other = nn.Linear(2, 1)
    other.weight = nn.Parameter(mt.zeros(1, 2))  # bumps the global count; not our parameter
    model(mt.ones(3, 2)).sum().backward()
    assert _step_warnings(optimizer, steps=3) == []


def test_reassigning_the_same_or_the_old_parameter_clears_the_mark():
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    old = model.weight
    model.weight = old  # same object: not a replacement
    assert "_replaced_by" not in old.__dict__
    model.weight = nn.Parameter(mt.zeros(1, 2))
    assert old.__dict__["_replaced_by"] == "Linear.weight"
    model.weight = old  # the old one is back in the model
    assert "_replaced_by" not in old.__dict__
    assert _step_warnings(optimizer) == []


def test_the_warning_does_not_change_the_update(overwrite_flag):
    # The stale parameters have no grad, so SGD leaves them alone and the model does not move.
    mt.manual_seed(0)
    model = nn.Linear(2, 1)
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    stale = [p.detach().clone() for p in optimizer.param_groups[0]["params"]]
    model.double()
    before = model.weight.detach().clone()
    model(mt.ones(3, 2, dtype=mt.float64)).sum().backward()
    _step_warnings(optimizer)
    assert mt.equal(model.weight.detach(), before)
    for p, s in zip(optimizer.param_groups[0]["params"], stale):
        assert mt.equal(p.detach(), s)

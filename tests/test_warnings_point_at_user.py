"""Warnings raised by minitorch_nn name the user's line (``minitorch_nn/_warnings.py``).

Each case calls a public API the way a user would (directly, through a module's ``__call__``,
through the dispatcher) and checks that the warning's ``filename`` is this test file and its
``lineno`` the line that made the call.
"""

import inspect
import sys
import warnings

import pytest

import minitorch_nn as torch
from minitorch_nn import nn
from minitorch_nn._warnings import user_stacklevel, warn_user


def _caught(fn):
    """Run ``fn`` (a lambda on one line) and return its warnings and the line it is on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return caught, inspect.getsourcelines(fn)[1]


def _state_dict_positional():
    m = nn.Linear(2, 2)
    return m.state_dict({}, "")


def _lr_scheduler_get_lr():
    opt = torch.optim.SGD([nn.Parameter(torch.ones(1))], lr=0.1)
    return torch.optim.lr_scheduler.StepLR(opt, 1)


def _plain_list_of_parameters():
    m = nn.Module()
    m.params = [nn.Parameter(torch.ones(1))]


CASES = {
    "init_zero_element": (lambda: nn.init.kaiming_uniform_(torch.empty(0, 3)), UserWarning),
    "init_deprecated_name": (lambda: nn.init.normal(torch.empty(2)), FutureWarning),
    "softmax_module_implicit_dim": (lambda: nn.Softmax()(torch.ones(2, 3)), UserWarning),
    "mse_loss_module_broadcast": (lambda: nn.MSELoss()(torch.ones(2, 1), torch.ones(2)), UserWarning),
    "var_through_dispatch": (lambda: torch.ones(1).var(), UserWarning),
    "non_leaf_grad": (lambda: (torch.ones(2, requires_grad=True) * 2).grad, UserWarning),
    "legacy_reduction": (lambda: nn.functional.l1_loss(torch.ones(2), torch.ones(2), size_average=True), UserWarning),
    "state_dict_positional": (lambda: _state_dict_positional(), FutureWarning),
    "plain_list_of_parameters": (lambda: _plain_list_of_parameters(), UserWarning),
    "tensor_from_tensor": (lambda: torch.tensor(torch.ones(2)), UserWarning),
    "masked_fill_on_expanded": (lambda: torch.zeros(1).expand(3).masked_fill_(torch.ones(3, dtype=torch.bool), 1.0),
                                UserWarning),
    "backward_create_graph": (lambda: (torch.ones(2, requires_grad=True) * 2).sum().backward(create_graph=True),
                              UserWarning),
    "index_put_on_expanded": (lambda: torch.zeros(1).expand(3).index_put_((torch.tensor([0, 1]),), torch.ones(2)),
                              UserWarning),
    "list_index_as_tuple": (lambda: torch.zeros(3, 3)[[0, slice(None)]], UserWarning),
    "out_resized": (lambda: torch.add(torch.ones(2), torch.ones(2), out=torch.empty(3)), UserWarning),
    "gradcheck_float32": (lambda: torch.autograd.gradcheck(lambda t: t * 2, (torch.ones(2, requires_grad=True),),
                                                           raise_exception=False), UserWarning),
}


@pytest.mark.parametrize("name", list(CASES))
def test_warning_filename_is_the_callers(name):
    fn, category = CASES[name]
    caught, line = _caught(fn)
    ours = [w for w in caught if issubclass(w.category, category)]
    assert ours, f"{name}: no {category.__name__} was raised"
    for w in ours:
        assert w.filename == __file__, (name, w.filename, str(w.message))
    # the helpers are called from the lambda's line: the warning names the helper's first user frame
    if not name.endswith(("positional", "parameters")):
        assert ours[0].lineno == line


def test_lr_scheduler_get_lr_outside_step_points_at_caller():
    sched = _lr_scheduler_get_lr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.get_lr(); line = sys._getframe().f_lineno  # noqa: E702  (same line as the call)
    assert [w.filename for w in caught] == [__file__]
    assert caught[0].lineno == line


def test_warn_user_from_outside_the_package_is_the_caller_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_user("hello", RuntimeWarning); line = sys._getframe().f_lineno  # noqa: E702
    assert caught[0].filename == __file__ and caught[0].lineno == line
    assert caught[0].category is RuntimeWarning


def test_user_stacklevel_outside_the_package_is_one():
    assert user_stacklevel() == 1


def test_the_package_warns_only_through_warn_user():
    # a fixed stacklevel is right for one call path only; see minitorch_nn/_warnings.py
    import pathlib

    root = pathlib.Path(torch.__file__).parent
    offenders = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py")) if p.name != "_warnings.py"
                 for i, line in enumerate(p.read_text().splitlines(), 1) if "warnings.warn(" in line]
    assert not offenders, f"use minitorch_nn._warnings.warn_user instead of warnings.warn at {offenders}"

"""Oracle: where module and autograd hooks are looked up, and what their results are checked for.

* the global hook dicts are globals of ``nn.modules.module``, read at every call: rebinding one
  (``module._global_forward_hooks = OrderedDict()``) silences what was registered in the old one;
* a node hook (``grad_fn.register_hook``/``register_prehook``, and the old-style module
  ``register_backward_hook`` built on it) that returns the wrong number of gradients, a list or
  a non-tensor fails with PyTorch's error instead of dropping gradients;
* ``register_backward_hook`` warns (FutureWarning) when the hooked node is not the whole forward;
* a view returned by a custom ``autograd.Function`` (an input returned as-is included, which is
  what full backward hooks do to a module's inputs) cannot be modified in place.
"""

import warnings
from collections import OrderedDict

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402

LIBS = (torch, mt)

GLOBAL_DICTS = (
    "_global_forward_hooks",
    "_global_forward_pre_hooks",
    "_global_backward_hooks",
    "_global_backward_pre_hooks",
    "_global_forward_hooks_always_called",
    "_global_forward_hooks_with_kwargs",
)


@pytest.fixture
def fresh_global_hooks():
    """Rebind every global hook dict of both libraries to an empty one, and put the originals
    back afterwards (the very pattern PyTorch's own tests use)."""
    saved = []
    for lib in LIBS:
        home = lib.nn.modules.module
        saved.append((home, {n: getattr(home, n) for n in GLOBAL_DICTS}, home._global_is_full_backward_hook))
        for n in GLOBAL_DICTS:
            setattr(home, n, OrderedDict())
        home._global_is_full_backward_hook = None
    yield
    for home, dicts, full in saved:
        for n, d in dicts.items():
            setattr(home, n, d)
        home._global_is_full_backward_hook = full


def both(scenario):
    ours, theirs = scenario(mt), scenario(torch)
    assert ours == theirs
    return ours


# -- global hooks are read where PyTorch reads them ---------------------------------------------
def rebinding_global_forward_hooks(lib):
    home = lib.nn.modules.module
    log = []
    m = lib.nn.Identity()
    lib.nn.modules.module.register_module_forward_pre_hook(lambda mod, a: log.append("pre"))
    lib.nn.modules.module.register_module_forward_hook(lambda mod, a, o: log.append("post"), always_call=True)
    m(lib.ones(1))
    log.append("|")
    home._global_forward_pre_hooks = OrderedDict()
    home._global_forward_hooks = OrderedDict()
    home._global_forward_hooks_always_called = OrderedDict()
    m(lib.ones(1))
    log.append("|")
    # registration goes into the dicts bound now
    handle = lib.nn.modules.module.register_module_forward_hook(lambda mod, a, o: log.append("new"))
    m(lib.ones(1))
    log.append(list(home._global_forward_hooks) == [handle.id])
    handle.remove()
    m(lib.ones(1))
    return log, len(home._global_forward_hooks)


def test_rebinding_the_global_forward_dicts_takes_effect(fresh_global_hooks):
    assert both(rebinding_global_forward_hooks) == (["pre", "post", "|", "|", "new", True], 0)


def rebinding_global_backward_hooks(lib):
    home = lib.nn.modules.module
    log = []
    m = lib.nn.Linear(2, 1)
    x = lib.ones(1, 2, requires_grad=True)
    lib.nn.modules.module.register_module_full_backward_pre_hook(lambda mod, go: log.append("bpre"))
    lib.nn.modules.module.register_module_full_backward_hook(lambda mod, gi, go: log.append("bfull"))
    m(x).sum().backward()
    log.append("|")
    home._global_backward_pre_hooks = OrderedDict()
    home._global_backward_hooks = OrderedDict()
    m(x).sum().backward()
    log.append("|")
    # the full/old-style choice is a global of the module too
    home._global_is_full_backward_hook = None
    lib.nn.modules.module.register_module_backward_hook(lambda mod, gi, go: log.append("old"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        m(x).sum().backward()
    log.append(home._global_is_full_backward_hook)
    return log


def test_rebinding_the_global_backward_dicts_takes_effect(fresh_global_hooks):
    assert both(rebinding_global_backward_hooks) == ["bpre", "bfull", "|", "|", "old", False]


def test_global_dicts_are_the_ones_on_nn_modules_module():
    # Before any rebinding, registering through the public function lands in module's dict.
    h = mt.nn.modules.module.register_module_forward_hook(lambda *a: None)
    try:
        assert h.id in mt.nn.modules.module._global_forward_hooks
    finally:
        h.remove()
    assert h.id not in mt.nn.modules.module._global_forward_hooks


def registration_hooks_after_rebinding(lib):
    home = lib.nn.modules.module
    old = home._global_parameter_registration_hooks
    log = []
    try:
        home.register_module_parameter_registration_hook(lambda mod, name, p: log.append(name))
        lib.nn.Linear(1, 1)
        home._global_parameter_registration_hooks = OrderedDict()
        lib.nn.Linear(1, 1)
    finally:
        home._global_parameter_registration_hooks = old
    return log


def test_rebinding_the_global_registration_dicts_takes_effect():
    assert both(registration_hooks_after_rebinding) == ["weight", "bias"]


# -- node hooks and old-style module backward hooks are validated -------------------------------
def node_hook_returns(lib, kind, returned):
    x = lib.arange(3.0, requires_grad=True)
    y = x * 2

    def hook(*args):
        return returned

    if kind == "post":
        y.grad_fn.register_hook(hook)
    else:
        y.grad_fn.register_prehook(hook)
    err = error_of(lambda: y.sum().backward())
    return err[0], err[1] if err[0] != "ok" else None, None if x.grad is None else x.grad.tolist()


@pytest.mark.parametrize("kind", ["post", "pre"])
@pytest.mark.parametrize(
    "make", [lambda lib: (), lambda lib: [None], lambda lib: (None,), lambda lib: (None, None, None),
             lambda lib: (1,), lambda lib: 7, lambda lib: None, lambda lib: (lib.ones(3),),
             lambda lib: (lib.ones(2),), lambda lib: (lib.ones(3, dtype=lib.float64),)],
    ids=["empty", "list", "one_none", "three_none", "int_in_tuple", "int", "none", "tensor",
         "wrong_size", "wrong_dtype"],
)
def test_node_hook_results_are_checked(kind, make):
    ours = node_hook_returns(mt, kind, make(mt))
    theirs = node_hook_returns(torch, kind, make(torch))
    assert ours == theirs


def old_style_backward_hook(lib, returned):
    m = lib.nn.Linear(2, 1)

    def my_hook(mod, grad_input, grad_output):
        return returned(grad_input)

    m.register_backward_hook(my_hook)
    x = lib.ones(3, 2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        out = m(x)
    err = error_of(lambda: out.sum().backward())
    return err[0], err[1] if err[0] != "ok" else None, x.grad is None


@pytest.mark.parametrize(
    "returned",
    [lambda gi: (), lambda gi: gi[:1], lambda gi: list(gi), lambda gi: gi, lambda gi: None],
    ids=["empty", "too_few", "list", "same", "none"],
)
def test_old_style_module_backward_hook_is_checked(returned):
    ours, theirs = old_style_backward_hook(mt, returned), old_style_backward_hook(torch, returned)
    assert ours == theirs


def test_old_style_hook_error_names_the_hook():
    kind, message, _ = old_style_backward_hook(mt, lambda gi: ())
    assert kind == "RuntimeError"
    assert message == "hook 'my_hook' has returned an incorrect number of values (got 0, but expected 3)"


def non_full_hook_warnings(lib, which):
    nn = lib.nn

    class TwoNodes(nn.Module):
        def forward(self, x):
            return x * 2 + 1

    class TwoInputs(nn.Module):
        def forward(self, x, y):
            return x + y

    class TwoOutputs(nn.Module):
        def forward(self, x):
            return x * 2, x * 3

    class DictOut(nn.Module):
        def forward(self, x):
            return {"a": x * 2}

    class NonTensorIn(nn.Module):
        def forward(self, x, k):
            return x * k

    class Nested(nn.Module):
        def forward(self, x):
            return (x * 2).view(-1)[0:1].unsqueeze(0), x.sum().unsqueeze(0)

    x = lib.ones(2, requires_grad=True)
    h = x * 1   # a non-leaf input: its grad_fn can match the hooked node's inputs
    cases = {
        "two_nodes": (TwoNodes(), (x,)),
        "two_inputs": (TwoInputs(), (x, x)),
        "two_outputs": (TwoOutputs(), (x,)),
        "dict_out": (DictOut(), (x,)),
        "non_tensor_in": (NonTensorIn(), (x, 3)),
        "one_node_non_leaf": (nn.ReLU(), (h,)),
        "nested": (Nested(), (x,)),
    }
    m, args = cases[which]
    m.register_backward_hook(lambda *a: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(*args)
    return [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize(
    "which",
    ["two_nodes", "two_inputs", "two_outputs", "dict_out", "non_tensor_in", "one_node_non_leaf", "nested"],
)
def test_non_full_backward_hook_warnings(which):
    ours, theirs = non_full_hook_warnings(mt, which), non_full_hook_warnings(torch, which)
    assert ours == theirs


def test_non_full_backward_hook_warning_points_at_the_caller():
    m = mt.nn.Linear(2, 1)
    m.register_backward_hook(lambda *a: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(mt.ones(1, 2, requires_grad=True))
    assert [w.category for w in caught] == [FutureWarning]
    assert caught[0].filename == __file__


# -- in-place on a view made by a custom Function ---------------------------------------------
def inplace_on_hooked_input(lib, requires_grad, grad_enabled=True):
    class AddOneInPlace(lib.nn.Module):
        def forward(self, inp):
            inp += 1
            return inp * 2

    m = AddOneInPlace()
    m.register_full_backward_hook(lambda *a: None)
    x = lib.ones(2, requires_grad=requires_grad).clone()
    with lib.set_grad_enabled(grad_enabled):
        return error_of(lambda: m(x).tolist())


@pytest.mark.parametrize("requires_grad,grad_enabled", [(True, True), (False, True), (True, False)])
def test_inplace_on_an_input_of_a_module_with_full_backward_hooks(requires_grad, grad_enabled):
    ours = inplace_on_hooked_input(mt, requires_grad, grad_enabled)
    theirs = inplace_on_hooked_input(torch, requires_grad, grad_enabled)
    assert ours == theirs
    if requires_grad and grad_enabled:
        assert ours[1].startswith("Output 0 of BackwardHookFunction is a view and is being modified inplace.")


def custom_function_views(lib, which):
    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    leaf = lib.ones(3, requires_grad=True)
    if which == "same_leaf":
        return error_of(lambda: Same.apply(leaf).add_(1).tolist())
    if which == "same_non_leaf":
        return error_of(lambda: Same.apply(leaf.clone()).mul_(3).tolist())
    if which == "view_non_leaf":
        return error_of(lambda: View.apply(leaf.clone()).add_(1).tolist())
    if which == "dirty":   # an in-place Function's output is not a new view: writing again is fine
        return error_of(lambda: Dirty.apply(leaf.clone()).add_(1).tolist())
    if which == "stale":   # the base written after the Function ran: the view's node goes stale
        base = leaf.clone()
        y = Same.apply(base)
        base.add_(1)
        return error_of(lambda: type(y.grad_fn).__name__)
    if which == "view_of_view":   # the mark carries over to views taken of the output
        return error_of(lambda: Same.apply(leaf.clone())[0:2].add_(1).tolist())
    if which == "view_of_view_stale":
        base = leaf.clone()
        z = Same.apply(base)[1:]
        base.mul_(2)
        return error_of(lambda: type(z.grad_fn).__name__)
    if which == "view_of_result":   # a view of an ordinary result of the output is fine
        return error_of(lambda: (Same.apply(leaf.clone()) * 2)[0:2].add_(1).tolist())
    if which == "no_grad":
        y = Same.apply(leaf.clone())
        with lib.no_grad():
            y.add_(1)
        return y.tolist()
    raise AssertionError(which)


@pytest.mark.parametrize(
    "which",
    ["same_leaf", "same_non_leaf", "view_non_leaf", "dirty", "stale", "no_grad", "view_of_view",
     "view_of_view_stale", "view_of_result"],
)
def test_inplace_on_a_custom_function_view(which):
    assert custom_function_views(mt, which) == custom_function_views(torch, which)

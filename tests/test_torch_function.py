"""``__torch_function__``: handlers, the default re-wrapping, property dispatch, modes, Disable* contexts.

Behaviour shared with PyTorch is also compared against torch in
``tests/oracle/test_subclass_protocols_oracle.py``; these tests pin our own API details.
"""

import pytest

import minitorch_nn as mt
from minitorch_nn import _C
from minitorch_nn.overrides import (
    TorchFunctionMode,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
)


class Logged(mt.Tensor):
    """A subclass that records every call it sees, then defers to the default handler."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func, types, kwargs))
        return super().__torch_function__(func, types, args, kwargs)


class LoggedChild(Logged):
    pass


class Declines(mt.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class Recorder(TorchFunctionMode):
    def __init__(self, name="m", log=None):
        self.name = name
        self.log = [] if log is None else log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, func, types, kwargs, _C._len_torch_function_stack()))
        return func(*args, **(kwargs or {}))


@pytest.fixture
def t():
    Logged.calls.clear()
    return mt.ones(2).as_subclass(Logged)


# -- what a handler receives --------------------------------------------------------------------


def test_public_function_passes_itself_and_none_kwargs(t):
    mt.add(t, 1)
    func, types, kwargs = Logged.calls[0]
    assert func is mt.add and types == (Logged,) and kwargs is None


def test_keyword_arguments_arrive_as_a_dict(t):
    mt.add(t, 1, alpha=2)
    assert Logged.calls[0][2] == {"alpha": 2}


def test_methods_and_operators_pass_the_tensor_method(t):
    t.add(1)
    t + 1
    t * 2
    assert [c[0] for c in Logged.calls] == [mt.Tensor.add, mt.Tensor.add, mt.Tensor.mul]


def test_property_reads_pass_the_getter(t):
    t.shape  # noqa: B018  (the read itself dispatches)
    t.dtype  # noqa: B018  (the read itself dispatches)
    func = Logged.calls[0][0]
    assert func == mt.Tensor.shape.__get__ and type(func).__name__ == "method-wrapper"
    assert Logged.calls[1][0] == mt.Tensor.dtype.__get__


def test_property_writes_pass_the_setter(t):
    t.requires_grad = True
    assert Logged.calls[-1][0] == mt.Tensor.requires_grad.__set__
    assert t.requires_grad


def test_hand_written_methods_dispatch(t):
    t.dim()
    t.numel()
    repr(t)
    assert [c[0] for c in Logged.calls] == [mt.Tensor.dim, mt.Tensor.numel, mt.Tensor.__repr__]


# -- the default handler ------------------------------------------------------------------------


def test_default_handler_rewraps_results(t):
    assert type(t + 1) is Logged
    assert type(t.sum()) is Logged
    assert type(t.detach()) is Logged
    values, indices = mt.ones(2, 3).as_subclass(Logged).max(1)
    assert type(values) is Logged and type(indices) is Logged
    assert type(t.shape) is mt.Size
    assert repr(t) == "Logged([1., 1.])"


def test_default_handler_leaves_grad_and_base_unwrapped(t):
    t.requires_grad_()
    t.grad = mt.ones(2)
    assert type(t.grad) is mt.Tensor


def test_subclass_goes_before_parent(t):
    child = mt.ones(2).as_subclass(LoggedChild)
    out = t.add(child)
    assert Logged.calls[-1][1] == (LoggedChild, Logged)
    assert type(out) is LoggedChild


def test_all_handlers_declining_is_a_type_error():
    d = mt.ones(1).as_subclass(Declines)
    with pytest.raises(
        TypeError,
        match=r"Multiple dispatch failed for 'torch.add'; all __torch_function__ handlers returned NotImplemented",
    ):
        mt.add(d, 1)
    with pytest.raises(TypeError, match=r"torch.Tensor.shape.__get__"):
        d.shape  # noqa: B018  (the read itself dispatches)
    with pytest.raises(TypeError, match=r"tensor subclass <class '.*Declines'>"):
        d.add(1)


def test_parameter_disables_the_protocol():
    p = mt.nn.Parameter(mt.ones(2))
    assert type(p + 1) is mt.Tensor
    assert type(p.detach()) is mt.Tensor
    assert mt.nn.Parameter.__torch_function__ is _C._disabled_torch_function_impl


# -- disabling ----------------------------------------------------------------------------------


def test_disable_subclass_gives_plain_results_but_keeps_modes(t):
    with Recorder() as mode, _C.DisableTorchFunctionSubclass():
        out = t + 1
        assert not _C._is_torch_function_enabled()
    assert type(out) is mt.Tensor and Logged.calls == []
    assert [e[1] for e in mode.log] == [mt.Tensor.add]


def test_disable_torch_function_skips_modes_too(t):
    with Recorder() as mode, _C.DisableTorchFunction():
        out = t + 1
    assert type(out) is mt.Tensor and mode.log == []


# -- modes --------------------------------------------------------------------------------------


def test_mode_sees_plain_tensor_calls_and_is_popped_while_running():
    x = mt.ones(2)
    with Recorder() as mode:
        mt.add(x, 1)
        x.shape  # noqa: B018  (the read itself dispatches)
    (name, func, types, kwargs, depth), (_, getter, gtypes, _, _) = mode.log
    assert func is mt.add and types == () and kwargs is None and depth == 0
    assert getter == mt.Tensor.shape.__get__ and gtypes == (mt.Tensor,)


def test_modes_nest_innermost_first():
    log = []
    x = mt.ones(2)
    with Recorder("outer", log), Recorder("inner", log):
        x.add(1)
    assert [(e[0], e[4]) for e in log] == [("inner", 1), ("outer", 0)]


def test_mode_runs_before_subclass_handlers(t):
    with Recorder() as mode:
        out = t.add(1)
    assert mode.log[0][2] == (Logged,) and len(Logged.calls) == 1 and type(out) is Logged


def test_members_are_restored_after_the_last_mode_exits():
    original = mt.Tensor.__dict__.get("dim")
    with Recorder():
        assert mt.Tensor.__dict__.get("dim") is not original
    assert mt.Tensor.__dict__.get("dim") is original
    assert mt.Tensor.dim is _C.TensorBase.dim


def test_mode_declining_is_a_type_error():
    class No(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with No(), pytest.raises(TypeError, match="mode object"):
        mt.ones(2).add(1)


# -- helpers ------------------------------------------------------------------------------------


def test_has_torch_function_family(t):
    x = mt.ones(2)
    assert not has_torch_function((x,)) and has_torch_function((x, t))
    assert has_torch_function_unary(t) and not has_torch_function_unary(x)
    assert has_torch_function_variadic(x, t)
    with Recorder():
        assert has_torch_function((x,)) and has_torch_function_unary(x)


def test_tensor_like_objects_take_part():
    class TensorLike:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func.__name__)

    assert is_tensor_like(TensorLike()) and not is_tensor_like(1)
    assert mt.add(TensorLike(), 1) == ("handled", "add")
    assert mt.add(mt.ones(1), TensorLike()) == ("handled", "add")


def test_handle_torch_function_for_user_functions(t):
    def my_func(a):
        if has_torch_function_unary(a):
            return handle_torch_function(my_func, (a,), a)
        return "plain"

    assert my_func(mt.ones(1)) == "plain"
    assert my_func(t) == "plain"
    assert Logged.calls[0][0] is my_func


def test_handler_assigned_after_class_creation_gets_property_dispatch():
    seen = []

    class Late(mt.Tensor):
        __torch_function__ = _C._disabled_torch_function_impl

    @classmethod
    def handler(cls, func, types, args=(), kwargs=None):
        seen.append(func)
        with _C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    Late.__torch_function__ = handler
    x = mt.ones(2).as_subclass(Late)
    x.add(1)
    x.shape  # noqa: B018  (the read itself dispatches)
    assert seen[0] is mt.Tensor.add and seen[1] == mt.Tensor.shape.__get__


def test_recursing_handler_gets_a_hint():
    class Loud(mt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            str(args[0])  # prints its own instance: re-enters through Tensor.__repr__
            return super().__torch_function__(func, types, args, kwargs)

    t = mt.ones(2).as_subclass(Loud)
    with pytest.raises(RecursionError) as err:
        t + 1
    notes = err.value.__notes__
    assert len(notes) == 1 and "Loud.__torch_function__ was re-entered" in notes[0]
    assert "torch.Tensor.__repr__" in notes[0]


def test_dispatch_trace_shows_subclass_handlers(t):
    with mt.utils.dispatch_trace() as trace:
        t * 2
    assert trace.render().splitlines()[:3] == [
        "Tensor.mul(Logged:f32[2], 2)",
        "  __torch_function__: Logged",
        "    aten.mul.Tensor(Logged:f32[2], 2)",
    ]


def test_kernels_stay_invisible_to_modes():
    x = mt.ones(2, 3)
    backend = mt._dispatch.backend
    aten = mt.ops.aten
    with Recorder() as mode:
        # ops called directly: no public function, and the kernels' own .shape/.dim() reads hidden
        aten.sum.dim_IntList(x, [1])
        aten.max.dim(x, 0)
        aten.view.default(x, [6])
    assert mode.log == [] and mt._dispatch.backend is backend

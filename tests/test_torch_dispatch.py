"""``__torch_dispatch__``: dispatch modes, wrapper subclasses, argument normalisation, dispatch_trace.

The swap_tensors recipe's ``MyQuantizedLinearWeight`` is reproduced here at the tensor level;
the same scenarios are compared against PyTorch in
``tests/oracle/test_subclass_protocols_oracle.py``.
"""

import pytest

import minitorch_nn as mt
from minitorch_nn import _C, _dispatch
from minitorch_nn._dispatch import python_dispatch
from minitorch_nn.utils._python_dispatch import (
    TorchDispatchMode,
    _get_current_dispatch_mode,
    _len_torch_dispatch_stack,
    is_traceable_wrapper_subclass,
    transform_subclass,
)

aten = mt.ops.aten


class OpLog(TorchDispatchMode):
    def __init__(self, name="d", log=None):
        self.name = name
        self.log = [] if log is None else log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, func, types, args, kwargs, _len_torch_dispatch_stack()))
        return func(*args, **(kwargs or {}))


class MyQuantizedLinearWeight(mt.Tensor):
    """The wrapper subclass of PyTorch's swap_tensors recipe (written out again here)."""

    @staticmethod
    def __new__(cls, elem, scale):
        return mt.Tensor._make_wrapper_subclass(
            cls,
            elem.shape,
            dtype=elem.dtype,
            layout=elem.layout,
            device=elem.device,
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
        )

    def __init__(self, elem, scale):
        self.elem = elem
        self.scale = scale

    def __repr__(self):
        return f"MyQuantizedLinearWeight({self.elem}, scale={self.scale})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        if func in (aten.detach.default, aten._to_copy.default):
            new_elem = func(args[0].elem, *args[1:], **kwargs)
            return cls(new_elem, args[0].scale)
        raise NotImplementedError(f"Unsupported function {func}")


class TwoTensor(mt.Tensor):
    """A traceable wrapper: two inner tensors, every op applied to both."""

    @staticmethod
    def __new__(cls, a, b):
        return mt.Tensor._make_wrapper_subclass(
            cls, a.shape, dtype=a.dtype, device=a.device, strides=a.stride()
        )

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __tensor_flatten__(self):
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return TwoTensor(inner["a"], inner["b"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        def part(name):
            return [getattr(a, name) if isinstance(a, TwoTensor) else a for a in args]

        return TwoTensor(func(*part("a"), **kwargs), func(*part("b"), **kwargs))


# -- normalisation -------------------------------------------------------------------------------


def _logged(fn):
    with OpLog() as mode:
        fn()
    return [(str(e[1]), e[3], e[4]) for e in mode.log]


def test_trailing_defaults_dropped_and_int_lists_become_lists():
    x = mt.ones(2, 3)
    ((name, args, kwargs),) = _logged(lambda: x.sum(1))
    assert name == "aten.sum.dim_IntList" and args[1] == [1] and len(args) == 2 and kwargs == {}


def test_kwarg_only_arguments_only_when_not_default():
    x = mt.ones(2)
    ((_, args, kwargs),) = _logged(lambda: x.to(mt.float64))
    assert len(args) == 1 and kwargs == {"dtype": mt.float64}
    ((_, _, kwargs),) = _logged(lambda: x.add(x, alpha=2))
    assert kwargs == {"alpha": 2}
    ((_, _, kwargs),) = _logged(lambda: x.add(x))
    assert kwargs == {}


def test_normalize_moves_positional_schema_args_given_by_name():
    op = aten.sum.dim_IntList
    args, kwargs = python_dispatch.normalize_args(op, (mt.ones(2),), {"dim": (0,), "keepdim": True})
    assert args[1:] == ([0], True) and kwargs == {}


# -- modes ---------------------------------------------------------------------------------------


def test_modes_nest_and_are_popped_while_running():
    log = []
    with OpLog("outer", log), OpLog("inner", log):
        assert _get_current_dispatch_mode().name == "inner"
        mt.ones(2) + 1
    names = [(e[0], str(e[1]), e[5]) for e in log]
    assert names == [
        ("inner", "aten.ones.default", 1),
        ("outer", "aten.ones.default", 0),
        ("inner", "aten.add.Tensor", 1),
        ("outer", "aten.add.Tensor", 0),
    ]
    assert _get_current_dispatch_mode() is None


def test_mode_handles_factories_and_kwargs_dict():
    with OpLog() as mode:
        mt.zeros(3)
    ((_, func, types, args, kwargs, _),) = mode.log
    assert (
        func is aten.zeros.default and types == () and args == ([3],) and isinstance(kwargs, dict)
    )


def test_layer_is_only_installed_while_needed():
    saved = set(python_dispatch._classes)
    python_dispatch._classes.clear()
    python_dispatch._refresh()
    try:
        assert _dispatch.python_layer is None
        with OpLog():
            assert _dispatch.python_layer is python_dispatch.python_layer
        assert _dispatch.python_layer is None
    finally:
        python_dispatch._classes.update(saved)
        python_dispatch._refresh()


# -- wrapper subclasses ----------------------------------------------------------------------------


def test_wrapper_subclass_has_metadata_and_no_storage():
    w = MyQuantizedLinearWeight(mt.ones(2, 3, dtype=mt.float64), 0.5)
    assert w.shape == (2, 3) and w.dtype is mt.float64 and w.stride() == (3, 1)
    assert w.data_ptr() == 0 and w._impl.storage is None and not w.requires_grad
    r = mt.Tensor._make_wrapper_subclass(TwoTensor, (4,), dtype=mt.float16, requires_grad=True)
    assert r.requires_grad and r.dtype is mt.float16 and r.device == mt.device("cpu")


def test_wrapper_subclass_needs_torch_dispatch():
    class NoDispatch(mt.Tensor):
        pass

    with pytest.raises(TypeError, match="NoDispatch must define __torch_dispatch__"):
        mt.Tensor._make_wrapper_subclass(NoDispatch, (2,))


def test_dispatch_subclass_gets_torch_function_disabled():
    assert (
        MyQuantizedLinearWeight.__dict__["__torch_function__"] is _C._disabled_torch_function_impl
    )
    assert "__torch_function__" not in OpLog.__dict__


def test_recipe_weight_detach_and_to_copy():
    w = MyQuantizedLinearWeight(mt.ones(2, 3), 0.5)
    d = w.detach()
    assert type(d) is MyQuantizedLinearWeight and d.scale == 0.5 and d.elem is not w.elem
    b = w.to(mt.bfloat16)
    assert b.dtype is mt.bfloat16 and b.elem.dtype is mt.bfloat16
    with pytest.raises(NotImplementedError, match="Unsupported function aten.add.Tensor"):
        w + 1
    assert repr(w).startswith("MyQuantizedLinearWeight(tensor([[1., 1., 1.],")


def test_recipe_weight_as_parameter_keeps_its_type():
    w = MyQuantizedLinearWeight(mt.ones(2, 3), 0.5)
    p = mt.nn.Parameter(w)
    assert (
        type(p) is MyQuantizedLinearWeight and isinstance(p, mt.nn.Parameter) and p.elem is not None
    )


def test_recipe_module_load_handler():
    seen = []

    class Quantized(MyQuantizedLinearWeight):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = {} if kwargs is None else kwargs
            if func is mt.Tensor.module_load:
                dest, src = args
                seen.append((type(dest), type(src), kwargs))
                return Quantized(src, dest.scale)
            with _C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)

    w = Quantized(mt.ones(2, 3), 0.25)
    out = w.module_load(mt.zeros(2, 3), assign=True)
    assert seen == [(Quantized, mt.Tensor, {"assign": True})]
    assert type(out) is Quantized and out.scale == 0.25 and out.elem.sum().item() == 0


def test_kernels_never_see_a_wrapper():
    x = TwoTensor(mt.ones(2), mt.full((2,), 2.0))
    y = (x * 3).sum()
    assert type(y) is TwoTensor and y.a.item() == 6 and y.b.item() == 12


def test_all_dispatch_handlers_declining_is_a_type_error():
    class Declines(mt.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            return NotImplemented

    w = mt.Tensor._make_wrapper_subclass(Declines, (2,))
    with pytest.raises(
        TypeError,
        match=r"Multiple dispatch failed for 'torch._ops.aten.add.Tensor'; all __torch_dispatch__",
    ):
        w.add(1)


def test_super_torch_dispatch_runs_the_kernel():
    class PassThrough(mt.Tensor):
        seen = []

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            cls.seen.append(func)
            return super().__torch_dispatch__(func, types, args, kwargs)

    t = mt.ones(2).as_subclass(PassThrough)
    out = t + 1
    assert (
        PassThrough.seen == [aten.add.Tensor]
        and type(out) is mt.Tensor
        and out.tolist() == [2.0, 2.0]
    )


def test_traceable_wrapper_protocol():
    x = TwoTensor(mt.ones(2), mt.zeros(2))
    assert is_traceable_wrapper_subclass(x)
    assert not is_traceable_wrapper_subclass(MyQuantizedLinearWeight(mt.ones(2), 1.0))
    assert not is_traceable_wrapper_subclass(mt.ones(2))
    y = transform_subclass(x, lambda name, t: t + 1)
    assert type(y) is TwoTensor and y.a.tolist() == [2.0, 2.0] and y.b.tolist() == [1.0, 1.0]


# -- dispatch_trace --------------------------------------------------------------------------------


def test_dispatch_trace_x_plus_y():
    x, y = mt.ones(2, requires_grad=True), mt.ones(2)
    with mt.utils.dispatch_trace() as trace:
        x + y
    assert str(trace) == (
        "Tensor.add(f32[2], f32[2])\n"
        "  aten.add.Tensor(f32[2], f32[2])\n"
        "    autograd: AddBackward0\n"
        "    kernel: minitorch_nn.backends.cpu.pointwise.add"
    )


def test_dispatch_trace_expression_with_handlers():
    x = mt.ones(2, 3)
    w = TwoTensor(mt.ones(3), mt.ones(3))
    with mt.utils.dispatch_trace() as trace, OpLog():
        mt.relu(x).sum(1)
        w * 2
    lines = trace.render().splitlines()
    assert lines[0] == "torch.relu(f32[2, 3])"
    assert lines[1] == "  aten.relu.default(f32[2, 3])"
    assert lines[2] == "    __torch_dispatch__: OpLog (mode)"
    assert lines[3] == "      aten.relu.default(f32[2, 3])"
    assert lines[4].startswith("        kernel: minitorch_nn.backends.cpu.")
    assert lines[5] == "Tensor.sum(f32[2, 3], 1)"
    # the wrapper's handler runs after the mode; the kernels see the inner tensors
    tail = "\n".join(lines[lines.index("Tensor.mul(TwoTensor:f32[3], 2)") :])
    assert "__torch_dispatch__: TwoTensor" in tail and "aten.mul.Tensor(f32[3], 2)" in tail
    assert trace.roots and _dispatch.backend.__name__ == "backend"

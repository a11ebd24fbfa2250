"""Oracle: tensor-subclass semantics that module loading and data access depend on.

* which ``__torch_function__`` a subclass ends up with when it adds ``__torch_dispatch__``
  (an inherited handler is kept; Tensor's default is replaced by the disabled one);
* ``load_state_dict`` with the ``__future__`` swap flag, with subclasses in the module, the
  checkpoint or both, ``assign=False``/``True``: the resulting classes (``Tensor.module_load``
  reaches the right class's handler), and the error when a handler returns a broken tensor;
* ``as_subclass`` on a wrapper subclass (the alias comes from its ``__torch_dispatch__``);
* data access on ``__torch_dispatch__`` subclasses: ``tolist``/``numpy``/``__array__`` refuse,
  ``item``/``float``/``int`` ask the handler, printing runs ops as PyTorch's printer does;
* ``Tensor.module_load`` exists right after ``import minitorch_nn``.
"""

import itertools
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


def pytree_of(lib):
    if lib is torch:
        import torch.utils._pytree as pytree
    else:
        import minitorch_nn.utils._pytree as pytree
    return pytree


def subclasses(lib):
    """The same family of subclasses, defined against ``lib``."""
    Tensor = lib.Tensor
    tree_map = pytree_of(lib).tree_map
    DisableSub = lib._C.DisableTorchFunctionSubclass

    class Plain(Tensor):
        pass

    class LoadsAsOwnClass(Tensor):
        """module_load keeps the destination's class (assign=False) or its own (assign=True)."""

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is Tensor.module_load:
                dest, src = args[0], args[1]
                if not kwargs.get("assign", False):
                    with DisableSub():
                        dest.copy_(src)
                        out = dest.detach()
                    return out if type(dest) is lib.nn.Parameter else out.as_subclass(type(dest))
                with DisableSub():
                    out = src.detach()
                return out.as_subclass(cls)
            return super().__torch_function__(func, types, args, kwargs)

    class Wrapper(LoadsAsOwnClass):
        """A wrapper subclass that inherits its parent's __torch_function__."""

        @staticmethod
        def __new__(cls, data):
            t = Tensor._make_wrapper_subclass(
                cls, data.size(), dtype=data.dtype, device=data.device,
                requires_grad=data.requires_grad, strides=data.stride(),
            )
            t._data = data
            return t

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e._data if isinstance(e, Wrapper) else e

            def wrap(e):
                return Wrapper(e) if isinstance(e, Tensor) else e

            return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

        def __repr__(self):
            return f"Wrapper({self._data})"

    class Handing(Tensor):
        """A wrapper whose handler hands back plain tensors."""

        @staticmethod
        def __new__(cls, data):
            t = Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype)
            t.elem = data
            return t

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, Handing) else e

            return func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))

    return {"Plain": Plain, "LoadsAsOwnClass": LoadsAsOwnClass, "Wrapper": Wrapper, "Handing": Handing}


# -- which __torch_function__ a class gets --------------------------------------------------------
def handler_rules(lib):
    Tensor = lib.Tensor
    calls = []

    class Parent(Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return "handled by Parent"

    class Child(Parent):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class DispatchOnly(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Grandchild(DispatchOnly):
        pass

    disabled = lib._C._disabled_torch_function_impl
    c = lib.ones(2).as_subclass(Child)
    result = lib.add(c, 1)
    return (
        result,
        getattr(Child.__torch_function__, "__func__", None) is getattr(Parent.__torch_function__, "__func__", 0),
        DispatchOnly.__torch_function__ is disabled,
        Grandchild.__torch_function__ is disabled,
        "add" in calls,
    )


def test_a_subclass_adding_torch_dispatch_keeps_the_inherited_torch_function():
    ours, theirs = handler_rules(mt), handler_rules(torch)
    assert ours == theirs == ("handled by Parent", True, True, True, True)


# -- load_state_dict with the swap flag and subclasses ---------------------------------------------
def swap_load_types(lib, assign):
    classes = subclasses(lib)
    names = [None, "Plain", "LoadsAsOwnClass", "Wrapper"]

    def make(name):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 3, bias=False)
        m.buf = lib.nn.Buffer(lib.randn(2, 3))
        if name is not None:
            sub = classes[name]
            convert = sub if name == "Wrapper" else (lambda t: t.as_subclass(sub))
            m.weight = lib.nn.Parameter(convert(m.weight.detach()))
            m.buf = convert(m.buf)
        return m

    out = []
    previous = lib.__future__.get_swap_module_params_on_conversion()
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        for in_module, in_checkpoint in itertools.product(names, names):
            m = make(in_module)
            sd = make(in_checkpoint).state_dict()
            err = error_of(lambda: m.load_state_dict(sd, assign=assign))
            if err[0] != "ok":
                out.append((in_module, in_checkpoint, err[0], err[1].replace("torch.Size", "Size")))
                continue
            out.append((in_module, in_checkpoint, type(m.weight).__name__, type(m.buf).__name__,
                        isinstance(m.weight, lib.nn.Parameter), isinstance(m.buf, lib.nn.Parameter)))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(previous)
    return out


@pytest.mark.parametrize("assign", [False, True])
def test_swap_load_state_dict_with_subclasses_gives_pytorchs_types(assign):
    ours, theirs = swap_load_types(mt, assign), swap_load_types(torch, assign)
    assert ours == theirs


# -- as_subclass on a wrapper --------------------------------------------------------------------
def as_subclass_on_wrapper(lib):
    classes = subclasses(lib)
    w = classes["Wrapper"](lib.ones(2))
    same = w.as_subclass(classes["Wrapper"])
    parent = w.as_subclass(classes["LoadsAsOwnClass"])
    unrelated = error_of(lambda: w.as_subclass(classes["Plain"]))
    fresh = lib.ones(2).as_subclass(classes["Wrapper"])
    return (type(same).__name__, same is w, hasattr(same, "_data"), type(parent).__name__,
            hasattr(parent, "_data"), unrelated, type(fresh).__name__, hasattr(fresh, "_data"))


def test_as_subclass_on_a_wrapper_subclass():
    assert as_subclass_on_wrapper(mt) == as_subclass_on_wrapper(torch)


# -- data access on __torch_dispatch__ subclasses ---------------------------------------------------
ACCESS = {
    "tolist": lambda x: x.tolist(),
    "item": lambda x: x.item(),
    "numpy": lambda x: x.numpy(),
    "np.asarray": lambda x: np.asarray(x),
    "float": lambda x: float(x),
    "int": lambda x: int(x),
    "bool": lambda x: bool(x),
    "repr": lambda x: repr(x),
    "str": lambda x: str(x),
    "format": lambda x: format(x),
    "format_spec": lambda x: format(x, ".2f"),
    "iter": lambda x: [repr(v) for v in x],
    "add": lambda x: type(x + 1).__name__,
}


def data_access(lib, cls_name, zero_dim, what):
    cls = subclasses(lib)[cls_name]
    data = lib.tensor(3.0) if zero_dim else lib.tensor([0.0, 1.5])
    return error_of(lambda: ACCESS[what](cls(data)))


@pytest.mark.parametrize("what", list(ACCESS))
@pytest.mark.parametrize("zero_dim", [False, True], ids=["1d", "0d"])
@pytest.mark.parametrize("cls_name", ["Wrapper", "Handing"])
def test_data_access_on_wrapper_subclasses(cls_name, zero_dim, what):
    ours = data_access(mt, cls_name, zero_dim, what)
    theirs = data_access(torch, cls_name, zero_dim, what)
    assert ours == theirs


def test_tolist_message_names_the_class():
    x = subclasses(mt)["Handing"](mt.ones(2))
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor subclasses, got Handing$"):
        x.tolist()


def format_of_subclasses(lib):
    p = lib.nn.Parameter(lib.tensor(1.5))
    s = lib.tensor(2.5).as_subclass(subclasses(lib)["Plain"])
    return error_of(lambda: format(p, ".2f")), error_of(lambda: format(s, ".1f")), format(lib.tensor(0.25), ".1f")


def test_format_spec_only_for_plain_tensors():
    assert format_of_subclasses(mt) == format_of_subclasses(torch)


def test_module_load_exists_right_after_import():
    code = "import minitorch_nn, sys; print(hasattr(minitorch_nn.Tensor, 'module_load'), 'minitorch_nn.nn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]

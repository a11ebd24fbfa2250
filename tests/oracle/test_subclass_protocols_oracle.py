"""``__torch_function__`` / ``__torch_dispatch__`` against PyTorch 2.13.

The same user code runs once with ``torch`` and once with ``minitorch_nn``, with logging
subclasses and modes defined identically for each; the recorded calls (function name, types,
argument structure, keyword arguments), the result types and the errors must match.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402


def _dispatch_mode_base(lib):
    if lib is torch:
        from torch.utils._python_dispatch import TorchDispatchMode
    else:
        from minitorch_nn.utils._python_dispatch import TorchDispatchMode
    return TorchDispatchMode


def _describe(lib, v):
    """A library-neutral picture of an argument or result."""
    if isinstance(v, lib.Tensor):
        return (
            "T",
            type(v).__name__,
            str(v.dtype),
            tuple(v.shape) if not _is_wrapper(v) else "wrapper",
        )
    if isinstance(v, (list, tuple)):
        return (
            type(v).__name__ if type(v) in (list, tuple) else "namedtuple",
            [_describe(lib, x) for x in v],
        )
    if isinstance(v, dict):
        return {k: _describe(lib, x) for k, x in v.items()}
    if isinstance(v, (lib.dtype, lib.device)):
        return str(v)
    return repr(v)


def _is_wrapper(v):
    return getattr(v, "_wrapper", False)


def _name(func):
    return func.__name__ if not hasattr(func, "_schema") else str(func)


def _classes(lib):
    """Logging subclass, function mode and dispatch mode, written the same way for both libraries."""
    log = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            with lib._C.DisableTorchFunctionSubclass():
                log.append(
                    (
                        "tf",
                        _name(func),
                        [t.__name__ for t in types],
                        _describe(lib, args),
                        None if kwargs is None else _describe(lib, kwargs),
                    )
                )
            return super().__torch_function__(func, types, args, kwargs)

    class FMode(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(
                (
                    "fmode",
                    _name(func),
                    [t.__name__ for t in types],
                    None if kwargs is None else sorted(kwargs),
                )
            )
            return func(*args, **(kwargs or {}))

    class DMode(_dispatch_mode_base(lib)):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(
                (
                    "dmode",
                    _name(func),
                    [t.__name__ for t in types],
                    _describe(lib, args),
                    _describe(lib, kwargs),
                )
            )
            return func(*args, **(kwargs or {}))

    return log, Logged, FMode, DMode


SUBCLASS_CALLS = {
    "add_op": lambda lib, t: t + 1,
    "radd_op": lambda lib, t: 2 + t,
    "mul_tensors": lambda lib, t: t * t,
    "sub_method": lambda lib, t: t.sub(1),
    "add_fn_alpha": lambda lib, t: lib.add(t, 1, alpha=2),
    "sum": lambda lib, t: t.sum(),
    "sum_dim": lambda lib, t: t.sum(0, keepdim=True),
    "mean": lambda lib, t: t.mean(),
    "max_dim": lambda lib, t: t.max(1),
    "shape": lambda lib, t: t.shape,
    "dtype": lambda lib, t: t.dtype,
    "requires_grad": lambda lib, t: t.requires_grad,
    "dim": lambda lib, t: t.dim(),
    "numel": lambda lib, t: t.numel(),
    "detach": lambda lib, t: t.detach(),
    "view": lambda lib, t: t.view(-1),
    "transpose": lambda lib, t: t.transpose(0, 1),
    "getitem": lambda lib, t: t[0],
    "setitem": lambda lib, t: t.__setitem__(0, 1.0),
    "exp_fn": lambda lib, t: lib.exp(t),
    "cat": lambda lib, t: lib.cat([t, t]),
    "to_dtype": lambda lib, t: t.to(lib.float64),
    "matmul": lambda lib, t: t @ t,
    "unsqueeze": lambda lib, t: t.unsqueeze(0),
    "clone": lambda lib, t: t.clone(),
    "relu": lambda lib, t: lib.relu(t),
    "is_floating_point": lambda lib, t: t.is_floating_point(),
}


@pytest.mark.parametrize("name", sorted(SUBCLASS_CALLS))
def test_subclass_handler_sees_the_same_calls(name):
    def run(lib):
        log, Logged, _, _ = _classes(lib)
        t = lib.ones(2, 2).as_subclass(Logged)
        out = SUBCLASS_CALLS[name](lib, t)
        return log, _describe(lib, out)

    assert run(mt) == run(torch)


PLAIN_CALLS = {
    "add_op": lambda lib, x: x + 1,
    "method": lambda lib, x: x.mul(2),
    "function_kwargs": lambda lib, x: lib.add(x, x, alpha=3),
    "factory": lambda lib, x: lib.zeros(3, dtype=lib.float64),
    "shape": lambda lib, x: x.shape,
    "dim": lambda lib, x: x.dim(),
    "requires_grad": lambda lib, x: x.requires_grad,
    "chain": lambda lib, x: (x * 2).sum(0).mean(),
    # Not compared: PyTorch passes types=(Tensor,) to modes for a few C++ methods on plain
    # tensors (exp, neg, abs, t, detach, pow...); we pass () for every public method.
}


@pytest.mark.parametrize("name", sorted(PLAIN_CALLS))
def test_function_mode_sees_the_same_calls(name):
    def run(lib):
        log, _, FMode, _ = _classes(lib)
        x = lib.ones(2, 3)
        with FMode():
            PLAIN_CALLS[name](lib, x)
        return log

    assert run(mt) == run(torch)


DISPATCH_CALLS = {
    "add_scalar": lambda lib, x: x + 1,
    "add_alpha": lambda lib, x: x.add(x, alpha=2),
    "sum_dim": lambda lib, x: x.sum(1),
    "sum_keepdim": lambda lib, x: x.sum(1, keepdim=True),
    "sum_all": lambda lib, x: x.sum(),
    "mean_dim": lambda lib, x: x.mean(0),
    "to_float64": lambda lib, x: x.to(lib.float64),
    "double": lambda lib, x: x.double(),
    "noop_to": lambda lib, x: x.to("cpu"),
    "zeros": lambda lib, x: lib.zeros(3),
    "ones_dtype": lambda lib, x: lib.ones(2, dtype=lib.float64),
    "empty": lambda lib, x: lib.empty(2),
    "detach": lambda lib, x: x.detach(),
    "view": lambda lib, x: x.view(3, 2),
    "t": lambda lib, x: x.t(),
    "transpose": lambda lib, x: x.transpose(0, 1),
    "expand": lambda lib, x: x.expand(2, 2, 3),
    "select": lambda lib, x: x[0],
    "clone": lambda lib, x: x.clone(),
    "mul_scalar": lambda lib, x: x * 2,
    "relu": lambda lib, x: x.relu(),
    "exp": lambda lib, x: x.exp(),
    "rsub": lambda lib, x: 1 - x,
    "pow": lambda lib, x: x.pow(2),
    "max_dim": lambda lib, x: x.max(0),
    "matmul": lambda lib, x: x @ x.t(),
    "inplace": lambda lib, x: x.clone().zero_(),
    "fill": lambda lib, x: x.clone().fill_(1.0),
}


@pytest.mark.parametrize("name", sorted(DISPATCH_CALLS))
def test_dispatch_mode_sees_the_same_ops(name):
    def run(lib):
        log, _, _, DMode = _classes(lib)
        x = lib.ones(2, 3)
        with DMode():
            DISPATCH_CALLS[name](lib, x)
        return log

    assert run(mt) == run(torch)


def _quantized_weight(lib):
    """The swap_tensors recipe's wrapper subclass, logging what its handlers receive."""
    aten = lib.ops.aten
    log = []

    class MyQuantizedLinearWeight(lib.Tensor):
        _wrapper = True

        @staticmethod
        def __new__(cls, elem, scale):
            return lib.Tensor._make_wrapper_subclass(
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

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs):
            log.append(
                (
                    "dispatch",
                    str(func),
                    [t.__name__ for t in types],
                    len(args),
                    _describe(lib, kwargs),
                )
            )
            if func in (aten.detach.default, aten._to_copy.default):
                return cls(func(args[0].elem, *args[1:], **kwargs), args[0].scale)
            raise NotImplementedError(f"Unsupported function {func}")

    return log, MyQuantizedLinearWeight


def test_recipe_wrapper_subclass_matches():
    def run(lib):
        log, W = _quantized_weight(lib)
        w = W(lib.ones(2, 3), 0.5)
        facts = [
            type(W.__dict__.get("__torch_function__")).__name__ != "method",
            tuple(w.shape),
            str(w.dtype),
            w.stride(),
            w.requires_grad,
            w.data_ptr(),
        ]
        d = w.detach()
        b = w.bfloat16()
        same = w.to("cpu") is w
        facts += [type(d).__name__, str(b.dtype), str(b.elem.dtype), same]
        with pytest.raises(NotImplementedError) as err:
            w + 1
        facts.append(str(err.value))
        p = lib.nn.Parameter(w)
        facts += [type(p).__name__, isinstance(p, lib.nn.Parameter), p.elem.shape == w.elem.shape]
        return log, facts

    assert run(mt) == run(torch)


def test_recipe_module_load_handler_matches():
    def run(lib):
        log, W = _quantized_weight(lib)
        seen = []

        @classmethod
        def custom_torch_function(cls, func, types, args=(), kwargs=None):
            kwargs = {} if kwargs is None else kwargs
            if func is lib.Tensor.module_load:
                dest, src = args[0], args[1]
                seen.append((type(dest).__name__, type(src).__name__, kwargs))
                return W(src, dest.scale)
            with lib._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)

        W.__torch_function__ = custom_torch_function
        w = W(lib.ones(2, 3), 0.5)
        out = w.module_load(lib.zeros(2, 3), assign=True)
        return seen, type(out).__name__, out.scale, out.elem.sum().item(), log

    assert run(mt) == run(torch)


def test_errors_match():
    def run(lib):
        class Declines(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        class DeclinesDispatch(lib.Tensor):
            @classmethod
            def __torch_dispatch__(cls, func, types, args, kwargs):
                return NotImplemented

        d = lib.ones(1).as_subclass(Declines)
        w = lib.Tensor._make_wrapper_subclass(DeclinesDispatch, (2,))
        messages = []
        for call in (
            lambda: lib.add(d, 1),
            lambda: d.add(1),
            lambda: d.shape,
            lambda: w.add(1),
            lambda: lib.ones(1).as_subclass(int),
            lambda: lib.Tensor._make_wrapper_subclass(Declines, (2,)),
        ):
            try:
                call()
            except Exception as e:  # noqa: BLE001  (the type is part of what we compare)
                messages.append(
                    (type(e).__name__, str(e).replace("__main__.", "").split("<class '")[0])
                )
        return messages

    assert run(mt) == run(torch)


def test_modes_and_disabling_match():
    def run(lib):
        log, Logged, FMode, _ = _classes(lib)
        t = lib.ones(2).as_subclass(Logged)
        out = []
        with FMode():
            with lib._C.DisableTorchFunctionSubclass():
                out.append(type(t + 1).__name__)
            with lib._C.DisableTorchFunction():
                out.append(type(t + 1).__name__)
            out.append(type(t.add(lib.ones(2))).__name__)
        p = lib.nn.Parameter(lib.ones(2))
        out += [type(p + 1).__name__, type(p.detach()).__name__]
        return log, out

    assert run(mt) == run(torch)


def _recipe(lib):
    """The tensor-subclass part of PyTorch's swap_tensors recipe, as a user would run it."""
    nn, aten, out = lib.nn, lib.ops.aten, []

    class MyQuantizedLinearWeight(lib.Tensor):
        @staticmethod
        def __new__(cls, elem, scale):
            return lib.Tensor._make_wrapper_subclass(
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
                return cls(func(args[0].elem, *args[1:], **kwargs), args[0].scale)
            raise NotImplementedError(f"Unsupported function {func}")

    for swap in (False, True):
        lib.__future__.set_swap_module_params_on_conversion(swap)
        m = nn.Linear(3, 5, dtype=lib.float32)
        m.weight = nn.Parameter(MyQuantizedLinearWeight(m.weight, 0.5))
        before = id(m.weight)
        m.bfloat16()
        out.append(
            (
                id(m.weight) == before,
                str(m.weight.dtype),
                str(m.weight.elem.dtype),
                str(m.bias.dtype),
            )
        )
    lib.__future__.set_swap_module_params_on_conversion(False)

    @classmethod
    def custom_torch_function(cls, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func is lib.Tensor.module_load:
            dest, src = args[0], args[1]
            assert type(dest) == cls and type(src) == lib.Tensor  # noqa: E721  (the recipe's words)
            return MyQuantizedLinearWeight(src, dest.scale)
        with lib._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)

    MyQuantizedLinearWeight.__torch_function__ = custom_torch_function

    def fn(m):
        if isinstance(m, nn.Linear):
            m.weight = nn.Parameter(
                MyQuantizedLinearWeight(m.weight, 0.5), requires_grad=m.weight.requires_grad
            )

    with lib.device("meta"):
        m = nn.Linear(3, 5)
        m.apply(fn)
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        ids = id(m.weight), id(m.bias)
        out.append(repr(m.state_dict()))
        lib.manual_seed(0)
        state_dict = nn.Linear(3, 5).state_dict()
        m.load_state_dict(state_dict, assign=True)
        out.append((id(m.weight), id(m.bias)) == ids)
        out.append(repr(m.state_dict()))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    return out


def test_swap_tensors_recipe_end_to_end():
    assert _recipe(mt) == _recipe(torch)

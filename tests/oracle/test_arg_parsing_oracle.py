"""Oracle: the call forms PyTorch 2.13's argument parser accepts and refuses, for the common shape
and dim functions and methods (``minitorch_nn/_arg_parser.py``).

Each call runs in PyTorch and in minitorch_nn on the same small tensors; the result (shape, dtype,
values) or the error (type and full text) must be identical. The list covers the spread-out and
tuple/list forms of size arguments (``x.reshape(2, 8)`` but not ``torch.reshape(x, 2, 8)``),
keywords (``shape=``, ``dims=``, ``dim=``/``axis=``, ``keepdim=``/``keepdims=``, ``dtype=``),
missing and extra arguments, and wrong types; then hypothesis draws shapes and call forms, and
``__torch_function__`` handlers must see the method or function PyTorch reports.

Python's "missing"/"takes N positional arguments" errors of any public function or method are
given the parser's words (``overrides._parser_wording``): ``x.cumsum()``, ``x.abs(1)``,
``x.add(x, 2)`` are in the list. Known differences left: the compiled ``x.dim(0)``, ``x.numel(0)``,
``x.size(0, 1)``, ``x.matmul()`` (Cython's wording), functions with several signatures but one
here (``torch.add(x)``, ``x.clamp(1, 2, 3)``, ``prod``'s), ``torch.mean(x, 0, keepdim=1)`` (named
as if ``keepdim`` were positional) and ``x.view(torch.float64)`` of a float32 tensor (views
between dtypes of different sizes are not implemented).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.overrides import TorchFunctionMode as MtMode

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

pytestmark = pytest.mark.oracle


def outcome(lib, src, **names):
    """What ``src`` gives with ``t`` the library: a tensor's shape, dtype and values, another
    value's repr, or the error's type and text."""
    env = {"t": lib, "x": lib.arange(16.0).reshape(4, 4), "y": lib.arange(24.0).reshape(2, 3, 4),
           "s": lib.ones(1, 4, 1)}
    env.update({k: v(lib) for k, v in names.items()})
    try:
        r = eval(src, env)
    except Exception as e:  # noqa: BLE001 - the type and text are what we compare
        return f"{type(e).__name__}: {e}"
    if isinstance(r, lib.Tensor):
        return f"{tuple(r.shape)} {str(r.dtype).split('.')[-1]} {np.asarray(r.detach().tolist()).round(4).tolist()}"
    if isinstance(r, tuple) and r and isinstance(r[0], lib.Tensor):
        return [outcome(lib, "r", r=lambda _l, v=v: v) for v in r]
    return repr(r).replace("torch.", "").replace("minitorch_nn.", "")


CALLS = [
    # any public function or method called with too few or too many arguments
    'x.cumsum()',
    'x.softmax()',
    'x.abs(1)',
    'x.exp(x)',
    'x.t(0)',
    'x.add(x, 2)',
    'x.transpose(0)',
    't.transpose(x)',
    't.cumsum(x)',
    # add
    'x.add(1, alpha=2)',
    # argmax
    'x.argmax()',
    'x.argmax(0)',
    'x.argmax(dim=0, keepdim=True)',
    # chunk
    'x.chunk(2)',
    'x.chunk(2, 1)',
    'x.chunk(chunks=2, dim=1)',
    # clamp
    'x.clamp()',
    'x.clamp(1, 5)',
    'x.clamp(min=1)',
    # cumsum
    'x.cumsum(0)',
    'x.cumsum(dim=0)',
    # div
    'x.div(2, rounding_mode="floor")',
    # expand
    's.expand((2, 4, 3))',
    's.expand()',
    's.expand(2, 4, 3)',
    's.expand(2, 4, 3, implicit=True)',
    's.expand([2, 4, 3])',
    's.expand(size=(2, 4, 3))',
    'x.expand((4, 4), True)',
    'x.expand(-1, -1)',
    'x.expand(4, 4, implicit=True)',
    'x.expand(4, 4.0)',
    # expand_as
    'x.expand_as(x)',
    # flatten
    'x.flatten()',
    'x.flatten(0)',
    'x.flatten(0, 1)',
    'x.flatten(start_dim=0, end_dim=1)',
    # flip
    't.flip(x)',
    't.flip(x, (0,))',
    't.flip(x, (0,), foo=1)',
    't.flip(x, 0)',
    't.flip(x, [0.5])',
    't.flip(x, [0], 1)',
    't.flip(x, dims=(0,))',
    't.flip(x, dims=[0])',
    'x.flip((0, 0.5))',
    'x.flip((0, 1))',
    'x.flip()',
    'x.flip(0)',
    'x.flip(0, 1)',
    'x.flip(0, 1.0)',
    'x.flip(0.5)',
    'x.flip([0])',
    'x.flip(axis=0)',
    'x.flip(dims=(0,))',
    'x.flip(x)',
    # gather
    'x.gather(0, t.tensor([[0, 1]]))',
    # index_select
    'x.index_select(0, t.tensor([0, 1]))',
    # log_softmax
    'x.log_softmax(1)',
    # masked_fill
    'x.masked_fill(x > 3, 0.0)',
    # matmul
    'x.matmul(x)',
    # max
    'x.max()',
    'x.max(0)',
    'x.max(0, True)',
    'x.max(0, keepdim=True)',
    'x.max(dim=0)',
    'x.max(x)',
    # mean
    't.mean(x, 0)',
    't.mean(x, 0, 1)',
    't.mean(x, dim=1, keepdim=True)',
    'x.mean((0, 1))',
    'x.mean()',
    'x.mean(0)',
    'x.mean(0, 1)',
    'x.mean(0, True)',
    'x.mean(0, True, dtype=t.float64)',
    'x.mean(0, keepdim=1)',
    'x.mean(axis=0)',
    'x.mean(axis=0, keepdims=True)',
    'x.mean(dim=[0], keepdim=True)',
    'x.mean(dtype=t.float64)',
    'x.mean(dtype=t.float64, dim=0)',
    'x.mean(keepdims=True, axis=1)',
    'x.mean(t.float64)',
    # min
    'x.min(1)',
    # mm
    'x.mm(mat2=x)',
    # movedim
    'x.movedim((0, 1), (1, 0))',
    'x.movedim(0, 1)',
    # mul
    'x.mul(other=2)',
    # narrow
    'x.narrow(0, 1, 2)',
    # new_empty
    'x.new_empty(2).shape',
    # new_full
    'x.new_full((2,), 3.0)',
    'x.new_full(2, 3.0)',
    # new_ones
    'x.new_ones([2])',
    # new_tensor
    'x.new_tensor([1, 2])',
    # new_zeros
    'x.new_zeros((2, 3))',
    'x.new_zeros(2, 3)',
    # norm
    'x.norm()',
    'x.norm(2)',
    'x.norm(2, 0, True)',
    'x.norm(p=2, dim=0)',
    # permute
    't.permute(y)',
    't.permute(y, (2, 0, 1))',
    't.permute(y, (2, 0, 1), 1)',
    't.permute(y, 2)',
    't.permute(y, 2, 0, 1)',
    't.permute(y, dims=(2, 0, 1))',
    't.permute(y, dims=[2, 0, 1])',
    'x.permute((1, 0), 1)',
    'x.permute(1, 0, dims=(1, 0))',
    'x.permute(1, 0.0)',
    'y.permute((2, 0, 1))',
    'y.permute()',
    'y.permute(0, 1)',
    'y.permute(2, 0, 1)',
    'y.permute([2, 0, 1])',
    'y.permute(dims=(2, 0, 1))',
    # pow
    'x.pow(2)',
    'x.pow(exponent=2)',
    # prod
    'x.prod(0)',
    'x.prod(dim=0, keepdim=True)',
    # repeat
    'x.repeat((2, 1))',
    'x.repeat()',
    'x.repeat(2)',
    'x.repeat(2, 1)',
    'x.repeat(2, 1.0)',
    'x.repeat(2, 2, foo=1)',
    'x.repeat([2, 1])',
    'x.repeat(repeats=(2, 1))',
    'x.repeat(x)',
    # reshape
    't.reshape()',
    't.reshape(5, (2, 8))',
    't.reshape(input=x, shape=(2, 8))',
    't.reshape(x)',
    't.reshape(x, (2, 8))',
    't.reshape(x, (2, 8), 1)',
    't.reshape(x, (2, 8.0))',
    't.reshape(x, -1)',
    't.reshape(x, 2, 8)',
    't.reshape(x, [2, 8])',
    't.reshape(x, foo=1)',
    't.reshape(x, shape=(2, 8))',
    'x.reshape("a")',
    'x.reshape((2, 8))',
    'x.reshape((2, 8), 1)',
    'x.reshape((2, 8), shape=(2,8))',
    'x.reshape((2, 8.0))',
    'x.reshape()',
    'x.reshape(2, 8)',
    'x.reshape(2, 8, foo=1)',
    'x.reshape(2, 8.0)',
    'x.reshape(2, None)',
    'x.reshape(2, shape=(2,8))',
    'x.reshape(2.0, 8)',
    'x.reshape([2, 8])',
    'x.reshape(shape=(2, 8))',
    'x.reshape(shape=5)',
    'x.reshape(shape=[2, 8.0])',
    'x.reshape(t.tensor(2), 8)',
    'x.reshape(t.tensor([2, 8]))',
    'x.reshape(x)',
    # reshape_as
    'x.reshape_as(x)',
    # roll
    'x.roll((1, 1), (0, 1))',
    'x.roll(1)',
    'x.roll(1, 0)',
    'x.roll(shifts=1, dims=0)',
    # select
    't.select(x, 0, 1)',
    'x.select(0, 1)',
    'x.select(0, 1.5)',
    # size
    'x.size()',
    'x.size(0)',
    'x.size(dim=0)',
    # softmax
    'x.softmax(0)',
    'x.softmax(dim=0)',
    # split
    'x.split(2)',
    'x.split(2, 1)',
    'x.split([1, 3])',
    'x.split(split_size=2, dim=1)',
    # squeeze
    's.squeeze((0, 2))',
    's.squeeze()',
    's.squeeze(-1)',
    's.squeeze(0)',
    's.squeeze(0, 2)',
    's.squeeze([0, 2])',
    's.squeeze(dim=(0, 2))',
    's.squeeze(dim=0)',
    's.squeeze(dim=[0])',
    's.squeeze(foo=1)',
    't.squeeze(s)',
    't.squeeze(s, (0, 2))',
    't.squeeze(s, 0)',
    't.squeeze(s, 1.5)',
    't.squeeze(s, None)',
    't.squeeze(s, dim=0)',
    't.squeeze(x, 0, 1)',
    'x.squeeze(1.0)',
    'x.squeeze(None)',
    'x.squeeze(axis=0)',
    # std
    'x.std()',
    'x.std(0)',
    'x.std(0, unbiased=False)',
    'x.std(dim=0, correction=0)',
    # stride
    'x.stride(0)',
    'x.stride(dim=1)',
    # sub
    'x.sub(x, alpha=2)',
    # sum
    't.sum(x, axis=1)',
    't.sum(x, axis=1, keepdims=True)',
    't.sum(x, 0, axis=1)',
    't.sum(x, foo=1)',
    't.sum(x, dim=0, foo=1)',
    't.sum(x, dim=1, keepdims=True)',
    't.sum(x, axis=1, out=t.zeros(4))',
    't.mean(x, axis=0)',
    't.mean(x, axis=(0, 1), keepdims=True)',
    't.mean(x, keepdims=True, axis=1)',
    't.mean(x, 1, keepdims=True)',
    't.sum(x, (0,), keepdim=True)',
    't.sum(x, 0)',
    't.sum(x, 0, 1)',
    't.sum(x, 0, True)',
    't.sum(x, 0.5)',
    't.sum(x, dim=(0,), keepdim=True)',
    't.sum(x, dim=0, foo=1)',
    't.sum(x, dtype=t.float64)',
    'x.sum((0, 1))',
    'x.sum()',
    'x.sum(0)',
    'x.sum(0, 1)',
    'x.sum(0, 1, 2)',
    'x.sum(0, True)',
    'x.sum(0, True, t.float64)',
    'x.sum(0, axis=1)',
    'x.sum(0, dim=1)',
    'x.sum(0, dtype="a")',
    'x.sum(0, keepdim=1)',
    'x.sum(0, keepdim=True, dtype=t.float64)',
    'x.sum(0, keepdims=True)',
    'x.sum(0.5)',
    'x.sum(0.5, foo=1, bar=2)',
    'x.sum(None)',
    'x.sum([0, 1])',
    'x.sum(axis=0)',
    'x.sum(dim=(0, 1), keepdim=False, dtype=t.float64)',
    'x.sum(dim=0)',
    'x.sum(dim=0, axis=1)',
    'x.sum(dim=0, keepdim=True)',
    'x.sum(dim=None)',
    'x.sum(dims=0)',
    'x.sum(dims=0, foo=1)',
    'x.sum(dtype=t.float64)',
    'x.sum(keepdim=True)',
    'x.sum(keepdims=True)',
    'x.sum(t.float64)',
    # swapaxes
    't.swapaxes(x, 0, 1)',
    'x.swapaxes(0, 1)',
    # t
    'x.t()',
    # to
    'x.to("cpu", t.float64)',
    'x.to(dtype=t.float64)',
    'x.to(t.float64)',
    # transpose
    't.transpose(x, 0)',
    't.transpose(x, 0, 1)',
    't.transpose(x, 0, 1.5)',
    't.transpose(x, dim0=0, dim1=1)',
    'x.transpose((0, 1))',
    'x.transpose()',
    'x.transpose(0)',
    'x.transpose(0, 1)',
    'x.transpose(0, 1, 2)',
    'x.transpose(0, 1.0)',
    'x.transpose(0, dim0=1)',
    'x.transpose(1, dim1=0)',
    'x.transpose(axis0=0, axis1=1)',
    'x.transpose(dim0=0, dim1=1)',
    'x.transpose(dim0=0, dim1=1.5)',
    'x.transpose(dim0=1, dim1=0)',
    # type
    'x.type(t.float64)',
    # unbind
    'x.unbind()',
    'x.unbind(1)',
    'x.unbind(dim=1)',
    # unsqueeze
    't.unsqueeze(x)',
    't.unsqueeze(x, 0)',
    't.unsqueeze(x, 0.5)',
    't.unsqueeze(x, dim=-1)',
    't.unsqueeze(x, dim=0)',
    'x.unsqueeze((0,))',
    'x.unsqueeze()',
    'x.unsqueeze(-1)',
    'x.unsqueeze(0)',
    'x.unsqueeze(0, 1)',
    'x.unsqueeze(1.0)',
    'x.unsqueeze(axis=0)',
    'x.unsqueeze(dim=(0,))',
    'x.unsqueeze(dim=0)',
    'x.unsqueeze(dim=1.5)',
    # var
    'x.var(0, True)',
    'x.var(0, True, True)',
    # view
    'x.view((2, 8))',
    'x.view()',
    'x.view(2, 8)',
    'x.view(2, 8, size=(1,))',
    'x.view(2, size=(1,), dtype=1)',
    'x.view(2.5, 8)',
    'x.view([2, 8])',
    'x.view(dtype=t.int32).dtype',
    'x.view(foo=1)',
    'x.view(size=(2, 8))',
    'x.view(size=[2, 8])',
    'x.view(t.int32).dtype',
    'x.view(t.tensor(2), 8)',
    # view_as
    'x.view_as(x)',
]


@pytest.mark.parametrize("src", CALLS)
def test_call_form_matches_torch(src):
    assert outcome(mt, src) == outcome(torch, src)


FORMS = ("spread", "tuple", "list", "keyword")


def _call(method, form, name, values):
    """``x.method(...)`` with ``values`` in one of the forms a method's list of ints takes."""
    if form == "spread":
        return method(*values)
    if form == "tuple":
        return method(tuple(values))
    if form == "list":
        return method(list(values))
    return method(**{name: tuple(values)})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(1, 3), min_size=1, max_size=4), form=st.sampled_from(FORMS), data=st.data())
def test_size_methods_take_every_form(sizes, form, data):
    n = int(np.prod(sizes))
    perm = data.draw(st.permutations(range(len(sizes))))
    flips = data.draw(st.lists(st.sampled_from(range(len(sizes))), unique=True, max_size=len(sizes)))
    reps = data.draw(st.lists(st.integers(1, 2), min_size=len(sizes), max_size=len(sizes) + 1))
    calls = [("reshape", "shape", list(reversed(sizes))), ("view", "size", [n]), ("permute", "dims", list(perm)),
             ("flip", "dims", flips), ("repeat", "repeats", reps), ("expand", "size", [2] + sizes)]
    for name, arg, values in calls:
        results = []
        for lib in (torch, mt):
            x = lib.arange(float(n)).reshape(sizes)
            try:
                r = _call(getattr(x, name), form, arg, values)
                results.append((tuple(r.shape), np.asarray(r.tolist()).tolist()))
            except Exception as e:  # noqa: BLE001
                results.append(f"{type(e).__name__}: {e}")
        assert results[0] == results[1], (name, form, values)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_reductions_take_every_form(sizes, data):
    dims = data.draw(st.one_of(st.none(), st.integers(-len(sizes), len(sizes) - 1),
                               st.lists(st.integers(0, len(sizes) - 1), unique=True).map(tuple)))
    keep = data.draw(st.sampled_from([None, True, False, 1]))
    how = data.draw(st.sampled_from(["positional", "dim=", "axis=", "keepdims="]))
    results = []
    for lib in (torch, mt):
        x = lib.arange(float(np.prod(sizes))).reshape(sizes)
        args, kwargs = [], {}
        if dims is not None:
            if how == "positional":
                args.append(dims)
            else:
                kwargs["axis" if how == "axis=" else "dim"] = dims
        if keep is not None:
            kwargs["keepdims" if how == "keepdims=" else "keepdim"] = keep
        out = []
        for name in ("sum", "mean"):
            try:
                r = getattr(x, name)(*args, **kwargs)
                out.append((tuple(r.shape), np.asarray(r.tolist()).round(5).tolist()))
            except Exception as e:  # noqa: BLE001
                out.append(f"{type(e).__name__}: {e}")
        results.append(out)
    assert results[0] == results[1]


def test_torch_function_sees_method_or_function():
    def seen(lib, mode_cls):
        log = []

        class Log(mode_cls):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kind = "method" if func is getattr(lib.Tensor, func.__name__, None) else \
                    "function" if func is getattr(lib, func.__name__, None) else "other"
                log.append((func.__name__, kind, args[1:]))
                return func(*args, **(kwargs or {}))

        a = lib.ones(3, 3)
        with Log():
            a.reshape(9), lib.reshape(a, (9,)), a.flip(0), lib.flip(a, (0,)), a.permute(1, 0)
            lib.permute(a, (1, 0)), a.sum(0, True), a.mean(1), a.squeeze(0), a.transpose(0, 1), a.unsqueeze(1)
        return log

    assert seen(mt, MtMode) == seen(torch, torch.overrides.TorchFunctionMode)

"""What ``__torch_dispatch__`` sees of autograd's bookkeeping, and grad/inference modes, against PyTorch.

Part 1: when autograd saves an op's *output* for backward (``exp``, ``tanh``, ``softmax``...),
PyTorch's ``SavedVariable`` dispatches ``aten.detach`` on it, and again each time it is unpacked
(in backward, ``ctx.saved_tensors``, ``grad_fn._saved_result``). A ``TorchDispatchMode`` and a
wrapper subclass see those calls; saved inputs, integer outputs (``max``'s indices), ``no_grad``
and ``inference_mode`` make none. Each scenario runs in both libraries under a mode that logs
``func`` and the logs must be equal.

Part 2 and 3: ``inference_mode`` / ``no_grad`` / ``set_grad_enabled`` / ``enable_grad``, as
programs whose every step (value, flag, error type and text) must match.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from torch.utils._python_dispatch import TorchDispatchMode as TorchMode  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode as OurMode  # noqa: E402

_MODES = {torch: TorchMode, mt: OurMode}


def _logged(L, fn, requires_grad=True):
    """The aten ops a logging ``TorchDispatchMode`` sees while ``fn(x)`` runs."""

    class Log(_MODES[L]):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            # (a known difference: AccumulateGrad's strided copy starts from
            # aten.new_empty_strided in PyTorch, aten.empty_strided here)
            self.ops.append(str(func).replace("aten.new_empty_strided", "aten.empty_strided"))
            return func(*args, **(kwargs or {}))

    x = L.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 3.0]], requires_grad=requires_grad)
    log = Log()
    with log:
        fn(L, x)
    return log.ops


def _same_log(fn, requires_grad=True):
    theirs = _logged(torch, fn, requires_grad)
    ours = _logged(mt, fn, requires_grad)
    assert ours == theirs
    return theirs


# -- forward: which ops save their output ----------------------------------------------------------

_FORWARD = {
    # outputs saved: one detach after the op
    "exp": lambda L, x: x.exp(),
    "tanh": lambda L, x: x.tanh(),
    "sigmoid": lambda L, x: L.sigmoid(x),
    "softmax": lambda L, x: x.softmax(1),
    "log_softmax": lambda L, x: L.nn.functional.log_softmax(x, 1),
    "relu": lambda L, x: x.relu(),
    "sqrt": lambda L, x: x.abs().sqrt(),
    "rsqrt": lambda L, x: x.abs().rsqrt(),
    "pow_tensor_tensor": lambda L, x: x.abs().pow(x),
    "scalar_pow": lambda L, x: 2 ** x,
    "reciprocal": lambda L, x: 1 / x,
    "exp2_expm1_tan": lambda L, x: (x.exp2(), x.expm1(), x.tan()),
    "max_amax_amin": lambda L, x: (x.max(), x.amax(1), x.amin(0)),
    "norm": lambda L, x: (x.norm(), L.linalg.vector_norm(x, dim=1)),
    "prod_cumprod": lambda L, x: (x.prod(), x.cumprod(1)),
    "logsumexp": lambda L, x: x.logsumexp(1),
    "std_std_mean": lambda L, x: (x.std(), L.std_mean(x)),
    "chained": lambda L, x: x.exp().tanh().sigmoid(),
    "twice": lambda L, x: (x.exp(), x.exp()),
    # inputs saved, or nothing: no detach
    "sin_log_mul": lambda L, x: (x.sin(), x.abs().log(), x * x, x * 2),
    "pow_scalar": lambda L, x: (x.pow(2), x ** 0.5, x ** -1),
    "var_sum_mean": lambda L, x: (x.var(), x.sum(), x.mean()),
    # integer outputs (indices) are not detached
    "max_min_dim_sort_topk": lambda L, x: (x.max(1), x.min(1), x.sort(1), x.topk(2)),
    # views around it
    "view_then_exp": lambda L, x: x.view(6).exp(),
    "exp_then_view": lambda L, x: x.exp().view(6),
    # in place: the detach follows the in-place op
    "exp_inplace": lambda L, x: x.clone().exp_(),
    "tanh_sigmoid_relu_inplace": lambda L, x: (x.clone().tanh_(), x.clone().sigmoid_(), x.clone().relu_()),
    "mul_inplace": lambda L, x: x.clone().mul_(2),
    "exp_inplace_on_view": lambda L, x: x.clone()[0].exp_(),
    "exp_inplace_on_flat_view": lambda L, x: x.clone().view(6).exp_(),
    "inplace_on_view_then_exp": lambda L, x: (lambda a: (a[:1].mul_(2), a.exp()))(x.clone()),
    "softmax_then_loss": lambda L, x: L.nn.functional.log_softmax(x, 1).sum(),
}


@pytest.mark.parametrize("name", sorted(_FORWARD))
def test_forward_dispatches_detach_where_torch_saves_an_output(name):
    _same_log(_FORWARD[name])


def test_the_forward_sweep_is_not_vacuous():
    # The sweep above covers both sides: ops that save their output and ops that do not.
    with_detach = [n for n in _FORWARD if "aten.detach.default" in _logged(torch, _FORWARD[n])]
    assert "exp" in with_detach and "sin_log_mul" not in with_detach


# (not softmax: under inference_mode PyTorch hands a mode the composite ``aten.softmax.int``
# undecomposed; minitorch_nn has no composite ops, see export/composites.py)
@pytest.mark.parametrize("name", ["exp", "max_amax_amin", "exp_inplace", "chained"])
def test_no_detach_under_no_grad_inference_mode_or_without_grad(name):
    def under(ctx):
        return lambda L, x: _run_in(L, ctx, lambda: _FORWARD[name](L, x))

    _same_log(under("no_grad"))
    _same_log(under("inference_mode"))
    _same_log(under("set_grad_enabled_false"))
    _same_log(_FORWARD[name], requires_grad=False)


def _run_in(L, ctx, fn):
    manager = {"no_grad": L.no_grad, "inference_mode": L.inference_mode,
               "set_grad_enabled_false": lambda: L.set_grad_enabled(False), "enable_grad": L.enable_grad}[ctx]
    with manager():
        return fn()


# -- backward and unpacking ------------------------------------------------------------------------


_BACKWARD = {
    "exp": lambda L, x: x.exp().sum().backward(),
    "tanh": lambda L, x: x.tanh().sum().backward(),
    "sigmoid_softmax": lambda L, x: (x.sigmoid() + x.softmax(1)).sum().backward(),
    "create_graph": lambda L, x: L.autograd.grad(x.exp().sum(), x, create_graph=True),
    "retain_graph_twice": lambda L, x: (lambda y: (y.backward(retain_graph=True), y.backward()))(x.exp().sum()),
    "inplace_exp": lambda L, x: x.clone().exp_().sum().backward(),
    "saved_result": lambda L, x: (lambda y: (y.grad_fn._saved_result, y.grad_fn._saved_result))(x.exp()),
    "saved_self_is_not_detached": lambda L, x: x.sin().grad_fn._saved_self,
}


@pytest.mark.parametrize("name", sorted(_BACKWARD))
def test_unpacking_a_saved_output_dispatches_detach(name):
    _same_log(_BACKWARD[name])


def test_output_saved_outside_the_mode_and_unpacked_inside():
    def program(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        return _logged(L, lambda L_, _: y.sum().backward())

    assert program(mt) == program(torch)


def test_saved_tensors_hooks_skip_the_forward_detach_but_not_the_unpack():
    def program(L):
        packed = []

        def pack(t):
            packed.append(t)
            return t

        def run(L_, x):
            with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                y = x.exp()
            y.sum().backward()

        ops = _logged(L, run)
        return ops, len(packed)

    assert program(mt) == program(torch)


def test_saved_result_is_a_new_tensor_with_the_outputs_history():
    def program(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        r = y.grad_fn._saved_result
        return r is y, r.requires_grad, r.grad_fn is y.grad_fn, r.tolist() == y.tolist(), r._version

    assert program(mt) == program(torch)


# -- autograd.Function -----------------------------------------------------------------------------


def _functions(L):
    class SaveOutput(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class SaveInput(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2

    class SaveBoth(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 3
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3

    class ReturnInput(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Dirty(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return {"out": SaveOutput, "in": SaveInput, "both": SaveBoth, "identity": ReturnInput, "dirty": Dirty}


@pytest.mark.parametrize("which", ["out", "in", "both", "identity", "dirty"])
@pytest.mark.parametrize("then", ["forward", "backward", "no_grad", "detached_input"])
def test_autograd_function_save_for_backward(which, then):
    def run(L, x):
        fn = _functions(L)[which]
        if then == "no_grad":
            with L.no_grad():
                fn.apply(x.clone())
            return
        arg = x.detach() if then == "detached_input" else x.clone() if which == "dirty" else x
        y = fn.apply(arg)
        if then == "backward":
            y.sum().backward()

    _same_log(run)


# -- __torch_dispatch__ wrapper subclasses ------------------------------------------------------


def _tree_map(f, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(f, v) for v in x)
    if isinstance(x, dict):
        return {k: _tree_map(f, v) for k, v in x.items()}
    return f(x)


def _wrapper_program(L):
    log = []

    class W(L.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = L.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device,
                                                requires_grad=elem.requires_grad)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append((str(func), [type(a).__name__ for a in args]))

            def unwrap(t):
                return t.elem if isinstance(t, W) else t

            def wrap(t):
                return W(t) if isinstance(t, L.Tensor) and not isinstance(t, W) else t

            return _tree_map(wrap, func(*_tree_map(unwrap, args), **_tree_map(unwrap, kwargs or {})))

    steps = []
    x = W(L.tensor([0.5, 1.0, 2.0])).requires_grad_()
    y = x.exp()
    steps.append(("exp", list(log)))
    log.clear()
    r = y.grad_fn._saved_result
    steps.append(("saved_result", type(r).__name__, r is y, r.requires_grad, r.grad_fn is y.grad_fn, list(log)))
    log.clear()
    y.sum().backward()
    steps.append(("backward", list(log), type(x.grad).__name__))
    log.clear()
    s = x.sin().grad_fn._saved_self
    steps.append(("saved_self", type(s).__name__, s is x, list(log)))
    log.clear()
    a = x * 2
    b = a.exp_()
    steps.append(("exp_", b is a, list(log)))
    log.clear()
    b.sum().backward()
    steps.append(("backward_inplace", list(log)))
    log.clear()
    c = W(L.tensor([1.0, 2.0]))
    steps.append(("inplace_without_grad_returns_self", c.exp_() is c))
    return steps


def test_wrapper_subclass_sees_the_same_detaches():
    ours, theirs = _wrapper_program(mt), _wrapper_program(torch)
    for a, b in zip(ours, theirs):
        assert a == b
    assert len(ours) == len(theirs)


def test_inplace_op_returns_self_whatever_a_mode_returns():
    def program(L):
        class Cloning(_MODES[L]):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                return out.clone() if func is L.ops.aten.add_.Tensor else out

        plain = L.ones(2)
        tracked = L.ones(2, requires_grad=True).clone()
        with Cloning():
            return plain.add_(1) is plain, tracked.add_(1) is tracked

    assert program(mt) == program(torch)


def test_export_graph_has_no_autograd_detach():
    # PyTorch's export traces above autograd; ours traces below it and must leave out the
    # detach autograd makes while saving exp's output, even though parameters require grad.
    class M(mt.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mt.nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x).exp().tanh()

    ep = mt.export.export(M(), (mt.ones(1, 3),))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets and not any("detach" in t for t in targets)


def test_function_returning_its_input_without_recording():
    # An input handed back unchanged is a new tensor even when nothing is recorded: a detach of
    # it if it requires grad, else a view of it.
    def program(L):
        class Identity(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = L.ones(2, requires_grad=True)
        out = []
        for ctx, make in [(L.no_grad, lambda: x), (L.no_grad, lambda: x.detach()),
                          (L.inference_mode, lambda: x), (L.enable_grad, lambda: x.detach())]:
            a = make()
            with ctx():
                y = Identity.apply(a)
            out.append((y is a, y._is_view(), y.requires_grad, y.grad_fn is None))
        return out

    assert program(mt) == program(torch)


@pytest.mark.parametrize("name", ["exp", "softmax", "exp_inplace", "inplace_on_view_then_exp", "max_min_dim_sort_topk"])
def test_readable_recorder_dispatches_the_same_detaches(name, monkeypatch):
    # recording.py is the reference the compiled recorder (_ext/twins/autograd/recording.pyx) follows.
    from minitorch_nn import _dispatch
    from minitorch_nn.autograd import recording

    monkeypatch.setattr(_dispatch, "autograd_layer", recording.autograd_layer)
    _same_log(_FORWARD[name])
    _same_log(_BACKWARD["exp"])


# -- Part 2: inference tensors ------------------------------------------------------------------


def _outcome(fn):
    """What ``fn()`` gives: ('ok', value) or ('error', type name, message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(e).__name__, str(e))


def _same_steps(program):
    """Run ``program(lib)`` (a list of outcomes) for both libraries; every step must match."""
    ours, theirs = program(mt), program(torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"step {i}: ours {a!r}, torch {b!r}"
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("opt", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}), ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
])
def test_optimizer_step_on_inference_parameters(opt):
    # The optimizers' numpy update path must refuse, as the tensor ops (and PyTorch) do, and leave
    # the parameter and the state as PyTorch leaves them.
    name, kwargs = opt

    def program(L):
        L.manual_seed(0)
        with L.inference_mode():
            lin = L.nn.Linear(2, 1)
        before = lin.weight.tolist()
        steps = [_outcome(lambda: lin(L.ones(3, 2)).sum().backward())]
        lin.weight.grad, lin.bias.grad = L.ones(1, 2), L.ones(1)
        o = getattr(L.optim, name)(lin.parameters(), **kwargs)
        steps.append(_outcome(o.step))
        if L is mt:
            # (PyTorch writes the parameter before it raises; minitorch_nn refuses before writing)
            assert lin.weight.tolist() == before
        steps.append(sorted(o.state[lin.weight]) if lin.weight in o.state else None)
        with L.inference_mode():
            steps.append(_outcome(o.step))   # inside inference_mode the update is allowed
        steps.append(lin.weight.tolist() == before)
        return steps

    _same_steps(program)


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _made_to_require_grad_in_inference_mode(L):
    with L.inference_mode():
        x = L.tensor([1.0, 2.0, 3.0])
        x.requires_grad_()
    return x


_ON_INFERENCE_LEAF = {
    # inside inference_mode nothing is recorded; outside, only a call that also involves a normal
    # tensor (a Python number in a Tensor slot counts: PyTorch wraps it) reaches autograd
    "mul_scalar": lambda L, x: x * 2,
    "add_scalar": lambda L, x: x + 1,
    "mul_self": lambda L, x: x * x,
    "exp": lambda L, x: x.exp(),
    "sin": lambda L, x: x.sin(),
    "relu": lambda L, x: x.relu(),
    "sum": lambda L, x: x.sum(),
    "pow_scalar": lambda L, x: x.pow(2),
    "detach": lambda L, x: x.detach(),
    "mul_normal_that_requires_grad": lambda L, x: x * L.ones(3, requires_grad=True),
    "mul_normal": lambda L, x: x * L.ones(3),
    "cat_with_normal": lambda L, x: L.cat([x, L.ones(1)]),
    "cat_alone": lambda L, x: L.cat([x, x]),
}


@pytest.mark.parametrize("name", sorted(_ON_INFERENCE_LEAF))
@pytest.mark.parametrize("where", ["inside", "outside"])
def test_ops_on_an_inference_tensor_that_requires_grad(name, where):
    def program(L):
        x = _made_to_require_grad_in_inference_mode(L)
        fn = _ON_INFERENCE_LEAF[name]
        if where == "inside":
            with L.inference_mode():
                r = _outcome(lambda: fn(L, x))
        else:
            r = _outcome(lambda: fn(L, x))
        if r[0] == "error":
            return [r]
        y = r[1]
        steps = [(y.requires_grad, _grad_fn_name(y), y.is_inference())]
        if y.requires_grad:
            steps.append(_outcome(lambda: (y.sum().backward(), x.grad.tolist())))
        return steps

    _same_steps(program)


def test_ops_on_an_inference_tensor_through_a_dispatch_mode():
    # the same rule when a mode sees the ops (the compiled fast paths step aside)
    def program(L):
        class PassThrough(_MODES[L]):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        x = _made_to_require_grad_in_inference_mode(L)
        with PassThrough():
            return [_grad_fn_name(y) for y in (x * 2, x.exp(), x * x, x.sum())]

    assert program(mt) == program(torch)


def _detached_program(L):
    # .data and detach() of an inference tensor: still is_inference(), but with a counter of their
    # own outside inference_mode, so they may be written in place; requires grad and saving are
    # still refused.
    steps = []
    for kind in ("data", "detach", "data_in_mode", "detach_in_mode"):
        with L.inference_mode():
            y = L.ones(3)
        if kind.endswith("in_mode"):
            with L.inference_mode():
                d = y.data if kind.startswith("data") else y.detach()
        else:
            d = y.data if kind == "data" else y.detach()
        steps.append((kind, d.is_inference()))
        steps.append(_outcome(lambda: d._version))
        steps.append(_outcome(lambda: d.add_(1).tolist()))
        # (after a refused write PyTorch has written anyway; values are compared only up to here)
        steps.append(_outcome(lambda: d._version))
        steps.append(_outcome(lambda: d.requires_grad_().requires_grad))
        steps.append(_outcome(lambda: (d * L.ones(3, requires_grad=True)).grad_fn is None))
        steps.append(_outcome(lambda: L.nn.Parameter(d).requires_grad))
        steps.append(_outcome(lambda: L.nn.Parameter(d, requires_grad=False).is_inference()))
        steps.append(((d * 2).is_inference(), d.clone().is_inference(), d.data.is_inference()))
        steps.append(_outcome(lambda: d.detach().add_(1) is None)[:1])
        steps.append(_outcome(lambda: d.data.add_(1) is None)[:1])
    return steps


def test_data_and_detach_of_an_inference_tensor():
    _same_steps(_detached_program)


_WRITES = {
    "resize_": lambda L, y: y.resize_(2),
    "resize_same_shape": lambda L, y: y.resize_(3).shape,
    "zero_": lambda L, y: y.zero_(),
    "copy_": lambda L, y: y.copy_(L.zeros(3)),
    "setitem": lambda L, y: y.__setitem__(0, 5.0),
    "view_add_": lambda L, y: y.view(3).add_(1),
    "select_add_": lambda L, y: y[0].add_(1),
    "fill_": lambda L, y: y.fill_(2.0),
    "data_add_": lambda L, y: y.data.add_(1).tolist(),
    "detach_mul_": lambda L, y: y.detach().mul_(2).tolist(),
}


@pytest.mark.parametrize("name", sorted(_WRITES))
@pytest.mark.parametrize("where", ["plain", "no_grad", "inference_mode(False)", "inference_mode"])
def test_writes_into_inference_tensors(name, where):
    def program(L):
        with L.inference_mode():
            y = L.ones(3)
        manager = {"plain": L.enable_grad, "no_grad": L.no_grad, "inference_mode": L.inference_mode,
                   "inference_mode(False)": lambda: L.inference_mode(False)}[where]
        with manager():
            out = _outcome(lambda: _WRITES[name](L, y))
        if out[0] == "ok" and isinstance(out[1], L.Tensor):
            out = ("ok", out[1].tolist())
        if L is mt and out[0] == "error":
            assert y.tolist() == [1.0, 1.0, 1.0]   # (PyTorch writes, then raises; we refuse first)
        return [out]

    _same_steps(program)



# -- Part 3: grad modes ------------------------------------------------------------------------------


def _flags(L):
    return (L.is_grad_enabled(), L.is_inference_mode_enabled())


def test_nested_grad_modes_report_the_same_flags():
    def program(L):
        out = [_flags(L)]
        with L.no_grad():
            out.append(_flags(L))
            with L.enable_grad():
                out.append(_flags(L))
            with L.inference_mode():
                out.append(_flags(L))
                with L.inference_mode(False):
                    out.append(_flags(L))
                with L.enable_grad():
                    out.append(_flags(L))
                with L.no_grad():
                    out.append(_flags(L))
                with L.set_grad_enabled(True):
                    out.append(_flags(L))
            with L.inference_mode(mode=False):
                out.append(_flags(L))
        with L.set_grad_enabled(False):
            out.append(_flags(L))
            with L.set_grad_enabled(True):
                out.append(_flags(L))
        out.append(_flags(L))
        L.set_grad_enabled(False)   # called, not entered: switches for good
        out.append(_flags(L))
        L.set_grad_enabled(True)
        out.append(_flags(L))
        try:
            with L.inference_mode():
                raise ValueError
        except ValueError:
            out.append(_flags(L))
        return out

    assert program(mt) == program(torch)


def test_decorator_forms():
    def program(L):
        @L.no_grad()
        def a():
            return _flags(L)

        @L.no_grad
        def b():
            return _flags(L)

        @L.enable_grad()
        def c():
            return _flags(L)

        @L.inference_mode()
        def d():
            return _flags(L)

        @L.inference_mode
        def e():
            return _flags(L)

        @L.inference_mode(False)
        def f():
            return _flags(L)

        @L.set_grad_enabled(False)
        def g():
            return _flags(L)

        out = [a(), b(), d(), e(), f(), g(), _flags(L)]   # set_grad_enabled as a decorator does not switch
        with L.no_grad():
            out += [c(), f()]

        @L.inference_mode()
        def gen():
            yield _flags(L)
            yield _flags(L)

        it = gen()
        out += [next(it), _flags(L), next(it)]
        return out

    assert program(mt) == program(torch)


def test_decorating_a_class_warns_and_builds_it_inside_the_mode():
    import warnings

    def program(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @L.no_grad()
            class A:
                def __init__(self):
                    self.flags = _flags(L)

        return A().flags, [(w.category.__name__, str(w.message)) for w in caught]

    assert program(mt) == program(torch)


@pytest.mark.parametrize("value", ["yes", None, 0, 1.0])
def test_set_grad_enabled_wants_a_bool(value):
    def program(L):
        out = _outcome(lambda: L.set_grad_enabled(value))
        return out[:1] + out[2:] if out[0] == "error" else ("ok",), L.is_grad_enabled()

    assert program(mt) == program(torch)
    assert str(mt.set_grad_enabled(True)) == "minitorch_nn.autograd.grad_mode.set_grad_enabled(mode=True)"


@pytest.mark.parametrize("switch", ["enable_grad", "set_grad_enabled(True)"])
def test_grad_mode_turned_on_inside_inference_mode_records_no_op(switch):
    # is_grad_enabled() says True, but inference mode keeps autograd out: only custom Functions,
    # which ask grad mode alone, are recorded
    def program(L):
        class Double(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = L.ones(3, requires_grad=True)
        on = L.enable_grad if switch == "enable_grad" else lambda: L.set_grad_enabled(True)
        out = []
        with L.inference_mode(), on():
            out.append(L.is_grad_enabled())
            for y in (x * 2, x.exp(), x.sum(), L.cat([x, x]), Double.apply(x)):
                out.append((y.requires_grad, _grad_fn_name(y), y.is_inference()))
            out.append(_outcome(lambda: (x * 2).sum().backward()))
            out.append(_outcome(lambda: x.add_(0).requires_grad))
        return out

    assert program(mt) == program(torch)


def test_grad_mode_seen_by_hooks_during_backward():
    def program(L):
        x = L.ones(2, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(_flags(L)))
        (x * 2).sum().backward()
        L.autograd.grad((x * 2).sum(), x, create_graph=True)
        with L.no_grad(), L.enable_grad():
            (x * 2).sum().backward()
        return seen

    assert program(mt) == program(torch)


def test_inference_tensors_mixed_with_normal_ones():
    def program(L):
        with L.inference_mode():
            y = L.ones(2)
        n = L.ones(2)
        out = [(y + n).is_inference(), (y + 1).is_inference(), L.stack([y, n]).is_inference(),
               y.clone().is_inference(), y.contiguous() is y, y.to(L.float64).is_inference(), y.tolist()]
        with L.inference_mode():
            v, c, d = n.view(2), n.clone(), n.detach()
            out += [(n + 1).is_inference(), v.is_inference(), c.is_inference(), d.is_inference(), v._version]
            out.append(_outcome(lambda: (y + n).is_inference()))
        out.append(_outcome(lambda: v.add_(1).tolist()))
        out.append(_outcome(lambda: c.add_(1).tolist()))
        out.append(_outcome(lambda: y.requires_grad_(False).requires_grad))
        out.append(_outcome(lambda: y.retain_grad()))
        out.append(_outcome(lambda: y._version))
        return out

    assert program(mt) == program(torch)


# -- outputs without history (derivatives.yaml's output_differentiability) ----------------------------

_STAT_OPS = {
    "nll_loss_forward": lambda L, x: L.ops.aten.nll_loss_forward.default(x.log_softmax(1), L.tensor([0, 2]), None, 1, -100),
    "native_layer_norm": lambda L, x: L.ops.aten.native_layer_norm.default(x, [3], None, None, 1e-5),
    "native_batch_norm": lambda L, x: L.ops.aten.native_batch_norm.default(x, None, None, L.zeros(3), L.ones(3),
                                                                          True, 0.1, 1e-5),
}


@pytest.mark.parametrize("name", sorted(_STAT_OPS))
def test_statistics_outputs_have_no_history(name):
    def program(L):
        x = L.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 3.0]], requires_grad=True)
        outs = _STAT_OPS[name](L, x)
        flags = [(o.requires_grad, o.grad_fn is None) for o in outs]
        outs[0].sum().backward()
        return flags, [round(v, 5) for v in x.grad.reshape(-1).tolist()]

    assert program(mt) == program(torch)


_MODEL_STEPS = {
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 2])).backward(),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (3,)).sum().backward(),
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, L.zeros(3), L.ones(3), training=True).sum().backward(),
    "mlp_tanh_softmax": lambda L, x: L.nn.functional.log_softmax(L.tanh(x @ L.ones(3, 2)), 1).sum().backward(),
}


@pytest.mark.parametrize("name", sorted(_MODEL_STEPS))
def test_training_steps_dispatch_like_torch(name):
    _same_log(_MODEL_STEPS[name])


def _unpack_order(L):
    # pow(x, x): the exponent's formula reads the saved result; PyTorch unpacks (detaches) it
    # before any formula runs. (The formulas' own ops differ, so only the detaches are compared.)
    x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.pow(x).sum()
    ops = _logged(L, lambda L_, _: y.backward())
    return ops[:3], [i for i, op in enumerate(ops) if op == "aten.detach.default"][-1] == len(ops) - 1, \
        ops.count("aten.detach.default")


@pytest.mark.parametrize("engine", ["compiled", "readable"])
def test_saved_outputs_are_unpacked_before_the_formulas_run(engine, monkeypatch):
    if engine == "readable":
        from minitorch_nn.autograd.recording import OpNode

        readable = OpNode._apply
        # a patched _apply makes the compiled engine call the Python method (_ext/twins/autograd/engine.pyx)
        monkeypatch.setattr(OpNode, "_apply", lambda self, grads: readable(self, grads))
    assert _unpack_order(mt) == _unpack_order(torch)


def test_views_of_inference_tensors_are_not_tracked_as_views():
    def program(L):
        with L.inference_mode():
            y = L.ones(2, 3)
            inside = [y.view(6), y[0], y.t(), y.detach()]
        n = L.ones(2, 3)
        with L.inference_mode():
            normal_inside = [n.view(6), n[0]]
        outside = [y.view(6), y[:, 1], y.transpose(0, 1)]
        d = y.data
        of_data = [d.view(6), d[0]]
        out = []
        for t in inside + normal_inside + outside + of_data:
            out.append((t.is_inference(), t._is_view(), t._base is None))
        for t in outside + of_data:
            out.append(_outcome(lambda: t.add_(1) is None)[:2])   # (values: PyTorch writes before raising)
        out.append(_outcome(lambda: d.view(6).detach().add_(1) is None)[:2])
        return out

    assert program(mt) == program(torch)


def test_dispatch_trace_shows_the_saved_output_detach_under_its_op():
    # (minitorch_nn's own tool: no PyTorch counterpart) with a dispatch mode active, the detach of
    # exp's saved output is a call of its own, nested under the aten.exp that saved it
    class PassThrough(OurMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = mt.ones(2, requires_grad=True)
    with PassThrough(), mt.utils.dispatch_trace() as trace:
        x.exp()
    lines = str(trace).splitlines()
    assert lines[0] == "Tensor.exp(f32[2])" and lines[1] == "  aten.exp.default(f32[2])"
    assert "    autograd: ExpBackward0" in lines
    assert "    aten.detach.default(f32[2])" in lines
    assert lines.index("    aten.detach.default(f32[2])") > lines.index("    autograd: ExpBackward0")
    with mt.utils.dispatch_trace() as trace:   # without a mode nothing sees it: no detach call
        x.exp()
    assert "detach" not in str(trace)


# -- property: random ops, shapes, dtypes and layouts ----------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.strategies import build, tensor_specs  # noqa: E402

_UNARY_CHAINS = {
    "exp": lambda x: x.exp(), "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(), "sqrt_abs": lambda x: x.abs().sqrt(), "sin": lambda x: x.sin(),
    "softmax_last": lambda x: x.softmax(-1), "mul_self": lambda x: x * x, "exp_inplace": lambda x: (x * 1).exp_(),
    "max": lambda x: x.max(), "sum": lambda x: x.sum(),
}


@settings(max_examples=25, deadline=None)
@given(spec=tensor_specs(dtypes=("float32", "float64"), min_dims=1, max_dims=3, specials=False),
       chain=st.lists(st.sampled_from(sorted(_UNARY_CHAINS)), min_size=1, max_size=3),
       backward=st.booleans())
def test_detaches_of_random_op_chains_match_torch(spec, chain, backward):
    def program(L):
        x = build(L, spec).requires_grad_()

        def run(L_, _):
            y = x
            for name in chain:
                y = _UNARY_CHAINS[name](y)
            if backward:
                y.sum().backward()

        ops = _logged(L, run)
        # the forward ops are the same in both; in backward only autograd's own detaches (saved
        # outputs unpacked, AccumulateGrad) are compared, the formulas' ops differ for some nodes
        return [op for op in ops if op == "aten.detach.default" or not backward]

    assert program(mt) == program(torch)


@pytest.mark.parametrize("shape", [(1,), (1, 1), (2, 1), (1, 3)])
def test_accumulate_grad_copies_an_expanded_gradient_of_a_size_one_dim(shape):
    # PyTorch's obeys_layout_contract: a 0 stride along a dim of size 1 marks an expanded view,
    # which AccumulateGrad copies (new_empty_strided + copy_) instead of keeping (detach)
    def run(L, _):
        x = L.ones(*shape, requires_grad=True)
        x.sum().backward()

    _same_log(run)

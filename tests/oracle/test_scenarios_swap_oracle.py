"""Scenario sweep: ``swap_tensors``, module conversion under the ``__future__`` flags, meta device,
``to_empty``, ``load_state_dict`` (assign, swap path, meta), ``module_load`` and state-dict hooks.

Variations on the PyTorch recipe "Extension points in nn.Module for load_state_dict and tensor
subclasses"; each runs in both libraries and the transcripts must match (``_scenario_helpers.py``).
"""

import pytest

from tests.oracle._scenario_helpers import assert_same_transcript, keep_global_rng_state, scenarios  # noqa: F401

pytestmark = pytest.mark.oracle

CASES, case = scenarios()


def _with_flags(t, swap=False, overwrite=False):
    """Run a block with the __future__ flags set, restoring them afterwards (a context manager)."""
    import contextlib

    @contextlib.contextmanager
    def flags():
        old = (
            t.__future__.get_swap_module_params_on_conversion(),
            t.__future__.get_overwrite_module_params_on_conversion(),
        )
        t.__future__.set_swap_module_params_on_conversion(swap)
        t.__future__.set_overwrite_module_params_on_conversion(overwrite)
        try:
            yield
        finally:
            t.__future__.set_swap_module_params_on_conversion(old[0])
            t.__future__.set_overwrite_module_params_on_conversion(old[1])

    return flags()


@case
def swap_values_and_classes(t):
    a, b = t.arange(2), t.arange(3.0)
    print(t.utils.swap_tensors(a, b), a, b)
    p, q = t.nn.Parameter(t.ones(2)), t.zeros(3)
    t.utils.swap_tensors(p, q)
    print(type(p).__name__, type(q).__name__, p, q, p.requires_grad, q.requires_grad)


@case
def swap_dicts_and_grads(t):
    a, b = t.ones(2, requires_grad=True), t.zeros(2)
    a.grad = t.full((2,), 3.0)
    a.foo = 1
    b.bar = 2
    t.utils.swap_tensors(a, b)
    print(a.__dict__, b.__dict__, a.grad, b.grad, a.requires_grad, b.requires_grad)


@case
def swap_refused_for_weakref_t1(t):
    import weakref

    a, b = t.ones(2), t.ones(2)
    r = weakref.ref(a)  # noqa: F841
    t.utils.swap_tensors(a, b)


@case
def swap_refused_for_weakref_t2(t):
    import weakref

    a, b = t.ones(2), t.ones(2)
    r = weakref.ref(b)  # noqa: F841
    t.utils.swap_tensors(a, b)


@case
def swap_refused_with_two_views(t):
    a, b = t.ones(2), t.ones(2)
    v, w = a[0:1], a[1:]  # noqa: F841
    t.utils.swap_tensors(a, b)


@case
def swap_refused_with_one_view_no_grad(t):
    a, b = t.ones(2), t.ones(2)
    v = a[0:1]  # noqa: F841
    t.utils.swap_tensors(a, b)


@case
def swap_refused_when_saved_for_backward(t):
    x = t.ones(2, requires_grad=True)
    y = x * x  # noqa: F841  (x is saved twice)
    t.utils.swap_tensors(x, t.zeros(2, requires_grad=True))


@case
def swap_poisons_accumulate_grad(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    t.utils.swap_tensors(x, t.zeros(2, requires_grad=True))
    print(x)
    y.sum().backward()


@case
def swap_non_tensor_argument(t):
    t.utils.swap_tensors(t.ones(1), 3)


@case
def swap_with_itself_and_meta(t):
    a = t.ones(2)
    t.utils.swap_tensors(a, a)
    print(a)
    b = t.empty(3, device="meta")
    t.utils.swap_tensors(a, b)
    print(a.device, b.device, a.shape, b)


@case
def swap_subclass_slots(t):
    class S(t.Tensor):
        __slots__ = ("a",)

    s1 = t.ones(2).as_subclass(S)
    s2 = t.zeros(3).as_subclass(S)
    s1.a = 5
    t.utils.swap_tensors(s1, s2)
    print(s2.a, hasattr(s1, "a"), type(s1).__name__, s1.shape)


@case
def conversion_swap_flag_half_keeps_identity(t):
    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2)
        w = m.weight
        m.weight.grad = t.ones(2, 2)
        g = m.weight.grad
        print(m.half() is m, m.weight is w, m.weight.dtype, m.weight.grad is g, g.dtype, type(m.weight).__name__)
        m.double()
        print(m.weight.dtype, m.bias.dtype, m.weight.requires_grad)


@case
def conversion_swap_flag_fails_with_saved_weight(t):
    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2)
        out = m(t.ones(1, 2, requires_grad=True))  # noqa: F841
        try:
            m.half()
        except RuntimeError as e:
            print(e, "|", type(e.__cause__).__name__, e.__cause__)
        print(m.weight.dtype)


@case
def conversion_swap_flag_poisons_earlier_graph(t):
    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2)
        out = m(t.ones(1, 2))
        m.half()
        print(m.weight.dtype)
        out.sum().backward()


@case
def conversion_overwrite_flag(t):
    with _with_flags(t, overwrite=True):
        m = t.nn.Linear(2, 2)
        w = m.weight
        opt = t.optim.SGD(m.parameters(), lr=0.1)
        m.double()
        print(m.weight is w, w.dtype, m.weight.dtype, opt.param_groups[0]["params"][0] is w)


@case
def conversion_default_path(t):
    m = t.nn.Linear(2, 2)
    w = m.weight
    m.weight.grad = t.ones(2, 2)
    g = m.weight.grad
    m.double()
    print(m.weight is w, w.dtype, g is m.weight.grad, g.dtype)
    opt = t.optim.SGD(m.parameters(), lr=0.1)
    m.weight = t.nn.Parameter(2 * m.weight)
    print(opt.param_groups[0]["params"][0] is m.weight)


@case
def conversion_integer_buffers_kept(t):
    m = t.nn.BatchNorm1d(2)
    m.register_buffer("idx", t.arange(3))
    m.half()
    print(m.running_mean.dtype, m.num_batches_tracked.dtype, m.idx.dtype)
    m.type(t.float64)
    print(m.idx.dtype, m.weight.dtype)


@case
def module_to_integer_dtype(t):
    t.nn.Linear(2, 2).to(t.int32)


@case
def module_to_tensor_and_complex_warning(t):
    m = t.nn.Linear(2, 2).to(t.zeros(1, dtype=t.float64))
    print(m.weight.dtype)


@case
def meta_module_to_cpu(t):
    m = t.nn.Linear(2, 2, device="meta")
    print(m.weight)
    m.to("cpu")


@case
def meta_module_cpu(t):
    t.nn.Linear(2, 2, device="meta").cpu()


@case
def meta_tensor_cpu(t):
    t.empty(2, device="meta").cpu()


@case
def to_empty_from_meta(t):
    m = t.nn.Linear(2, 2, device="meta")
    w = m.weight
    print(m.to_empty(device="cpu") is m, m.weight.device, m.weight is w, m.weight.shape, type(m.weight).__name__)


@case
def to_empty_positional_device(t):
    t.nn.Linear(2, 2, device="meta").to_empty("cpu")


@case
def to_empty_swap_flag_keeps_identity(t):
    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2, device="meta")
        w = m.weight
        m.to_empty(device="cpu")
        print(m.weight.device, m.weight is w)


@case
def meta_ops_shapes(t):
    x = t.empty(2, 3, device="meta")
    y = x @ t.empty(3, 4, device="meta")
    print(y.shape, y.device, y, (x + 1).sum(0), x.to("meta"), t.empty_like(x, device="cpu").shape)


@case
def meta_item(t):
    t.empty(1, device="meta").item()


@case
def meta_tolist(t):
    t.empty(2, device="meta").tolist()


@case
def meta_numpy(t):
    t.empty(2, device="meta").numpy()


@case
def load_assign_replaces_parameters(t):
    m = t.nn.Linear(2, 2)
    w = m.weight
    sd = {"weight": t.ones(2, 2, dtype=t.float64), "bias": t.zeros(2)}
    m.load_state_dict(sd, assign=True)
    print(m.weight is w, m.weight.dtype, type(m.weight).__name__, m.weight.requires_grad)
    m2 = t.nn.Linear(2, 2)
    m2.load_state_dict(sd)
    print(m2.weight.dtype, m2.weight)


@case
def load_assign_swap_flag(t):
    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2)
        w = m.weight
        sd = {"weight": t.ones(2, 2, dtype=t.float64), "bias": t.zeros(2)}
        m.load_state_dict(sd, assign=True)
        print(m.weight is w, m.weight.dtype, type(m.weight).__name__, m.weight.requires_grad)
        print(m.load_state_dict(sd), m.weight.dtype)


@case
def load_into_meta_module(t):
    m = t.nn.Linear(2, 2, device="meta")
    m.load_state_dict(t.nn.Linear(2, 2).state_dict())
    print(m.weight.device)
    m.load_state_dict(t.nn.Linear(2, 2).state_dict(), assign=True)
    print(m.weight.device, type(m.weight).__name__, m.weight.requires_grad)


@case
def load_non_mapping(t):
    t.nn.Linear(2, 2).load_state_dict([1])


@case
def load_string(t):
    t.nn.Linear(2, 2).load_state_dict("")


@case
def load_non_tensor_value(t):
    t.nn.Linear(2, 2).load_state_dict({"weight": [[1, 2], [3, 4]], "bias": t.ones(2)})


@case
def load_zero_dim_from_one_element(t):
    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = t.nn.Parameter(t.tensor(1.0))

    m = M()
    m.load_state_dict({"p": t.tensor([5.0])})
    print(m.p)


@case
def module_load_default(t):
    a, b = t.ones(2), t.zeros(2)
    r = a.module_load(b)
    print(r, a, r is a)
    print(a.module_load(t.full((2,), 3.0), assign=True), a)


@case
def state_dict_keep_vars_prefix_positional(t):
    m = t.nn.Linear(2, 2)
    sd = m.state_dict()
    print(type(sd["weight"]).__name__, sd["weight"].requires_grad)
    sd = m.state_dict(keep_vars=True)
    print(type(sd["weight"]).__name__, sd["weight"] is m.weight)
    sd = m.state_dict(prefix="a.b.")
    print(list(sd), sd._metadata)
    d = {}
    print(m.state_dict(d, "x.") is d, list(d))


@case
def state_dict_post_hook_returning_value(t):
    m = t.nn.Linear(2, 2)
    m.register_state_dict_post_hook(lambda mod, sd, p, lm: 1)
    m.state_dict()


@case
def load_post_hook_returning_value(t):
    m = t.nn.Linear(2, 2)
    m.register_load_state_dict_post_hook(lambda mod, k: 1)
    m.load_state_dict(m.state_dict())


@case
def load_pre_hook_renames_key(t):
    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = t.nn.Linear(1, 1)

    def rename(module, sd, prefix, local_metadata, strict, missing, unexpected, errors):
        for k in list(sd):
            if k.startswith(prefix + "old."):
                sd[prefix + "lin." + k[len(prefix + "old.") :]] = sd.pop(k)

    m = Net()
    m.register_load_state_dict_pre_hook(rename)
    print(m.load_state_dict({"old.weight": t.ones(1, 1), "old.bias": t.zeros(1)}), m.lin.weight)


@case
def extra_state_round_trip(t):
    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = t.nn.Linear(1, 1)

        def get_extra_state(self):
            return {"v": 1}

        def set_extra_state(self, state):
            print("set", state)

    m = M()
    sd = m.state_dict()
    print(list(sd))
    m.load_state_dict(sd)
    del sd["_extra_state"]
    print(m.load_state_dict(sd, strict=False))


@case
def recipe_subclass_weight_load(t):
    """The recipe's flow: a __torch_function__ subclass takes over module_load under the swap flag."""

    class Scaled(t.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is t.Tensor.module_load:
                dest, src = args
                print("module_load", type(dest).__name__, type(src).__name__, kwargs)
                return (src * 2).as_subclass(Scaled).detach()
            with t._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)

    with _with_flags(t, swap=True):
        m = t.nn.Linear(2, 2)
        m.weight = t.nn.Parameter(t.zeros(2, 2).as_subclass(Scaled))
        w = m.weight
        m.load_state_dict({"weight": t.ones(2, 2), "bias": t.zeros(2)})
        print(m.weight is w, type(m.weight).__name__, isinstance(m.weight, t.nn.Parameter))
        print(m.weight.as_subclass(t.Tensor))


# -- the recipe itself, with its MyQuantizedLinearWeight wrapper subclass ------------------------------


def make_cls(torch, with_tf=False):
    class MyQuantizedLinearWeight(torch.Tensor):
        @staticmethod
        def __new__(cls, elem, scale):
            return torch.Tensor._make_wrapper_subclass(
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
            if func in (torch.ops.aten.detach.default, torch.ops.aten._to_copy.default):
                new_elem = func(args[0].elem, *args[1:], **kwargs)
                return cls(new_elem, args[0].scale)
            OP_TABLE = dict()
            if func in OP_TABLE:
                return OP_TABLE[func](func, args, kwargs)
            raise NotImplementedError(f"Unsupported function {func}")

        if with_tf:

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if kwargs is None:
                    kwargs = {}
                if func is torch.Tensor.module_load:
                    dest, src = args[0], args[1]
                    assert type(dest) == cls and type(src) == torch.Tensor  # noqa: E721  (the recipe's words)
                    return MyQuantizedLinearWeight(src, dest.scale)
                else:
                    with torch._C.DisableTorchFunctionSubclass():
                        return func(*args, **kwargs)

    return MyQuantizedLinearWeight


@case
def recipe_default_path(torch):
    nn = torch.nn
    Q = make_cls(torch)
    torch.manual_seed(0)
    m = nn.Linear(3, 5, dtype=torch.float32)
    m.weight = torch.nn.Parameter(Q(m.weight, 0.5))
    w, b = m.weight, m.bias
    m.bfloat16()
    print(
        m.weight is w,
        m.bias is b,
        m.weight.dtype,
        m.weight.elem.dtype,
        m.bias.dtype,
        type(m.weight).__name__,
        isinstance(m.weight, nn.Parameter),
    )


@case
def recipe_swap_path(torch):
    nn = torch.nn
    Q = make_cls(torch)
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        torch.manual_seed(0)
        m = nn.Linear(3, 5, dtype=torch.float32)
        m.weight = torch.nn.Parameter(Q(m.weight, 0.5))
        w, b = m.weight, m.bias
        m.bfloat16()
        print(
            m.weight is w,
            m.bias is b,
            m.weight.dtype,
            m.weight.elem.dtype,
            m.bias.dtype,
            type(m.weight).__name__,
            isinstance(m.weight, nn.Parameter),
        )
        print(m.weight)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)


@case
def recipe_load_meta_assign(torch):
    nn = torch.nn
    Q = make_cls(torch, with_tf=True)
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        torch.manual_seed(0)
        m = nn.Linear(3, 5, dtype=torch.float32, device="meta")
        m.weight = torch.nn.Parameter(Q(m.weight, 0.5))
        state_dict = nn.Linear(3, 5).state_dict()
        w, b = m.weight, m.bias
        print(m.load_state_dict(state_dict, assign=True))
        print(m.weight is w, m.bias is b)
        print(f"m.weight: {m.weight}")
        print(f"m.bias: {m.bias}")
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)


@case
def recipe_load_without_swap_flag(torch):
    nn = torch.nn
    Q = make_cls(torch, with_tf=True)
    torch.manual_seed(0)
    m = nn.Linear(3, 5)
    m.weight = torch.nn.Parameter(Q(m.weight.detach().clone(), 0.5))
    try:
        print(m.load_state_dict(nn.Linear(3, 5).state_dict()))
    except Exception as e:
        print(type(e).__name__, str(e)[:300])


@case
def recipe_motivation_optimizer(torch):
    nn = torch.nn
    torch.manual_seed(0)
    mod = nn.Linear(3, 5)
    opt = torch.optim.SGD(mod.parameters(), lr=0.1)
    mod.weight = nn.Parameter(2 * mod.weight)
    print(opt.param_groups[0]["params"][0] is mod.weight, torch.equal(opt.param_groups[0]["params"][0] * 2, mod.weight))


@case
def dispatch_mode_sees_load(torch):
    TorchDispatchMode = torch.utils._python_dispatch.TorchDispatchMode

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)
            return func(*args, **(kwargs or {}))

    m = torch.nn.Linear(2, 1)
    sd = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
    with Log():
        print(m.load_state_dict(sd))


@pytest.mark.parametrize("name", sorted(CASES))
def test_swap_and_loading_match_torch(name):
    assert_same_transcript(CASES[name])

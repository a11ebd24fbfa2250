"""Oracle: ``nn.Module`` conversions (``to``, ``float``, ``_apply``...) against PyTorch 2.13.

Which tensors keep their identity under each ``__future__`` flag, failing swaps, ``module_load``
through tensor subclasses, the swap flag poisoning saved graphs, random trees converted,
``to()`` argument forms, and whether an optimizer still sees the converted parameters.
"""

import random

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import (  # noqa: F401, E402  (keep_global_rng_state: autouse fixture)
    Leaf,
    assert_same_error,
    build,
    error_of,
    keep_global_rng_state,
    random_spec,
)

# -- conversions: identity rules under each __future__ flag ---------------------------------------
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def conversion_identity(lib, swap, overwrite, conversion):
    lib.__future__.set_swap_module_params_on_conversion(swap)
    lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
    try:
        if conversion == "to_empty":
            with lib.device("meta"):
                m = Leaf(lib)
                m.register_buffer("idx", lib.zeros(2, dtype=lib.int64))
        else:
            m = Leaf(lib)
            m.register_buffer("idx", lib.zeros(2, dtype=lib.int64))
            m.register_buffer("fbuf", lib.zeros(2))
            m.weight.grad = lib.ones(3, 2)
            m.bias.requires_grad_(False)
        before = {n: (t, t.grad) for n, t in m.named_parameters()}
        bufs = dict(m.named_buffers())
        out = {
            "double": lambda: m.double(),
            "to64": lambda: m.to(lib.float64),
            "half": lambda: m.half(),
            "float": lambda: m.float(),
            "type": lambda: m.type(lib.float64),
            "to_tensor": lambda: m.to(lib.zeros(1, dtype=lib.float64)),
            "to_empty": lambda: m.to_empty(device="cpu"),
            "apply_recurse_false": lambda: m._apply(lambda t: t.double(), recurse=False),
        }[conversion]()
        res = {"returns_self": out is m}
        for n, p in m.named_parameters():
            res[n] = (
                p is before[n][0],
                type(p).__name__,
                str(p.dtype),
                p.device.type,
                p.requires_grad,
                None if p.grad is None else (p.grad is before[n][1], str(p.grad.dtype)),
            )
            res[n + ".old_dtype"] = str(before[n][0].dtype)
        for n, b in m.named_buffers():
            res[n] = (b is bufs[n], str(b.dtype), b.device.type)
        return res
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)


@pytest.mark.parametrize(
    "conversion",
    ["double", "to64", "half", "float", "type", "to_tensor", "to_empty", "apply_recurse_false"],
)
@pytest.mark.parametrize("swap,overwrite", FLAGS)
def test_conversion_identity_match(swap, overwrite, conversion):
    ours = conversion_identity(mt, swap, overwrite, conversion)
    theirs = conversion_identity(torch, swap, overwrite, conversion)
    assert ours == theirs


def swap_failure(lib, make):
    import weakref

    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        m = make(lib)
        m.weight.grad = lib.ones(3, 2)
        ref = weakref.ref(m.weight)  # noqa: F841  (a live weakref blocks the swap)
        try:
            m.double()
        except RuntimeError as e:
            return (
                str(e),
                type(e.__cause__).__name__,
                str(e.__cause__),
                str(m.weight.dtype),
                m.weight.grad is not None,
            )
        return "no error"
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("make", [Leaf, lambda lib: lib.nn.Linear(2, 3)], ids=["Leaf", "Linear"])
def test_swap_failure_chain_match(make):
    assert swap_failure(mt, make) == swap_failure(torch, make)


def meta_to_cpu_error(lib):
    with lib.device("meta"):
        m = Leaf(lib)
    return error_of(lambda: m.to("cpu"))


def test_meta_to_error_match():
    assert_same_error(meta_to_cpu_error(mt), meta_to_cpu_error(torch))


# -- tensor subclasses: module_load through __torch_function__, automatic swap --------------------
def module_load_subclass(lib, keep_type):
    nn = lib.nn
    log = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is lib.Tensor.module_load:
                log.append(
                    (
                        "module_load",
                        len(args),
                        type(args[0]).__name__,
                        type(args[1]).__name__,
                        dict(kwargs),
                    )
                )
                with lib._C.DisableTorchFunctionSubclass():
                    if kwargs.get("assign"):
                        out = args[1].detach().clone()
                    else:
                        out = args[0].detach().clone().copy_(args[1])
                return out.as_subclass(Sub)
            with lib._C.DisableTorchFunctionSubclass():
                out = func(*args, **kwargs)
            if keep_type and func is lib.Tensor.detach:
                out = out.as_subclass(Sub)
            return out

    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        for assign in (False, True):
            m = nn.Module()
            m.w = nn.Parameter(lib.zeros(2))
            w = m.w
            try:
                log.append(
                    repr(m.load_state_dict({"w": lib.ones(2).as_subclass(Sub)}, assign=assign))
                )
            except RuntimeError as e:
                log.append(str(e))
            log.append((m.w is w, type(m.w).__name__, isinstance(m.w, nn.Parameter), m.w.tolist()))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    return log


@pytest.mark.parametrize("keep_type", [False, True])
def test_module_load_torch_function_subclass_match(keep_type):
    assert module_load_subclass(mt, keep_type) == module_load_subclass(torch, keep_type)


def traceable_subclass_swap(lib, swap):
    nn = lib.nn

    class Flat(lib.Tensor):
        def __tensor_flatten__(self):
            return [], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
            return None

    class Plain(lib.Tensor):
        pass

    lib.__future__.set_swap_module_params_on_conversion(swap)
    try:
        out = []
        for cls in (Flat, Plain):
            m = nn.Module()
            m.w = nn.Parameter(lib.zeros(2))
            w = m.w
            m._apply(lambda t: t.as_subclass(cls))  # noqa: B023  (called at once)
            out.append(
                (
                    m.w is w,
                    type(m.w).__name__,
                    isinstance(m.w, nn.Parameter),
                    getattr(m.w, "_is_param", None),
                )
            )
        return out
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("swap", [False, True])
def test_traceable_wrapper_subclass_swaps_automatically_match(swap):
    assert traceable_subclass_swap(mt, swap) == traceable_subclass_swap(torch, swap)


def module_load_default(lib):
    a, b = lib.zeros(2), lib.ones(2)
    r1 = a.module_load(b)
    r2 = a.module_load(lib.full((2,), 3.0), assign=True)
    return (
        r1 is a,
        r1.tolist(),
        a.tolist(),
        r1.data_ptr() == a.data_ptr(),
        r2.tolist(),
        a.tolist(),
    )


def test_module_load_default_match():
    assert module_load_default(mt) == module_load_default(torch)


def swap_poisons_graph(lib):
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        m = Leaf(lib)
        out = (m.weight * 2).sum()
        m.half()
        first = (str(m.weight.dtype), error_of(lambda: out.backward())[0])
        out2 = (m.weight.float() * 2).sum()
        out2.backward()
        m.float()
        return first, str(m.weight.dtype)
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


def test_swap_flag_poisons_saved_graph_match():
    assert swap_poisons_graph(mt) == swap_poisons_graph(torch)


def random_tree_conversion(lib, seed):
    rng = random.Random(seed)
    spec = random_spec(rng)
    m = build(lib, spec, seed)
    swap, overwrite = rng.choice(FLAGS)
    conversion = rng.choice(["double", "half", "float", "bfloat16", "to64", "type64", "cpu"])
    grad_every = rng.randint(1, 3)
    for i, p in enumerate(m.parameters()):
        if p.requires_grad and i % grad_every == 0:
            p.grad = lib.ones(tuple(p.shape))
    before = {n: (t, t.grad) for n, t in m.named_parameters(remove_duplicate=False)}
    bufs = dict(m.named_buffers(remove_duplicate=False))
    lib.__future__.set_swap_module_params_on_conversion(swap)
    lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
    try:
        {
            "double": m.double,
            "half": m.half,
            "float": m.float,
            "bfloat16": m.bfloat16,
            "to64": lambda: m.to(lib.float64),
            "type64": lambda: m.type(lib.float64),
            "cpu": m.cpu,
        }[conversion]()
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)
    res = {}
    for n, p in m.named_parameters(remove_duplicate=False):
        res[n] = (
            p is before[n][0],
            str(p.dtype),
            p.grad is None or (p.grad is before[n][1], str(p.grad.dtype)),
        )
    for n, b in m.named_buffers(remove_duplicate=False):
        res[n] = (b is bufs[n], str(b.dtype))
    return conversion, swap, overwrite, res


@pytest.mark.parametrize("seed", range(25))
def test_random_tree_conversions_match(seed):
    assert random_tree_conversion(mt, seed) == random_tree_conversion(torch, seed)


def old_views_and_versions(lib):
    out = []
    for overwrite in (False, True):
        lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
        try:
            m = Leaf(lib)
            view = m.weight[:]
            m.double()
            with lib.no_grad():
                view.fill_(5.0)
            out.append((str(view.dtype), m.weight.flatten()[0].item()))
        finally:
            lib.__future__.set_overwrite_module_params_on_conversion(False)
    m = Leaf(lib)
    m.weight.grad = lib.zeros(3, 2)
    v, gv = m.weight._version, m.weight.grad._version
    m._apply(lambda t: t.add_(1))
    out.append((m.weight._version > v, m.weight.grad._version > gv))
    return out


def test_old_views_and_inplace_apply_versions_match():
    assert old_views_and_versions(mt) == old_views_and_versions(torch)


def to_argument_forms(lib):
    out = []
    forms = [
        (("cpu", lib.float64), {}),
        ((), {"device": "cpu", "dtype": lib.float64}),
        ((lib.float64, False), {}),
        ((lib.device("cpu"),), {}),
        ((None, lib.float64), {}),
        ((lib.zeros(1, dtype=lib.float64), True), {}),
        ((), {"dtype": lib.float16}),
        (("meta",), {}),
    ]
    for args, kwargs in forms:
        m = Leaf(lib)
        m.register_buffer("idx", lib.zeros(1, dtype=lib.int64))
        r = m.to(*args, **kwargs)
        out.append(
            (r is m, str(m.weight.dtype), m.weight.device.type, str(m.idx.dtype), m.idx.device.type)
        )
    return out


def test_to_argument_forms_match():
    assert to_argument_forms(mt) == to_argument_forms(torch)


def optimizer_identity(lib, swap):
    """The swap_tensors recipe: which conversions keep an optimizer pointing at the live parameters."""
    nn = lib.nn
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    m = nn.Linear(3, 2)
    m.load_state_dict({"weight": lib.tensor(w), "bias": lib.tensor([0.5, -0.5])})
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    out = []
    lib.__future__.set_swap_module_params_on_conversion(swap)
    try:
        m.double()
        tracked = opt.param_groups[0]["params"]
        out.append((tracked[0] is m.weight, str(tracked[0].dtype)))
        x = lib.ones(4, 3, dtype=lib.float64)
        m(x).sum().backward()
        opt.step()
        out.append(np.round(np.array(m.weight.tolist()), 6).tolist())
        m.weight = nn.Parameter(2 * m.weight.detach())
        out.append(opt.param_groups[0]["params"][0] is m.weight)
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    return out


@pytest.mark.parametrize("swap", [False, True])
def test_optimizer_sees_converted_parameters_match(swap):
    assert optimizer_identity(mt, swap) == optimizer_identity(torch, swap)

"""Oracle tests: ``nn.Module`` behaviour compared with PyTorch 2.13.

Each scenario is a function of ``lib`` (``torch`` or ``minitorch_nn``) that returns plain Python
data (names, strings, booleans); the test runs it on both libraries and compares. Module trees
are drawn at random (parameters, persistent and non-persistent buffers, None entries, shared
children, extra_repr text) and built identically in both.
"""

import random

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402

LIBS = (torch, mt)


@pytest.fixture(autouse=True)
def keep_global_rng_state():
    # Layers initialise from the global generators; leave them as we found them so that other
    # test files do not depend on whether these tests ran first.
    states = torch.get_rng_state(), mt.get_rng_state()
    yield
    torch.set_rng_state(states[0])
    mt.set_rng_state(states[1])


# -- building the same random module tree in both libraries ---------------------------------------
def random_spec(rng, depth=0, n_built=None):
    """A tree description: a list of registration ops in order, plus an extra_repr string."""
    n_built = n_built if n_built is not None else [0]
    ops = []
    names = iter(f"{c}{i}" for i in range(100) for c in "abcdefgh")
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice("ppbbcn" if depth < 2 else "ppbb")
        name = next(names)
        shape = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 2)))
        if kind == "p":
            ops.append(("p", name, shape, rng.random() < 0.8))
        elif kind == "b":
            ops.append(("b", name, shape, rng.random() < 0.7))
        elif kind == "n":
            ops.append((rng.choice(["pnone", "bnone", "cnone"]), name))
        elif n_built[0] and rng.random() < 0.3:
            ops.append(("shared", name, rng.randrange(n_built[0])))
        else:
            ops.append(("c", name, random_spec(rng, depth + 1, n_built)))
    n_built[0] += 1
    extra = rng.choice(["", "", "k=1", "line1\nline2", "a\n\nb"])
    return {"ops": ops, "extra": extra}


def node_class(lib):
    class Node(lib.nn.Module):
        def __init__(self, spec, built, rng):
            super().__init__()
            self.extra = spec["extra"]
            for op in spec["ops"]:
                kind, name = op[0], op[1]
                if kind == "p":
                    data = lib.tensor(rng.standard_normal(op[2]).astype(np.float32))
                    setattr(self, name, lib.nn.Parameter(data, requires_grad=op[3]))
                elif kind == "b":
                    self.register_buffer(
                        name,
                        lib.tensor(rng.standard_normal(op[2]).astype(np.float32)),
                        persistent=op[3],
                    )
                elif kind == "pnone":
                    self.register_parameter(name, None)
                elif kind == "bnone":
                    self.register_buffer(name, None)
                elif kind == "cnone":
                    self.add_module(name, None)
                elif kind == "shared":
                    setattr(self, name, built[op[2]])
                else:
                    setattr(self, name, Node(op[2], built, rng))
            built.append(self)

        def extra_repr(self):
            return self.extra

        def forward(self, x):
            return x

    return Node


def build(lib, spec, seed=0):
    # Children are built before their parent appends itself, so `built` indices match random_spec's.
    return node_class(lib)(spec, [], np.random.default_rng(seed))


def structure(m):
    sd = m.state_dict()
    return {
        "sd_keys": list(sd),
        "metadata": dict(sd._metadata),
        "sd_keep_vars_types": [type(v).__name__ for v in m.state_dict(keep_vars=True).values()],
        "named_parameters": [n for n, _ in m.named_parameters()],
        "named_parameters_all": [n for n, _ in m.named_parameters(remove_duplicate=False)],
        "named_parameters_local": [n for n, _ in m.named_parameters(prefix="pre", recurse=False)],
        "named_buffers": [n for n, _ in m.named_buffers()],
        "named_buffers_all": [n for n, _ in m.named_buffers(remove_duplicate=False)],
        "named_modules": [n for n, _ in m.named_modules()],
        "named_modules_all": [n for n, _ in m.named_modules(remove_duplicate=False, prefix="root")],
        "named_children": [n for n, _ in m.named_children()],
        "n_parameters": len(list(m.parameters())),
        "n_buffers": len(list(m.buffers())),
        "repr": repr(m),
        "dir_has": [k for k in ("a0", "b0", "c0", "training", "forward") if k in dir(m)],
    }


@pytest.mark.parametrize("seed", range(40))
def test_random_tree_structure(seed):
    spec = random_spec(random.Random(seed))
    assert structure(build(mt, spec, seed)) == structure(build(torch, spec, seed))


@pytest.mark.parametrize("seed", range(15))
def test_random_tree_state_dict_values_roundtrip(seed):
    spec = random_spec(random.Random(seed))
    ours, theirs = build(mt, spec, seed), build(torch, spec, seed)
    for (k1, v1), (k2, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())
        assert v1.requires_grad is False
    # loading torch's values into ours (as numpy -> tensor) matches.
    other = build(torch, spec, seed + 1000)
    sd = {k: mt.tensor(v.numpy()) for k, v in other.state_dict().items()}
    assert repr(ours.load_state_dict(sd)) == repr(theirs.load_state_dict(other.state_dict()))
    for (_, v1), (_, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())


# -- load_state_dict errors -------------------------------------------------------------------------
def error_of(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", repr(out)


def assert_same_error(ours, theirs):
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1]), (ours[1], theirs[1])
    rest = ours[1][len(theirs[1]) :]
    assert rest == "" or rest.startswith("\nHint:"), rest


def net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = lib.nn.Parameter(lib.zeros(2))
            self.fc = lib.nn.Sequential(Leaf(lib), lib.nn.ModuleList([Leaf(lib)]))
            self.register_buffer("buf", lib.zeros(3))
            self.register_buffer("tmp", lib.zeros(1), persistent=False)
            self.add_module("empty", None)

        def forward(self, x):
            return x

    return Net()


def Leaf(lib):  # noqa: N802
    class Leaf(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(3, 2))
            self.bias = lib.nn.Parameter(lib.zeros(3))

    return Leaf()


def sd_variants(lib):
    base = net(lib).state_dict()
    yield "full", dict(base)
    d = dict(base)
    del d["p"], d["fc.1.0.bias"]
    yield "missing", d
    d = dict(
        base, extra=lib.zeros(1), **{"fc.extra2": lib.zeros(1), "fc.0.weight.bad": lib.zeros(1)}
    )
    yield "unexpected", d
    d = dict(base)
    del d["buf"]
    d["tmp"] = lib.zeros(1)
    d["empty.weight"] = lib.zeros(1)
    yield "nonpersistent_and_none_child", d
    d = dict(base, **{"fc.0.weight": lib.zeros(5, 5), "buf": lib.zeros(2)})
    yield "size_mismatch", d
    d = dict(base, **{"fc.0.weight": [[1.0, 2.0]]})
    yield "not_a_tensor", d
    d = dict(base, _extra_state=lib.zeros(1))
    del d["p"]
    yield "everything", dict(d, **{"fc.0.bias": lib.zeros(7), "junk": lib.zeros(1)})
    yield "module_prefix", {"module." + k: v for k, v in base.items()}


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("case", [name for name, _ in sd_variants(torch)])
def test_load_errors_match(case, strict):
    ours_sd = dict(sd_variants(mt))[case]
    theirs_sd = dict(sd_variants(torch))[case]
    ours = error_of(lambda: net(mt).load_state_dict(ours_sd, strict=strict))
    theirs = error_of(lambda: net(torch).load_state_dict(theirs_sd, strict=strict))
    assert_same_error(ours, theirs)


def test_load_type_errors_and_incompatible_keys_repr():
    for bad in ([], "", 2):
        assert_same_error(
            error_of(lambda: net(mt).load_state_dict(bad)),  # noqa: B023  (called at once)
            error_of(lambda: net(torch).load_state_dict(bad)),  # noqa: B023
        )
    for lib_pair in ((["a"], []), ([], ["b"]), ([], [])):
        from torch.nn.modules.module import _IncompatibleKeys as TK

        from minitorch_nn.nn.modules.module import _IncompatibleKeys as MK

        assert repr(MK(*lib_pair)) == repr(TK(*lib_pair))
        assert str(MK(*lib_pair)) == str(TK(*lib_pair))


# -- setattr / registration errors ------------------------------------------------------------------
def registration_errors(lib):
    nn = lib.nn
    out = []

    class Early(nn.Module):
        def __init__(self, what):
            if what == "param":
                self.w = nn.Parameter(lib.zeros(1))
            elif what == "module":
                self.c = nn.Module()
            elif what == "register":
                self.register_parameter("w", None)
            elif what == "buffer":
                self.register_buffer("w", None)

    for what in ("param", "module", "register", "buffer"):
        out.append(error_of(lambda: Early(what)))  # noqa: B023  (called at once)
    m = nn.Module()
    m.weight = nn.Parameter(lib.zeros(2))
    m.child = nn.Module()
    m.register_buffer("buf", lib.zeros(1))
    m.plain = 3
    cases = [
        lambda: setattr(m, "weight", lib.zeros(2)),
        lambda: setattr(m, "weight", lib.zeros(2, dtype=lib.float64)),
        lambda: setattr(m, "child", 3),
        lambda: setattr(m, "buf", 3),
        lambda: m.register_parameter("a.b", None),
        lambda: m.register_parameter("", None),
        lambda: m.register_parameter("plain", None),
        lambda: m.register_parameter("x", lib.zeros(1)),
        lambda: m.register_buffer("a.b", None),
        lambda: m.register_buffer("", None),
        lambda: m.register_buffer("x", 3),
        lambda: m.register_buffer("plain", None),
        lambda: m.add_module("a.b", None),
        lambda: m.add_module("", None),
        lambda: m.add_module("x", 3),
        lambda: m.add_module("plain", None),
        lambda: m.missing,
        lambda: nn.Module(1),
        lambda: nn.Module(foo=1),
        lambda: m(1),
        lambda: m.train("yes"),
        lambda: m.get_submodule("child.nope"),
        lambda: m.get_submodule("plain"),
        lambda: m.get_parameter("nope"),
        lambda: m.get_parameter("buf"),
        lambda: m.get_buffer("weight"),
        lambda: m.to(lib.int32),
        lambda: m.to_empty("cpu"),
        lambda: nn.Sequential(nn.Module())[3],
        lambda: nn.ModuleList([nn.Module()])[-2],
    ]
    for c in cases:
        out.append(error_of(c))
    # assigning None to a parameter keeps the key; a Parameter over a buffer name moves it
    m.weight = None
    m.buf = nn.Parameter(lib.zeros(1))
    m.nb = nn.Buffer(lib.zeros(1), persistent=False)
    out.append(
        (
            list(m._parameters),
            list(m._buffers),
            sorted(m._non_persistent_buffers_set),
            list(m.state_dict()),
        )
    )
    return out


def test_registration_errors_match():
    ours, theirs = registration_errors(mt), registration_errors(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], str):
            assert_same_error(o, t)
        else:
            assert o == t


# -- repr -------------------------------------------------------------------------------------------
def reprs(lib):
    nn = lib.nn

    class One(nn.Module):
        def extra_repr(self):
            return "x=5"

    class Blank(nn.Module):
        def extra_repr(self):
            return "line1\n\nline3"

    outer = nn.Module()
    outer.c = Blank()
    seq = nn.Sequential(One(), One(), nn.ModuleList([One(), One(), One(), Blank(), One()]))
    pl = nn.ParameterList([lib.zeros(2)])
    pl2 = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.zeros(1, 3)), "s"])
    pd = nn.ParameterDict({"b": lib.zeros(2), "a": lib.zeros(1, dtype=lib.float64)})
    md = nn.ModuleDict({"x": One(), "y": nn.Sequential()})
    return [
        repr(x) for x in (One(), Blank(), outer, seq, nn.ModuleList(), pl, pl2, pd, md, nn.Module())
    ]


def test_reprs_match():
    assert reprs(mt) == reprs(torch)


# -- hooks ------------------------------------------------------------------------------------------
def forward_hook_log(lib):
    nn = lib.nn
    log = []

    class Add(nn.Module):
        def forward(self, x, y=0):
            log.append(("forward", x, y))
            return x + y

    m = Add()
    handles = []
    for i in range(5):
        handles.append(
            m.register_forward_hook(
                lambda mod, a, o, i=i: log.append(("post", i, a, o)) or o * 10 if i == 2 else None,
                prepend=i in (1, 4),
            )
        )
        handles.append(
            m.register_forward_pre_hook(
                lambda mod, a, i=i: log.append(("pre", i, a)) or (a[0] + 1,), prepend=i == 3
            )
        )
    m.register_forward_pre_hook(
        lambda mod, a, kw: log.append(("prekw", a, dict(kw))) or (a, {"y": 100}), with_kwargs=True
    )
    m.register_forward_hook(
        lambda mod, a, kw, o: log.append(("postkw", a, dict(kw), o)), with_kwargs=True
    )
    g1 = nn.modules.module.register_module_forward_pre_hook(
        lambda mod, a: log.append(("gpre", type(mod).__name__))
    )
    g2 = nn.modules.module.register_module_forward_hook(lambda mod, a, o: log.append(("gpost", o)))
    try:
        log.append(("result", m(1, y=2)))
        handles[0].remove()
        handles[0].remove()
        with handles[3]:
            log.append(("result", m(1)))
        log.append(("result", m(1)))
        log.append(("direct", m.forward(1)))
    finally:
        g1.remove()
        g2.remove()
    log.append(("result", m(1)))
    return log


def test_forward_hook_order_match():
    assert forward_hook_log(mt) == forward_hook_log(torch)


def always_call_log(lib):
    nn = lib.nn
    log = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, a, o: log.append(("normal", o)))
    m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
    m.register_forward_hook(
        lambda mod, a, kw, o: log.append(("always_kw", o, dict(kw))),
        always_call=True,
        with_kwargs=True,
    )

    def bad(mod, a, o):
        raise KeyError("inner")

    m.register_forward_hook(bad, always_call=True)
    import warnings

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        log.append(error_of(lambda: m(3)))
    log.append([str(x.message) for x in w])
    bad_pre = Boom()
    bad_pre.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
    log.append(error_of(lambda: bad_pre(1)))
    return log


def test_always_call_and_bad_pre_hook_match():
    assert always_call_log(mt) == always_call_log(torch)


def nested_hook_log(lib):
    nn = lib.nn
    log = []

    class Id(nn.Module):
        def forward(self, x):
            return x

    seq = nn.Sequential(Id(), Id())
    for i, c in enumerate(seq):
        c.register_forward_hook(lambda mod, a, o, i=i: log.append(i))
    seq.register_forward_hook(lambda mod, a, o: log.append("seq"))
    seq(lib.zeros(1))
    visited = []
    nn.Sequential(Id(), nn.Sequential(Id(), nn.Module())).apply(
        lambda mod: visited.append(type(mod).__name__)
    )
    return log, visited


def test_nested_hooks_and_apply_order_match():
    assert nested_hook_log(mt) == nested_hook_log(torch)


def state_dict_hook_log(lib):
    nn = lib.nn
    log = []
    model = nn.Sequential(Leaf(lib), nn.Sequential(Leaf(lib)))
    for name, mod in model.named_modules():
        mod.register_state_dict_pre_hook(
            lambda m, prefix, kv, name=name: log.append(("pre", name, prefix, kv))
        )
        mod.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, name=name: log.append(
                ("post", name, prefix, list(sd), dict(meta))
            )
        )
    model.state_dict(prefix="foo.", keep_vars=True)
    model.state_dict()

    def replace(m, sd, prefix, meta):
        return {"replaced": 1}

    h1 = model._register_state_dict_hook(replace)
    h2 = model[1]._register_state_dict_hook(replace)
    log.append(("private", list(model.state_dict())))
    h1.remove()
    h2.remove()

    def returns(m, sd, prefix, meta):
        return 1

    model.register_state_dict_post_hook(returns)
    log.append(error_of(lambda: model.state_dict()))
    log.append(error_of(lambda: model._register_state_dict_hook(returns)))
    return log


def test_state_dict_hooks_match():
    assert state_dict_hook_log(mt) == state_dict_hook_log(torch)


def load_hook_log(lib):
    nn = lib.nn
    log = []
    model = nn.Sequential(Leaf(lib), nn.Sequential(Leaf(lib)))
    sd = model.state_dict()
    sd["old.weight"] = sd.pop("1.0.weight")

    def rename(m, state_dict, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", type(m).__name__, prefix, sorted(state_dict), dict(meta), strict))
        if "old.weight" in state_dict:
            state_dict["1.0.weight"] = state_dict.pop("old.weight")

    for mod in model.modules():
        mod.register_load_state_dict_pre_hook(rename)
        mod.register_load_state_dict_post_hook(
            lambda m, inc: log.append(
                ("post", type(m).__name__, list(inc.missing_keys), list(inc.unexpected_keys))
            )
        )
    model[1]._register_load_state_dict_pre_hook(lambda *a: log.append(("private", a[1])))
    log.append(repr(model.load_state_dict(sd, strict=False)))
    log.append(sorted(sd))  # the caller's dict is untouched
    log.append(repr(model.load_state_dict(dict(sd, extra=lib.zeros(1)), strict=False, assign=True)))

    # a post hook that clears the lists lets a strict load with extra keys pass
    m2 = Leaf(lib)
    m2.register_load_state_dict_post_hook(
        lambda m, inc: (inc.missing_keys.clear(), inc.unexpected_keys.clear()) and None
    )
    log.append(repr(m2.load_state_dict({"junk": lib.zeros(1)})))
    m3 = Leaf(lib)
    m3.register_load_state_dict_post_hook(lambda m, inc: 1)
    log.append(error_of(lambda: m3.load_state_dict(m3.state_dict())))
    return log


def test_load_hooks_match():
    assert load_hook_log(mt) == load_hook_log(torch)


def extra_state_log(lib):
    nn = lib.nn

    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.zeros(1))
            self.state = {"k": 1}

        def get_extra_state(self):
            return self.state

        def set_extra_state(self, s):
            self.state = s

    class GetOnly(nn.Module):
        def get_extra_state(self):
            return 5

    m = nn.Sequential(WithExtra(), GetOnly())
    sd = m.state_dict()
    out = [list(sd), sd["0._extra_state"], sd["1._extra_state"]]
    m2 = nn.Sequential(WithExtra(), GetOnly())
    out.append(error_of(lambda: m2.load_state_dict(dict(sd, **{"0._extra_state": {"k": 2}}))))
    out.append(m2[0].state)
    d = dict(sd)
    del d["0._extra_state"]
    out.append(error_of(lambda: m2.load_state_dict(d)))
    return out


def test_extra_state_match():
    assert extra_state_log(mt) == extra_state_log(torch)


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


# -- load with assign / swap ------------------------------------------------------------------------
def load_identity(lib, swap, assign, keep_vars, meta):
    lib.__future__.set_swap_module_params_on_conversion(swap)
    try:
        if meta:
            with lib.device("meta"):
                m = Leaf(lib)
                m.register_buffer("buf", lib.zeros(2))
        else:
            m = Leaf(lib)
            m.register_buffer("buf", lib.zeros(2))
        m.bias.requires_grad_(False)
        src = Leaf(lib).double()
        src.register_buffer("buf", lib.ones(2, dtype=lib.float64))
        src.weight.requires_grad_(True)
        sd = src.state_dict(keep_vars=keep_vars)
        before = {**dict(m.named_parameters()), **dict(m.named_buffers())}
        import warnings

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            result = repr(m.load_state_dict(sd, assign=assign))
        res = {"result": result, "warnings": sorted(str(x.message)[:60] for x in w)}
        for n, t in [*m.named_parameters(), *m.named_buffers()]:
            res[n] = (
                t is before[n],
                t is sd[n],
                type(t).__name__,
                str(t.dtype),
                t.device.type,
                t.requires_grad,
                t.is_meta or bool((t.detach() == sd[n].detach().to(t.dtype)).all()),
            )
        res["order"] = (list(m._parameters), list(m._buffers))
        return res
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("meta", [False, True])
@pytest.mark.parametrize("keep_vars", [False, True])
@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("swap", [False, True])
def test_load_identity_match(swap, assign, keep_vars, meta):
    assert load_identity(mt, swap, assign, keep_vars, meta) == load_identity(
        torch, swap, assign, keep_vars, meta
    )


def test_state_dict_positional_args_warn_like_torch():
    import warnings

    out = []
    for lib in LIBS:
        m = Leaf(lib)
        dest = {}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = m.state_dict(dest, "x.")
        out.append(
            (
                got is dest,
                list(dest),
                hasattr(dest, "_metadata"),
                [(c.category.__name__, str(c.message)[:40]) for c in w],
            )
        )
    assert out[0] == out[1]


def test_zero_grad_and_requires_grad_match():
    out = []
    for lib in LIBS:
        m = Leaf(lib)
        m.weight.grad = lib.ones(3, 2)
        g = m.weight.grad
        m.zero_grad(set_to_none=False)
        a = (m.weight.grad is g, m.weight.grad.tolist())
        m.zero_grad()
        r = m.requires_grad_(False)
        out.append(
            (
                a,
                m.weight.grad,
                r is m,
                [p.requires_grad for p in m.parameters()],
                m.eval() is m,
                m.training,
            )
        )
    assert out[0] == out[1]


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


# -- full backward hooks ---------------------------------------------------------------------------


def _grads(gs):
    return [None if g is None else g.tolist() for g in gs]


def backward_hook_log(lib):
    import warnings

    nn = lib.nn
    log = []

    class Mul(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.full((2,), 3.0))

        def forward(self, x, y, k=1):
            return x * self.w, y * 2

    m = Mul()
    for i in range(3):
        m.register_full_backward_hook(
            lambda mod, gi, go, i=i: log.append(("full", i, _grads(gi), _grads(go))), prepend=i == 2
        )
    m.register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", _grads(go))) or (go[0] * 10, go[1])
    )
    g = nn.modules.module.register_module_full_backward_hook(
        lambda mod, gi, go: log.append(("global", _grads(gi)))
    )
    try:
        x = lib.ones(2, requires_grad=True)
        a, b = m(x, lib.ones(2))
        (a.sum() + b.sum()).backward()
    finally:
        g.remove()
    log.append(("grads", x.grad.tolist(), m.w.grad.tolist()))

    m2 = Mul()
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7, None))
    x2 = lib.ones(2, requires_grad=True)
    m2(x2, lib.ones(2))[0].sum().backward()
    log.append(("replaced", x2.grad.tolist()))

    m3 = Mul()
    m3.register_full_backward_hook(lambda mod, gi, go: ())
    x3 = lib.ones(2, requires_grad=True)
    log.append(error_of(lambda: m3(x3, lib.ones(2))[0].sum().backward()))

    m4 = Mul()
    m4.register_full_backward_hook(lambda mod, gi, go: log.append(("no_input_grad", gi, len(go))))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m4(lib.ones(2), lib.ones(2))[0].sum().backward()
    log.append([str(x.message)[:60] for x in w])
    log.append(error_of(lambda: m4.register_backward_hook(lambda *a: None)))
    return log


def test_full_backward_hooks_match():
    assert backward_hook_log(mt) == backward_hook_log(torch)


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


def load_edge_cases(lib):
    nn = lib.nn
    out = []
    # a 0-d parameter accepts a 1-element 1-d checkpoint tensor
    m = nn.Module()
    m.s = nn.Parameter(lib.tensor(1.0))
    out.append((repr(m.load_state_dict({"s": lib.tensor([5.0])})), m.s.item(), tuple(m.s.shape)))
    # assign=True with a Parameter under a buffer's key turns the buffer into a parameter
    m = nn.Module()
    m.register_buffer("b", lib.zeros(2))
    m.load_state_dict({"b": nn.Parameter(lib.ones(2))}, assign=True)
    out.append((list(m._parameters), list(m._buffers), [n for n, _ in m.named_parameters()]))
    # keys under a None child are ignored even when strict
    m = nn.Module()
    m.add_module("empty", None)
    m.register_parameter("gone", None)
    out.append(error_of(lambda: m.load_state_dict({"empty.weight": lib.zeros(1)})))
    out.append(error_of(lambda: m.load_state_dict({"gone": lib.zeros(1)})))
    # a float64 checkpoint copied into a float32 module stays float32, storage not shared
    m = Leaf(lib)
    src = {k: v.double() + 1 for k, v in m.state_dict().items()}
    m.load_state_dict(src)
    out.append(
        (str(m.weight.dtype), m.weight.data_ptr() == src["weight"].data_ptr(), m.weight.tolist())
    )
    return out


def test_load_edge_cases_match():
    assert load_edge_cases(mt) == load_edge_cases(torch)


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


# -- Parameter and Buffer ---------------------------------------------------------------------------
def parameter_behaviour(lib):
    import copy
    import pickle

    nn = lib.nn
    out = []
    base = lib.tensor([1.0, 2.0])
    p = nn.Parameter(base)
    q = nn.Parameter(lib.tensor([[1, 2]]), requires_grad=False)
    e = nn.Parameter()
    out.append((repr(p), repr(q), repr(e), str(p)))
    out.append(
        (
            p.data_ptr() == base.data_ptr(),
            p.requires_grad,
            base.requires_grad,
            type(p.detach()).__name__,
        )
    )
    p.note = "kept"
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        out.append(
            (
                type(clone).__name__,
                clone.requires_grad,
                clone.tolist(),
                getattr(clone, "note", None),
                clone is p,
            )
        )
    memo = {}
    a = copy.deepcopy(p, memo)
    out.append(copy.deepcopy(p, memo) is a)
    b = nn.Buffer(lib.ones(2), persistent=False)
    out.append(
        (
            type(b).__name__,
            isinstance(b, nn.Buffer),
            b.persistent,
            isinstance(lib.ones(1), nn.Buffer),
        )
    )
    g = nn.Buffer(lib.ones(2, requires_grad=True))
    out.append(
        (
            g.requires_grad,
            g.is_leaf,
            g.persistent,
            isinstance(g, nn.Parameter),
            isinstance(p, nn.Buffer),
        )
    )
    return out


def test_parameter_and_buffer_match():
    assert parameter_behaviour(mt) == parameter_behaviour(torch)


def custom_save_load(lib):
    nn = lib.nn

    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.param = nn.Parameter(lib.ones(1))
            self.sub = nn.Linear(1, 1) if hasattr(nn, "Linear") else Leaf(lib)

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            destination[prefix + "serialized"] = self.param.data + 10

        def _load_from_state_dict(
            self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors
        ):
            key = prefix + "serialized"
            if key in state_dict:
                with lib.no_grad():
                    self.param.copy_(state_dict[key] - 10)
            else:
                missing.append(key)

    m = nn.Sequential(Custom())
    m[0].register_state_dict_pre_hook(lambda *a: None)
    sd = m.state_dict()
    out = [list(sd), sd["0.serialized"].tolist()]
    m2 = nn.Sequential(Custom())
    sd2 = dict(sd)
    sd2["0.serialized"] = lib.tensor([15.0])
    out.append(repr(m2.load_state_dict(sd2)))
    out.append(m2[0].param.tolist())
    del sd2["0.serialized"]
    out.append(error_of(lambda: m2.load_state_dict(sd2)))
    return out


def test_custom_save_and_load_overrides_match():
    assert custom_save_load(mt) == custom_save_load(torch)


def mutated_load(lib, seed):
    """Load a randomly damaged state dict into a random tree: the error (or result) must match."""
    rng = random.Random(seed)
    spec = random_spec(rng)
    m = build(lib, spec, seed)
    sd = dict(m.state_dict())
    keys = list(sd)
    for k in keys:
        r = rng.random()
        if r < 0.15:
            del sd[k]
        elif r < 0.25:
            sd[k] = lib.zeros(tuple(s + 1 for s in sd[k].shape) or (2,))
        elif r < 0.3:
            sd[k] = [1.0]
    prefixes = sorted({k.rpartition(".")[0] for k in keys})
    for i in range(rng.randint(0, 3)):
        p = rng.choice(prefixes) if prefixes else ""
        sd[(p + "." if p else "") + rng.choice(["junk", "x.y", "_extra_state"]) + str(i)] = (
            lib.zeros(1)
        )
    strict = rng.random() < 0.7
    assign = rng.random() < 0.3
    return error_of(lambda: m.load_state_dict(sd, strict=strict, assign=assign))


@pytest.mark.parametrize("seed", range(40))
def test_random_damaged_loads_match(seed):
    assert_same_error(mutated_load(mt, seed), mutated_load(torch, seed))


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
